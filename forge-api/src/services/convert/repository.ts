/** structs.Repository with the caller's access (Gitea's convert.ToRepo). */
import type { Repository, User } from '../records';
import { AccessMode, fmtTime, GO_ZERO_TIME } from './common';
import type { ConvertContext } from './context';
import { toUser } from './user';

export type RepoWithOwner = Repository & { owner: User };

export function repoApiUrl(c: ConvertContext, repo: RepoWithOwner): string {
  return `${c.rootUrl}api/v1/repos/${repo.owner.name}/${repo.name}`;
}

export function repoHtmlUrl(c: ConvertContext, repo: RepoWithOwner): string {
  return `${c.rootUrl}${repo.owner.name}/${repo.name}`;
}

/** convert.ToRepo with the caller's access mode (permissions object and owner view). */
export function toRepository(c: ConvertContext, r: Repository & { owner: User }, mode: number) {
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
    mirror: r.isMirror,
    size: r.size,
    language: '',
    languages_url: `${api}/languages`,
    html_url: `${c.rootUrl}${full}`,
    url: api,
    link: `${c.basePath}${full}`,
    ssh_url: '',
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
    topics: r.topics ? r.topics.split(',') : [],
    licenses: r.licenses ? r.licenses.split(',') : [],
  };
}
