/** Watching repositories (Gitea's watch table): modes Normal and Auto count as watching. */
import type { Prisma } from './database';

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

  async watch(userId: number, repoId: number) {
    const w = await this.prisma.watch.upsert({ where: { userId_repoId: { userId, repoId } }, create: { userId, repoId, mode: WatchMode.Normal }, update: { mode: WatchMode.Normal } });
    await this.recount(repoId);
    return w;
  }

  async unwatch(userId: number, repoId: number): Promise<void> {
    await this.prisma.watch.deleteMany({ where: { userId, repoId } });
    await this.recount(repoId);
  }

  private async recount(repoId: number): Promise<void> {
    await this.prisma.repository.update({ where: { id: repoId }, data: { numWatches: await this.prisma.watch.count({ where: { repoId, mode: { in: WATCHING } } }) } });
  }
}
