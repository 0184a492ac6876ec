/**
 * The activity feed (Gitea's action table and structs.Activity). recordActivity writes one row
 * per feed the event appears in, as Gitea's notifyWatchers does: the actor's own feed, the
 * owning organization's feed (team feeds are read from it) and every watcher of the
 * repository who can read it. Feeds are read back with list() and converted with toJson().
 */
import { AccessMode, type Converter, fmtTime } from './convert';
import { PrismaNS, type Prisma } from './database';
import type { HotReads } from './fast-reads';
import type { PermissionService } from './permissions';
import { USER_TYPE_ORGANIZATION } from './permissions';
import type { Repository, User } from './records';
import { ghostUser, OP_TYPES, type IssueConverter } from './convert';

/** Gitea's activities_model.ActionType values. */
export const ActionType = {
  CreateRepo: 1,
  RenameRepo: 2,
  StarRepo: 3,
  WatchRepo: 4,
  CommitRepo: 5,
  CreateIssue: 6,
  CreatePullRequest: 7,
  TransferRepo: 8,
  PushTag: 9,
  CommentIssue: 10,
  MergePullRequest: 11,
  CloseIssue: 12,
  ReopenIssue: 13,
  ClosePullRequest: 14,
  ReopenPullRequest: 15,
  DeleteTag: 16,
  DeleteBranch: 17,
  CommentPull: 23,
  PublishRelease: 24,
} as const;

export interface ActivityInput {
  opType: number;
  actUserId: number;
  repo: Repository & { owner?: User };
  commentId?: number | null;
  refName?: string;
  /** Gitea's content conventions, e.g. "<index>|<title>" for issue events. */
  content?: string;
  /** Defaults to the repository's privacy. */
  isPrivate?: boolean;
}

export interface FeedQuery {
  /** The feed owner (user or organization). */
  userId: number;
  viewer: User | null;
  /** Only these repositories (team feeds). */
  repoIds?: number[];
  /** Only the actor's own actions (a user's public activity). */
  onlyPerformedBy?: boolean;
  /** Only this UTC day (YYYY-MM-DD), Gitea's `date` filter. */
  date?: string;
  /** Rows marked private (events of private repositories) too; Gitea's IncludePrivate. Default true. */
  includePrivate?: boolean;
  /**
   * Leave out actions of actors the viewer may not see or who keep their activity private
   * (Gitea's ActivityQueryCondition on act_user_id; the viewer's own actions stay, and those of
   * `exempt`, the organization whose feed it is).
   */
  hideUnseenActors?: { exempt: number[] };
  skip: number;
  take: number;
}

/** Writes the feed rows of one event (a plain function over its dependencies; ActivityService.record wraps it for the notifier's feed listener). */
export async function recordActivity(prisma: Prisma, hot: HotReads, permissions: PermissionService, input: ActivityInput): Promise<void> {
  const repo = input.repo;
  const owner = repo.owner ?? (await prisma.user.findUniqueOrThrow({ where: { id: repo.ownerId } }));
  const receivers = new Set<number>([input.actUserId]);
  if (owner.type === USER_TYPE_ORGANIZATION) receivers.add(owner.id);
  const candidates = (await hot.watcherIds(repo.id)).filter((id) => !receivers.has(id));
  if (candidates.length) {
    const users = await hot.usersByIds(candidates);
    const open = !repo.isPrivate && owner.visibility === 0;
    for (const u of users) {
      if ((open && !u.isRestricted) || (await permissions.repoAccessMode(u, { ...repo, owner })) >= AccessMode.Read) receivers.add(u.id);
    }
  }
  const base = {
    opType: input.opType,
    actUserId: input.actUserId,
    repoId: repo.id,
    commentId: input.commentId ?? null,
    refName: input.refName ?? '',
    content: input.content ?? '',
    isPrivate: input.isPrivate ?? repo.isPrivate,
  };
  // One plain multi-row INSERT: Prisma's createMany costs ~0.8 ms of JavaScript per row here,
  // this ~0.3 ms for the statement (every issue, comment and push writes feed rows).
  const now = new Date();
  const values = [...receivers].map(
    (userId) => PrismaNS.sql`(${userId}, ${base.opType}, ${base.actUserId}, ${base.repoId}, ${base.commentId}, ${base.isPrivate}, ${base.refName}, ${base.content}, ${now})`,
  );
  await prisma.$executeRaw`INSERT INTO "Activity" ("userId", "opType", "actUserId", "repoId", "commentId", "isPrivate", "refName", "content", "createdAt") VALUES ${PrismaNS.join(values)}`;
}

