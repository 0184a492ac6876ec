/** Reactions on issues (commentId 0) and comments, with Gitea's default allowed set. */
import { PermissionDeniedError, ValidationError } from '../errors';
import { refuseIfBlocked } from '../blocks';
import type { User } from '../records';
import { isUniqueViolation } from '../users';
import type { RepoCtx, TrackerContext } from './context';
import type { IssueConverter } from '../convert';
import type { Issue } from '../../../generated/prisma/client';

/** [ui] REACTIONS default. */
export const ALLOWED_REACTIONS = ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes'];

export class ReactionService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly convert: IssueConverter,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  async list(rc: RepoCtx, issueId: number, commentId: number, skip?: number, take?: number) {
    const where = { issueId, commentId };
    const [rows, total] = await Promise.all([
      this.prisma.reaction.findMany({ where, orderBy: { id: 'asc' }, skip, take }),
      this.prisma.reaction.count({ where }),
    ]);
    const users = await this.ctx.users(rows.map((r) => r.userId));
    return { data: rows.map((r) => this.convert.reaction(r, users.get(r.userId), rc.doer)), total };
  }

  private check(rc: RepoCtx, issue: Issue, content: string) {
    if (issue.isLocked && !rc.canWrite) throw new PermissionDeniedError('no permission to change reaction');
    if (!ALLOWED_REACTIONS.includes(content)) throw new PermissionDeniedError(`'${content}' is not an allowed reaction`);
  }

  /** Adds a reaction: {created: true} for a new one (201), false when it existed (200). */
  async add(rc: RepoCtx & { doer: User }, issue: Issue, commentId: number, content: string) {
    if (typeof content !== 'string' || content === '') throw new ValidationError('[Content]: Required');
    this.check(rc, issue, content);
    // A user blocked by the issue's poster or the repository's owner cannot react (Gitea's CreateIssueReaction).
    await refuseIfBlocked(this.prisma, rc.doer, [issue.posterId, rc.repo.ownerId]);
    const key = { type_issueId_commentId_userId: { type: content, issueId: issue.id, commentId, userId: rc.doer.id } };
    let created = false;
    let row = await this.prisma.reaction.findUnique({ where: key });
    if (!row) {
      try {
        row = await this.prisma.reaction.create({ data: { type: content, issueId: issue.id, commentId, userId: rc.doer.id } });
        created = true;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        row = await this.prisma.reaction.findUniqueOrThrow({ where: key });
      }
    }
    return { created, json: this.convert.reaction(row, rc.doer, rc.doer) };
  }

  /** Removing a reaction that is not there is still a success, as in Gitea. */
  async remove(rc: RepoCtx & { doer: User }, issue: Issue, commentId: number, content: string) {
    if (typeof content !== 'string' || content === '') throw new ValidationError('[Content]: Required');
    this.check(rc, issue, content);
    await this.prisma.reaction.deleteMany({ where: { type: content, issueId: issue.id, commentId, userId: rc.doer.id } });
  }
}
