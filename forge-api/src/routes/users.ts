/** GET /user, /users/search, /users/{username}, user's orgs and repos, POST /user/repos. */
import type { FastifyInstance } from 'fastify';
import { PermissionDeniedError } from '../services/errors';
import { dbId } from '../plugins/paging';
import { bool, int, listOf, obj, ref, str, usernameParams } from '../schemas';
import { contextUser, doerOf, errors, paging, pagingQuery, sendPage, REPO_CREATE_STATUS } from './helpers';
import { USER_TYPE_ORGANIZATION } from '../services/permissions';
import type { CreateRepoInput } from '../services/repos';

export default async function userRoutes(app: FastifyInstance) {
  const { convert, users, orgs, repos, permissions } = app.services;

  app.get(
    '/user',
    {
      config: { auth: 'required', scopes: ['user'] },
      schema: { tags: ['user'], operationId: 'userGetCurrent', summary: 'Get the authenticated user', response: { 200: ref('User'), ...errors(401, 403) } },
    },
    async (request) => {
      const doer = doerOf(request);
      return convert.userFor(doer, doer);
    },
  );

  app.get<{ Querystring: { q?: string; uid?: number; page?: number; limit?: number } }>(
    '/users/search',
    {
      config: { scopes: ['user'] },
      schema: {
        tags: ['user'],
        operationId: 'userSearch',
        summary: 'Search for users',
        querystring: obj({ q: str, uid: int, ...pagingQuery }),
        response: { 200: obj({ ok: bool, data: listOf('User') }) },
      },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await users.search(request.doer, request.query.q ?? '', dbId(request.query.uid), p.skip, p.take);
      sendPage(app, request, reply, rows, total, p);
      return { ok: true, data: rows.map((u) => convert.userFor(u, request.doer)) };
    },
  );

  app.get<{ Params: { username: string } }>(
    '/users/:username',
    {
      config: { scopes: ['user'] },
      schema: { tags: ['user'], operationId: 'userGet', summary: 'Get a user', params: usernameParams, response: { 200: ref('User'), ...errors(404) } },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      return convert.userFor(user, request.doer);
    },
  );

  const orgList = { 200: listOf('Organization'), ...errors(401, 403, 404) };
  app.get(
    '/user/orgs',
    {
      config: { auth: 'required', scopes: ['user', 'organization'] },
      schema: { tags: ['organization'], operationId: 'orgListCurrentUserOrgs', summary: "List the current user's organizations", querystring: obj(pagingQuery), response: orgList },
    },
    async (request, reply) => {
      const doer = doerOf(request);
      const p = paging(app, request);
      const { rows, total } = await orgs.listForUser(doer, doer, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((o) => convert.org(o)), total, p);
    },
  );

  app.get<{ Params: { username: string } }>(
    '/users/:username/orgs',
    {
      config: { auth: 'required', scopes: ['user', 'organization'] },
      schema: { tags: ['organization'], operationId: 'orgListUserOrgs', summary: "List a user's organizations", params: usernameParams, querystring: obj(pagingQuery), response: orgList },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const p = paging(app, request);
      const { rows, total } = await orgs.listForUser(user, request.doer, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((o) => convert.org(o)), total, p);
    },
  );

  app.get<{ Params: { username: string; org: string } }>(
    '/users/:username/orgs/:org/permissions',
    {
      config: { auth: 'required', scopes: ['user', 'organization'] },
      schema: {
        tags: ['organization'],
        operationId: 'orgGetUserPermissions',
        summary: "Get user permissions in organization",
        params: obj({ username: str, org: str }, ['username', 'org']),
        response: { 200: ref('OrganizationPermissions'), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const org = await orgs.getVisible(request.params.org, request.doer);
      return permissions.orgPermissions(user.id, org.id);
    },
  );

  const repoList = { 200: listOf('Repository'), ...errors(401, 403, 404) };
  app.get(
    '/user/repos',
    {
      config: { auth: 'required', scopes: ['user', 'repository'] },
      schema: { tags: ['user'], operationId: 'userCurrentListRepos', summary: 'List the repos that the authenticated user owns', querystring: obj(pagingQuery), response: repoList },
    },
    async (request, reply) => {
      const doer = doerOf(request);
      const p = paging(app, request);
      // Gitea lists repositories the user owns or is granted (collaborations, teams), by name.
      const { rows, total } = await repos.search(doer, { uid: doer.id, includePrivate: true, exclusive: false, skip: p.skip, take: p.take });
      const modes = await repos.accessModes(doer, rows);
      return sendPage(app, request, reply, rows.map((r, i) => convert.repo(r, modes[i])), total, p);
    },
  );

  app.get<{ Params: { username: string } }>(
    '/users/:username/repos',
    {
      config: { scopes: ['user', 'repository'] },
      schema: { tags: ['user'], operationId: 'userListRepos', summary: 'List the repos owned by the given user', params: usernameParams, querystring: obj(pagingQuery), response: repoList },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const p = paging(app, request);
      const { rows, total } = await repos.listForOwner(user, request.doer, p.skip, p.take);
      const modes = await repos.accessModes(request.doer, rows);
      return sendPage(app, request, reply, rows.map((r, i) => convert.repo(r, modes[i])), total, p);
    },
  );

  app.post<{ Body: CreateRepoInput }>(
    '/user/repos',
    {
      config: { auth: 'required', scopes: ['user', 'repository'], errorStatus: REPO_CREATE_STATUS, rejectPublicOnly: true },
      schema: {
        tags: ['repository', 'user'],
        operationId: 'createCurrentUserRepo',
        summary: 'Create a repository',
        body: ref('CreateRepoOption'),
        response: { 201: ref('Repository'), ...errors(400, 401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const doer = doerOf(request);
      if (doer.type === USER_TYPE_ORGANIZATION) throw new PermissionDeniedError('organizations cannot own personal repositories');
      const repo = await repos.create(doer, doer, request.body);
      return reply.code(201).send(convert.repo(repo, 4));
    },
  );
}
