/**
 * Stars (Gitea's star table and repo_model.StarRepo): a user stars or unstars a repository they
 * can read; Repository.numStars (stars_count) and User.numStars (starred_repos_count) change in
 * the same transaction as the row, and are corrected when rows disappear with a repository, a
 * user, or a repository turning private (Gitea's ClearRepoStars). Starring fires no webhook and
 * writes no feed row in Gitea 1.27, so none here either.
 */
import type { Prisma } from './database';
import { AccessMode } from './convert';
import type { PermissionService } from './permissions';
import { PUBLIC_REPOS_OF_PUBLIC_OWNERS } from './permissions';
import type { Repository, User } from './records';
import { isUniqueViolation } from './db-errors';
import { refuseIfBlocked } from './blocks';

/** The part of a Prisma client (or of a transaction) the counter corrections need. */
type Tx = Pick<Prisma, 'user' | 'repository' | 'star'>;

/**
 * Before a repository's rows go (deleted with it, or cleared when it turns private): its
 * starrers' starred_repos_count drop by one and the repository's stars_count is zero.
 */
export async function clearRepoStars(tx: Tx, repoId: number): Promise<void> {
  await tx.user.updateMany({ where: { stars: { some: { repoId } }, numStars: { gt: 0 } }, data: { numStars: { decrement: 1 } } });
  await tx.star.deleteMany({ where: { repoId } });
  await tx.repository.update({ where: { id: repoId }, data: { numStars: 0 } });
}

/** Before a user's rows go with the user: the repositories they starred lose one star each. */
export async function dropUserStars(tx: Tx, userId: number): Promise<void> {
  await tx.repository.updateMany({ where: { stars: { some: { userId } }, numStars: { gt: 0 } }, data: { numStars: { decrement: 1 } } });
}

export class StarService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
  ) {}

  async isStarring(userId: number, repoId: number): Promise<boolean> {
    return (await this.prisma.star.count({ where: { userId, repoId } })) > 0;
  }

  /** Stars (star = true) or unstars the repository; doing what is already done changes nothing. */
  async setStar(user: User, repo: Repository, star: boolean): Promise<void> {
    if (star) {
      // A user the owner blocked cannot star the owner's repositories (Gitea's StarRepo).
      await refuseIfBlocked(this.prisma, user, [repo.ownerId]);
      try {
        await this.prisma.$transaction([
          this.prisma.star.create({ data: { userId: user.id, repoId: repo.id } }),
          this.prisma.repository.update({ where: { id: repo.id }, data: { numStars: { increment: 1 } } }),
          this.prisma.user.update({ where: { id: user.id }, data: { numStars: { increment: 1 } } }),
        ]);
      } catch (err) {
        // Starred already (maybe by a concurrent request): the whole transaction is undone.
        if (!isUniqueViolation(err)) throw err;
      }
      return;
    }
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.star.deleteMany({ where: { userId: user.id, repoId: repo.id } });
      if (!count) return;
      await tx.repository.update({ where: { id: repo.id }, data: { numStars: { decrement: 1 } } });
      await tx.user.update({ where: { id: user.id }, data: { numStars: { decrement: 1 } } });
    });
  }

  /** The users who starred the repository, oldest star first (the total is stars_count). */
  async stargazers(repo: Repository, skip: number, take: number): Promise<{ rows: User[]; total: number }> {
    const rows = await this.prisma.star.findMany({ where: { repoId: repo.id }, orderBy: { id: 'asc' }, skip, take, include: { user: true } });
    return { rows: rows.map((s) => s.user), total: repo.numStars };
  }

  /**
   * Repositories `starrer` starred, with the starrer's access mode to each (Gitea's
   * getStarredRepos): with `includePrivate` (the starrer asking) those they can still read,
   * otherwise only public repositories of public owners; the total is starred_repos_count.
   * Gitea's query has no ORDER BY: on SQLite, its default database, that is repository id
   * order (checked against Gitea 1.27.3); on PostgreSQL the plan decides, and /user/starred
   * and /users/{u}/starred came back in different orders there. The forge keeps repository id
   * order on both.
   */
  async starredRepos(starrer: User, includePrivate: boolean, skip: number, take: number) {
    const visible = includePrivate ? this.permissions.readableRepoFilter(starrer) : PUBLIC_REPOS_OF_PUBLIC_OWNERS;
    const rows = await this.prisma.repository.findMany({
      where: { AND: [{ stars: { some: { userId: starrer.id } } }, visible] },
      include: { owner: true },
      orderBy: { id: 'asc' },
      skip,
      take,
    });
    const modes = await this.permissions.repoPermissions(starrer, rows);
    const repos = rows.map((repo, i) => ({ repo, mode: modes[i] })).filter((r) => r.mode.mode >= AccessMode.Read);
    return { repos, total: starrer.numStars };
  }
}
