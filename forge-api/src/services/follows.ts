/**
 * Following users (Gitea's follow table and user_model.FollowUser): a user follows a user or an
 * organization; User.numFollowers / numFollowing (followers_count, following_count) change in
 * the same transaction as the row. Following yourself, or following twice, changes nothing; a
 * block between the two refuses it (403, services/blocks.ts).
 */
import type { Prisma } from './database';
import { isBlockedBy, BLOCKED_MESSAGE, unfollowTx } from './blocks';
import { isUniqueViolation } from './db-errors';
import { PermissionDeniedError } from './errors';
import { USER_TYPE_INDIVIDUAL, USER_TYPE_ORGANIZATION, visibleUserFilter, type Viewer } from './permissions';
import type { User } from './records';

export class FollowService {
  constructor(private readonly prisma: Prisma) {}

  async isFollowing(userId: number, followId: number): Promise<boolean> {
    return (await this.prisma.follow.count({ where: { userId, followId } })) > 0;
  }

  async follow(doer: User, target: User): Promise<void> {
    if (doer.id === target.id || (await this.isFollowing(doer.id, target.id))) return;
    if ((await isBlockedBy(this.prisma, doer, [target.id])) || (await isBlockedBy(this.prisma, target, [doer.id]))) {
      throw new PermissionDeniedError(BLOCKED_MESSAGE);
    }
    try {
      await this.prisma.$transaction([
        this.prisma.follow.create({ data: { userId: doer.id, followId: target.id } }),
        this.prisma.user.update({ where: { id: target.id }, data: { numFollowers: { increment: 1 } } }),
        this.prisma.user.update({ where: { id: doer.id }, data: { numFollowing: { increment: 1 } } }),
      ]);
    } catch (err) {
      // Followed already by a concurrent request: the whole transaction is undone.
      if (!isUniqueViolation(err)) throw err;
    }
  }

  async unfollow(userId: number, followId: number): Promise<void> {
    if (userId === followId) return;
    await this.prisma.$transaction((tx) => unfollowTx(tx, userId, followId));
  }

  /**
   * Gitea's GetUserFollowers: the individuals following `user` that `viewer` may see, in user
   * id order (Gitea's query has no ORDER BY; the forge keeps one order on both databases).
   */
  followers(user: User, viewer: Viewer | null, skip: number, take: number) {
    return this.page({ AND: [{ type: USER_TYPE_INDIVIDUAL, following: { some: { followId: user.id } } }, visibleUserFilter(viewer)] }, skip, take);
  }

  /** Gitea's GetUserFollowing: the users and organizations `user` follows that `viewer` may see. */
  following(user: User, viewer: Viewer | null, skip: number, take: number) {
    return this.page({ AND: [{ type: { in: [USER_TYPE_INDIVIDUAL, USER_TYPE_ORGANIZATION] }, followers: { some: { userId: user.id } } }, visibleUserFilter(viewer)] }, skip, take);
  }

  private async page(where: Record<string, unknown>, skip: number, take: number): Promise<{ rows: User[]; total: number }> {
    const [rows, total] = await Promise.all([this.prisma.user.findMany({ where, orderBy: { id: 'asc' }, skip, take }), this.prisma.user.count({ where })]);
    return { rows, total };
  }
}
