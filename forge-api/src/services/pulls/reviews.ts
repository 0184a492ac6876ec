/**
 * Reviews of a pull request (Gitea's models/issues/review.go and services/pull/review.go):
 * pending reviews collect code comments until submitted; every creation or submission of a
 * review, a pending one's too, leaves a timeline entry with its body (comment type 22); approvals and change requests are "official" when the reviewer may
 * approve under the base branch's protection (or writes to the code without one), and only a
 * reviewer's latest official one counts. Requests for a review (type 4) name a user or a team
 * and are answered by that reviewer's next review.
 */
import { AccessMode, type RepoWithOwner } from '../convert';
import type { Converter } from '../convert';
import { toPullReview, toPullReviewComment, ReviewType } from '../convert/pull-review';
import { toTeam } from '../convert/team';
import { issueHtmlUrl } from '../convert/issue';
import type { Prisma, PrismaNS } from '../database';
import { InvalidError, MalformedError, NotFoundError, PermissionDeniedError } from '../errors';
import type { BranchProtectionService } from '../branch-protection';
import type { PermissionService } from '../permissions';
import type { Notifier } from '../notify/notifier';
import type { User } from '../records';
import type { RepoCtx } from '../issues/context';
import type { Comment, Issue, PullRequest, Review } from '../../../generated/prisma/client';
import { resolveRef } from '../git/refs';
import { runGit } from '../git/run';
import { ghostUser as ghost } from '../convert/user';
import { fileDiffAroundLine } from './comment-patch';
import { pullHeadRef } from './git';

/** Comment types of the review side of the timeline (Gitea's CommentType). */
export const ReviewCommentType = { Code: 21, Review: 22, ReviewRequest: 27, DismissReview: 32 } as const;

export interface CreateReviewInput {
  event?: string;
  body?: string;
  commit_id?: string;
  comments?: { path?: string; body?: string; old_position?: number; new_position?: number }[];
}

type Ctx = RepoCtx & { doer: User };

/** The timeline text of an approval dismissed by a push (Gitea's words, which clients show). */
const STALE_APPROVAL_DISMISSED = 'New commits pushed, approval review dismissed automatically according to repository settings';
type Tx = PrismaNS.TransactionClient;

export interface ReviewDeps {
  prisma: Prisma;
  convert: Converter;
  permissions: PermissionService;
  protections: BranchProtectionService;
  diskPath(repo: RepoWithOwner): string;
  notifier: Notifier;
}

export class PullReviewService {
  constructor(private readonly deps: ReviewDeps) {}

  private get prisma() {
    return this.deps.prisma;
  }

  private pullHtml(repo: RepoWithOwner, pr: PullRequest): string {
    return issueHtmlUrl(this.deps.convert.context, repo, { index: pr.index, isPull: true });
  }

  /** Gitea's IsOfficialReviewer: the base branch's rule decides, else write access to the code. */
  async isOfficialReviewer(repo: RepoWithOwner, pr: PullRequest, user: User): Promise<boolean> {
    const rule = await this.deps.protections.ruleFor(pr.baseRepoId, pr.baseBranch);
    if (!rule) return (await this.deps.permissions.repoAccessMode(user, repo, 'repo.code')) >= AccessMode.Write;
    return this.deps.protections.isOfficialReviewer(rule, user, repo);
  }

