/**
 * Comments on issues: list per issue and per repository (plain comments only), create, get,
 * edit, delete. Only the poster or a repository writer changes a comment, as Gitea checks.
 */
import { InvalidError, NotFoundError, PermissionDeniedError, ValidationError } from '../errors';
import { refuseIfBlocked } from '../blocks';
import type { Notifier } from '../notify';
import type { User } from '../records';
import type { AttachmentService } from './attachments';
import type { RepoCtx, TrackerContext } from './context';
import type { IssueConverter } from '../convert';
import { CommentType, parseDate, type IssueService } from './issues';
import type { Comment, Issue } from '../../../generated/prisma/client';

export interface CommentRange {
  since?: string;
  before?: string;
}

export class CommentService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly convert: IssueConverter,
    private readonly issues: IssueService,
    private readonly attachments: AttachmentService,
    private readonly notifier: Notifier,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  private range(r: CommentRange) {
    const since = parseDate(r.since, 'Since');
    const before = parseDate(r.before, 'Before');
    return since || before ? { updatedAt: { ...(since ? { gte: since } : {}), ...(before ? { lte: before } : {}) } } : {};
  }

  async toJson(comments: (Comment & { issue: Pick<Issue, 'index' | 'isPull'> })[], rc: RepoCtx) {
    const atts = await this.prisma.attachment.findMany({ where: { commentId: { in: comments.map((c) => c.id) } }, orderBy: { id: 'asc' } });
    const users = await this.ctx.users(comments.map((c) => c.posterId));
    return comments.map((c) =>
      this.convert.comment({ ...c, attachments: atts.filter((a) => a.commentId === c.id) }, c.issue, rc.repo, users.get(c.posterId)),
    );
  }

  async listForIssue(rc: RepoCtx, issue: Issue, r: CommentRange) {
    const rows = await this.prisma.comment.findMany({
      where: { issueId: issue.id, type: CommentType.Comment, ...this.range(r) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      include: { issue: { select: { index: true, isPull: true } } },
    });
    return this.toJson(rows, rc);
  }

  async listForRepo(rc: RepoCtx, r: CommentRange, skip: number, take: number) {
    const where = { repoId: rc.repo.id, type: CommentType.Comment, ...this.range(r) };
    const [rows, total] = await Promise.all([
      this.prisma.comment.findMany({ where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], skip, take, include: { issue: { select: { index: true, isPull: true } } } }),
      this.prisma.comment.count({ where }),
    ]);
    return { data: await this.toJson(rows, rc), total };
  }

  /** A comment of this repository (any type), or 404. */
  async find(rc: RepoCtx, id: number) {
    const c = Number.isSafeInteger(id) ? await this.prisma.comment.findUnique({ where: { id }, include: { issue: true } }) : null;
    if (!c || c.repoId !== rc.repo.id) throw new NotFoundError('not found', [`comment does not exist [id: ${id}]`]);
    return c;
  }

  async json(rc: RepoCtx, id: number) {
    const c = await this.prisma.comment.findUniqueOrThrow({ where: { id }, include: { issue: { select: { index: true, isPull: true } } } });
    const [json] = await this.toJson([c], rc);
    return json;
  }

  async create(rc: RepoCtx & { doer: User }, issue: Issue, body: string) {
    if (!body || !body.trim()) throw new ValidationError('[Body]: Required');
    if (issue.isLocked && !rc.canWrite) throw new PermissionDeniedError('You cannot comment on a locked issue.');
    // A user blocked by the issue's poster or the repository's owner cannot comment, unless they administer the repository.
    if (!rc.isAdmin) await refuseIfBlocked(this.prisma, rc.doer, [issue.posterId, rc.repo.ownerId]);
    const now = new Date();
    const comment = await this.prisma.$transaction(async (tx): Promise<Comment> => {
      // Plain SQL: Prisma's create and update cost ~0.6 and ~0.5 ms of JavaScript, these ~0.25 ms.
      const [row] = await tx.$queryRaw<{ id: number | bigint }[]>`
        INSERT INTO "Comment" ("type", "issueId", "repoId", "posterId", "content", "createdAt", "updatedAt")
        VALUES (${CommentType.Comment}, ${issue.id}, ${issue.repoId}, ${rc.doer.id}, ${body}, ${now}, ${now}) RETURNING "id"`;
      await tx.$executeRaw`UPDATE "Issue" SET "numComments" = "numComments" + 1, "updatedAt" = ${now} WHERE "id" = ${issue.id}`;
      // The row as the table's defaults made it (the type lists every column).
      return {
        id: Number(row.id),
        type: CommentType.Comment,
        issueId: issue.id,
        repoId: issue.repoId,
        posterId: rc.doer.id,
        content: body,
        dependentIssueId: null,
        timeId: null,
        assigneeId: null,
        removedAssignee: false,
        oldTitle: '',
        newTitle: '',
        labelId: null,
        oldMilestoneId: null,
        milestoneId: null,
        oldRef: '',
        newRef: '',
        refRepoId: null,
        refIssueId: null,
        refCommentId: null,
        refAction: 0,
        refIsPull: false,
        commitSha: '',
        originalAuthor: '',
        originalAuthorId: 0,
        createdAt: now,
        updatedAt: now,
      };
    });
    await this.notifier.commentCreated(rc.doer, rc.repo, issue, comment, await this.issues.mentionedUserIds(body));
    // Everything the answer shows is at hand (a new comment has no attachments): no reload.
    return this.convert.comment({ ...comment, attachments: [] }, { index: issue.index, isPull: issue.isPull }, rc.repo, rc.doer);
  }

  canChange(rc: RepoCtx, c: Comment): boolean {
    return rc.doer !== null && (rc.doer.id === c.posterId || rc.canWrite);
  }

  /** PATCH: 403 unless poster or writer; 204 for events without content (Gitea's answer). */
  async edit(rc: RepoCtx & { doer: User }, id: number, body: string): Promise<unknown | null> {
    const c = await this.find(rc, id);
    if (!this.canChange(rc, c)) throw new PermissionDeniedError('user should be the poster or have write permission');
    if (c.type !== CommentType.Comment) return null;
    if (body === undefined) throw new ValidationError('[Body]: Required');
    await this.prisma.comment.update({ where: { id }, data: { content: body, updatedAt: new Date() } });
    await this.notifier.commentEdited(rc.doer, rc.repo, c.issue, { ...c, content: body }, c.content);
    return this.json(rc, id);
  }

  async delete(rc: RepoCtx & { doer: User }, id: number): Promise<void> {
    const c = await this.find(rc, id);
    if (!this.canChange(rc, c)) throw new PermissionDeniedError('user should be the poster or have write permission');
    if (c.type !== CommentType.Comment) throw new InvalidError('comment type has no content');
    const files = await this.prisma.attachment.findMany({ where: { commentId: id } });
    await this.prisma.$transaction([
      this.prisma.comment.delete({ where: { id } }),
      this.prisma.issue.update({ where: { id: c.issueId }, data: { numComments: { decrement: 1 } } }),
    ]);
    await Promise.all(files.map((f) => this.attachments.removeFile(f.uuid)));
    await this.notifier.commentDeleted(rc.doer, rc.repo, c.issue, c);
  }
}
