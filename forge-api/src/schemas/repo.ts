import { bool, dateTime, int, obj, str, strList } from './common';

export const PermissionSchema = obj({ admin: bool, push: bool, pull: bool }, [], { $id: 'Permission' });

/** Unit settings that the repository record and EditRepoOption both carry, with the same names and types. */
export const repoTrackerFields = {
  internal_tracker: obj({ enable_time_tracker: bool, allow_only_contributors_to_track_time: bool, enable_issue_dependencies: bool }),
  external_tracker: obj({ external_tracker_url: str, external_tracker_format: str, external_tracker_style: str, external_tracker_regexp_pattern: str }),
  has_wiki: bool,
  external_wiki: obj({ external_wiki_url: str }),
};

/** The merge settings of a repository, read (Repository) and written (EditRepoOption) alike. */
export const repoMergeFields = {
  ignore_whitespace_conflicts: bool,
  allow_merge_commits: bool,
  allow_rebase: bool,
  allow_rebase_explicit: bool,
  allow_squash_merge: bool,
  allow_fast_forward_only_merge: bool,
  allow_merge_update: bool,
  allow_rebase_update: bool,
  allow_manual_merge: bool,
  autodetect_manual_merge: bool,
  default_delete_branch_after_merge: bool,
  default_merge_style: str,
  default_update_style: str,
  default_allow_maintainer_edit: bool,
};

/** structs.Repository (parent/repo_transfer omitted when empty, as Gitea's omitempty does). */
export const RepositorySchema = obj(
  {
    id: int,
    owner: { $ref: 'User#' },
    name: str,
    full_name: str,
    description: str,
    empty: bool,
    private: bool,
    fork: bool,
    template: bool,
    parent: { type: 'object', additionalProperties: true },
    mirror: bool,
    size: int,
    language: str,
    languages_url: str,
    html_url: str,
    url: str,
    link: str,
    ssh_url: str,
    clone_url: str,
    original_url: str,
    website: str,
    stars_count: int,
    forks_count: int,
    watchers_count: int,
    branch_count: int,
    open_issues_count: int,
    open_pr_counter: int,
    release_counter: int,
    default_branch: str,
    archived: bool,
    created_at: dateTime,
    updated_at: dateTime,
    archived_at: dateTime,
    permissions: { $ref: 'Permission#' },
    has_code: bool,
    has_issues: bool,
    ...repoTrackerFields,
    has_pull_requests: bool,
    has_projects: bool,
    projects_mode: str,
    has_releases: bool,
    has_packages: bool,
    has_actions: bool,
    ...repoMergeFields,
    avatar_url: str,
    internal: bool,
    mirror_interval: str,
    object_format_name: str,
    mirror_updated: dateTime,
    mirror_last_sync_at: dateTime,
    repo_transfer: { type: 'object', additionalProperties: true },
    topics: strList,
    licenses: strList,
  },
  [],
  { $id: 'Repository' },
);

export const TRUST_MODELS = ['default', 'collaborator', 'committer', 'collaboratorcommitter'] as const;

/** structs.CreateRepoOption */
export const CreateRepoOptionSchema = obj(
  {
    name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[-\\w.]+$' },
    description: { type: 'string', maxLength: 2048 },
    private: bool,
    issue_labels: str,
    auto_init: bool,
    template: bool,
    gitignores: str,
    license: str,
    readme: str,
    default_branch: { type: 'string', maxLength: 100 },
    trust_model: str,
    object_format_name: { type: 'string', maxLength: 6 },
  },
  ['name'],
  { $id: 'CreateRepoOption' },
);

export const SearchResultsSchema = obj({ ok: bool, data: { type: 'array', items: { $ref: 'Repository#' } } }, [], { $id: 'SearchResults' });