  /** Reviews as records, for one viewer: the reviewer, the team of a team request, counts and links in a few queries. */
  async json(repo: RepoWithOwner, pr: PullRequest, reviews: Review[], doer: User | null) {
    if (!reviews.length) return [];
    const ids = reviews.map((r) => r.id);
    const users = new Map((await this.prisma.user.findMany({ where: { id: { in: reviews.map((r) => r.reviewerId) } } })).map((u) => [u.id, u]));
    const teamIds = reviews.flatMap((r) => (r.reviewerTeamId ? [r.reviewerTeamId] : []));
    const teams = new Map((teamIds.length ? await this.prisma.team.findMany({ where: { id: { in: teamIds } }, include: { units: true } }) : []).map((t) => [t.id, t]));
    const links = await this.prisma.reviewComment.findMany({ where: { reviewId: { in: ids } }, select: { reviewId: true, comment: { select: { type: true } } } });
    const codeCount = new Map<number, number>();
    const withEntry = new Set<number>();
    for (const l of links) {
      if (l.comment.type === ReviewCommentType.Code) codeCount.set(l.reviewId, (codeCount.get(l.reviewId) ?? 0) + 1);
      if (l.comment.type === ReviewCommentType.Review) withEntry.add(l.reviewId);
    }
    const pullHtml = this.pullHtml(repo, pr);
    const c = this.deps.convert;
    return reviews.map((r) => {
      const team = r.reviewerTeamId ? teams.get(r.reviewerTeamId) : undefined;
      return toPullReview(r, {
        user: r.reviewerId ? c.userFor(users.get(r.reviewerId) ?? ghost(), doer) : null,
        team: team ? toTeam(team) : null,
        codeComments: codeCount.get(r.id) ?? 0,
        pullHtml,
        hasTimelineEntry: withEntry.has(r.id),
      });
    });
  }

  /** GET /reviews: every review and request of the pull request, oldest first; others' pending reviews are left out of the page (not of the count), as Gitea does. */
  async list(rc: RepoCtx, pr: PullRequest, skip: number, take: number) {
    const where = { issueId: pr.issueId };
    const [rows, total] = await Promise.all([this.prisma.review.findMany({ where, orderBy: { id: 'asc' }, skip, take }), this.prisma.review.count({ where })]);
    const visible = rows.filter((r) => r.type !== ReviewType.Pending || (rc.doer && (rc.doer.isAdmin || rc.doer.id === r.reviewerId)));
    return { data: await this.json(rc.repo, pr, visible, rc.doer), total };
  }

  /** Gitea's prepareSingleReview: the review of this pull request; someone else's pending review is 404. */
  async byId(rc: RepoCtx, pr: PullRequest, id: number): Promise<Review> {
    const review = Number.isSafeInteger(id) ? await this.prisma.review.findUnique({ where: { id } }) : null;
    if (!review) throw new NotFoundError('not found', [`review does not exist [id: ${id}]`]);
    if (review.issueId !== pr.issueId) throw new NotFoundError();
    if (review.type === ReviewType.Pending && !(rc.doer && (rc.doer.isAdmin || rc.doer.id === review.reviewerId))) throw new NotFoundError();
    return review;
  }

  async one(rc: RepoCtx, pr: PullRequest, review: Review) {
    return (await this.json(rc.repo, pr, [review], rc.doer))[0];
  }

  /** GET /reviews/{id}/comments: the review's code comments, by path and line. */
  async comments(rc: RepoCtx, pr: PullRequest, review: Review) {
    const rows = await this.prisma.comment.findMany({
      where: { issueId: pr.issueId, type: ReviewCommentType.Code, review: { reviewId: review.id } },
      include: { review: true },
      orderBy: { id: 'asc' },
    });
    rows.sort((a, b) => (a.review!.treePath < b.review!.treePath ? -1 : a.review!.treePath > b.review!.treePath ? 1 : a.review!.line - b.review!.line || a.id - b.id));
    return this.commentJson(rc, pr, rows);
  }

  private async commentJson(rc: RepoCtx, pr: PullRequest, rows: Awaited<ReturnType<typeof this.codeComment>>[]) {
    const ids = rows.flatMap((c) => [c.posterId, ...(c.review?.resolveDoerId ? [c.review.resolveDoerId] : [])]);
    const users = new Map((await this.prisma.user.findMany({ where: { id: { in: ids } } })).map((u) => [u.id, u]));
    const pullHtml = this.pullHtml(rc.repo, pr);
    const c = this.deps.convert;
    return rows.map((row) => {
      const resolver = row.review?.resolveDoerId ? c.userFor(users.get(row.review.resolveDoerId) ?? ghost(), rc.doer) : null;
      return toPullReviewComment(row, c.userFor(users.get(row.posterId) ?? ghost(), rc.doer), resolver, pullHtml);
    });
  }

