/** Gitea's Branch, BranchProtection, Tag and TagProtection records (and their option bodies). */
import { bool, dateTime, int, obj, str, strList } from './common';

const nullStrList = { type: ['array', 'null'], items: str } as const;
const payloadUser = obj({ name: str, email: str, username: str });
const verification = obj({ verified: bool, reason: str, signature: str, signer: { type: 'null' }, payload: str });
const payloadCommit = obj({
  id: str,
  message: str,
  url: str,
  author: payloadUser,
  committer: payloadUser,
  verification,
  timestamp: dateTime,
  added: nullStrList,
  removed: nullStrList,
  modified: nullStrList,
});

export const BranchSchema = obj(
  {
    name: str,
    commit: payloadCommit,
    protected: bool,
    required_approvals: int,
    enable_status_check: bool,
    status_check_contexts: nullStrList,
    user_can_push: bool,
    user_can_merge: bool,
    effective_branch_protection_name: str,
  },
  [],
  { $id: 'Branch' },
);

/** The settings of a rule, as request and response share them. */
const protectionFields = {
  priority: int,
  enable_push: bool,
  enable_push_whitelist: bool,
  push_whitelist_usernames: nullStrList,
  push_whitelist_teams: nullStrList,
  push_whitelist_deploy_keys: bool,
  enable_force_push: bool,
  enable_force_push_allowlist: bool,
  force_push_allowlist_usernames: nullStrList,
  force_push_allowlist_teams: nullStrList,
  force_push_allowlist_deploy_keys: bool,
  enable_merge_whitelist: bool,
  merge_whitelist_usernames: nullStrList,
  merge_whitelist_teams: nullStrList,
  enable_bypass_allowlist: bool,
  bypass_allowlist_usernames: nullStrList,
  bypass_allowlist_teams: nullStrList,
  enable_status_check: bool,
  status_check_contexts: nullStrList,
  required_approvals: int,
  enable_approvals_whitelist: bool,
  approvals_whitelist_username: nullStrList,
  approvals_whitelist_teams: nullStrList,
  block_on_rejected_reviews: bool,
  block_on_official_review_requests: bool,
  block_on_outdated_branch: bool,
  dismiss_stale_approvals: bool,
  ignore_stale_approvals: bool,
  require_signed_commits: bool,
  protected_file_patterns: str,
  unprotected_file_patterns: str,
  block_admin_merge_override: bool,
};

export const BranchProtectionSchema = obj({ branch_name: str, rule_name: str, ...protectionFields, created_at: dateTime, updated_at: dateTime }, [], { $id: 'BranchProtection' });
export const CreateBranchProtectionOption = obj({ branch_name: str, rule_name: str, ...protectionFields });
export const EditBranchProtectionOption = obj({ ...protectionFields, priority: { type: ['integer', 'null'] } });

export const TagSchema = obj(
  { name: str, message: str, id: str, commit: obj({ url: str, sha: str, created: dateTime }), zipball_url: str, tarball_url: str },
  [],
  { $id: 'Tag' },
);

export const TagProtectionSchema = obj(
  { id: int, name_pattern: str, whitelist_usernames: strList, whitelist_teams: strList, created_at: dateTime, updated_at: dateTime },
  [],
  { $id: 'TagProtection' },
);

export const BRANCH_SCHEMAS = [BranchSchema, BranchProtectionSchema, TagSchema, TagProtectionSchema];
