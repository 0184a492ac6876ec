/**
 * Blocking users (Gitea's user_blocking and services/user/block.go). A user, or an organization
 * through its owners, blocks a user; from then on the blocked user cannot follow the blocker,
 * star or watch the blocker's repositories, open issues or comment there (nor on the blocker's
 * issues), nor be assigned by the blocker. Blocking removes what already links the two, both
 * ways: follows, stars and watches on each other's repositories, assignments on each other's
 * issues, collaborations and pending repository transfers. `isBlockedBy` is the one rule every
 * service asks; site admins are never blocked.
 */
import type { Prisma } from './database';
import { InvalidError, PermissionDeniedError } from './errors';
import { USER_TYPE_ORGANIZATION } from './permissions';
import type { User } from './records';

/** What Gitea answers when a blocked user tries something (ErrBlockedUser, 403). */
export const BLOCKED_MESSAGE = 'user is blocked';

type Db = Pick<Prisma, 'userBlocking'>;
type Tx = Parameters<Parameters<Prisma['$transaction']>[0]>[0];

/** Gitea's IsUserBlockedBy: has any of `blockerIds` blocked `blockee`? Site admins never are. */
export async function isBlockedBy(db: Db, blockee: Pick<User, 'id' | 'isAdmin'>, blockerIds: number[]): Promise<boolean> {
  const ids = blockerIds.filter((id) => id !== blockee.id && id > 0);
  if (!ids.length || blockee.isAdmin) return false;
  return (await db.userBlocking.count({ where: { blockeeId: blockee.id, blockerId: { in: ids } } })) > 0;
}

/** Throws Gitea's 403 when `blockee` is blocked by any of `blockerIds`. */
export async function refuseIfBlocked(db: Db, blockee: Pick<User, 'id' | 'isAdmin'>, blockerIds: number[]): Promise<void> {
  if (await isBlockedBy(db, blockee, blockerIds)) throw new PermissionDeniedError(BLOCKED_MESSAGE);
}

/** Unfollows `userId` -> `followId` with the counters, inside a transaction. */
export async function unfollowTx(tx: Tx, userId: number, followId: number): Promise<void> {
  const { count } = await tx.follow.deleteMany({ where: { userId, followId } });
  if (!count) return;
  await tx.user.update({ where: { id: followId }, data: { numFollowers: { decrement: 1 } } });
  await tx.user.update({ where: { id: userId }, data: { numFollowing: { decrement: 1 } } });
}

export class BlockService {
  constructor(
    private readonly prisma: Prisma,
    private readonly isOrgOwner: (userId: number, orgId: number) => Promise<boolean>,
  ) {}

  /** May `doer` act for `blocker` (the user itself, a site admin, or an owner of the organization)? */
  private async mayActFor(doer: User, blocker: User): Promise<boolean> {
    if (doer.isAdmin) return true;
    if (blocker.type === USER_TYPE_ORGANIZATION) return this.isOrgOwner(doer.id, blocker.id);
    return doer.id === blocker.id;
  }

  /** The users `blocker` blocks, oldest block first. */
  async list(blocker: User, skip: number, take: number): Promise<{ rows: User[]; total: number }> {
    const where = { blockerId: blocker.id };
    const [rows, total] = await Promise.all([
      this.prisma.userBlocking.findMany({ where, orderBy: { id: 'asc' }, skip, take, include: { blockee: true } }),
      this.prisma.userBlocking.count({ where }),
    ]);
    return { rows: rows.map((b) => b.blockee), total };
  }

  async isBlocking(blocker: User, blockee: User): Promise<boolean> {
    return (await this.prisma.userBlocking.count({ where: { blockerId: blocker.id, blockeeId: blockee.id } })) > 0;
  }

  /** Gitea's BlockUser: refusals are 400 "cannot block the user" (InvalidError here). */
  async block(doer: User, blocker: User, blockee: User, note: string): Promise<void> {
    if (blockee.type === USER_TYPE_ORGANIZATION) throw new InvalidError('cannot block an organization');
    const refuse = () => new InvalidError('cannot block the user');
    if (blocker.id === blockee.id || doer.id === blockee.id) throw refuse();
    if (await isBlockedBy(this.prisma, blockee, [blocker.id])) throw refuse();
    if (blocker.type === USER_TYPE_ORGANIZATION && (await this.prisma.orgUser.count({ where: { orgId: blocker.id, userId: blockee.id } })) > 0) throw refuse();
    if (!(await this.mayActFor(doer, blocker))) throw refuse();
    await this.prisma.$transaction(async (tx) => {
      for (const [a, b] of [
        [blocker, blockee],
        [blockee, blocker],
      ]) {
        await unfollowTx(tx, a.id, b.id);
        await this.unstarRepos(tx, a.id, b.id);
        await this.unwatchRepos(tx, a.id, b.id);
        await tx.issueAssignee.deleteMany({ where: { assigneeId: a.id, issue: { repo: { ownerId: b.id } } } });
        await tx.collaboration.deleteMany({ where: { userId: a.id, repo: { ownerId: b.id } } });
        // Pending transfers between them: offered by one to the other.
        await tx.repoTransfer.deleteMany({ where: { recipientId: b.id, repo: { ownerId: a.id } } });
      }
      await tx.userBlocking.create({ data: { blockerId: blocker.id, blockeeId: blockee.id, note: note.slice(0, 255) } });
    });
  }

  async unblock(doer: User, blocker: User, blockee: User): Promise<void> {
    if (blockee.type === USER_TYPE_ORGANIZATION) throw new InvalidError('cannot block an organization');
    const refuse = () => new InvalidError('cannot unblock the user');
    if (doer.id === blockee.id) throw refuse();
    if (!(await isBlockedBy(this.prisma, blockee, [blocker.id]))) throw refuse();
    if (!(await this.mayActFor(doer, blocker))) throw refuse();
    await this.prisma.userBlocking.deleteMany({ where: { blockerId: blocker.id, blockeeId: blockee.id } });
  }

  /** `starrer`'s stars on repositories of `ownerId` go, with both counters. */
  private async unstarRepos(tx: Tx, starrerId: number, ownerId: number): Promise<void> {
    const stars = await tx.star.findMany({ where: { userId: starrerId, repo: { ownerId } }, select: { repoId: true } });
    if (!stars.length) return;
    const repoIds = stars.map((s) => s.repoId);
    await tx.star.deleteMany({ where: { userId: starrerId, repoId: { in: repoIds } } });
    await tx.repository.updateMany({ where: { id: { in: repoIds }, numStars: { gt: 0 } }, data: { numStars: { decrement: 1 } } });
    await tx.user.update({ where: { id: starrerId }, data: { numStars: { decrement: stars.length } } });
  }

  /** `watcher`'s watches on repositories of `ownerId` go; watch counts are recounted. */
  private async unwatchRepos(tx: Tx, watcherId: number, ownerId: number): Promise<void> {
    const watches = await tx.watch.findMany({ where: { userId: watcherId, repo: { ownerId } }, select: { repoId: true, mode: true } });
    if (!watches.length) return;
    await tx.watch.deleteMany({ where: { userId: watcherId, repoId: { in: watches.map((w) => w.repoId) } } });
    // Modes 1 (watching) and 3 (auto) are counted in numWatches.
    const counted = watches.filter((w) => w.mode === 1 || w.mode === 3).map((w) => w.repoId);
    if (counted.length) await tx.repository.updateMany({ where: { id: { in: counted }, numWatches: { gt: 0 } }, data: { numWatches: { decrement: 1 } } });
  }
}