  private async codeComment(id: number) {
    return this.prisma.comment.findUniqueOrThrow({ where: { id }, include: { review: true } });
  }

  /** Gitea's preparePullReviewType: the event's review type, or the 422 Gitea gives. */
  private reviewType(issue: Issue, doer: User, event: string | undefined, body: string | undefined, hasComments: boolean): number {
    const hasBody = (body ?? '').trim().length > 0;
    let type: number;
    let needsBody = true;
    switch (event) {
      case 'APPROVED':
        if (issue.posterId === doer.id) throw new InvalidError('approve your own pull is not allowed');
        type = ReviewType.Approve;
        needsBody = false;
        break;
      case 'REQUEST_CHANGES':
        if (issue.posterId === doer.id) throw new InvalidError('reject your own pull is not allowed');
        type = ReviewType.Reject;
        break;
      case 'COMMENT':
        type = ReviewType.Comment;
        needsBody = false;
        if (!hasBody && !hasComments) throw new InvalidError(`review event ${event} requires a body or a comment`);
        break;
      default:
        type = ReviewType.Pending;
    }
    if (needsBody && !hasBody) throw new InvalidError(`review event ${event ?? ''} requires a body`);
    return type;
  }

  private async headCommit(rc: RepoCtx, pr: PullRequest): Promise<string> {
    return (await resolveRef(this.deps.diskPath(rc.repo), pullHeadRef(pr.index))) ?? pr.headCommitId;
  }

  /** The doer's pending review of the pull request (Gitea's GetCurrentReview). */
  private async pending(tx: Tx | Prisma, issueId: number, doerId: number): Promise<Review | null> {
    return tx.review.findFirst({ where: { issueId, reviewerId: doerId, type: ReviewType.Pending }, orderBy: { id: 'desc' } });
  }

  /** POST /reviews: the comments go into the doer's pending review, which is then submitted with the event (PENDING keeps it pending). */
  async create(rc: Ctx, pr: PullRequest, input: CreateReviewInput) {
    const issue = await this.prisma.issue.findUniqueOrThrow({ where: { id: pr.issueId } });
    const comments = input.comments ?? [];
    const type = this.reviewType(issue, rc.doer, input.event, input.body, comments.length > 0);
    const commitId = input.commit_id || (await this.headCommit(rc, pr));
    const path = this.deps.diskPath(rc.repo);
    const patches = await Promise.all(
      comments.map((c) => {
        const line = (c.old_position ?? 0) > 0 ? -(c.old_position as number) : (c.new_position ?? 0);
        return fileDiffAroundLine(path, pr.mergeBase, commitId, c.path ?? '', line).then((patch) => ({ line, patch }));
      }),
    );
    const written: Comment[] = [];
    const review = await this.prisma.$transaction(async (tx) => {
      let pending = await this.pending(tx, issue.id, rc.doer.id);
      for (const [i, c] of comments.entries()) {
        if (!pending) pending = await tx.review.create({ data: { type: ReviewType.Pending, reviewerId: rc.doer.id, issueId: issue.id, commitId } });
        const now = new Date();
        written.push(await tx.comment.create({
          data: {
            type: ReviewCommentType.Code,
            issueId: issue.id,
            repoId: rc.repo.id,
            posterId: rc.doer.id,
            content: c.body ?? '',
            createdAt: now,
            updatedAt: now,
            review: { create: { reviewId: pending.id, treePath: c.path ?? '', line: patches[i].line, commitSha: commitId, patch: patches[i].patch } },
          },
        }));
      }
      if (type === ReviewType.Pending) {
        const content = input.body ?? '';
        const kept = pending
          ? await tx.review.update({ where: { id: pending.id }, data: { content, commitId } })
          : await tx.review.create({ data: { type: ReviewType.Pending, reviewerId: rc.doer.id, issueId: issue.id, commitId, content } });
        // Gitea runs a pending review through the same submission, which writes the body of
        // each call as a review entry of the timeline (the submission later writes its own).
        const now = new Date();
        written.push(
          await tx.comment.create({
            data: { type: ReviewCommentType.Review, issueId: issue.id, repoId: rc.repo.id, posterId: rc.doer.id, content, createdAt: now, updatedAt: now, review: { create: { reviewId: kept.id } } },
          }),
        );
        return kept;
      }
      return this.submitIn(tx, rc, pr, issue, type, input.body ?? '', commitId, written);
    });
    await this.deps.notifier.reviewTextWritten(rc.doer, rc.repo, issue, written);
    if (type !== ReviewType.Pending) await this.deps.notifier.pullRequestReviewed(rc.doer, rc.repo, issue, review);
    return this.one(rc, pr, review);
  }

