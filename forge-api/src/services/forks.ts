/**
 * Forks (GET/POST /repos/{owner}/{repo}/forks) and the `parent` a fork's JSON embeds.
 */
import type { Prisma } from './database';
import type { RepoExtras } from './convert/repository';
import type { RepoWithOwner } from './repos';

export class ForkService {
  constructor(private readonly prisma: Prisma) {}

  /** The repository with its parent attached when it is a fork (for its JSON). */
  async withParent<T extends RepoWithOwner>(repo: T): Promise<T & RepoExtras> {
    if (!repo.isFork || !repo.forkId) return repo;
    const parent = await this.prisma.repository.findUnique({ where: { id: repo.forkId }, include: { owner: true } });
    return { ...repo, parent };
  }
}
