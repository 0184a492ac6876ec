/** Gitea's pull request records: structs.PullRequest, PRBranchInfo. */
import { bool, dateTime, int, nullable, nullTime, obj, str } from './common';
import { ISSUE_TRIAGE_FIELDS } from './issue';

export const PRBranchInfoSchema = obj({ label: str, ref: str, sha: str, repo_id: int, repo: nullable({ $ref: 'Repository#' }) }, [], { $id: 'PRBranchInfo' });

export const PullRequestSchema = obj(
  {
    id: int,
    url: str,
    number: int,
    user: { $ref: 'User#' },
    title: str,
    body: str,
    ...ISSUE_TRIAGE_FIELDS,
    // null in lists when empty, as Gitea's
    requested_reviewers: nullable({ type: 'array', items: { $ref: 'User#' } }),
    requested_reviewers_teams: nullable({ type: 'array', items: { $ref: 'Team#' } }),
    state: str,
    draft: bool,
    is_locked: bool,
    comments: int,
    review_comments: int,
    additions: int,
    deletions: int,
    changed_files: int,
    html_url: str,
    diff_url: str,
    patch_url: str,
    mergeable: bool,
    merged: bool,
    merged_at: nullTime,
    merge_commit_sha: { type: ['string', 'null'] },
    merged_by: nullable({ $ref: 'User#' }),
    allow_maintainer_edit: bool,
    base: { $ref: 'PRBranchInfo#' },
    head: { $ref: 'PRBranchInfo#' },
    merge_base: str,
    due_date: nullTime,
    created_at: dateTime,
    updated_at: dateTime,
    closed_at: nullTime,
    pin_order: int,
    content_version: int,
  },
  [],
  { $id: 'PullRequest' },
);

export const ChangedFileSchema = obj(
  { filename: str, previous_filename: str, status: str, additions: int, deletions: int, changes: int, html_url: str, contents_url: str, raw_url: str },
  [],
  { $id: 'ChangedFile' },
);

export const PullReviewSchema = obj(
  {
    id: int,
    user: nullable({ $ref: 'User#' }),
    team: nullable({ $ref: 'Team#' }),
    state: str,
    body: str,
    commit_id: str,
    stale: bool,
    official: bool,
    dismissed: bool,
    comments_count: int,
    submitted_at: dateTime,
    updated_at: dateTime,
    html_url: str,
    pull_request_url: str,
  },
  [],
  { $id: 'PullReview' },
);

export const PullReviewCommentSchema = obj(
  {
    id: int,
    body: str,
    user: nullable({ $ref: 'User#' }),
    resolver: nullable({ $ref: 'User#' }),
    pull_request_review_id: int,
    created_at: dateTime,
    updated_at: dateTime,
    path: str,
    commit_id: str,
    original_commit_id: str,
    diff_hunk: str,
    position: int,
    original_position: int,
    html_url: str,
    pull_request_url: str,
  },
  [],
  { $id: 'PullReviewComment' },
);

export const PULL_SCHEMAS = [PRBranchInfoSchema, PullRequestSchema, ChangedFileSchema, PullReviewSchema, PullReviewCommentSchema];
