/** Watching repositories (Gitea's watch table): modes Normal and Auto count as watching. */
import type { Prisma } from './database';
import { refuseIfBlocked } from './blocks';
import type { Repository, User } from './records';
import { PUBLIC_REPOS_OF_PUBLIC_OWNERS, readableRepoFilter, type Viewer } from './permissions';

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
