/**
 * Notification threads as Gitea keeps them: one row per (user, issue), created or updated when
 * something happens on the issue, for its watchers and participants but never the actor, and
 * only for users who can read the repository. Lists filter out repositories the reader can
 * no longer read, so nothing is ever shown about them.
 */
import { NotFoundError, PermissionDeniedError } from '../errors';
import { AccessMode, type Converter } from '../convert';
import type { HotReads } from '../fast-reads';
import type { Prisma } from '../database';
import type { PermissionService } from '../permissions';
import type { User } from '../records';
import { isUniqueViolation } from '../users';
import type { IssueConverter, RepoWithOwner } from '../convert';

export const NotificationStatus = { Unread: 1, Read: 2, Pinned: 3 } as const;
export const NotificationSource = { Issue: 1, PullRequest: 2, Commit: 3, Repository: 4 } as const;

const STATUS_NAMES: Record<string, number> = { unread: 1, read: 2, pinned: 3 };
const SUBJECT_NAMES: Record<string, number> = { issue: 1, pull: 2, commit: 3, repository: 4 };

export function parseStatuses(values: string[] | undefined, dflt: number[]): number[] {
  const out = (values ?? []).flatMap((v) => v.split(',')).map((v) => STATUS_NAMES[v.trim().toLowerCase()]).filter((v): v is number => v !== undefined);
  return out.length ? [...new Set(out)] : dflt;
}

export function parseSubjects(values: string[] | undefined): number[] {
  return [...new Set((values ?? []).flatMap((v) => v.split(',')).map((v) => SUBJECT_NAMES[v.trim().toLowerCase()]).filter((v): v is number => v !== undefined))];
}

/** to-status: unknown or missing means read, as Gitea's API does. */
export function parseTargetStatus(value: string | undefined): number {
  return (value && STATUS_NAMES[value.toLowerCase()]) || NotificationStatus.Read;
}

export interface NotifyIssueInput {
  issue: { id: number; repoId: number; posterId: number; isPull: boolean };
  repo: RepoWithOwner;
  actorId: number;
  commentId?: number | null;
  /** Only these users (assignment); otherwise watchers + participants + mentioned. */
  receiverIds?: number[];
  mentionedIds?: number[];
}

export interface ThreadFilter {
  all?: boolean;
  statuses: number[];
  subjects: number[];
  since?: Date;
  before?: Date;
  repoId?: number;
}