export class ActivityService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
    private readonly convert: Converter,
    private readonly issueConvert: IssueConverter,
    private readonly hot: HotReads,
  ) {}

  record(input: ActivityInput): Promise<void> {
    return recordActivity(this.prisma, this.hot, this.permissions, input);
  }

  /** A feed, newest first, without rows of repositories the viewer cannot read. */
  async list(q: FeedQuery) {
    const where: Record<string, unknown> = { userId: q.userId, repo: this.permissions.readableRepoFilter(q.viewer) };
    if (q.repoIds) where.repoId = { in: q.repoIds };
    if (q.onlyPerformedBy) where.actUserId = q.userId;
    if (q.includePrivate === false) where.isPrivate = false;
    if (q.hideUnseenActors && !q.viewer?.isAdmin) {
      const seen = q.viewer ? [0, 1] : [0];
      const hidden = await this.prisma.user.findMany({
        where: { OR: [{ keepActivityPrivate: true }, { visibility: { notIn: seen } }], id: { notIn: [q.viewer?.id ?? 0, ...q.hideUnseenActors.exempt] } },
        select: { id: true },
      });
      if (hidden.length) where.actUserId = { ...(q.onlyPerformedBy ? { equals: q.userId } : {}), notIn: hidden.map((u) => u.id) };
    }
    if (q.date) {
      const start = new Date(`${q.date}T00:00:00Z`);
      if (!Number.isNaN(start.getTime())) where.createdAt = { gte: start, lt: new Date(start.getTime() + 86400000) };
    }
    const [rows, total] = await Promise.all([
      this.prisma.activity.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: q.skip, take: q.take, include: { repo: { include: { owner: true } } } }),
      this.prisma.activity.count({ where }),
    ]);
    return { rows, total };
  }

  /**
   * A repository's feed (Gitea's GetFeeds with RequestedRepo), newest first: one row per event
   * (the actor's own copy, user_id = act_user_id; the other copies are the same event in other
   * feeds), and only events whose actor the viewer may see (public actors for anonymous
   * viewers; public, limited or themselves for signed-in ones; all for site admins). The caller
   * has checked that the viewer reads the repository.
   */
  async listForRepo(repoId: number, viewer: User | null, date: string | undefined, skip: number, take: number) {
    // The actor's own copy: its feed owner is the actor, so the actor's visibility is the feed owner's.
    const where: Record<string, unknown> = { repoId, userId: { equals: this.prisma.activity.fields.actUserId } };
    if (!viewer) where.user = { visibility: 0 };
    else if (!viewer.isAdmin) where.OR = [{ user: { visibility: { in: [0, 1] } } }, { userId: viewer.id }];
    if (date) {
      const start = new Date(`${date}T00:00:00Z`);
      if (!Number.isNaN(start.getTime())) where.createdAt = { gte: start, lt: new Date(start.getTime() + 86400000) };
    }
    const [rows, total] = await Promise.all([
      this.prisma.activity.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip, take, include: { repo: { include: { owner: true } } } }),
      this.prisma.activity.count({ where }),
    ]);
    return { rows, total };
  }

  /**
   * Gitea's ActivityReadable: a user who keeps their activity private shows it to themselves
   * and site admins only (feeds and heatmap are empty for everyone else).
   */
  static readable(user: User, viewer: User | null): boolean {
    return !user.keepActivityPrivate || (viewer !== null && (viewer.isAdmin || viewer.id === user.id));
  }

  /**
   * Gitea's user heatmap: the feed rows of `user` of the last 373 days (366 + the first week),
   * only the user's own actions for an individual, in repositories the viewer reads, counted per
   * 15-minute slot ({timestamp: slot start in Unix seconds, contributions}), oldest first.
   */
  async heatmap(user: User, viewer: User | null): Promise<{ timestamp: number; contributions: number }[]> {
    if (!ActivityService.readable(user, viewer)) return [];
    const since = new Date(Date.now() - (366 + 7) * 86400_000);
    const where: Record<string, unknown> = { userId: user.id, createdAt: { gt: since }, repo: this.permissions.readableRepoFilter(viewer) };
    if (user.type !== USER_TYPE_ORGANIZATION) where.actUserId = user.id;
    const rows = await this.prisma.activity.findMany({ where, select: { createdAt: true } });
    const slots = new Map<number, number>();
    for (const r of rows) {
      const slot = Math.floor(r.createdAt.getTime() / 1000 / 900) * 900;
      slots.set(slot, (slots.get(slot) ?? 0) + 1);
    }
    return [...slots.entries()].sort((a, b) => a[0] - b[0]).map(([timestamp, contributions]) => ({ timestamp, contributions }));
  }

  /** structs.Activity for each row (users, repositories and comments loaded in batches). */
  async toJson(rows: Awaited<ReturnType<ActivityService['list']>>['rows'], viewer: User | null) {
    const commentIds = rows.map((r) => r.commentId).filter((id): id is number => id !== null);
    const comments = new Map(
      (commentIds.length ? await this.prisma.comment.findMany({ where: { id: { in: commentIds } }, include: { attachments: true, issue: { select: { index: true, isPull: true } } } }) : []).map((c) => [c.id, c]),
    );
    // Actors and comment posters in one look-up.
    const userIds = new Set([...rows.map((r) => r.actUserId), ...[...comments.values()].map((c) => c.posterId)]);
    const users = new Map((await this.prisma.user.findMany({ where: { id: { in: [...userIds] } } })).map((u) => [u.id, u]));
    const commentPosters = users;
    // The viewer's access to every repository of the page in one batch (not one look-up per repository).
    const repos = [...new Map(rows.map((r) => [r.repoId, r.repo])).values()];
    const accessModes = await this.permissions.repoPermissions(viewer, repos);
    const modes = new Map(repos.map((r, i) => [r.id, accessModes[i]]));
    return rows.map((r) => {
      const c = r.commentId !== null ? comments.get(r.commentId) : undefined;
      return {
        id: r.id,
        user_id: r.userId,
        op_type: OP_TYPES[r.opType] ?? String(r.opType),
        act_user_id: r.actUserId,
        act_user: this.convert.userFor(users.get(r.actUserId) ?? ghostUser(), viewer),
        repo_id: r.repoId,
        repo: this.convert.repo(r.repo, modes.get(r.repoId) ?? 0),
        comment_id: r.commentId ?? 0,
        comment: c ? this.issueConvert.comment(c, c.issue, r.repo, commentPosters.get(c.posterId)) : null,
        ref_name: r.refName,
        is_private: r.isPrivate,
        content: r.content,
        created: fmtTime(r.createdAt),
      };
    });
  }
}
