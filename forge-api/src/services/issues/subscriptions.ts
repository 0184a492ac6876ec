/**
 * Subscriptions to one issue (GET/PUT/DELETE /issues/{index}/subscriptions...), as Gitea's
 * issue_watch: a user's explicit choice is a row (watching or not); without one, a user is
 * subscribed while watching the repository or taking part in the issue (its poster or a
 * commenter). The notification service reads the same rows (an unwatch silences the issue
 * for a repository watcher, a watch adds a reader who is neither). The list shows explicit
 * subscribers only, active users who may sign in, by id.
 */
import { NotFoundError, PermissionDeniedError } from '../errors';
import type { User } from '../records';
import { WATCHING } from '../watches';
import type { RepoWithOwner } from '../convert';
import type { IssueConverter } from '../convert';
import type { TrackerContext } from './context';
import { CommentType } from './issues';
import type { Issue } from '../../../generated/prisma/client';

export class IssueSubscriptionService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly convert: IssueConverter,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  async list(issue: Issue, doer: User | null, skip: number, take: number) {
    const where = { issueId: issue.id, isWatching: true };
    const rows = await this.prisma.issueWatch.findMany({ where, select: { userId: true } });
    const users = await this.prisma.user.findMany({ where: { id: { in: rows.map((r) => r.userId) }, isActive: true, prohibitLogin: false }, orderBy: { id: 'asc' } });
    return { data: users.slice(skip, skip + take).map((u) => this.convert.user(u, doer)), total: users.length };
  }

  /** Gitea's CheckIssueWatch. */
  async isSubscribed(user: User, issue: Issue): Promise<boolean> {
    const own = await this.prisma.issueWatch.findUnique({ where: { userId_issueId: { userId: user.id, issueId: issue.id } } });
    if (own) return own.isWatching;
    if (issue.posterId === user.id) return true;
    const [watch, commented] = await Promise.all([
      this.prisma.watch.findFirst({ where: { userId: user.id, repoId: issue.repoId, mode: { in: WATCHING } }, select: { id: true } }),
      this.prisma.comment.findFirst({ where: { issueId: issue.id, posterId: user.id, type: CommentType.Comment }, select: { id: true } }),
    ]);
    return watch !== null || commented !== null;
  }

  /** GET /subscriptions/check: Gitea's WatchInfo for the doer. */
  async check(doer: User, issue: Issue, repo: RepoWithOwner) {
    const subscribed = await this.isSubscribed(doer, issue);
    return {
      subscribed,
      ignored: !subscribed,
      reason: null,
      created_at: issue.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      url: `${this.convert.issueApi(repo, issue)}/subscriptions`,
      repository_url: this.convert.repoApi(repo),
    };
  }

  /**
   * PUT (watch) or DELETE the subscription of the named user: the user itself or a site
   * admin only. Returns whether anything changed (Gitea: 201 when it did, 200 when not).
   */
  async set(doer: User, issue: Issue, name: string, watch: boolean): Promise<boolean> {
    const user = await this.prisma.user.findUnique({ where: { lowerName: name.toLowerCase() } });
    if (!user) throw new NotFoundError('not found', [`user does not exist [uid: 0, name: ${name}]`]);
    if (user.id !== doer.id && !doer.isAdmin) throw new PermissionDeniedError(`${doer.name} is not permitted to change subscriptions for ${user.name}`);
    if ((await this.isSubscribed(user, issue)) === watch) return false;
    await this.prisma.issueWatch.upsert({
      where: { userId_issueId: { userId: user.id, issueId: issue.id } },
      create: { userId: user.id, issueId: issue.id, isWatching: watch },
      update: { isWatching: watch },
    });
    return true;
  }
}