  /** POST /reviews/{id}: a pending review submitted with an event. */
  async submit(rc: Ctx, pr: PullRequest, review: Review, input: { event?: string; body?: string }) {
    if (review.type !== ReviewType.Pending) throw new InvalidError('only a pending review can be submitted');
    const issue = await this.prisma.issue.findUniqueOrThrow({ where: { id: pr.issueId } });
    const codeComments = await this.prisma.reviewComment.count({ where: { reviewId: review.id, comment: { type: ReviewCommentType.Code } } });
    const type = this.reviewType(issue, rc.doer, input.event, input.body, codeComments > 0);
    if (type === ReviewType.Pending) throw new InvalidError('review stay pending');
    const head = await this.headCommit(rc, pr);
    const written: Comment[] = [];
    const submitted = await this.prisma.$transaction((tx) => this.submitIn(tx, rc, pr, issue, type, input.body ?? '', head, written));
    await this.deps.notifier.reviewTextWritten(rc.doer, rc.repo, issue, written);
    await this.deps.notifier.pullRequestReviewed(rc.doer, rc.repo, issue, submitted);
    return this.one(rc, pr, submitted);
  }

  /**
   * Gitea's SubmitReview: the doer's pending review (or a new one) takes the type, body and
   * commit; an approval or change request becomes the doer's one official review when they may
   * approve, and is stale when the pull request's content changed since `commitId`; the
   * doer's own review request and the requests of their teams are answered. `written`
   * receives the review's timeline comment, whose text is read for references after the commit.
   */
  private async submitIn(tx: Tx, rc: Ctx, pr: PullRequest, issue: Issue, type: number, content: string, commitId: string, written: Comment[]): Promise<Review> {
    const decisive = type === ReviewType.Approve || type === ReviewType.Reject;
    if (decisive && issue.isClosed) throw new InvalidError("can't submit review for a closed or merged PR");
    const head = await this.headCommit(rc, pr);
    const stale = decisive && commitId !== head ? await this.contentChanged(rc, pr, commitId, head) : false;
    let official = false;
    if (decisive) {
      await tx.review.updateMany({ where: { issueId: issue.id, reviewerId: rc.doer.id }, data: { official: false } });
      official = await this.isOfficialReviewer(rc.repo, pr, rc.doer);
    }
    const existing = await this.pending(tx, issue.id, rc.doer.id);
    const now = new Date();
    let review: Review;
    if (!existing) {
      if (type !== ReviewType.Approve && !content.trim()) throw new InvalidError('cannot submit empty review');
      review = await tx.review.create({ data: { type, reviewerId: rc.doer.id, issueId: issue.id, content, official, commitId, stale, createdAt: now, updatedAt: now } });
    } else {
      const code = await tx.reviewComment.count({ where: { reviewId: existing.id, comment: { type: ReviewCommentType.Code } } });
      if (type !== ReviewType.Approve && !code && !content.trim()) throw new InvalidError('cannot submit empty review');
      review = await tx.review.update({ where: { id: existing.id }, data: { type, content, official, commitId, stale } });
      await tx.review.deleteMany({ where: { issueId: issue.id, reviewerId: rc.doer.id, type: ReviewType.Request } });
    }
    written.push(
      await tx.comment.create({
        data: { type: ReviewCommentType.Review, issueId: issue.id, repoId: rc.repo.id, posterId: rc.doer.id, content, createdAt: now, updatedAt: now, review: { create: { reviewId: review.id } } },
      }),
    );
    if (decisive && rc.repo.owner.type === 1) {
      const teamRequests = await tx.review.findMany({ where: { issueId: issue.id, reviewerTeamId: { gt: 0 }, type: ReviewType.Request } });
      for (const req of teamRequests) {
        if (await tx.teamUser.count({ where: { teamId: req.reviewerTeamId, userId: rc.doer.id } })) await tx.review.delete({ where: { id: req.id } });
      }
    }
    return review;
  }

