/**
 * The repository an issue route works in, with the caller's access, and the shared checks of
 * Gitea's issue routes: the repository must be readable (404), its issue unit enabled (404),
 * not archived for changes (423), and the caller signed in for changes (401).
 */
import { ArchivedError, NotFoundError, PermissionDeniedError, UnauthenticatedError } from '../errors';
import { AccessMode } from '../convert';
import type { Prisma } from '../database';
import type { HotReads } from '../fast-reads';
import type { PermissionService } from '../permissions';
import type { User } from '../records';
import type { RepoService } from '../repos';
import { ghostUser, type RepoWithOwner } from '../convert';

export interface RepoCtx {
  repo: RepoWithOwner;
  mode: number;
  doer: User | null;
  canWrite: boolean;
  isAdmin: boolean;
  /** The caller's mode on the route's unit (code, releases, wiki), when the route names one. */
  unitMode?: number;
}

export class TrackerContext {
  constructor(
    readonly prisma: Prisma,
    private readonly repos: RepoService,
    readonly permissions: PermissionService,
    /** The database provider: PostgreSQL needs `mode: 'insensitive'` where SQLite's LIKE already is. */
    readonly provider: 'sqlite' | 'postgresql',
    /** Prepared read statements of the hot paths (services/fast-reads.ts). */
    readonly hot: HotReads,
  ) {}

  /** The readable repository (and, with `unit`, that unit enabled), or 404. */
  async repo(owner: string, name: string, doer: User | null, unit: 'issues' | null = 'issues'): Promise<RepoCtx> {
    const { repo, mode } = await this.repos.getReadable(owner, name, doer);
    if (unit === 'issues' && !repo.hasIssues) throw new NotFoundError('not found', ['repository has no issue tracker']);
    return { repo, mode, doer, canWrite: mode >= AccessMode.Write, isAdmin: mode >= AccessMode.Admin };
  }

  /** The repository for a change: signed in, not archived (423 as Gitea's mustNotBeArchived). */
  async repoForChange(owner: string, name: string, doer: User | null, unit: 'issues' | null = 'issues'): Promise<RepoCtx & { doer: User }> {
    if (!doer) throw new UnauthenticatedError('token is required');
    const ctx = await this.repo(owner, name, doer, unit);
    if (ctx.repo.isArchived) throw new ArchivedError('repo is archived');
    return { ...ctx, doer };
  }

  requireWriter(ctx: RepoCtx, message = 'user should have permission to write issue'): void {
    if (!ctx.canWrite) throw new PermissionDeniedError(message);
  }

  async accessMode(doer: User | null, repo: RepoWithOwner): Promise<number> {
    return this.permissions.repoAccessMode(doer, repo);
  }

  /** Users by id (one query); ids not found are left out (the converter shows a ghost). */
  async users(ids: Iterable<number>): Promise<Map<number, User>> {
    const unique = [...new Set([...ids].filter((id) => id > 0))];
    const rows = unique.length ? await this.prisma.user.findMany({ where: { id: { in: unique } } }) : [];
    return new Map(rows.map((u) => [u.id, u]));
  }

  async user(id: number): Promise<User> {
    return (await this.prisma.user.findUnique({ where: { id } })) ?? ghostUser();
  }
}
