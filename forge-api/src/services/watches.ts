/** Watching repositories (Gitea's watch table): modes Normal and Auto count as watching. */
import { PrismaNS, type Prisma } from './database';
import { refuseIfBlocked } from './blocks';
import type { Repository, User } from './records';
import { PUBLIC_REPOS_OF_PUBLIC_OWNERS, readableRepoFilter, USER_TYPE_ORGANIZATION, type Viewer } from './permissions';

/** Gitea's repo_model.WatchMode values, as stored in Watch.mode. */
export const WatchMode = {
  None: 0,
  /** Watched explicitly (PUT /repos/{owner}/{repo}/subscription). */
  Normal: 1,
  /** Explicitly not watching. */
  Dont: 2,
  /** Watched automatically (the creator of a repository). */
  Auto: 3,
} as const;

/** The modes that count as watching (watcher lists, counts, notifications). */
export const WATCHING: number[] = [WatchMode.Normal, WatchMode.Auto];

/** WATCHING as a SQL list, for `"mode" IN (...)` in raw statements. */
export const WATCHING_SQL = WATCHING.map(String).join(', ');

/** What the bulk watch rules below write through: the client or a transaction. */
type WatchDb = Pick<PrismaNS.TransactionClient, 'watch' | 'repository' | 'userBlocking' | 'issueWatch' | 'stopwatch' | 'teamUser' | '$executeRaw'>;

/**
 * Gitea's WatchRepo(doWatch) as its team rules call it under AUTO_WATCH_NEW_REPOS (on by
 * default): each user watches each repository, an explicit "don't watch" included; a user the
 * repository's owner blocked is left out. Joining a team, a repository added to a team, a team
 * turned includes-all and a repository created under an includes-all team all come here.
 */
export async function watchForTeam(db: WatchDb, userIds: number[], repoIds: number[]): Promise<void> {
  if (!userIds.length || !repoIds.length) return;
  const [repos, existing] = await Promise.all([
    db.repository.findMany({ where: { id: { in: repoIds } }, select: { id: true, ownerId: true } }),
    db.watch.findMany({ where: { userId: { in: userIds }, repoId: { in: repoIds } }, select: { id: true, userId: true, repoId: true, mode: true } }),
  ]);
  const blocks = await db.userBlocking.findMany({ where: { blockerId: { in: [...new Set(repos.map((r) => r.ownerId))] }, blockeeId: { in: userIds } }, select: { blockerId: true, blockeeId: true } });
  const blocked = new Set(blocks.map((b) => `${b.blockerId}:${b.blockeeId}`));
  const have = new Set(existing.map((w) => `${w.userId}:${w.repoId}`));
  const create: { userId: number; repoId: number; mode: number }[] = [];
  for (const r of repos) {
    for (const userId of userIds) {
      if (!blocked.has(`${r.ownerId}:${userId}`) && !have.has(`${userId}:${r.id}`)) create.push({ userId, repoId: r.id, mode: WatchMode.Normal });
    }
  }
  const upgrade = existing.filter((w) => w.mode !== WatchMode.Normal && !blocked.has(`${repos.find((r) => r.id === w.repoId)?.ownerId}:${w.userId}`)).map((w) => w.id);
  if (create.length) await db.watch.createMany({ data: create });
  if (upgrade.length) await db.watch.updateMany({ where: { id: { in: upgrade } }, data: { mode: WatchMode.Normal } });
  if (create.length || upgrade.length) await recountWatches(db, repoIds);
}

/**
 * A repository an organization gets (created, forked, generated, migrated, adopted) is watched
 * by the members of its teams that include all repositories, as Gitea links it to those teams.
 */
export async function watchedByAllReposTeams(db: WatchDb, owner: Pick<User, 'id' | 'type'>, repoId: number): Promise<void> {
  if (owner.type !== USER_TYPE_ORGANIZATION) return;
  const members = await db.teamUser.findMany({ where: { orgId: owner.id, team: { includesAllRepositories: true } }, select: { userId: true }, distinct: ['userId'] });
  await watchForTeam(db, members.map((m) => m.userId), [repoId]);
}