  private contentChanged(rc: RepoCtx, pr: PullRequest, from: string, to: string): Promise<boolean> {
    return contentChanged(this.deps.diskPath(rc.repo), pr.mergeBase, from, to);
  }

  /**
   * After a push moved the head of an open pull request from `before` to `after` (Gitea's
   * AddTestPullRequestTask for a synchronized head): when the pull request's changes differ,
   * every review is stale and, if the base branch's rule dismisses stale approvals, the
   * standing approvals are dismissed (with the timeline entry Gitea writes); reviews given on
   * `after` are fresh. The head repository holds both commits (a fork borrows its parent's
   * objects).
   */
  async headPushed(doer: User, headRepo: RepoWithOwner, baseRepo: RepoWithOwner, pr: PullRequest & { issue: Issue }, before: string, after: string): Promise<void> {
    if (await contentChanged(this.deps.diskPath(headRepo), pr.mergeBase, before, after)) {
      await this.prisma.review.updateMany({ where: { issueId: pr.issueId }, data: { stale: true } });
      const rule = await this.deps.protections.ruleFor(pr.baseRepoId, pr.baseBranch);
      if (rule?.settings.dismiss_stale_approvals) {
        for (const review of await this.dismissApprovals(doer, pr)) await this.deps.notifier.pullReviewDismissed(doer, baseRepo, pr.issue, review);
      }
    }
    await this.prisma.review.updateMany({ where: { issueId: pr.issueId, commitId: after }, data: { stale: false } });
  }

  /** Gitea's DismissApprovalReviews: every standing approval dismissed, each with a timeline entry. */
  private async dismissApprovals(doer: User, pr: PullRequest): Promise<Review[]> {
    return this.prisma.$transaction(async (tx) => {
      const approvals = await tx.review.findMany({ where: { issueId: pr.issueId, type: ReviewType.Approve, dismissed: false }, orderBy: { id: 'asc' } });
      const now = new Date();
      for (const review of approvals) {
        await tx.review.update({ where: { id: review.id }, data: { dismissed: true } });
        await tx.comment.create({
          data: {
            type: ReviewCommentType.DismissReview,
            issueId: pr.issueId,
            repoId: pr.baseRepoId,
            posterId: doer.id,
            content: STALE_APPROVAL_DISMISSED,
            createdAt: now,
            updatedAt: now,
            review: { create: { reviewId: review.id, assigneeId: review.reviewerId } },
          },
        });
      }
      return approvals.map((r) => ({ ...r, dismissed: true }));
    });
  }

