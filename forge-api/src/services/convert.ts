/**
 * Database rows -> Gitea's JSON records, in one place (services/convert in Gitea).
 * Timestamps are RFC 3339 with second precision as Gitea writes them; "never" is the Unix
 * epoch (Gitea's TimeStamp(0).AsTime()), and fields hidden from a viewer keep Go's zero time.
 */
import crypto from 'node:crypto';
import type { ForgeConfig } from '../config';
import type { AccessToken, EmailAddress, PublicKey, Repository, User } from './records';

export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
export const EPOCH = '1970-01-01T00:00:00Z';

export function fmtTime(d: Date | null | undefined, ifNull = EPOCH): string {
  if (!d) return ifNull;
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export const VISIBILITY = ['public', 'limited', 'private'] as const;
export type Visibility = (typeof VISIBILITY)[number];
export function visibilityName(v: number): Visibility {
  return VISIBILITY[v] ?? 'public';
}
export function visibilityValue(name: string | undefined): number | undefined {
  if (name === undefined || name === '') return undefined;
  const i = (VISIBILITY as readonly string[]).indexOf(name);
  return i < 0 ? undefined : i;
}

/** Access modes, Gitea's perm.AccessMode. */
export const AccessMode = { None: 0, Read: 1, Write: 2, Admin: 3, Owner: 4 } as const;

export class Converter {
  private readonly host: string;
  /** Path of ROOT_URL ("/" or "/sub/"), for Gitea's relative `link` fields. */
  private readonly basePath: string;
  constructor(private readonly config: ForgeConfig) {
    const url = new URL(config.rootUrl);
    this.host = url.hostname;
    this.basePath = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  }

  avatarUrl(u: Pick<User, 'email' | 'avatarUrl' | 'id'>): string {
    if (u.avatarUrl) return u.avatarUrl;
    const hash = crypto.createHash('md5').update((u.email || String(u.id)).trim().toLowerCase()).digest('hex');
    return `${this.config.rootUrl}avatars/${hash}`;
  }

  placeholderEmail(u: Pick<User, 'lowerName'>): string {
    return `${u.lowerName}@noreply.${this.host}`;
  }

  /**
   * convert.toUser: `signed` = the viewer is signed in (or has access for repo owners),
   * `authed` = the viewer is the user or a site admin (private fields).
   */
  user(u: User, signed: boolean, authed: boolean) {
    const showEmail = signed && (!u.keepEmailPrivate || authed);
    return {
      id: u.id,
      login: u.name,
      login_name: authed ? u.loginName : '',
      source_id: authed ? u.loginSource : 0,
      full_name: u.fullName,
      email: showEmail ? u.email : this.placeholderEmail(u),
      avatar_url: this.avatarUrl(u),
      html_url: `${this.config.rootUrl}${u.name}`,
      language: authed ? u.language : '',
      is_admin: authed ? u.isAdmin : false,
      last_login: authed ? fmtTime(u.lastLoginAt) : GO_ZERO_TIME,
      created: fmtTime(u.createdAt),
      restricted: u.isRestricted,
      active: authed ? u.isActive : false,
      prohibit_login: authed ? u.prohibitLogin : false,
      location: u.location,
      website: u.website,
      description: u.description,
      visibility: visibilityName(u.visibility),
      followers_count: u.numFollowers,
      following_count: u.numFollowing,
      starred_repos_count: u.numStars,
      username: u.name,
    };
  }

  /** convert.ToUser(ctx, user, doer) */
  userFor(u: User, doer: User | null) {
    return this.user(u, doer !== null, doer !== null && (doer.isAdmin || doer.id === u.id));
  }

  /**
   * convert.ToUser(ctx, user, nil): how Gitea embeds users in records whatever the viewer
   * (comment posters, assignees): the placeholder e-mail and no private details.
   */
  userPublic(u: User) {
    return this.user(u, false, false);
  }

  org(o: User) {
    return {
      id: o.id,
      name: o.name,
      full_name: o.fullName,
      email: o.email,
      avatar_url: this.avatarUrl(o),
      description: o.description,
      website: o.website,
      location: o.location,
      visibility: visibilityName(o.visibility),
      repo_admin_change_team_access: o.repoAdminChangeTeamAccess,
      username: o.name,
    };
  }

  /** convert.ToRepo with the caller's access mode (permissions object and owner view). */
  repo(r: Repository & { owner: User }, mode: number) {
    const full = `${r.owner.name}/${r.name}`;
    const api = `${this.config.rootUrl}api/v1/repos/${full}`;
    const pulls = r.hasPullRequests;
    return {
      id: r.id,
      owner: this.user(r.owner, mode > AccessMode.None, false),
      name: r.name,
      full_name: full,
      description: r.description,
      empty: r.isEmpty,
      private: r.isPrivate,
      fork: r.isFork,
      template: r.isTemplate,
      mirror: r.isMirror,
      size: r.size,
      language: '',
      languages_url: `${api}/languages`,
      html_url: `${this.config.rootUrl}${full}`,
      url: api,
      link: `${this.basePath}${full}`,
      ssh_url: '',
      clone_url: `${this.config.rootUrl}${full}.git`,
      original_url: r.originalUrl,
      website: r.website,
      stars_count: r.numStars,
      forks_count: r.numForks,
      watchers_count: r.numWatches,
      branch_count: r.numBranches,
      open_issues_count: r.numIssues - r.numClosedIssues,
      open_pr_counter: r.numPulls - r.numClosedPulls,
      release_counter: r.numReleases,
      default_branch: r.defaultBranch,
      archived: r.isArchived,
      created_at: fmtTime(r.createdAt),
      updated_at: fmtTime(r.updatedAt),
      archived_at: fmtTime(r.archivedAt),
      permissions: { admin: mode >= AccessMode.Admin, push: mode >= AccessMode.Write, pull: mode >= AccessMode.Read },
      // The code unit cannot be turned off here yet.
      has_code: true,
      has_issues: r.hasIssues,
      ...(r.hasIssues
        ? { internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: r.enableDependencies } }
        : {}),
      has_wiki: r.hasWiki,
      has_pull_requests: pulls,
      has_projects: r.hasProjects,
      projects_mode: r.hasProjects ? 'all' : '',
      has_releases: r.hasReleases,
      has_packages: r.hasPackages,
      has_actions: r.hasActions,
      ignore_whitespace_conflicts: false,
      allow_merge_commits: pulls,
      allow_rebase: pulls,
      allow_rebase_explicit: pulls,
      allow_squash_merge: pulls,
      allow_fast_forward_only_merge: pulls,
      allow_merge_update: pulls,
      allow_rebase_update: pulls,
      // Without a pull request unit Gitea reports its defaults: manual merge allowed, merge style.
      allow_manual_merge: !pulls,
      autodetect_manual_merge: false,
      default_delete_branch_after_merge: false,
      default_merge_style: 'merge',
      default_update_style: 'merge',
      default_allow_maintainer_edit: pulls,
      avatar_url: '',
      internal: !r.isPrivate && r.owner.visibility === 2,
      mirror_interval: '',
      object_format_name: r.objectFormatName,
      mirror_updated: GO_ZERO_TIME,
      mirror_last_sync_at: GO_ZERO_TIME,
      topics: [] as string[],
      licenses: r.licenses ? r.licenses.split(',') : [],
    };
  }

  token(t: AccessToken, scopes: string[], sha1 = '') {
    return {
      id: t.id,
      name: t.name,
      sha1,
      token_last_eight: t.tokenLastEight,
      scopes,
      created_at: fmtTime(t.createdAt),
      last_used_at: fmtTime(t.lastUsedAt),
    };
  }

  email(e: EmailAddress, user: Pick<User, 'name' | 'id'>) {
    return { email: e.email, verified: e.isActivated, primary: e.isPrimary, user_id: user.id, username: user.name };
  }

  /**
   * convert.ToPublicKey; the owner and the key type are private information, shown (with the
   * owner's own view of themselves) only to the owner and site admins, as Gitea does.
   */
  publicKey(k: PublicKey, owner: User, doer: User | null) {
    const privileged = doer !== null && (doer.isAdmin || doer.id === owner.id);
    return {
      id: k.id,
      key: k.content,
      url: `${this.config.rootUrl}api/v1/user/keys/${k.id}`,
      title: k.name,
      fingerprint: k.fingerprint,
      created_at: fmtTime(k.createdAt),
      last_used_at: fmtTime(k.updatedAt),
      ...(privileged ? { user: this.user(owner, true, true) } : {}),
      read_only: k.mode === AccessMode.Read,
      ...(privileged ? { key_type: k.keyType } : {}),
    };
  }
}
