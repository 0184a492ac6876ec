/** Shared pieces of the issue tracker's routes: path numbers, schemas. (The repository comes from plugins/repo-assignment.ts.) */
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import type { RepoCtx } from '../services/issues/context';

export type OwnerRepo = { owner: string; repo: string };

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

/** The path of one issue or pull request. */
export type IndexParams = OwnerRepo & { index: string };

/** owner, repo and index with one more path parameter (`id`, `user`, ...). */
export function ownerRepoIndexWith(name: string) {
  return {
    type: 'object',
    properties: { ...ownerRepoIndexParams.properties, [name]: { type: 'string' } },
    required: [...ownerRepoIndexParams.required, name],
  } as const;
}

export const ownerRepoIdParams = {
  type: 'object',
  properties: { owner: { type: 'string' }, repo: { type: 'string' }, id: { type: 'string' } },
  required: ['owner', 'repo', 'id'],
} as const;