  /** DELETE /reviews/{id}: by the reviewer or a site administrator; a request cannot be deleted here. */
  async delete(rc: Ctx, pr: PullRequest, review: Review): Promise<void> {
    if (!rc.doer.isAdmin && rc.doer.id !== review.reviewerId) throw new PermissionDeniedError('no permission to delete comment');
    if (review.type === ReviewType.Request) throw new InvalidError('review request can not be deleted using this method');
    await this.prisma.$transaction(async (tx) => {
      const linked = await tx.reviewComment.findMany({
        where: { reviewId: review.id, comment: { type: { in: [ReviewCommentType.Code, ReviewCommentType.Review, ReviewCommentType.DismissReview] } } },
        select: { commentId: true },
      });
      await tx.comment.deleteMany({ where: { id: { in: linked.map((l) => l.commentId) } } });
      await tx.review.delete({ where: { id: review.id } });
      if (review.official) await this.restoreLatestOfficial(tx, pr.issueId, review.reviewerId);
    });
  }

  /**
   * Gitea's RecalculateReviewsOfficial, once the base branch changed: whether an approval or a
   * change request counts was decided under the old base's rule, so only each reviewer's latest
   * one keeps the flag, and only if the reviewer may review officially under the new base's rule
   * (an approval from an unprotected branch must not satisfy a protected one).
   */
  async recalculateOfficial(repo: RepoWithOwner, pr: PullRequest): Promise<void> {
    const verdicts = { issueId: pr.issueId, type: { in: [ReviewType.Approve, ReviewType.Reject] } };
    const latest = new Map<number, number>();
    for (const r of await this.prisma.review.findMany({ where: verdicts, select: { id: true, reviewerId: true }, orderBy: { id: 'asc' } })) latest.set(r.reviewerId, r.id);
    const users = new Map((await this.prisma.user.findMany({ where: { id: { in: [...latest.keys()] } } })).map((u) => [u.id, u]));
    const official: number[] = [];
    for (const [reviewerId, id] of latest) {
      const user = users.get(reviewerId);
      if (user && (await this.isOfficialReviewer(repo, pr, user))) official.push(id);
    }
    await this.prisma.$transaction([
      this.prisma.review.updateMany({ where: verdicts, data: { official: false } }),
      this.prisma.review.updateMany({ where: { id: { in: official } }, data: { official: true } }),
    ]);
  }

  /** Gitea's restoreLatestOfficialReview: the reviewer's latest approval or change request counts again. */
  async restoreLatestOfficial(tx: Tx, issueId: number, reviewerId: number): Promise<void> {
    const latest = await tx.review.findFirst({ where: { issueId, reviewerId, type: { in: [ReviewType.Approve, ReviewType.Reject] } }, orderBy: { id: 'desc' } });
    if (latest) await tx.review.update({ where: { id: latest.id }, data: { official: true } });
  }

  /** POST /reviews/{id}/dismissals and /undismissals: repository administrators, on approvals and change requests of an open pull request. */
  async dismiss(rc: Ctx, pr: PullRequest, review: Review, dismiss: boolean, message: string, priors: boolean) {
    if (review.type !== ReviewType.Approve && review.type !== ReviewType.Reject) {
      throw new PermissionDeniedError("not need to dismiss this review because it's type is not Approve or change request");
    }
    const issue = await this.prisma.issue.findUniqueOrThrow({ where: { id: pr.issueId } });
    if (issue.isClosed || pr.hasMerged) throw new PermissionDeniedError("can't dismiss a review associated to a closed or merged PR");
    const written: Comment[] = [];
    await this.prisma.$transaction(async (tx) => {
      if (review.dismissed !== dismiss) await tx.review.update({ where: { id: review.id }, data: { dismissed: dismiss } });
      if (priors) {
        await tx.review.updateMany({ where: { issueId: review.issueId, reviewerId: review.reviewerId, dismissed: false, type: { in: [ReviewType.Approve, ReviewType.Reject] } }, data: { dismissed: true } });
      }
      if (dismiss) {
        const now = new Date();
        written.push(
          await tx.comment.create({
            data: {
              type: ReviewCommentType.DismissReview,
              issueId: issue.id,
              repoId: rc.repo.id,
              posterId: rc.doer.id,
              content: message,
              createdAt: now,
              updatedAt: now,
              review: { create: { reviewId: review.id, assigneeId: review.reviewerId } },
            },
          }),
        );
      }
    });
    await this.deps.notifier.reviewTextWritten(rc.doer, rc.repo, issue, written);
    const updated = await this.prisma.review.findUniqueOrThrow({ where: { id: review.id } });
    if (dismiss) await this.deps.notifier.pullReviewDismissed(rc.doer, rc.repo, issue, updated);
    return this.one(rc, pr, updated);
  }

