/**
 * Gitea's repoAssignment: a route under /repos/{owner}/{repo} that declares `config.repo` gets
 * the repository of its path and the caller's access loaded once, before its handler, into
 * `request.repoCtx`. Access 'read' needs a repository the caller can read (404 otherwise);
 * 'change' also a signed-in caller (401) and a repository that is not archived (423).
 * `unit: 'issues'` needs the issue tracker enabled (404). A token limited to public things is
 * refused on a repository that is not public (403).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PermissionDeniedError, UnauthenticatedError } from '../services/errors';
import type { RepoCtx } from '../services/issues/context';
import type { User } from '../services/records';
import { shared } from './shared';

export interface RepoAssignment {
  access: 'read' | 'change';
  unit?: 'issues';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    repo?: RepoAssignment;
  }
  interface FastifyRequest {
    /** The repository of the path with the caller's access (routes with `config.repo`). */
    repoCtx: RepoCtx;
  }
}

/** The issue tracker's route groups: read, or change (signed in, not archived). */
export const ISSUES_READ: RepoAssignment = { access: 'read', unit: 'issues' };
export const ISSUES_CHANGE: RepoAssignment = { access: 'change', unit: 'issues' };

/** The assigned repository of a 'change' route, whose caller is signed in. */
export function changeCtx(request: FastifyRequest): RepoCtx & { doer: User } {
  const rc = request.repoCtx;
  if (!rc.doer) throw new UnauthenticatedError('token is required');
  return rc as RepoCtx & { doer: User };
}

async function repoAssignment(app: FastifyInstance) {
  const { context } = app.services.tracker;
  app.decorateRequest('repoCtx', null as unknown as RepoCtx);
  app.addHook('preHandler', async (request) => {
    const assignment = request.routeOptions.config?.repo;
    if (!assignment) return;
    const { owner, repo } = request.params as { owner: string; repo: string };
    const rc = assignment.access === 'change' ? await context.repoForChange(owner, repo, request.doer, assignment.unit ?? null) : await context.repo(owner, repo, request.doer, assignment.unit ?? null);
    if (request.auth?.scopes?.publicOnly && (rc.repo.isPrivate || rc.repo.owner.visibility !== 0)) {
      throw new PermissionDeniedError('token scope is limited to public repos');
    }
    request.repoCtx = rc;
  });
}

export default shared(repoAssignment);
