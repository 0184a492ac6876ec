/** structs.Repository with the caller's access (Gitea's convert.ToRepo). */
import net from 'node:net';
import { pathEscape } from '../git/tree-path';
import type { RepoModes } from '../permissions';
import type { Repository, User } from '../records';
import { AccessMode, fmtTime, GO_ZERO_TIME } from './common';
import type { ConvertContext } from './context';
import { toUser } from './user';

export type RepoWithOwner = Repository & { owner: User };

/**
 * What a repository's JSON may embed besides its row: the parent of a fork (loaded by
 * RepoService.withParents) and a pending transfer (Gitea's repo_transfer).
 */
export interface RepoExtras {
  parent?: (RepoWithOwner & RepoExtras) | null;
  transferJson?: Record<string, unknown> | null;
}

export function repoApiUrl(c: ConvertContext, repo: RepoWithOwner): string {
  return `${c.rootUrl}api/v1/repos/${repo.owner.name}/${repo.name}`;
}

export function repoHtmlUrl(c: ConvertContext, repo: RepoWithOwner): string {
  return `${c.rootUrl}${repo.owner.name}/${repo.name}`;
}

/**
 * Gitea's ComposeSSHCloneURL: `user@host:owner/repo.git` on port 22 (an IPv6 host in brackets),
 * `ssh://user@host:port/owner/repo.git` on any other port; '' when the forge serves no SSH.
 */
export function sshCloneUrl(c: ConvertContext, ownerName: string, repoName: string): string {
  if (!c.ssh) return '';
  const { user, domain, port } = c.ssh;
  const repoPath = `${pathEscape(ownerName)}/${pathEscape(repoName)}.git`;
  if (port !== 22) return `ssh://${user}@${joinHostPort(domain, port)}/${repoPath}`;
  const host = net.isIPv6(domain) ? `[${domain}]` : domain;
  return `${user}@${host}:${repoPath}`;
}

function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Where an uploaded repository avatar is served (Gitea's /repo-avatars/<hash>). */
export function repoAvatarUrl(c: ConvertContext, r: Pick<Repository, 'avatar'>): string {
  return r.avatar ? `${c.rootUrl}repo-avatars/${encodeURIComponent(r.avatar)}` : '';
}

/**
 * Gitea's `permissions`: `admin` from the caller's mode, `push` and `pull` from its mode for the
 * code unit, which a repository without that unit gives nobody (not even its owner).
 */
function permissionsJson(r: Pick<Repository, 'hasCode'>, access: number | RepoModes) {
  const { mode, code } = typeof access === 'number' ? { mode: access, code: access } : access;
  const codeMode = r.hasCode ? code : AccessMode.None;
  return { admin: mode >= AccessMode.Admin, push: codeMode >= AccessMode.Write, pull: codeMode >= AccessMode.Read };
}

/** `ofChild`: the permissions of the fork whose parent this is (Gitea shows the fork's on its parent). */
export function toRepository(c: ConvertContext, r: Repository & { owner: User } & RepoExtras, access: number | RepoModes, ofChild?: ReturnType<typeof permissionsJson>): Record<string, unknown> {
  const mode = typeof access === 'number' ? access : access.mode;
  const permissions = ofChild ?? permissionsJson(r, access);
  const full = `${r.owner.name}/${r.name}`;
  const api = `${c.rootUrl}api/v1/repos/${full}`;
  const pulls = r.hasPullRequests;
  return {
    id: r.id,
    owner: toUser(c, r.owner, mode > AccessMode.None, false),
    name: r.name,
    full_name: full,
    description: r.description,
    empty: r.isEmpty,
    private: r.isPrivate,
    fork: r.isFork,
    template: r.isTemplate,
    // Gitea embeds the parent with the child's permission (its own FIXME says so).
    ...(!ofChild && r.parent ? { parent: toRepository(c, r.parent, access, permissions) } : {}),
    mirror: r.isMirror,
    size: r.size,
    language: '',
    languages_url: `${api}/languages`,
    html_url: `${c.rootUrl}${full}`,
    url: api,
    link: `${c.basePath}${full}`,
    ssh_url: sshCloneUrl(c, r.owner.name, r.name),
    clone_url: `${c.rootUrl}${full}.git`,
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
    permissions,
    has_code: r.hasCode,
    has_issues: r.hasIssues || r.useExternalTracker,
    ...(r.hasIssues
      ? {
          internal_tracker: {
            enable_time_tracker: r.enableTimeTracker,
            allow_only_contributors_to_track_time: r.allowOnlyContributorsToTrackTime,
            enable_issue_dependencies: r.enableDependencies,
          },
        }
      : r.useExternalTracker
        ? {
            external_tracker: {
              external_tracker_url: r.externalTrackerUrl,
              external_tracker_format: r.externalTrackerFormat,
              external_tracker_style: r.externalTrackerStyle,
              external_tracker_regexp_pattern: r.externalTrackerRegexp,
            },
          }
        : {}),
    has_wiki: r.hasWiki || r.useExternalWiki,
    ...(!r.hasWiki && r.useExternalWiki ? { external_wiki: { external_wiki_url: r.externalWikiUrl } } : {}),
    has_pull_requests: pulls,
    has_projects: r.hasProjects,
    projects_mode: r.hasProjects ? r.projectsMode : 'all',
    has_releases: r.hasReleases,
    has_packages: r.hasPackages,
    has_actions: r.hasActions,
    // Without the pull request unit Gitea reports fixed values, not the stored settings.
    ignore_whitespace_conflicts: pulls && r.ignoreWhitespaceConflicts,
    allow_merge_commits: pulls && r.allowMerge,
    allow_rebase: pulls && r.allowRebase,
    allow_rebase_explicit: pulls && r.allowRebaseExplicit,
    allow_squash_merge: pulls && r.allowSquash,
    allow_fast_forward_only_merge: pulls && r.allowFastForwardOnly,
    allow_merge_update: pulls && r.allowMergeUpdate,
    allow_rebase_update: pulls && r.allowRebaseUpdate,
    allow_manual_merge: pulls ? r.allowManualMerge : true,
    autodetect_manual_merge: pulls && r.autodetectManualMerge,
    default_delete_branch_after_merge: pulls && r.defaultDeleteBranchAfterMerge,
    default_merge_style: pulls ? r.defaultMergeStyle : 'merge',
    default_update_style: pulls ? r.defaultUpdateStyle : 'merge',
    default_allow_maintainer_edit: pulls && r.defaultAllowMaintainerEdit,
    avatar_url: repoAvatarUrl(c, r),
    internal: !r.isPrivate && r.owner.visibility === 2,
    mirror_interval: r.isMirror ? r.mirrorInterval : '',
    object_format_name: r.objectFormatName,
    mirror_updated: r.isMirror ? fmtTime(r.mirrorUpdatedAt, GO_ZERO_TIME) : GO_ZERO_TIME,
    mirror_last_sync_at: r.isMirror ? fmtTime(r.mirrorLastSyncAt, GO_ZERO_TIME) : GO_ZERO_TIME,
    ...(r.transferJson ? { repo_transfer: r.transferJson } : {}),
    topics: r.topics ? r.topics.split(',') : [],
    licenses: r.licenses ? r.licenses.split(',') : [],
  };
}