/**
 * Gitea's ReconsiderWatches in bulk, after a user lost a way in (left a team, a repository left
 * a team): of `repoIds`, those the user can no longer read lose the user's watch, issue
 * subscriptions and running stopwatch. `alsoReadable` names repositories whose watch goes even
 * though the user still reads them: leaving an organization unwatches its public repositories
 * and those of the user's teams there (Gitea's RemoveOrgUser).
 */
export async function unwatchLost(db: WatchDb, user: User, repoIds: number[], alsoReadable: number[] = []): Promise<void> {
  if (!repoIds.length && !alsoReadable.length) return;
  const lost = repoIds.length ? (await db.repository.findMany({ where: { id: { in: repoIds }, NOT: readableRepoFilter(user) }, select: { id: true } })).map((r) => r.id) : [];
  const ids = [...new Set([...lost, ...alsoReadable])];
  if (!ids.length) return;
  const { count } = await db.watch.deleteMany({ where: { userId: user.id, repoId: { in: ids } } });
  if (lost.length) {
    await db.issueWatch.deleteMany({ where: { userId: user.id, issue: { repoId: { in: lost } } } });
    await db.stopwatch.deleteMany({ where: { userId: user.id, issue: { repoId: { in: lost } } } });
  }
  if (count) await recountWatches(db, ids);
}

/** Repository.numWatches of `repoIds` from their watch rows, in one statement. */
async function recountWatches(db: WatchDb, repoIds: number[]): Promise<void> {
  await db.$executeRaw`UPDATE "Repository" SET "numWatches" = (SELECT COUNT(*) FROM "Watch" w WHERE w."repoId" = "Repository"."id" AND w."mode" IN (${PrismaNS.join(WATCHING)})) WHERE "id" IN (${PrismaNS.join(repoIds)})`;
}

export class WatchService {
  constructor(private readonly prisma: Prisma) {}

  /** The user's watch of the repository, when they watch it. */
  async find(userId: number, repoId: number) {
    const w = await this.prisma.watch.findUnique({ where: { userId_repoId: { userId, repoId } } });
    return w && WATCHING.includes(w.mode) ? w : null;
  }

  /** Watches the repository; a user its owner blocked cannot (Gitea's WatchRepo). */
  async watch(user: Pick<User, 'id' | 'isAdmin'>, repo: Pick<Repository, 'id' | 'ownerId'>) {
    const [userId, repoId] = [user.id, repo.id];
    await refuseIfBlocked(this.prisma, user, [repo.ownerId]);
    const w = await this.prisma.watch.upsert({ where: { userId_repoId: { userId, repoId } }, create: { userId, repoId, mode: WatchMode.Normal }, update: { mode: WatchMode.Normal } });
    await this.recount(repoId);
    return w;
  }

  async unwatch(userId: number, repoId: number): Promise<void> {
    await this.prisma.watch.deleteMany({ where: { userId, repoId } });
    await this.recount(repoId);
  }

  /**
   * Repositories `watcher` watches (Gitea's GetWatchedRepos), in repository id order: with
   * `includePrivate` (watchers asking for their own list) those they can still read (a public-only
   * token on the doer narrows this to public ones), otherwise public repositories of public owners.
   */
  async watchedRepos(watcher: Viewer, includePrivate: boolean, skip: number, take: number) {
    const visible = includePrivate ? readableRepoFilter(watcher) : PUBLIC_REPOS_OF_PUBLIC_OWNERS;
    const where = { AND: [{ watches: { some: { userId: watcher.id, mode: { in: WATCHING } } } }, visible] };
    const [rows, total] = await Promise.all([
      this.prisma.repository.findMany({ where, include: { owner: true }, orderBy: { id: 'asc' }, skip, take }),
      this.prisma.repository.count({ where }),
    ]);
    return { rows, total };
  }

  private async recount(repoId: number): Promise<void> {
    await this.prisma.repository.update({ where: { id: repoId }, data: { numWatches: await this.prisma.watch.count({ where: { repoId, mode: { in: WATCHING } } }) } });
  }
}
