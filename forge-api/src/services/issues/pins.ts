/**
 * Pinned issues and pull requests (Gitea's issue_pin model): Issue.pinOrder is the 1-based
 * position among the repository's pinned issues (or pinned pull requests, counted apart), 0 when
 * not pinned; at most MAX_PINNED of each kind (Gitea's [repository.issue] MAX_PINNED default).
 * Pinning and unpinning leave a timeline event (comment types 36 and 37), as Gitea does.
 */
import type { Prisma } from '../database';
import { InvalidError, MalformedError, NotFoundError } from '../errors';
import type { User } from '../records';
import type { Issue } from '../../../generated/prisma/client';

export const MAX_PINNED = 3;
const COMMENT_PIN = 36;
const COMMENT_UNPIN = 37;

export class PinService {
  constructor(private readonly prisma: Prisma) {}

  private async pinnedCount(repoId: number, isPull: boolean): Promise<number> {
    return this.prisma.issue.count({ where: { repoId, isPull, pinOrder: { gt: 0 } } });
  }

  /** Pins the issue last; an issue pinned already stays where it is. */
  async pin(doer: User, issue: Issue): Promise<void> {
    if (issue.pinOrder > 0) return;
    if ((await this.pinnedCount(issue.repoId, issue.isPull)) >= MAX_PINNED) {
      throw new MalformedError('the max number of pinned issues has been readched');
    }
    const now = new Date();
    await this.prisma.$transaction(async (tx) => {
      const last = await tx.issue.aggregate({ where: { repoId: issue.repoId, isPull: issue.isPull, pinOrder: { gt: 0 } }, _max: { pinOrder: true } });
      await tx.issue.update({ where: { id: issue.id }, data: { pinOrder: (last._max.pinOrder ?? 0) + 1 } });
      await tx.comment.create({ data: { type: COMMENT_PIN, issueId: issue.id, repoId: issue.repoId, posterId: doer.id, createdAt: now, updatedAt: now } });
    });
  }

  /** Unpins the issue (nothing happens when it is not pinned); the others keep their positions. */
  async unpin(doer: User, issue: Issue): Promise<void> {
    const now = new Date();
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.issue.updateMany({ where: { id: issue.id, pinOrder: { gt: 0 } }, data: { pinOrder: 0 } });
      if (!count) return;
      await tx.comment.create({ data: { type: COMMENT_UNPIN, issueId: issue.id, repoId: issue.repoId, posterId: doer.id, createdAt: now, updatedAt: now } });
    });
  }

  /**
   * Moves a pinned issue to `position`, shifting those in between by one (Gitea's MovePin;
   * a position past the last one is kept as given, as Gitea does).
   */
  async move(issue: Issue, position: number): Promise<void> {
    if (!Number.isSafeInteger(position) || position < 1) throw new InvalidError("The Position can't be lower than 1");
    if (issue.pinOrder <= 0) throw new NotFoundError('not found', [`IssuePin does not exist [id: ${issue.id}]`]);
    const old = issue.pinOrder;
    if (old === position) return;
    const same = { repoId: issue.repoId, isPull: issue.isPull };
    await this.prisma.$transaction([
      old > position
        ? this.prisma.issue.updateMany({ where: { ...same, pinOrder: { gte: position, lt: old } }, data: { pinOrder: { increment: 1 } } })
        : this.prisma.issue.updateMany({ where: { ...same, pinOrder: { gt: old, lte: position } }, data: { pinOrder: { decrement: 1 } } }),
      this.prisma.issue.update({ where: { id: issue.id }, data: { pinOrder: position } }),
    ]);
  }

  /** Ids of the pinned issues (or pull requests), in pin order. */
  async pinnedIds(repoId: number, isPull: boolean): Promise<number[]> {
    const rows = await this.prisma.issue.findMany({ where: { repoId, isPull, pinOrder: { gt: 0 } }, orderBy: [{ pinOrder: 'asc' }, { id: 'asc' }], select: { id: true } });
    return rows.map((r) => r.id);
  }

  /** NewIssuePinsAllowed: whether one more issue, and one more pull request, may be pinned. */
  async newPinAllowed(repoId: number): Promise<{ issues: boolean; pull_requests: boolean }> {
    const [issues, pulls] = await Promise.all([this.pinnedCount(repoId, false), this.pinnedCount(repoId, true)]);
    return { issues: issues < MAX_PINNED, pull_requests: pulls < MAX_PINNED };
  }
}
