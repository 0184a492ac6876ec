/**
 * Gitea's repoAssignment: a route under /repos/{owner}/{repo} that declares `config.repo` gets
 * the repository of its path and the caller's access loaded once, before its handler, into
 * `request.repoCtx`. The checks follow Gitea's route middleware:
 * - every access needs a repository the caller can read (404 otherwise);
 * - 'change' (the issue tracker's writes) needs a signed-in caller (401);
 * - 'write' (reqRepoWriter) a signed-in caller whose access to the unit is at least write (403);
 * - 'admin' (reqAdmin) a signed-in repository admin or site admin (403);
 * - 'change' and 'write' refuse an archived repository (423, mustNotBeArchived) unless the
 *   route says `archived: 'allow'`; 'admin' refuses it only with `archived: 'refuse'`.
 * `unit: 'issues'` needs the issue tracker enabled (404). `unit: 'code' | 'releases' | 'wiki'`
 * counts team access only as far as the team's mode for that unit, and a reader of a disabled
 * unit gets 403 (reqRepoReader) unless repository admin. A token limited to public things is
 * refused on a repository that is not public (403).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AccessMode } from '../services/convert';
import { ArchivedError, NotFoundError, PermissionDeniedError, UnauthenticatedError } from '../services/errors';
import type { RepoCtx } from '../services/issues/context';
import { hiddenFromPublicOnly } from '../services/permissions';
import type { User } from '../services/records';
import { shared } from './shared';

export type RepoUnit = 'issues' | 'code' | 'releases' | 'wiki' | 'pulls';

export interface RepoAssignment {
  access: 'read' | 'change' | 'write' | 'admin';
  unit?: RepoUnit;
  archived?: 'allow' | 'refuse';
  /**
   * 'forbidden': an anonymous caller gets the access check's 403 instead of 401, where Gitea's
   * permission middleware runs before reqToken (e.g. PUT/DELETE /topics/{topic}).
   */
  anonymous?: 'forbidden';
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
/** Repository content: read the code, write to it (reqRepoWriter), administer the repository. */
export const CODE_READ: RepoAssignment = { access: 'read', unit: 'code' };
export const CODE_WRITE: RepoAssignment = { access: 'write', unit: 'code' };
export const REPO_ADMIN: RepoAssignment = { access: 'admin' };
/**
 * Pull requests (Gitea's mustAllowPulls + reqRepoReader(code)): the unit enabled and readable
 * (404 otherwise), the code readable (403); `canWrite` is write access to the pull requests.
 */
export const PULLS_READ: RepoAssignment = { access: 'read', unit: 'pulls' };
export const PULLS_CHANGE: RepoAssignment = { access: 'change', unit: 'pulls' };

/** The assigned repository of a 'change', 'write' or 'admin' route, whose caller is signed in. */
export function changeCtx(request: FastifyRequest): RepoCtx & { doer: User } {
  const rc = request.repoCtx;
  if (!rc.doer) throw new UnauthenticatedError('token is required');
  return rc as RepoCtx & { doer: User };
}

const UNIT_KEY: Record<Exclude<RepoUnit, 'issues' | 'pulls'>, string> = { code: 'repo.code', releases: 'repo.releases', wiki: 'repo.wiki' };

async function repoAssignment(app: FastifyInstance) {
  const { context, permissions } = { context: app.services.tracker.context, permissions: app.services.tracker.context.permissions };
  app.decorateRequest('repoCtx', null as unknown as RepoCtx);
  const assign = async (request: FastifyRequest) => {
    const assignment = request.routeOptions.config?.repo;
    if (!assignment) return;
    const { owner, repo } = request.params as { owner: string; repo: string };
    const doer = request.doer;
    const issuesUnit = assignment.unit === 'issues' ? 'issues' : null;
    if (assignment.access !== 'read' && !doer && assignment.anonymous !== 'forbidden') throw new UnauthenticatedError('token is required');
    const rc = await context.repo(owner, repo, doer, issuesUnit);
    if (request.auth?.scopes?.publicOnly && hiddenFromPublicOnly(rc.repo)) {
      throw new PermissionDeniedError('token scope is limited to public repos');
    }
    const refuseArchived = assignment.archived ? assignment.archived === 'refuse' : assignment.access === 'change' || assignment.access === 'write';
    if (refuseArchived && rc.repo.isArchived) throw new ArchivedError('repo is archived');
    if (assignment.unit === 'pulls') {
      const pullsMode = rc.isAdmin ? rc.mode : await permissions.repoAccessMode(doer, rc.repo, 'repo.pulls');
      if (!rc.repo.hasPullRequests || pullsMode < AccessMode.Read) throw new NotFoundError('not found', ['repository has no pull requests']);
      const codeMode = rc.isAdmin ? rc.mode : await permissions.repoAccessMode(doer, rc.repo, 'repo.code');
      if (codeMode < AccessMode.Read) throw new PermissionDeniedError('user should have specific read permission or be a repo admin or a site admin');
      rc.unitMode = pullsMode;
      rc.canWrite = pullsMode >= AccessMode.Write;
    } else if (assignment.unit && assignment.unit !== 'issues') {
      // Team members get the team's mode for this unit; owners, admins and collaborators keep theirs.
      const unitMode = rc.isAdmin ? rc.mode : await permissions.repoAccessMode(doer, rc.repo, UNIT_KEY[assignment.unit]);
      const enabled = assignment.unit === 'releases' ? rc.repo.hasReleases : assignment.unit === 'wiki' ? rc.repo.hasWiki : true;
      const unitRead = enabled && unitMode >= AccessMode.Read;
      if (!unitRead && !rc.isAdmin) throw new PermissionDeniedError('user should have specific read permission or be a repo admin or a site admin');
      rc.unitMode = enabled ? unitMode : rc.isAdmin ? rc.mode : AccessMode.None;
      rc.canWrite = rc.unitMode >= AccessMode.Write;
    }
    if (assignment.access === 'write' && !rc.canWrite && !rc.isAdmin) throw new PermissionDeniedError('user should have a permission to write to a repo');
    if (assignment.access === 'admin' && !rc.isAdmin) throw new PermissionDeniedError('user should be an owner or a collaborator with admin write of a repository');
    request.repoCtx = rc;
  };
  // An anonymous caller of a route whose check refuses anonymous callers (Gitea runs it before
  // reqToken) is refused before the body is read, as Gitea never binds it: a bad body cannot
  // turn the refusal into a 422.
  app.addHook('preParsing', async (request) => {
    if (!request.doer && request.routeOptions.config?.repo?.anonymous === 'forbidden') await assign(request);
  });
  app.addHook('preHandler', assign);
}

export default shared(repoAssignment);
