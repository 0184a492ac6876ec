/**
 * A repository's collaborators (GET/PUT/DELETE /repos/{owner}/{repo}/collaborators[/{collaborator}],
 * GET .../{collaborator}/permission) and its watchers (GET /subscribers). The middleware of each
 * route follows Gitea's: every collaborator route needs a token; reading needs any read access to
 * the repository, changing needs repository admin.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidError, NotFoundError, PermissionDeniedError } from '../services/errors';
import { setTotalCount } from '../plugins/paging';
import { REPO_ADMIN } from '../plugins/repo-assignment';
import { obj, ownerRepoParams, ref, str } from '../schemas';
import { accessModeName, GRANTABLE } from '../services/collaborators';
import { doerOf, errors, paging, pagingQuery } from './helpers';
import type { OwnerRepo } from './issue-helpers';
import { listOf } from '../schemas';

type CollaboratorParams = OwnerRepo & { collaborator: string };
const collaboratorParams = obj({ owner: str, repo: str, collaborator: str }, ['owner', 'repo', 'collaborator']);
const RepoCollaboratorPermission = obj({ permission: str, role_name: str, user: ref('User') });

export default async function collaboratorRoutes(app: FastifyInstance) {
  const tags = ['repository'];
  const { collaborators, convert } = app.services;
  const read = { auth: 'required' as const, scopes: ['repository' as const], repo: { access: 'read' as const } };
  const admin = { auth: 'required' as const, scopes: ['repository' as const], repo: REPO_ADMIN };

  /** Gitea answers an unknown collaborator name with 422 ("user does not exist"). */
  const named = async (name: string) => {
    const u = await collaborators.userByName(name);
    if (!u) throw new InvalidError(`user does not exist [uid: 0, name: ${name}]`);
    return u;
  };

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/collaborators',
    { config: read, schema: { tags, operationId: 'repoListCollaborators', summary: "List a repository's collaborators", params: ownerRepoParams, querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await collaborators.list(request.repoCtx.repo.id, p.skip, p.take);
      setTotalCount(reply, total);
      return rows.map((u) => convert.userFor(u, request.doer));
    },
  );

  app.get<{ Params: CollaboratorParams }>(
    '/repos/:owner/:repo/collaborators/:collaborator',
    { config: read, schema: { tags, operationId: 'repoCheckCollaborator', summary: 'Check if a user is a collaborator of a repository', params: collaboratorParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      const u = await named(request.params.collaborator);
      if (!(await collaborators.isCollaborator(request.repoCtx.repo.id, u.id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  app.put<{ Params: CollaboratorParams; Body: { permission?: string } | null }>(
    '/repos/:owner/:repo/collaborators/:collaborator',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'repoAddCollaborator',
        summary: 'Add or Update a collaborator to a repository',
        params: collaboratorParams,
        body: { type: ['object', 'null'], properties: { permission: { type: 'string', enum: Object.keys(GRANTABLE) } } },
        response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422, 423) },
      },
    },
    async (request, reply) => {
      const u = await named(request.params.collaborator);
      const mode = request.body?.permission ? GRANTABLE[request.body.permission] : GRANTABLE.write;
      await collaborators.addOrUpdate(request.repoCtx.repo, u, mode);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: CollaboratorParams }>(
    '/repos/:owner/:repo/collaborators/:collaborator',
    { config: admin, schema: { tags, operationId: 'repoDeleteCollaborator', summary: 'Delete a collaborator from a repository', params: collaboratorParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      const u = await named(request.params.collaborator);
      await collaborators.remove(request.repoCtx.repo, u);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: CollaboratorParams }>(
    '/repos/:owner/:repo/collaborators/:collaborator/permission',
    { config: read, schema: { tags, operationId: 'repoGetRepoPermissions', summary: 'Get repository permissions for a user', params: collaboratorParams, response: { 200: RepoCollaboratorPermission, ...errors(401, 403, 404) } } },
    async (request) => {
      const doer = doerOf(request);
      const name = request.params.collaborator;
      if (!doer.isAdmin && doer.lowerName !== name.toLowerCase() && !request.repoCtx.isAdmin) {
        throw new PermissionDeniedError('Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own');
      }
      const u = await collaborators.userByName(name);
      if (!u) throw new NotFoundError(`user does not exist [uid: 0, name: ${name}]`);
      const mode = accessModeName(await collaborators.accessMode(u, request.repoCtx.repo));
      return { permission: mode, role_name: mode, user: convert.userFor(u, doer) };
    },
  );

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/subscribers',
    { config: { repo: { access: 'read' as const } }, schema: { tags, operationId: 'repoListSubscribers', summary: "List a repo's watchers", params: ownerRepoParams, querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(404) } } },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await collaborators.subscribers(request.repoCtx.repo.id, p.skip, p.take);
      setTotalCount(reply, total);
      return rows.map((u) => convert.userFor(u, request.doer));
    },
  );
}
