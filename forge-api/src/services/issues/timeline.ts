/**
 * An issue's timeline (GET /issues/{index}/timeline, Gitea's ListIssueCommentsAndTimeline):
 * its comments and events of every type, oldest first (Gitea orders by creation second, then
 * id; ids follow creation here), paged, filtered on the update time by `since` / `before`.
 * Each entry is Gitea's TimelineComment: the event's name as `type`, the time tracker's
 * "|<seconds>" contents in words, the tracked time an add-time or stop event recorded (even
 * once deleted, as Gitea shows it), the user an assignee event added or removed, the titles of
 * a title change, the label of a label event (null once the label is deleted), the
 * milestones of a milestone event, the other issue of a dependency event and the branches of a
 * pull request's change of target or deleted head branch, the team of a team review request. Fields of kinds
 * of events the forge does not record (projects, references) keep Gitea's empty values.
 */
import { parseDate, type IssueService } from './issues';
import type { RepoCtx, TrackerContext } from './context';
import type { IssueConverter } from '../convert';
import type { TrackedTimeService } from './tracked-times';
import { secToHours, TimeComment } from './time-tracking';
import type { Attachment, Comment, Issue } from '../../../generated/prisma/client';
import type { RepoWithOwner } from '../notify/notifier';
import type { User } from '../records';
import { toTeam } from '../convert/team';
import { AccessMode } from '../convert';
import type { PermissionService } from '../permissions';
import { REF_ACTION_NAMES } from '../markup/references';
import { RefCommentType } from './cross-references';

const REF_TYPES: ReadonlySet<number> = new Set([RefCommentType.IssueRef, RefCommentType.CommentRef, RefCommentType.PullRef]);

/** Gitea's CommentTypeCode: a review's line comment. */
const CODE_COMMENT = 21;

/** Gitea's CommentType names, by number. */
const COMMENT_TYPES = [
  'comment', 'reopen', 'close', 'issue_ref', 'commit_ref', 'comment_ref', 'pull_ref', 'label', 'milestone', 'assignees',
  'change_title', 'delete_branch', 'start_tracking', 'stop_tracking', 'add_time_manual', 'cancel_tracking', 'added_deadline',
  'modified_deadline', 'removed_deadline', 'add_dependency', 'remove_dependency', 'code', 'review', 'lock', 'unlock',
  'change_target_branch', 'delete_time_manual', 'review_request', 'merge_pull', 'pull_push', 'project', 'project_board',
  'dismiss_review', 'change_issue_ref', 'pull_scheduled_merge', 'pull_cancel_scheduled_merge', 'pin', 'unpin', 'change_time_estimate',
];

const SECONDS_CONTENT: ReadonlySet<number> = new Set([TimeComment.AddTimeManual, TimeComment.StopTracking, TimeComment.DeleteTimeManual]);

export interface TimelineQuery {
  since?: string;
  before?: string;
}

