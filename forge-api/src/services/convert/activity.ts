/** Gitea's ActionType names, by value. */
export const OP_TYPES: Record<number, string> = {
  1: 'create_repo', 2: 'rename_repo', 3: 'star_repo', 4: 'watch_repo', 5: 'commit_repo', 6: 'create_issue', 7: 'create_pull_request',
  8: 'transfer_repo', 9: 'push_tag', 10: 'comment_issue', 11: 'merge_pull_request', 12: 'close_issue', 13: 'reopen_issue',
  14: 'close_pull_request', 15: 'reopen_pull_request', 16: 'delete_tag', 17: 'delete_branch', 18: 'mirror_sync_push',
  19: 'mirror_sync_create', 20: 'mirror_sync_delete', 21: 'approve_pull_request', 22: 'reject_pull_request', 23: 'comment_pull',
  24: 'publish_release', 25: 'pull_review_dismissed', 26: 'pull_request_ready_for_review', 27: 'auto_merge_pull_request',
};
