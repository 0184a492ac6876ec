/**
 * Stopwatches (Gitea's stopwatch): start, stop (the elapsed whole seconds become a tracked
 * time), cancel, and the caller's running ones. A user runs at most one: starting another
 * stops the running one first (the unique user column makes a concurrent second start lose
 * with Gitea's 409). Only writers of the issues who may track time use them (403 otherwise,
 * also when the tracker is off). Each step leaves its timeline event: start_tracking,
 * stop_tracking (content: the duration in words, with the tracked time), cancel_tracking.
 *
 * As a notifier listener it stops the closer's stopwatch on an issue being closed, as Gitea's
 * CloseIssue does.
 */
import { ConflictError, NotFoundError, PermissionDeniedError } from '../errors';
import { isUniqueViolation } from '../db-errors';
import type { NotifyListener, RepoWithOwner } from '../notify/notifier';
import type { User } from '../records';
import type { RepoCtx, TrackerContext } from './context';
import type { TrackedTimeService } from './tracked-times';
import { addTimeComment, canUseTimetracker, secToHours, TimeComment, wholeSeconds } from './time-tracking';
import type { Issue, Stopwatch } from '../../../generated/prisma/client';

type Tx = Parameters<Parameters<TrackerContext['prisma']['$transaction']>[0]>[0];

const TX = { maxWait: 60000, timeout: 60000 };

export class StopwatchService implements NotifyListener {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly times: TrackedTimeService,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  /** The issue of a stopwatch route (404 "not found"), if the caller may use a stopwatch on it (403). */
  private async usableIssue(rc: RepoCtx, doer: User, index: number): Promise<Issue> {
    const issue = Number.isSafeInteger(index) && index > 0 ? await this.ctx.hot.issueByIndex(rc.repo.id, index) : null;
    if (!issue) throw new NotFoundError('not found');
    if (!rc.canWrite || !(await canUseTimetracker(this.prisma, rc, issue, doer))) throw new PermissionDeniedError('');
    return issue;
  }

  /** The stopwatch's elapsed time becomes a tracked time with a stop_tracking event; the stopwatch goes. */
  private async finish(tx: Tx, sw: Stopwatch, issue: Issue, userId: number, now: Date): Promise<void> {
    const seconds = Math.floor((now.getTime() - sw.createdAt.getTime()) / 1000);
    const t = await tx.trackedTime.create({ data: { issueId: issue.id, userId, time: seconds, createdAt: now } });
    await addTimeComment(tx, issue, userId, TimeComment.StopTracking, secToHours(seconds), now, t.id);
    await tx.stopwatch.delete({ where: { id: sw.id } });
  }

  /** POST .../stopwatch/start (201); 409 when this issue's stopwatch runs already. */
  async start(rc: RepoCtx, doer: User, index: number): Promise<void> {
    const issue = await this.usableIssue(rc, doer, index);
    const now = wholeSeconds(new Date());
    try {
      await this.prisma.$transaction(async (tx) => {
        const running = await tx.stopwatch.findUnique({ where: { userId: doer.id } });
        if (running?.issueId === issue.id) throw new ConflictError('cannot start a stopwatch again if it already exists');
        if (running) {
          const other = await tx.issue.findUniqueOrThrow({ where: { id: running.issueId } });
          await this.finish(tx, running, other, doer.id, now);
        }
        await tx.stopwatch.create({ data: { issueId: issue.id, userId: doer.id, createdAt: now } });
        await addTimeComment(tx, issue, doer.id, TimeComment.StartTracking, '', now);
      }, TX);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('cannot start a stopwatch again if it already exists');
      throw err;
    }
  }

  /** POST .../stopwatch/stop (201); 409 when none runs on this issue. */
  async stop(rc: RepoCtx, doer: User, index: number): Promise<void> {
    const issue = await this.usableIssue(rc, doer, index);
    const stopped = await this.finishOn(issue, doer);
    if (!stopped) throw new ConflictError('cannot stop a non-existent stopwatch');
  }

  /** DELETE .../stopwatch/delete (204): the stopwatch goes without a tracked time; 409 when none runs. */
  async cancel(rc: RepoCtx, doer: User, index: number): Promise<void> {
    const issue = await this.usableIssue(rc, doer, index);
    const now = wholeSeconds(new Date());
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.stopwatch.deleteMany({ where: { userId: doer.id, issueId: issue.id } });
      if (!count) throw new ConflictError('cannot cancel a non-existent stopwatch');
      await addTimeComment(tx, issue, doer.id, TimeComment.CancelTracking, '', now);
    }, TX);
  }

  /** Stops the user's stopwatch on the issue if one runs; whether one did. */
  private async finishOn(issue: Issue, doer: User): Promise<boolean> {
    const now = wholeSeconds(new Date());
    return this.prisma.$transaction(async (tx) => {
      const sw = await tx.stopwatch.findFirst({ where: { userId: doer.id, issueId: issue.id } });
      if (!sw) return false;
      await this.finish(tx, sw, issue, doer.id, now);
      return true;
    }, TX);
  }

  /** GET /user/stopwatches: structs.StopWatch for the caller's running stopwatches on issues they can read. */
  async listMine(doer: User, page: { skip: number; take: number }) {
    const [rows, total] = await Promise.all([
      this.prisma.stopwatch.findMany({ where: { userId: doer.id }, orderBy: { id: 'asc' }, skip: page.skip, take: page.take, include: { issue: { include: { repo: { include: { owner: true } } } } } }),
      this.prisma.stopwatch.count({ where: { userId: doer.id } }),
    ]);
    const now = Date.now();
    const data = [];
    for (const sw of rows) {
      if (!(await this.times.canReadIssues(doer, sw.issue.repo, sw.issue.isPull))) continue;
      const seconds = Math.floor((now - sw.createdAt.getTime()) / 1000);
      data.push({
        created: sw.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        seconds,
        duration: secToHours(seconds),
        issue_index: sw.issue.index,
        issue_title: sw.issue.title,
        repo_owner_name: sw.issue.repo.owner.name,
        repo_name: sw.issue.repo.name,
      });
    }
    return { data, total };
  }

  /** Closing an issue stops the closer's stopwatch on it. */
  async issueStatusChanged(doer: User, _repo: RepoWithOwner, issue: Issue, closed: boolean): Promise<void> {
    if (closed) await this.finishOn(issue, doer);
  }
}
