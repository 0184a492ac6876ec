/** Watching repositories (Gitea's watch table): modes 1 (watching) and 3 (auto, on creation) count. */
import type { Prisma } from './database';

const WATCHING = [1, 3];

export class WatchService {
  constructor(private readonly prisma: Prisma) {}

  /** The user's watch of the repository, when they watch it. */
  async find(userId: number, repoId: number) {
    const w = await this.prisma.watch.findUnique({ where: { userId_repoId: { userId, repoId } } });
    return w && WATCHING.includes(w.mode) ? w : null;
  }

  async watch(userId: number, repoId: number) {
    const w = await this.prisma.watch.upsert({ where: { userId_repoId: { userId, repoId } }, create: { userId, repoId, mode: 1 }, update: { mode: 1 } });
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