  /** A code comment of this repository's pull requests (Gitea's getPullReviewCommentToResolve). */
  async codeCommentOf(rc: RepoCtx, id: number) {
    const c = Number.isSafeInteger(id) ? await this.prisma.comment.findFirst({ where: { id, repoId: rc.repo.id }, include: { review: true, issue: true } }) : null;
    if (!c) throw new NotFoundError('not found', [`comment does not exist [id: ${id}]`]);
    if (!c.issue.isPull) throw new MalformedError('comment does not belong to a pull request');
    if (c.type !== ReviewCommentType.Code) throw new MalformedError('comment is not a review comment');
    return c;
  }

  /**
   * POST /pulls/comments/{id}/resolve and /unresolve. Gitea's CanMarkConversation: the pull
   * request's poster, whoever writes to the pull requests, or an official reviewer.
   */
  async resolve(rc: Ctx, commentId: number, resolve: boolean): Promise<void> {
    const c = await this.codeCommentOf(rc, commentId);
    const pr = await this.prisma.pullRequest.findUniqueOrThrow({ where: { issueId: c.issueId } });
    const canMark = !rc.repo.isArchived && (c.issue.posterId === rc.doer.id || rc.canWrite || (await this.isOfficialReviewer(rc.repo, pr, rc.doer)));
    if (!canMark) throw new PermissionDeniedError('user should have permission to resolve comment');
    // Resolving a resolved conversation (or reopening an open one) changes nothing and is no error.
    if (resolve === (c.review?.resolveDoerId != null)) return;
    await this.prisma.reviewComment.update({ where: { commentId: c.id }, data: { resolveDoerId: resolve ? rc.doer.id : null } });
  }

  /** POST /pulls/{index}/comments/{id}/replies: a code comment on the same line, in the parent's review. */
  async reply(rc: Ctx, pr: PullRequest, commentId: number, body: string) {
    const parent = await this.codeCommentOf(rc, commentId);
    if (parent.issue.index !== pr.index) throw new NotFoundError();
    const r = parent.review!;
    if (!r.reviewId) throw new MalformedError('comment is not a review comment');
    const now = new Date();
    const created = await this.prisma.comment.create({
      data: {
        type: ReviewCommentType.Code,
        issueId: parent.issueId,
        repoId: rc.repo.id,
        posterId: rc.doer.id,
        content: body,
        createdAt: now,
        updatedAt: now,
        review: { create: { reviewId: r.reviewId, treePath: r.treePath, line: r.line, commitSha: r.commitSha, patch: r.patch } },
      },
      include: { review: true },
    });
    await this.deps.notifier.reviewTextWritten(rc.doer, rc.repo, parent.issue, [created]);
    return (await this.commentJson(rc, pr, [created]))[0];
  }
}

/** Whether the pull request's changes differ between two head commits (Gitea's checkIfPRContentChanged: the diffs against the merge base compared). */
async function contentChanged(repoPath: string, mergeBase: string, from: string, to: string): Promise<boolean> {
  const a = await changesAsOf(repoPath, mergeBase, from);
  const b = await changesAsOf(repoPath, mergeBase, to);
  return a === null || b === null || a !== b;
}

/** The pull request's changes as of `head` (the raw diff base..head: paths and blob ids), or null when git cannot say. */
async function changesAsOf(repoPath: string, base: string, head: string): Promise<string | null> {
  try {
    return await runGit(['diff', '--raw', '--no-abbrev', base, head], { cwd: repoPath });
  } catch {
    return null;
  }
}

