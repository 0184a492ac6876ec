/**
 * Tracked times (Gitea's tracked_time): add, list (an issue's, a repository's, a user's in a
 * repository, the caller's own), reset the caller's times on an issue, delete one. The rules
 * and answers follow Gitea 1.27's API:
 * - the repository's time tracker must be on (listing an issue's times: 404 "timetracker is
 *   disabled"; the others 400 "time tracking disabled");
 * - adding, resetting and deleting need CanUseTimetracker (a writer of the issues, the poster
 *   or an assignee when only contributors may track time), else 403;
 * - a caller who is neither site admin nor writer of the issues sees only their own times and
 *   may not filter by another user (403);
 * - only a repository admin (for someone else) or a site admin may add time in another user's
 *   name; only the time's owner or a site admin may delete it;
 * - lists come in insertion order, count every match in X-Total-Count and then leave out
 *   times of issues the caller cannot read. (Gitea's query has no ORDER BY: on SQLite, its
 *   default database, that is insertion order; on PostgreSQL the plan decides, and a
 *   repository's list came back newest first there. The forge keeps one order on both.)
 * Deletion only marks the row; add, reset and delete leave timeline events (add_time_manual,
 * delete_time_manual with "|<seconds>" as content, Gitea's storage form since 1.21).
 * Gitea ignores the `created` of an added time when storing it (its insert stamps the current
 * time) and only echoes it in the answer; the forge does the same, so lists agree with Gitea.
 */
import { AccessMode } from '../convert';
import { MalformedError, NotFoundError, PermissionDeniedError, ValidationError } from '../errors';
import type { User } from '../records';
import type { RepoWithOwner } from '../convert';
import type { RepoCtx, TrackerContext } from './context';
import type { IssueService } from './issues';
import { addTimeComment, canUseTimetracker, parseRfc3339, TimeComment, timeTrackerEnabled, wholeSeconds } from './time-tracking';
import type { Issue, TrackedTime } from '../../../generated/prisma/client';

export interface TimeFilter {
  user?: string;
  since?: string;
  before?: string;
}

export interface AddTimeInput {
  time: number;
  created?: string;
  user_name?: string;
}

interface Page {
  skip: number;
  take: number;
}

const TX = { maxWait: 60000, timeout: 60000 };

