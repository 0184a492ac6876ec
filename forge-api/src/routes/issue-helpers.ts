/** Shared pieces of the issue tracker's routes: repository context, path numbers, schemas. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import type { RepoCtx } from '../services/issues/context';
import type { User } from '../services/records';

export type OwnerRepo = { owner: string; repo: string };

/** Gitea's public-only token modifier: private repositories are off limits (403). */
function checkPublicOnly(request: FastifyRequest, rc: RepoCtx): void {
  if (request.auth?.scopes?.publicOnly && (rc.repo.isPrivate || rc.repo.owner.visibility !== 0)) {
    throw new PermissionDeniedError('token scope is limited to public repos');
  }
}

/** The readable repository of the path (404), for reading. */
export async function readCtx(app: FastifyInstance, request: FastifyRequest<{ Params: OwnerRepo }>): Promise<RepoCtx> {
  const rc = await app.services.tracker.context.repo(request.params.owner, request.params.repo, request.doer);
  checkPublicOnly(request, rc);
  return rc;
}

/** The repository of the path for a change: signed in (401), readable (404), not archived (423). */
export async function changeCtx(app: FastifyInstance, request: FastifyRequest<{ Params: OwnerRepo }>): Promise<RepoCtx & { doer: User }> {
  const rc = await app.services.tracker.context.repoForChange(request.params.owner, request.params.repo, request.doer);
  checkPublicOnly(request, rc);
  return rc;
}

/** A numeric path segment; anything else names nothing (404), as Gitea's ParamsInt64 gives 0. */
export function pathNumber(value: string | number, what = 'not found'): number {
  const n = typeof value === 'number' ? value : /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw new NotFoundError('not found', [what]);
  return n;
}

export function writerOnly(rc: RepoCtx): void {
  if (!rc.canWrite) throw new PermissionDeniedError('user should have a permission to write to a repo');
}

/** Query values that may be repeated (?a=x&a=y) or comma-joined. */
export function many(v: string | string[] | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
}

export const ownerRepoIndexParams = {
  type: 'object',
  properties: { owner: { type: 'string' }, repo: { type: 'string' }, index: { type: 'string' } },
  required: ['owner', 'repo', 'index'],
} as const;

export const ownerRepoIdParams = {
  type: 'object',
  properties: { owner: { type: 'string' }, repo: { type: 'string' }, id: { type: 'string' } },
  required: ['owner', 'repo', 'id'],
} as const;