export class TimelineService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly convert: IssueConverter,
    private readonly issues: IssueService,
    private readonly times: TrackedTimeService,
    private readonly permissions: PermissionService,
  ) {}

  /**
   * References from other repositories the viewer may not read are left out (Gitea's
   * isXRefCommentAccessible), one access check per repository.
   */
  private async visible<T extends { type: number; refRepoId: number | null; refIsPull: boolean }>(rc: RepoCtx, rows: T[]): Promise<T[]> {
    const modes = new Map<string, boolean>();
    const out: T[] = [];
    for (const c of rows) {
      if (!REF_TYPES.has(c.type) || !c.refRepoId || c.refRepoId === rc.repo.id) {
        out.push(c);
        continue;
      }
      const key = `${c.refRepoId}:${c.refIsPull}`;
      if (!modes.has(key)) {
        const repo = await this.ctx.prisma.repository.findUnique({ where: { id: c.refRepoId }, include: { owner: true } });
        modes.set(key, !!repo && (await this.permissions.repoAccessMode(rc.doer, repo, c.refIsPull ? 'repo.pulls' : 'repo.issues')) >= AccessMode.Read);
      }
      if (modes.get(key)) out.push(c);
    }
    return out;
  }

  async list(rc: RepoCtx, issue: Issue, q: TimelineQuery, page: { skip: number; take: number }) {
    const before = parseDate(q.before, 'Before');
    const since = parseDate(q.since, 'Since');
    const all = await this.ctx.prisma.comment.findMany({
      // Code comments of reviews live under their review, not on the timeline (as Gitea lists it).
      where: { issueId: issue.id, type: { not: CODE_COMMENT }, ...(since || before ? { updatedAt: { ...(since ? { gte: since } : {}), ...(before ? { lte: before } : {}) } } : {}) },
      orderBy: { id: 'asc' },
      skip: page.skip,
      take: page.take,
      include: { review: true },
    });
    const rows = await this.visible(rc, all);
    const refIssueIds = [...new Set(rows.flatMap((c) => (REF_TYPES.has(c.type) && c.refIssueId ? [c.refIssueId] : [])))];
    const refIssues = new Map((refIssueIds.length ? await this.issues.toJsonMixed(refIssueIds, rc.doer) : []).map((i) => [i.id, i]));
    const refCommentIds = [...new Set(rows.flatMap((c) => (c.type === RefCommentType.CommentRef && c.refCommentId ? [c.refCommentId] : [])))];
    const refComments = new Map(
      (refCommentIds.length
        ? await this.ctx.prisma.comment.findMany({ where: { id: { in: refCommentIds } }, include: { attachments: true, issue: { select: { index: true, isPull: true, repo: { include: { owner: true } } } } } })
        : []
      ).map((c) => [c.id, c]),
    );
 const users = await this.ctx.users([...rows.map((c) => c.posterId), ...[...refComments.values()].map((c) => c.posterId), ...rows.flatMap((c) => (c.review?.assigneeId ? [c.review.assigneeId] : []))]);
    const timeIds = rows.map((c) => c.timeId).filter((id): id is number => id !== null);
    const timeRows = timeIds.length ? await this.ctx.prisma.trackedTime.findMany({ where: { id: { in: timeIds } } }) : [];
    const timeJson = new Map((await this.times.toJson(timeRows, rc.doer, false)).map((t) => [t.id, t]));
    const depIds = rows.map((c) => c.dependentIssueId).filter((id): id is number => id !== null);
    const depJson = new Map((depIds.length ? await this.issues.toJsonMixed([...new Set(depIds)], rc.doer) : []).map((i) => [i.id, i]));
    const assignees = await this.ctx.users(rows.map((c) => c.assigneeId).filter((id): id is number => id !== null));
    const labelIds = [...new Set(rows.map((c) => c.labelId).filter((id): id is number => id !== null))];
    const labels = new Map((labelIds.length ? await this.ctx.prisma.label.findMany({ where: { id: { in: labelIds } } }) : []).map((l) => [l.id, this.convert.label(l, rc.repo)]));
    const milestoneIds = [...new Set(rows.flatMap((c) => [c.milestoneId, c.oldMilestoneId]).filter((id): id is number => id !== null))];
    const milestones = new Map((milestoneIds.length ? await this.ctx.prisma.milestone.findMany({ where: { id: { in: milestoneIds } } }) : []).map((m) => [m.id, this.convert.milestone(m)]));
    const teamIds = [...new Set(rows.flatMap((c) => (c.review?.assigneeTeamId ? [c.review.assigneeTeamId] : [])))];
    // Gitea shows the team of a team review request without its organization.
    const teams = new Map((teamIds.length ? await this.ctx.prisma.team.findMany({ where: { id: { in: teamIds } }, include: { units: true } }) : []).map((t) => [t.id, toTeam(t, null)]));
    const issueUrl = this.convert.issueHtml(rc.repo, issue);
    return rows.map((c) => (this.referringCommentGone(c, refComments) ? null : {
      id: c.id,
      type: COMMENT_TYPES[c.type] ?? '',
      html_url: `${issueUrl}#issuecomment-${c.id}`,
      pull_request_url: issue.isPull ? issueUrl : '',
      issue_url: issue.isPull ? '' : issueUrl,
      user: this.convert.userPublic(users.get(c.posterId)),
      body: SECONDS_CONTENT.has(c.type) && c.content.startsWith('|') ? secToHours(Number(c.content.slice(1)) || 0) : c.content,
      created_at: c.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      updated_at: c.updatedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      old_project_id: 0,
      project_id: 0,
      old_milestone: (c.oldMilestoneId !== null && milestones.get(c.oldMilestoneId)) || null,
      milestone: (c.milestoneId !== null && milestones.get(c.milestoneId)) || null,
      tracked_time: (c.timeId !== null && timeJson.get(c.timeId)) || null,
      old_title: c.oldTitle,
      new_title: c.newTitle,
      old_ref: c.oldRef,
      new_ref: c.newRef,
      ref_issue: (REF_TYPES.has(c.type) && c.refIssueId !== null && refIssues.get(c.refIssueId)) || null,
      ref_comment: this.refComment(c.type === RefCommentType.CommentRef ? refComments.get(c.refCommentId ?? 0) : undefined, users),
      ref_action: REF_ACTION_NAMES[c.refAction] ?? 'none',
      ref_commit_sha: c.commitSha,
      review_id: c.review?.reviewId ?? 0,
      label: (c.labelId !== null && labels.get(c.labelId)) || null,
      // A review request names its reviewer on the review side of the row; assignment events on the row itself.
      assignee: c.review?.assigneeId
        ? this.convert.userPublic(users.get(c.review.assigneeId))
        : c.assigneeId !== null
          ? this.convert.userPublic(assignees.get(c.assigneeId))
          : null,
      assignee_team: (c.review?.assigneeTeamId && teams.get(c.review.assigneeTeamId)) || null,
      removed_assignee: c.review ? c.review.removedAssignee : c.removedAssignee,
      resolve_doer: null,
      dependent_issue: (c.dependentIssueId !== null && depJson.get(c.dependentIssueId)) || null,
    }));
  }

  /**
   * A comment_ref whose comment was deleted (a comment, or a review with its body and line
   * comments): the entry stays (counted, its keyword still acting at the merge), but Gitea
   * cannot render it and lists `null` in its place; clients written against Gitea expect that.
   */
  private referringCommentGone(c: Pick<Comment, 'type' | 'refCommentId'>, refComments: ReadonlyMap<number, unknown>): boolean {
    return c.type === RefCommentType.CommentRef && !refComments.has(c.refCommentId ?? 0);
  }

  private refComment(c: (Comment & { attachments: Attachment[]; issue: Pick<Issue, 'index' | 'isPull'> & { repo: RepoWithOwner } }) | undefined, users: Map<number, User>) {
    if (!c) return null;
    const json = this.convert.comment(c, c.issue, c.issue.repo, users.get(c.posterId)) as Record<string, unknown>;
    return json;
  }
}
