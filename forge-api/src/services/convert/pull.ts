/** structs.PullRequest (Gitea's convert.ToAPIPullRequest), built on the issue's record. */
import type { PullRequest } from '../../../generated/prisma/client';
import type { User } from '../records';
import { fmtTime } from './common';
import type { ConvertContext } from './context';
import { isWorkInProgress, type toIssue } from './issue';
import { embeddedUser } from './user';

type IssueJson = ReturnType<typeof toIssue>;

/** What the pull request's record shows beside its rows: repositories as the viewer sees them, branch tips. */
export interface PullParts {
  baseRepoJson: Record<string, unknown>;
  /** null when the head repository is gone (or an AGit head, which lives in the base repository) */
  headRepoJson: Record<string, unknown> | null;
  baseSha: string;
  /** The head branch's tip, or '' when the branch is gone (then the ref shown is refs/pull/{index}/head). */
  headBranchSha: string;
  merger: User | undefined;
  /** The open review requests: users (embedded as Gitea embeds them) and teams. */
  requestedReviewers: unknown[];
  requestedTeams: unknown[];
  /** Submitted reviews (their timeline entries); Gitea leaves the key out at 0. */
  reviewComments: number;
  /** The record of one pull request (get, create, webhooks) shows the diff size; Gitea's lists leave it out. */
  single: boolean;
}

/** Gitea's PullRequest.Mergeable: checked, without conflict or error, and not a draft. */
export function isMergeable(pr: Pick<PullRequest, 'status'>, title: string): boolean {
  return pr.status !== 1 && pr.status !== 0 && pr.status !== 4 && !isWorkInProgress(title);
}

export function toPullRequest(c: ConvertContext, pr: PullRequest, issue: IssueJson, parts: PullParts) {
  // Gitea's lists leave these unset when empty (null); the record of one pull request has [].
  const orNull = <T>(list: T[]): T[] | null => (parts.single || list.length ? list : null);
  const agit = pr.flow === 1;
  const headRef = `refs/pull/${pr.index}/head`;
  const headSha = parts.headBranchSha || pr.headCommitId;
  const withStats = parts.single && !agit && parts.headRepoJson !== null && pr.changedFiles !== null;
  return {
    id: pr.id,
    // Gitea answers the web page here too.
    url: issue.html_url,
    number: pr.index,
    user: issue.user,
    title: issue.title,
    body: issue.body,
    labels: issue.labels,
    milestone: issue.milestone,
    assignee: issue.assignee,
    assignees: orNull(issue.assignees ?? []),
    requested_reviewers: orNull(parts.requestedReviewers),
    requested_reviewers_teams: orNull(parts.requestedTeams),
    state: issue.state,
    draft: isWorkInProgress(issue.title),
    is_locked: issue.is_locked,
    comments: issue.comments,
    ...(parts.reviewComments ? { review_comments: parts.reviewComments } : {}),
    ...(withStats ? { additions: pr.additions ?? 0, deletions: pr.deletions ?? 0, changed_files: pr.changedFiles ?? 0 } : {}),
    html_url: issue.html_url,
    diff_url: `${issue.html_url}.diff`,
    patch_url: `${issue.html_url}.patch`,
    mergeable: isMergeable(pr, issue.title),
    merged: pr.hasMerged,
    merged_at: pr.hasMerged && pr.mergedAt ? fmtTime(pr.mergedAt) : null,
    merge_commit_sha: pr.hasMerged ? pr.mergedCommitId : null,
    // Gitea's lists do not load the merger: merged_by is null there, set on the record of one.
    merged_by: pr.hasMerged && parts.single ? embeddedUser(c, parts.merger) : null,
    allow_maintainer_edit: pr.allowMaintainerEdit,
    base: { label: pr.baseBranch, ref: pr.baseBranch, sha: parts.baseSha, repo_id: pr.baseRepoId, repo: parts.baseRepoJson },
    head: agit
      ? { label: '', ref: headRef, sha: pr.headCommitId, repo_id: pr.baseRepoId, repo: parts.baseRepoJson }
      : {
          label: pr.headBranch,
          ref: parts.headBranchSha ? pr.headBranch : headRef,
          sha: headSha,
          repo_id: parts.headRepoJson ? (pr.headRepoId ?? -1) : -1,
          repo: parts.headRepoJson,
        },
    merge_base: pr.mergeBase,
    due_date: issue.due_date,
    created_at: issue.created_at,
    updated_at: issue.updated_at,
    closed_at: issue.closed_at,
    pin_order: issue.pin_order,
    content_version: issue.content_version,
  };
}
