/**
 * A repository's collaborators (Gitea's collaboration table: mode 1 read, 2 write, 3 admin) and
 * the people lists around a repository (watchers). Access checks read the same rows
 * (PermissionService.repoAccessMode), so a change here changes what a collaborator may do at once.
 */
import type { Prisma } from './database';
import { InvalidError, PermissionDeniedError } from './errors';
import { BLOCKED_MESSAGE, isBlockedBy } from './blocks';
import type { Repository, User } from './records';
import type { PermissionService } from './permissions';
import { unwatchLost, WATCHING } from './watches';
import { reconsiderAssignments } from './assignees';

const MODE_NAMES = ['none', 'read', 'write', 'admin', 'owner'] as const;

/** Gitea's AccessMode.ToString(). */
export function accessModeName(mode: number): string {
  return MODE_NAMES[Math.max(0, Math.min(mode, 4))];
}

/** The collaborator modes an API caller may grant (never owner). */
export const GRANTABLE: Record<string, number> = { read: 1, write: 2, admin: 3 };

export class CollaboratorService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
  ) {}

  /** A user or organization by name; Gitea answers an unknown collaborator name with 422 (or 404 where `notFound`). */
  async userByName(name: string): Promise<User | null> {
    return this.prisma.user.findUnique({ where: { lowerName: name.toLowerCase() } });
  }

  async list(repoId: number, skip: number, take: number): Promise<{ rows: User[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.prisma.collaboration.findMany({ where: { repoId }, orderBy: { id: 'asc' }, skip, take, include: { user: true } }),
      this.prisma.collaboration.count({ where: { repoId } }),
    ]);
    return { rows: rows.map((c) => c.user), total };
  }

  async isCollaborator(repoId: number, userId: number): Promise<boolean> {
    return (await this.prisma.collaboration.count({ where: { repoId, userId } })) > 0;
  }

  async addOrUpdate(repo: Repository, user: User, mode: number): Promise<void> {
    if (mode < 1 || mode > 3) throw new InvalidError('Invalid access mode');
    if (!user.isActive) throw new InvalidError("collaborator's account is inactive");
    // Neither side of a block can make the other a collaborator (Gitea's AddOrUpdateCollaborator).
    const owner = { id: repo.ownerId, isAdmin: false };
    if ((await isBlockedBy(this.prisma, user, [repo.ownerId])) || (await isBlockedBy(this.prisma, owner, [user.id]))) throw new PermissionDeniedError(BLOCKED_MESSAGE);
    await this.prisma.collaboration.upsert({
      where: { repoId_userId: { repoId: repo.id, userId: user.id } },
      create: { repoId: repo.id, userId: user.id, mode },
      update: { mode },
    });
  }

  /**
   * Gitea's DeleteCollaboration: the former collaborator stops watching the repository, even a
   * public one they still read; one left without access also loses its issue subscriptions and
   * running stopwatch there (ReconsiderWatches), and one who can no longer be assigned loses
   * their assignments there.
   */
  async remove(repo: Repository, user: User): Promise<void> {
    const { count } = await this.prisma.collaboration.deleteMany({ where: { repoId: repo.id, userId: user.id } });
    if (!count) return;
    await unwatchLost(this.prisma, user, [repo.id], [repo.id]);
    await reconsiderAssignments(this.prisma, this.permissions, user, [repo.id]);
  }

  /** The user's own access to the repository (Gitea's GetIndividualUserRepoPermission). */
  async accessMode(user: User, repo: Repository & { owner?: User }): Promise<number> {
    return this.permissions.repoAccessMode(user, repo);
  }

  /** Watchers of the repository, oldest first. */
  async subscribers(repoId: number, skip: number, take: number): Promise<{ rows: User[]; total: number }> {
    const where = { repoId, mode: { in: WATCHING } };
    const [rows, total] = await Promise.all([
      this.prisma.watch.findMany({ where, orderBy: { id: 'asc' }, skip, take, include: { user: true } }),
      this.prisma.watch.count({ where }),
    ]);
    return { rows: rows.map((w) => w.user), total };
  }
}
