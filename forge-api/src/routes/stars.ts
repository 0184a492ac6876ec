/**
 * Stars: GET /repos/{owner}/{repo}/stargazers, GET /user/starred, GET/PUT/DELETE
 * /user/starred/{owner}/{repo}, GET /users/{username}/starred. Middleware as Gitea's api.go:
 * /user/starred* need a token (repository scope), /users/{username}/starred a token (user
 * scope), the stargazers list only read access to the repository. Totals are the stored
 * counters (stars_count, starred_repos_count), as Gitea sends them.
 */
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../services/errors';
import { setTotalCount } from '../plugins/paging';
import { listOf, obj, ownerRepoParams, str } from '../schemas';
import { contextUser, doerOf, errors, paging, pagingQuery, sendPage } from './helpers';
import type { OwnerRepo } from './issue-helpers';

export default async function starRoutes(app: FastifyInstance) {
  const { stars, convert } = app.services;
  const mine = { auth: 'required' as const, scopes: ['user' as const, 'repository' as const], repo: { access: 'read' as const } };

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/stargazers',
    {
      config: { scopes: ['repository'], repo: { access: 'read' } },
      schema: { tags: ['repository'], operationId: 'repoListStargazers', summary: "List a repo's stargazers", params: ownerRepoParams, querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(403, 404) } },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await stars.stargazers(request.repoCtx.repo, p.skip, p.take);
      setTotalCount(reply, total);
      return rows.map((u) => convert.userFor(u, request.doer));
    },
  );

  app.get(
    '/user/starred',
    {
      config: { auth: 'required', scopes: ['user', 'repository'] },
      schema: { tags: ['user'], operationId: 'userCurrentListStarred', summary: 'The repos that the authenticated user has starred', querystring: obj(pagingQuery), response: { 200: listOf('Repository'), ...errors(401, 403) } },
    },
    async (request, reply) => {
      const doer = doerOf(request);
      const p = paging(app, request);
      // A public-only token sees the public repositories only (Gitea's ApplyPublicOnly).
      const { repos, total } = await stars.starredRepos(doer, !request.auth?.scopes?.publicOnly, p.skip, p.take);
      return sendPage(app, request, reply, repos.map((r) => convert.repo(r.repo, r.mode)), total, p);
    },
  );

  app.get<{ Params: OwnerRepo }>(
    '/user/starred/:owner/:repo',
    { config: mine, schema: { tags: ['user'], operationId: 'userCurrentCheckStarring', summary: 'Whether the authenticated is starring the repo', params: ownerRepoParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      if (!(await stars.isStarring(doerOf(request).id, request.repoCtx.repo.id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  app.put<{ Params: OwnerRepo }>(
    '/user/starred/:owner/:repo',
    { config: mine, schema: { tags: ['user'], operationId: 'userCurrentPutStar', summary: 'Star the given repo', params: ownerRepoParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      await stars.setStar(doerOf(request), request.repoCtx.repo, true);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: OwnerRepo }>(
    '/user/starred/:owner/:repo',
    { config: mine, schema: { tags: ['user'], operationId: 'userCurrentDeleteStar', summary: 'Unstar the given repo', params: ownerRepoParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      await stars.setStar(doerOf(request), request.repoCtx.repo, false);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { username: string } }>(
    '/users/:username/starred',
    {
      config: { auth: 'required', scopes: ['user'] },
      schema: {
        tags: ['user'],
        operationId: 'userListStarred',
        summary: 'The repos that the given user has starred',
        params: obj({ username: str }, ['username']),
        querystring: obj(pagingQuery),
        response: { 200: listOf('Repository'), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const p = paging(app, request);
      // Private repositories only when the users ask for their own list (and not with a public-only token).
      const own = user.id === doerOf(request).id && !request.auth?.scopes?.publicOnly;
      const { repos, total } = await stars.starredRepos(user, own, p.skip, p.take);
      return sendPage(app, request, reply, repos.map((r) => convert.repo(r.repo, r.mode)), total, p);
    },
  );
}
