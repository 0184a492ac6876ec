/** Request and response records of the repository's settings group (edit, avatar, forks, keys, ...). */
import { bool, dateTime, int, obj, str } from './common';
import { repoMergeFields, repoTrackerFields } from './repo';

/** structs.EditRepoOption: only the fields sent change. */
export const EditRepoOptionSchema = obj(
  {
    name: { type: 'string', maxLength: 100, pattern: '^[-\\w.]*$' },
    description: { type: 'string', maxLength: 2048 },
    website: { type: 'string', maxLength: 1024 },
    private: bool,
    template: bool,
    has_code: bool,
    has_issues: bool,
    ...repoTrackerFields,
    default_branch: str,
    has_pull_requests: bool,
    has_projects: bool,
    projects_mode: { type: 'string', enum: ['repo', 'owner', 'all'] },
    has_releases: bool,
    has_packages: bool,
    has_actions: bool,
    ...repoMergeFields,
    archived: bool,
    mirror_interval: str,
    enable_prune: bool,
    mirror_username: str,
    mirror_password: str,
    mirror_token: str,
  },
  [],
  { $id: 'EditRepoOption' },
);

/** structs.UpdateRepoAvatarOption: the image, base64-encoded. */
export const UpdateRepoAvatarOptionSchema = obj({ image: str }, [], { $id: 'UpdateRepoAvatarOption' });

/** structs.CreateForkOption */
export const CreateForkOptionSchema = obj(
  { organization: str, name: { type: 'string', maxLength: 100, pattern: '^[-\\w.]*$' } },
  [],
  { $id: 'CreateForkOption' },
);

/** structs.DeployKey */
export const DeployKeySchema = obj(
  {
    id: int,
    key_id: int,
    key: str,
    url: str,
    title: str,
    fingerprint: str,
    created_at: dateTime,
    read_only: bool,
    repository: { $ref: 'Repository#' },
  },
  [],
  { $id: 'DeployKey' },
);

/** structs.CreateKeyOption */
export const CreateKeyOptionSchema = obj({ title: { type: 'string', minLength: 1, maxLength: 50 }, key: { type: 'string', minLength: 1 }, read_only: bool }, ['title', 'key'], { $id: 'CreateKeyOption' });


/** structs.GenerateRepoOption */
export const GenerateRepoOptionSchema = obj(
  {
    owner: str,
    name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[-\\w.]+$' },
    default_branch: str,
    description: { type: 'string', maxLength: 2048 },
    private: bool,
    git_content: bool,
    topics: bool,
    git_hooks: bool,
    webhooks: bool,
    avatar: bool,
    labels: bool,
    protected_branch: bool,
  },
  ['name'],
  { $id: 'GenerateRepoOption' },
);

/** structs.PushMirror */
export const PushMirrorSchema = obj(
  {
    repo_name: str,
    remote_name: str,
    remote_address: str,
    created: dateTime,
    last_update: dateTime,
    last_error: str,
    interval: str,
    sync_on_commit: bool,
  },
  [],
  { $id: 'PushMirror' },
);

/** structs.CreatePushMirrorOption (no binding rules: Gitea checks interval and address itself). */
export const CreatePushMirrorOptionSchema = obj(
  { remote_address: str, remote_username: str, remote_password: str, interval: str, sync_on_commit: bool },
  [],
  { $id: 'CreatePushMirrorOption' },
);

/** structs.MergeUpstreamRequest / MergeUpstreamResponse */
export const MergeUpstreamRequestSchema = obj({ branch: str, ff_only: bool }, [], { $id: 'MergeUpstreamRequest' });
export const MergeUpstreamResponseSchema = obj({ merge_type: str }, [], { $id: 'MergeUpstreamResponse' });

export const REPO_SETTINGS_SCHEMAS = [
  PushMirrorSchema,
  CreatePushMirrorOptionSchema,
  MergeUpstreamRequestSchema,
  MergeUpstreamResponseSchema,
EditRepoOptionSchema, UpdateRepoAvatarOptionSchema, CreateForkOptionSchema, DeployKeySchema, CreateKeyOptionSchema, GenerateRepoOptionSchema];
