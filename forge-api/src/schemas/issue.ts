/** Gitea's issue tracker records: structs.Issue, Comment, Label, Milestone, Attachment, Reaction, NotificationThread. */
import { bool, dateTime, int, nullable, nullTime, obj, str } from './common';

export const AttachmentSchema = obj(
  { id: int, name: str, size: int, download_count: int, created_at: dateTime, uuid: str, browser_download_url: str },
  [],
  { $id: 'Attachment' },
);

export const LabelSchema = obj({ id: int, name: str, exclusive: bool, is_archived: bool, color: str, description: str, url: str }, [], { $id: 'Label' });

export const MilestoneSchema = obj(
  { id: int, title: str, description: str, state: str, open_issues: int, closed_issues: int, created_at: dateTime, updated_at: dateTime, closed_at: nullTime, due_on: nullTime },
  [],
  { $id: 'Milestone' },
);

/** Labels, milestone and assignees, as an issue and a pull request show them (in this order in both). */
export const ISSUE_TRIAGE_FIELDS = {
  labels: { type: 'array', items: { $ref: 'Label#' } },
  milestone: nullable({ $ref: 'Milestone#' }),
  assignee: nullable({ $ref: 'User#' }),
  // null in lists when empty, as Gitea's
  assignees: nullable({ type: 'array', items: { $ref: 'User#' } }),
};

export const IssueSchema = obj(
  {
    id: int,
    url: str,
    html_url: str,
    number: int,
    user: { $ref: 'User#' },
    original_author: str,
    original_author_id: int,
    title: str,
    body: str,
    ref: str,
    assets: { type: 'array', items: { $ref: 'Attachment#' } },
    ...ISSUE_TRIAGE_FIELDS,
    state: str,
    is_locked: bool,
    comments: int,
    created_at: dateTime,
    updated_at: dateTime,
    closed_at: nullTime,
    due_date: nullTime,
    time_estimate: int,
    pull_request: nullable(obj({ merged: bool, merged_at: nullTime, draft: bool, html_url: str })),
    repository: obj({ id: int, name: str, owner: str, full_name: str }),
    pin_order: int,
    projects: { type: ['array', 'null'], items: { type: 'object', additionalProperties: true } },
    content_version: int,
  },
  [],
  { $id: 'Issue' },
);

export const CommentSchema = obj(
  {
    id: int,
    html_url: str,
    pull_request_url: str,
    issue_url: str,
    user: { $ref: 'User#' },
    original_author: str,
    original_author_id: int,
    body: str,
    assets: { type: 'array', items: { $ref: 'Attachment#' } },
    created_at: dateTime,
    updated_at: dateTime,
  },
  [],
  { $id: 'Comment' },
);

export const ReactionSchema = obj({ user: { $ref: 'User#' }, content: str, created_at: dateTime }, [], { $id: 'Reaction' });

export const NotificationThreadSchema = obj(
  {
    id: int,
    repository: { $ref: 'Repository#' },
    subject: obj({ title: str, url: str, latest_comment_url: str, html_url: str, latest_comment_html_url: str, type: str, state: str }),
    unread: bool,
    pinned: bool,
    updated_at: dateTime,
    url: str,
  },
  [],
  { $id: 'NotificationThread' },
);

/** structs.TrackedTime: `issue` is null only where Gitea could not load it. */
export const TrackedTimeSchema = obj(
  { id: int, created: dateTime, time: int, user_id: int, user_name: str, issue_id: int, issue: { anyOf: [{ $ref: 'Issue#' }, { type: 'null' }] } },
  [],
  { $id: 'TrackedTime' },
);

/** structs.StopWatch: a running stopwatch, with its elapsed time in seconds and in words. */
export const StopWatchSchema = obj(
  { created: dateTime, seconds: int, duration: str, issue_index: int, issue_title: str, repo_owner_name: str, repo_name: str },
  [],
  { $id: 'StopWatch' },
);

/** structs.TimelineComment: a comment or an event of an issue's timeline. */
export const TimelineCommentSchema = obj(
  {
    id: int,
    type: str,
    html_url: str,
    pull_request_url: str,
    issue_url: str,
    user: { $ref: 'User#' },
    body: str,
    created_at: dateTime,
    updated_at: dateTime,
    old_project_id: int,
    project_id: int,
    old_milestone: nullable({ $ref: 'Milestone#' }),
    milestone: nullable({ $ref: 'Milestone#' }),
    tracked_time: nullable({ $ref: 'TrackedTime#' }),
    old_title: str,
    new_title: str,
    old_ref: str,
    new_ref: str,
    ref_issue: nullable({ $ref: 'Issue#' }),
    ref_comment: nullable({ $ref: 'Comment#' }),
    ref_action: str,
    ref_commit_sha: str,
    review_id: int,
    label: nullable({ $ref: 'Label#' }),
    assignee: nullable({ $ref: 'User#' }),
    assignee_team: nullable({ $ref: 'Team#' }),
    removed_assignee: bool,
    resolve_doer: nullable({ $ref: 'User#' }),
    dependent_issue: nullable({ $ref: 'Issue#' }),
  },
  [],
  { $id: 'TimelineComment' },
);

/** structs.AddTimeOption */
export const AddTimeOptionSchema = obj({ time: int, created: dateTime, user_name: str }, ['time'], { $id: 'AddTimeOption' });

export const ISSUE_SCHEMAS = [
  AttachmentSchema,
  LabelSchema,
  MilestoneSchema,
  IssueSchema,
  CommentSchema,
  ReactionSchema,
  NotificationThreadSchema,
  TrackedTimeSchema,
  StopWatchSchema,
  AddTimeOptionSchema,
  TimelineCommentSchema,
];
