/** structs.PullReview and structs.PullReviewComment (Gitea's convert.ToPullReview / ToPullReviewComment). */
import type { Comment, Review, ReviewComment } from '../../../generated/prisma/client';
import type { User } from '../records';
import { fmtTime } from './common';

/** Gitea's ReviewType, as stored in Review.type. */
export const ReviewType = { Pending: 0, Approve: 1, Comment: 2, Reject: 3, Request: 4 } as const;

const STATES: Record<number, string> = { 0: 'PENDING', 1: 'APPROVED', 2: 'COMMENT', 3: 'REQUEST_CHANGES', 4: 'REQUEST_REVIEW' };

export interface ReviewParts {
  /** the reviewer as the viewer sees them (the ghost when gone; a team's request has the ghost too) */
  user: unknown;
  team: unknown;
  codeComments: number;
  /** the web page of the pull request */
  pullHtml: string;
  /** whether the review has its timeline entry (a request has none; a pending review's is not linked: html_url is '' for both) */
  hasTimelineEntry: boolean;
}

export function toPullReview(r: Review, parts: ReviewParts) {
  return {
    id: r.id,
    user: parts.user,
    team: parts.team,
    state: STATES[r.type] ?? '',
    body: r.content,
    commit_id: r.commitId,
    stale: r.stale,
    official: r.official,
    dismissed: r.dismissed,
    comments_count: parts.codeComments,
    submitted_at: fmtTime(r.createdAt),
    updated_at: fmtTime(r.updatedAt),
    html_url: parts.hasTimelineEntry && r.type !== ReviewType.Pending ? `${parts.pullHtml}#pullrequestreview-${r.id}` : '',
    pull_request_url: parts.pullHtml,
  };
}

/** The hunk part of a stored patch (Gitea's patch2diff): from the first hunk header on, or '' without one. */
function patchToDiff(patch: string): string {
  const split = patch.split('\n@@');
  return split.length === 2 ? `@@${split[1]}` : '';
}

export function toPullReviewComment(c: Comment & { review: ReviewComment | null }, poster: unknown, resolver: unknown, pullHtml: string) {
  const rc = c.review;
  const line = rc?.line ?? 0;
  return {
    id: c.id,
    body: c.content,
    user: poster,
    resolver,
    pull_request_review_id: rc?.reviewId ?? 0,
    created_at: fmtTime(c.createdAt),
    updated_at: fmtTime(c.updatedAt),
    path: rc?.treePath ?? '',
    commit_id: rc?.commitSha ?? '',
    original_commit_id: '',
    diff_hunk: patchToDiff(rc?.patch ?? ''),
    position: line >= 0 ? line : 0,
    original_position: line < 0 ? -line : 0,
    html_url: `${pullHtml}#issuecomment-${c.id}`,
    pull_request_url: pullHtml,
  };
}

/** The user as a review shows them: Gitea converts with the viewer (doer) here. */
export type UserJson = (u: User | undefined) => unknown;
