/**
 * Locking an issue's conversation (PUT / DELETE /issues/{index}/lock), as Gitea's
 * issues_model.LockIssue / UnlockIssue: the flag and a lock or unlock timeline event whose
 * content is the reason given (free text); locking a locked issue or unlocking an unlocked one
 * changes nothing. Who may lock is the route's rule (repository admins); who may still comment
 * on a locked issue is CommentService.create's (repository writers).
 */
import type { User } from '../records';
import type { TrackerContext } from './context';
import { CommentType } from './issues';
import type { Issue } from '../../../generated/prisma/client';

export class IssueLockService {
  constructor(private readonly ctx: TrackerContext) {}

  async setLocked(doer: User, issue: Issue, locked: boolean, reason = ''): Promise<void> {
    const now = new Date();
    await this.ctx.prisma.$transaction(async (tx) => {
      const changed = await tx.issue.updateMany({ where: { id: issue.id, isLocked: !locked }, data: { isLocked: locked } });
      if (!changed.count) return;
      await tx.comment.create({
        data: { type: locked ? CommentType.Lock : CommentType.Unlock, issueId: issue.id, repoId: issue.repoId, posterId: doer.id, content: locked ? reason : '', createdAt: now, updatedAt: now },
      });
    });
  }
}