export class NotificationService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
    private readonly convert: Converter,
    private readonly issueConvert: IssueConverter,
    private readonly hot: HotReads,
  ) {}

  private async recipients(input: NotifyIssueInput): Promise<number[]> {
    const { issue } = input;
    const ids = new Set<number>();
    if (input.receiverIds) {
      input.receiverIds.forEach((id) => ids.add(id));
    } else {
      const [issueWatches, repoWatchers, commenters] = await Promise.all([this.hot.issueWatches(issue.id), this.hot.watcherIds(issue.repoId), this.hot.commenterIds(issue.id)]);
      ids.add(issue.posterId);
      repoWatchers.forEach((id) => ids.add(id));
      commenters.forEach((id) => ids.add(id));
      (input.mentionedIds ?? []).forEach((id) => ids.add(id));
      for (const w of issueWatches) {
        if (w.isWatching) ids.add(w.userId);
        else ids.delete(w.userId);
      }
    }
    ids.delete(input.actorId);
    if (!ids.size) return [];
    const users = (await this.hot.usersByIds([...ids])).filter((u) => u.type === 0 && u.isActive);
    const allowed: number[] = [];
    // A public repository of a public owner is readable by every unrestricted user: no query.
    const open = !input.repo.isPrivate && input.repo.owner.visibility === 0;
    for (const u of users) {
      if ((open && !u.isRestricted) || (await this.permissions.repoAccessMode(u, input.repo)) >= AccessMode.Read) allowed.push(u.id);
    }
    return allowed;
  }

  /** Creates or updates the threads of an issue event (Gitea's createOrUpdateIssueNotifications). */
  async notifyIssue(input: NotifyIssueInput): Promise<void> {
    const users = await this.recipients(input);
    const now = new Date();
    const source = input.issue.isPull ? NotificationSource.PullRequest : NotificationSource.Issue;
    for (const userId of users) {
      const update = async () => {
        const current = await this.hot.notificationThread(userId, input.issue.id);
        if (!current) return false;
        // A read thread becomes unread and points at the new comment; an unread or pinned one
        // only moves up (updated time and updater).
        // Plain SQL for the writes every issue event makes (Prisma's update/create: ~0.5-0.9 ms of JavaScript each).
        if (current.status === NotificationStatus.Read) {
          await this.prisma.$executeRaw`UPDATE "Notification" SET "status" = ${NotificationStatus.Unread}, "commentId" = ${input.commentId ?? null}, "updatedById" = ${input.actorId}, "updatedAt" = ${now} WHERE "id" = ${current.id}`;
        } else if (input.commentId) {
          await this.prisma.$executeRaw`UPDATE "Notification" SET "updatedById" = ${input.actorId}, "updatedAt" = ${now}, "commentId" = ${input.commentId} WHERE "id" = ${current.id}`;
        } else {
          await this.prisma.$executeRaw`UPDATE "Notification" SET "updatedById" = ${input.actorId}, "updatedAt" = ${now} WHERE "id" = ${current.id}`;
        }
        return true;
      };
      if (await update()) continue;
      // A thread made meanwhile by another event wins the unique key: then it is updated instead.
      const made = await this.prisma.$queryRaw<{ id: number | bigint }[]>`
        INSERT INTO "Notification" ("userId", "repoId", "issueId", "source", "status", "commentId", "updatedById", "createdAt", "updatedAt")
        VALUES (${userId}, ${input.issue.repoId}, ${input.issue.id}, ${source}, ${NotificationStatus.Unread}, ${input.commentId ?? null}, ${input.actorId}, ${now}, ${now})
        ON CONFLICT ("userId", "issueId") DO NOTHING RETURNING "id"`;
      if (!made.length) await update();
    }
  }

  private where(user: User, f: ThreadFilter) {
    const where: Record<string, unknown> = { userId: user.id, issue: { repo: this.permissions.readableRepoFilter(user) } };
    if (!f.all) where.status = { in: f.statuses };
    if (f.subjects.length) where.source = { in: f.subjects };
    if (f.since || f.before) where.updatedAt = { ...(f.since ? { gte: f.since } : {}), ...(f.before ? { lte: f.before } : {}) };
    if (f.repoId) where.repoId = f.repoId;
    return where;
  }

  async list(user: User, f: ThreadFilter, skip: number, take: number) {
    const where = this.where(user, f);
    const [rows, total] = await Promise.all([
      this.prisma.notification.findMany({ where, orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }], skip, take }),
      this.prisma.notification.count({ where }),
    ]);
    return { data: await this.toJson(rows, user), total };
  }

  /** PUT /notifications: sets every selected thread updated before lastReadAt to `to`. */
  async markAll(user: User, f: ThreadFilter & { lastReadAt?: Date }, to: number) {
    const where = this.where(user, { ...f, since: undefined, before: f.lastReadAt });
    if (f.lastReadAt) where.updatedAt = { lt: f.lastReadAt };
    const rows = await this.prisma.notification.findMany({ where, orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }] });
    if (!rows.length) return [];
    // Gitea changes the status only: the updated time stays, so sorting is not disturbed.
    await this.prisma.notification.updateMany({ where: { id: { in: rows.map((r) => r.id) } }, data: { status: to } });
    return this.toJson(rows.map((r) => ({ ...r, status: to })), user);
  }

  async newCount(user: User): Promise<number> {
    return this.prisma.notification.count({ where: { userId: user.id, status: NotificationStatus.Unread, issue: { repo: this.permissions.readableRepoFilter(user) } } });
  }

  /** A thread of the caller (or any thread for a site admin); 404 when it or its repository is not visible. */
  async thread(user: User, id: number) {
    const n = await this.prisma.notification.findUnique({ where: { id } });
    if (!n) throw new NotFoundError('not found', [`notification does not exist [id: ${id}]`]);
    if (n.userId !== user.id && !user.isAdmin) throw new PermissionDeniedError(`only user itself and admin are allowed to read/change this thread ${id}`);
    const owner = n.userId === user.id ? user : await this.prisma.user.findUniqueOrThrow({ where: { id: n.userId } });
    const visible = await this.prisma.notification.count({ where: { id, issue: { repo: this.permissions.readableRepoFilter(owner) } } });
    if (!visible) throw new NotFoundError('not found', [`notification does not exist [id: ${id}]`]);
    return n;
  }

  async threadJson(user: User, id: number) {
    const [json] = await this.toJson([await this.thread(user, id)], user);
    return json;
  }

  async markThread(user: User, id: number, to: number) {
    const n = await this.thread(user, id);
    const updated = await this.prisma.notification.update({ where: { id: n.id }, data: { status: to } });
    const [json] = await this.toJson([updated], user);
    return json;
  }

  private async toJson(rows: { id: number; issueId: number; commentId: number | null; status: number; updatedAt: Date; repoId: number; userId: number }[], viewer: User) {
    if (!rows.length) return [];
    const issues = new Map(
      (await this.prisma.issue.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.issueId))] } }, include: { repo: { include: { owner: true } } } })).map((i) => [i.id, i]),
    );
    const commentIds = rows.map((r) => r.commentId).filter((c): c is number => c !== null);
    const comments = new Map((commentIds.length ? await this.prisma.comment.findMany({ where: { id: { in: commentIds } } }) : []).map((c) => [c.id, c]));
    const repoJson = new Map<number, unknown>();
    const out = [];
    for (const r of rows) {
      const issue = issues.get(r.issueId);
      if (!issue) continue;
      if (!repoJson.has(issue.repoId)) {
        // Gitea leaves permissions out of a thread's repository: they would describe the reader's
        // access at conversion time, not at notification time.
        const { permissions: _p, ...repo } = this.convert.repo(issue.repo, await this.permissions.repoAccessMode(viewer, issue.repo));
        repoJson.set(issue.repoId, repo);
      }
      out.push(this.issueConvert.thread(r as never, issue, issue.repo, repoJson.get(issue.repoId), r.commentId !== null ? comments.get(r.commentId) ?? null : null));
    }
    return out;
  }
}