/** Go's RFC 3339 with the fraction it has (trailing zeros dropped), as time.Time encodes to JSON. */
function preciseTime(d: Date): string {
  return d.toISOString().replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

export class TrackedTimeService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly issues: IssueService,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  /** The issue of a time route, or 404 with Gitea's message. */
  async issue(rc: RepoCtx, index: number): Promise<Issue> {
    const issue = Number.isSafeInteger(index) && index > 0 ? await this.ctx.hot.issueByIndex(rc.repo.id, index) : null;
    if (!issue) throw new NotFoundError(`issue does not exist [id: 0, repo_id: ${rc.repo.id}, index: ${index}]`);
    return issue;
  }

  private async userNamed(name: string): Promise<User> {
    const user = await this.prisma.user.findUnique({ where: { lowerName: name.toLowerCase() } });
    if (!user || user.type !== 0) throw new NotFoundError(`user does not exist [uid: 0, name: ${name}]`);
    return user;
  }

  /** 400 when the tracker is off, 403 when the caller may not track time on this issue. */
  private async mustTrack(rc: RepoCtx, issue: Issue, doer: User): Promise<void> {
    if (await canUseTimetracker(this.prisma, rc, issue, doer)) return;
    if (!timeTrackerEnabled(rc)) throw new MalformedError('time tracking disabled');
    throw new PermissionDeniedError('');
  }

  private async page(where: Record<string, unknown>, page: Page, doer: User) {
    const [rows, total] = await Promise.all([
      this.prisma.trackedTime.findMany({ where, orderBy: { id: 'asc' }, skip: page.skip, take: page.take }),
      this.prisma.trackedTime.count({ where }),
    ]);
    return { data: await this.toJson(rows, doer), total };
  }

  /** The created-at range of `since` / `before` (422 for a bad one, `before` read first as Gitea does), in whole seconds. */
  private static range(f: TimeFilter) {
    const before = parseRfc3339(f.before);
    const since = parseRfc3339(f.since);
    if (!since && !before) return {};
    return { createdAt: { ...(since ? { gte: wholeSeconds(since) } : {}), ...(before ? { lte: wholeSeconds(before) } : {}) } };
  }

  /** GET /repos/{o}/{r}/issues/{index}/times */
  async listForIssue(rc: RepoCtx, doer: User, index: number, filter: TimeFilter, page: Page) {
    if (!timeTrackerEnabled(rc)) throw new NotFoundError('timetracker is disabled');
    const issue = await this.issue(rc, index);
    return this.page({ deleted: false, issueId: issue.id, ...(await this.filters(rc, doer, filter)) }, page, doer);
  }

  /** GET /repos/{o}/{r}/times */
  async listForRepo(rc: RepoCtx, doer: User, filter: TimeFilter, page: Page) {
    if (!timeTrackerEnabled(rc)) throw new MalformedError('time tracking disabled');
    return this.page({ deleted: false, issue: { repoId: rc.repo.id }, ...(await this.filters(rc, doer, filter)) }, page, doer);
  }

  /**
   * The user and date filters of a list, checked in Gitea's order: the named user (404), the
   * dates (422), then the rights: a caller who is neither site admin nor writer of the issues
   * gets their own times, and may not ask for someone else's (403).
   */
  private async filters(rc: RepoCtx, doer: User, filter: TimeFilter) {
    let userId = filter.user?.trim() ? (await this.userNamed(filter.user.trim())).id : undefined;
    const range = TrackedTimeService.range(filter);
    if (!doer.isAdmin && userId !== doer.id && !rc.canWrite) {
      if (userId !== undefined) throw new PermissionDeniedError('query by user not allowed; not enough rights');
      userId = doer.id;
    }
    return { ...(userId !== undefined ? { userId } : {}), ...range };
  }

  /**
   * GET /repos/{o}/{r}/times/{user} (deprecated in Gitea, still routed): every time of that
   * user in the repository, unpaged; repository admins, site admins and the user only.
   */
  async listForUserInRepo(rc: RepoCtx, doer: User, name: string) {
    if (!timeTrackerEnabled(rc)) throw new MalformedError('time tracking disabled');
    const user = await this.userNamed(name);
    if (!rc.isAdmin && !doer.isAdmin && doer.id !== user.id) throw new PermissionDeniedError('query by user not allowed; not enough rights');
    const rows = await this.prisma.trackedTime.findMany({ where: { deleted: false, userId: user.id, issue: { repoId: rc.repo.id } }, orderBy: { id: 'asc' } });
    return this.toJson(rows, doer);
  }

  /** GET /user/times: the caller's times in every repository they can still read. */
  async listMine(doer: User, filter: TimeFilter, page: Page) {
    return this.page({ deleted: false, userId: doer.id, ...TrackedTimeService.range(filter) }, page, doer);
  }

  /** POST /repos/{o}/{r}/issues/{index}/times */
  async add(rc: RepoCtx, doer: User, index: number, input: AddTimeInput) {
    // Gitea's binding refuses a zero amount before anything else.
    if (!input.time) throw new ValidationError('[Time]: Required');
    const issue = await this.issue(rc, index);
    await this.mustTrack(rc, issue, doer);
    let user = doer;
    if (input.user_name && ((rc.isAdmin && doer.name !== input.user_name) || doer.isAdmin)) user = await this.userNamed(input.user_name);
    const created = input.created ? new Date(input.created) : null;
    const now = new Date();
    const row = await this.prisma.$transaction(async (tx) => {
      const t = await tx.trackedTime.create({ data: { issueId: issue.id, userId: user.id, time: input.time, createdAt: wholeSeconds(now) } });
      await addTimeComment(tx, issue, user.id, TimeComment.AddTimeManual, `|${input.time}`, wholeSeconds(now), t.id);
      return t;
    }, TX);
    const [json] = await this.toJson([row], user, false);
    return { ...json, created: preciseTime(created && !Number.isNaN(created.getTime()) && created.getTime() > -62135596800000 ? created : now) };
  }

  /** DELETE /repos/{o}/{r}/issues/{index}/times: the caller's times on the issue (404 when they add up to nothing). */
  async reset(rc: RepoCtx, doer: User, index: number): Promise<void> {
    const issue = await this.issue(rc, index);
    await this.mustTrack(rc, issue, doer);
    const now = wholeSeconds(new Date());
    await this.prisma.$transaction(async (tx) => {
      const where = { issueId: issue.id, userId: doer.id, deleted: false };
      const sum = (await tx.trackedTime.aggregate({ where, _sum: { time: true } }))._sum.time ?? 0;
      if (sum === 0) throw new NotFoundError('tracked_time does not exist');
      await tx.trackedTime.updateMany({ where, data: { deleted: true } });
      await addTimeComment(tx, issue, doer.id, TimeComment.DeleteTimeManual, `|${sum}`, now);
    }, TX);
  }

  /** DELETE /repos/{o}/{r}/issues/{index}/times/{id}: the time's owner or a site admin. */
  async deleteOne(rc: RepoCtx, doer: User, index: number, id: number): Promise<void> {
    const issue = await this.issue(rc, index);
    await this.mustTrack(rc, issue, doer);
    const t = id > 0 ? await this.prisma.trackedTime.findFirst({ where: { id, issueId: issue.id } }) : null;
    if (!t) throw new NotFoundError(id > 0 ? `tracked_time does not exist [id: ${id}]` : 'tracked_time does not exist');
    if (t.deleted) throw new NotFoundError('tracked time was already deleted');
    if (!doer.isAdmin && t.userId !== doer.id) throw new PermissionDeniedError('');
    const now = wholeSeconds(new Date());
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.trackedTime.updateMany({ where: { id: t.id, deleted: false }, data: { deleted: true } });
      if (!count) throw new NotFoundError('tracked time was already deleted');
      // Gitea writes the event in the name of the time's owner, whoever deletes it.
      await addTimeComment(tx, issue, t.userId, TimeComment.DeleteTimeManual, `|${t.time}`, now);
    }, TX);
  }

  /**
   * structs.TrackedTime for rows of any repositories: each with its issue as the caller sees it,
   * leaving out (when `filter`) the times of issues the caller cannot read.
   */
  async toJson(rows: TrackedTime[], doer: User | null, filter = true) {
    if (!rows.length) return [];
    const issues = await this.prisma.issue.findMany({ where: { id: { in: [...new Set(rows.map((t) => t.issueId))] } }, select: { id: true, repoId: true, isPull: true } });
    const issueById = new Map(issues.map((i) => [i.id, i]));
    const repos = await this.prisma.repository.findMany({ where: { id: { in: [...new Set(issues.map((i) => i.repoId))] } }, include: { owner: true } });
    const readable = new Map<string, boolean>();
    for (const repo of repos) {
      for (const isPull of [false, true]) {
        readable.set(`${repo.id}:${isPull}`, !filter || (await this.canReadIssues(doer, repo, isPull)));
      }
    }
    const kept = rows.filter((t) => {
      const i = issueById.get(t.issueId);
      return i !== undefined && readable.get(`${i.repoId}:${i.isPull}`) === true;
    });
    const issueJson = new Map<number, unknown>();
    for (const [id, json] of (await this.issues.toJsonMixed([...new Set(kept.map((t) => t.issueId))], doer)).map((j) => [j.id, j] as const)) issueJson.set(id, json);
    const users = await this.ctx.users(kept.map((t) => t.userId));
    return kept.map((t) => ({
      id: t.id,
      created: preciseTime(t.createdAt),
      time: t.time,
      user_id: t.userId,
      user_name: users.get(t.userId)?.name ?? 'Ghost',
      issue_id: t.issueId,
      issue: issueJson.get(t.issueId) ?? null,
    }));
  }

  /** Gitea's CanReadIssuesOrPulls: the unit is on and the caller's access to it is at least read. */
  async canReadIssues(doer: User | null, repo: RepoWithOwner, isPull: boolean): Promise<boolean> {
    if (isPull ? !repo.hasPullRequests : !repo.hasIssues) return false;
    return (await this.ctx.permissions.repoAccessMode(doer, repo, isPull ? 'repo.pulls' : 'repo.issues')) >= AccessMode.Read;
  }
}
