/** structs.Issue (Gitea's convert.ToAPIIssue). */
import type { Attachment, Issue, Label, Milestone } from '../../../generated/prisma/client';
import type { User } from '../records';
import { fmtTime } from './common';
import type { ConvertContext } from './context';
import { toAttachment } from './attachment';
import { toLabel } from './label';
import { toMilestone } from './milestone';
import { repoApiUrl, repoHtmlUrl, type RepoWithOwner } from './repository';
import { embeddedUser, viewedUser } from './user';

export type IssueFull = Issue & {
  labels: { label: Label }[];
  milestone: Milestone | null;
  assignees: { assigneeId: number }[];
  attachments: Attachment[];
  /** The pull request side (null for an issue). */
  pull: { hasMerged: boolean; mergedAt: Date | null } | null;
};

export const ISSUE_INCLUDE = {
  labels: { include: { label: true } },
  milestone: true,
  assignees: true,
  attachments: { where: { commentId: null } },
  pull: { select: { hasMerged: true, mergedAt: true } },
} as const;

/** Title prefixes that mark a pull request as a draft (Gitea's WORK_IN_PROGRESS_PREFIXES default). */
const WIP_PREFIXES = ['WIP:', '[WIP]'];

/** Gitea's HasWorkInProgressPrefix: a case-insensitive prefix of the title. */
export function isWorkInProgress(title: string): boolean {
  return WIP_PREFIXES.some((p) => title.slice(0, p.length).toUpperCase() === p.toUpperCase());
}

export function issueHtmlUrl(c: ConvertContext, repo: RepoWithOwner, issue: Pick<Issue, 'index' | 'isPull'>): string {
  return `${repoHtmlUrl(c, repo)}/${issue.isPull ? 'pulls' : 'issues'}/${issue.index}`;
}

export function issueApiUrl(c: ConvertContext, repo: RepoWithOwner, issue: Pick<Issue, 'index'>): string {
  return `${repoApiUrl(c, repo)}/issues/${issue.index}`;
}

/** convert.ToAPIIssue. `users` must hold the poster and assignees (missing ones are ghosts). */
export function toIssue(c: ConvertContext, i: IssueFull, repo: RepoWithOwner, users: Map<number, User>, doer: User | null) {
  const assignees = i.assignees.map((a) => embeddedUser(c, users.get(a.assigneeId)));
  return {
    id: i.id,
    url: issueApiUrl(c, repo, i),
    html_url: issueHtmlUrl(c, repo, i),
    number: i.index,
    user: viewedUser(c, users.get(i.posterId), doer),
    original_author: i.originalAuthor,
    original_author_id: i.originalAuthorId,
    title: i.title,
    body: i.body,
    ref: i.ref,
    assets: i.attachments.map((a) => toAttachment(c, a)),
    labels: i.labels.map(({ label }) => toLabel(c, label, repo)),
    milestone: i.milestone ? toMilestone(i.milestone) : null,
    assignee: assignees[0] ?? null,
    assignees: assignees.length ? assignees : null,
    state: i.isClosed ? 'closed' : 'open',
    is_locked: i.isLocked,
    comments: i.numComments,
    created_at: fmtTime(i.createdAt),
    updated_at: fmtTime(i.updatedAt),
    closed_at: i.closedAt ? fmtTime(i.closedAt) : null,
    due_date: i.deadline ? fmtTime(i.deadline) : null,
    time_estimate: 0,
    pull_request:
      i.isPull && i.pull
        ? { merged: i.pull.hasMerged, merged_at: i.pull.hasMerged && i.pull.mergedAt ? fmtTime(i.pull.mergedAt) : null, draft: isWorkInProgress(i.title), html_url: issueHtmlUrl(c, repo, i) }
        : null,
    repository: { id: repo.id, name: repo.name, owner: repo.owner.name, full_name: `${repo.owner.name}/${repo.name}` },
    pin_order: i.pinOrder,
    // Projects do not exist here yet: Gitea's empty list encodes as null.
    projects: null,
    content_version: i.contentVersion,
  };
}
