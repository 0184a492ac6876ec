/** /admin/*: site administration (scope admin, site admins only). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError } from '../services/errors';
import { dbId, setTotalCount } from '../plugins/paging';
import { bool, dateTime, int, list, listOf, obj, ref, str, usernameParams } from '../schemas';
import { doerOf, errors, paging, pagingQuery, sendPage, REPO_CREATE_STATUS } from './helpers';
import type { CreateRepoInput } from '../services/repos';
import type { CreateOrgInput } from '../services/orgs';
import type { CreateUserInput, EditUserInput } from '../services/users';
import type { User } from '../services/records';

const visibility = { type: 'string', enum: ['public', 'limited', 'private', ''] };

export const CreateUserOptionSchema = obj(
  {
    username: { type: 'string', minLength: 1, maxLength: 40 },
    email: { type: 'string', minLength: 1, maxLength: 254 },
    password: { type: 'string', maxLength: 255 },
    full_name: { type: 'string', maxLength: 100 },
    login_name: str,
    source_id: int,
    must_change_password: bool,
    restricted: bool,
    send_notify: bool,
    visibility,
    created_at: dateTime,
  },
  ['username', 'email', 'password'],
);

export const EditUserOptionSchema = obj(
  {
    login_name: { type: 'string', minLength: 1 },
    source_id: int,
    active: bool,
    admin: bool,
    allow_create_organization: bool,
    allow_git_hook: bool,
    allow_import_local: bool,
    description: { type: 'string', maxLength: 255 },
    email: str,
    full_name: { type: 'string', maxLength: 100 },
    location: { type: 'string', maxLength: 50 },
    max_repo_creation: { type: 'integer', minimum: -1, maximum: 2147483647 },
    must_change_password: bool,
    password: { type: 'string', maxLength: 255 },
    prohibit_login: bool,
    restricted: bool,
    visibility,
    website: { type: 'string', maxLength: 255 },
  },
  ['login_name'],
);

export const CreateOrgOptionSchema = obj(
  {
    username: { type: 'string', minLength: 1, maxLength: 40 },
    full_name: { type: 'string', maxLength: 100 },
    email: { type: 'string', maxLength: 255 },
    description: { type: 'string', maxLength: 255 },
    website: { type: 'string', maxLength: 255 },
    location: { type: 'string', maxLength: 50 },
    visibility: { type: 'string', enum: ['public', 'limited', 'private', ''] },
    repo_admin_change_team_access: bool,
  },
  ['username'],
);

export default async function adminRoutes(app: FastifyInstance) {
  const { convert, users, orgs, repos, admin } = app.services;
  const cfg = { auth: 'admin' as const, scopes: ['admin' as const] };
  const tags = ['admin'];

  async function userParam(request: FastifyRequest<{ Params: { username: string } }>): Promise<User> {
    const user = await users.findByName(request.params.username);
    if (!user) throw new NotFoundError('not found', [`user redirect does not exist [name: ${request.params.username}]`]);
    return user;
  }

  app.get<{ Querystring: { page?: number; limit?: number } }>(
    '/admin/cron',
    { config: cfg, schema: { tags, operationId: 'adminCronList', summary: 'List cron tasks', querystring: obj(pagingQuery), response: { 200: listOf('Cron'), ...errors(401, 403) } } },
    async (request, reply) => {
      const tasks = await admin.cronTasks();
      setTotalCount(reply, tasks.length);
      // Gitea returns every task unless a page is asked for.
      if (request.query.page === undefined) return tasks;
      const p = paging(app, request);
      return tasks.slice(p.skip, p.skip + p.take);
    },
  );

  const emailList = { 200: listOf('Email'), ...errors(401, 403) };
  app.get(
    '/admin/emails',
    { config: cfg, schema: { tags, operationId: 'adminGetAllEmails', summary: 'List all emails', querystring: obj(pagingQuery), response: emailList } },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await users.emails('', p.skip, p.take);
      return sendPage(app, request, reply, rows.map((e) => convert.email(e, e.user)), total, p);
    },
  );
  app.get<{ Querystring: { q?: string } }>(
    '/admin/emails/search',
    { config: cfg, schema: { tags, operationId: 'adminSearchEmails', summary: 'Search all emails', querystring: obj({ q: str, ...pagingQuery }), response: emailList } },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await users.emails(request.query.q ?? '', p.skip, p.take);
      return sendPage(app, request, reply, rows.map((e) => convert.email(e, e.user)), total, p);
    },
  );

  app.get(
    '/admin/orgs',
    { config: cfg, schema: { tags, operationId: 'adminGetAllOrgs', summary: 'List all organizations', querystring: obj(pagingQuery), response: { 200: listOf('Organization'), ...errors(401, 403) } } },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await orgs.listAll(p.skip, p.take);
      return sendPage(app, request, reply, rows.map((o) => convert.org(o)), total, p);
    },
  );

  app.get<{ Querystring: { query?: string; pattern?: string } }>(
    '/admin/unadopted',
    {
      config: cfg,
      schema: {
        tags,
        operationId: 'adminUnadoptedList',
        summary: 'List unadopted repositories',
        querystring: obj({ query: str, pattern: str, ...pagingQuery }),
        response: { 200: list(str), ...errors(401, 403) },
      },
    },
    async (request, reply) => {
      const p = paging(app, request);
      // Gitea's code reads `query`; its documentation calls it `pattern`: accept both.
      const names = await admin.unadopted(request.query.query ?? request.query.pattern ?? '');
      setTotalCount(reply, names.length);
      return names.slice(p.skip, p.skip + p.take);
    },
  );

  /** Gitea answers 404 (no body message of its own) unless the owner exists and owner/repo is an unadopted folder. */
  async function unadopted(request: FastifyRequest<{ Params: { owner: string; repo: string } }>) {
    const owner = await users.findByName(request.params.owner);
    const dir = owner ? await admin.unadoptedDir(owner.name, request.params.repo) : null;
    if (!owner || !dir) throw new NotFoundError();
    return { owner, dir };
  }
  const unadoptedParams = obj({ owner: str, repo: str }, ['owner', 'repo']);

  app.post<{ Params: { owner: string; repo: string } }>(
    '/admin/unadopted/:owner/:repo',
    { config: cfg, schema: { tags, operationId: 'adminAdoptRepository', summary: 'Adopt unadopted files as a repository', params: unadoptedParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const { owner, dir } = await unadopted(request);
      await repos.adopt(doerOf(request), owner, dir);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { owner: string; repo: string } }>(
    '/admin/unadopted/:owner/:repo',
    { config: cfg, schema: { tags, operationId: 'adminDeleteUnadoptedRepository', summary: 'Delete unadopted files', params: unadoptedParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const { owner, dir } = await unadopted(request);
      await repos.deleteUnadopted(owner, dir);
      return reply.code(204).send();
    },
  );

  app.get<{ Querystring: { source_id?: number; login_name?: string } }>(
    '/admin/users',
    {
      config: cfg,
      schema: { tags, operationId: 'adminSearchUsers', summary: 'Search users', querystring: obj({ source_id: int, login_name: str, ...pagingQuery }), response: { 200: listOf('User'), ...errors(401, 403) } },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const where: Record<string, unknown> = {};
      if (request.query.source_id !== undefined) where.loginSource = dbId(request.query.source_id);
      if (request.query.login_name) where.loginName = request.query.login_name;
      const { rows, total } = await users.list(where, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((u) => convert.userFor(u, request.doer)), total, p);
    },
  );

  app.post<{ Body: CreateUserInput }>(
    '/admin/users',
    { config: cfg, schema: { tags, operationId: 'adminCreateUser', summary: 'Create a user', body: CreateUserOptionSchema, response: { 201: ref('User'), ...errors(400, 401, 403, 422) } } },
    async (request, reply) => {
      const user = await users.create(request.body);
      return reply.code(201).send(convert.userFor(user, request.doer));
    },
  );

  app.patch<{ Params: { username: string }; Body: EditUserInput }>(
    '/admin/users/:username',
    {
      // Gitea's EditUser answers a bad or taken e-mail, and removing the last admin, with 400.
      config: { ...cfg, errorStatus: { Invalid: 400, AlreadyExists: 400 } },
      schema: { tags, operationId: 'adminEditUser', summary: 'Edit an existing user', params: usernameParams, body: EditUserOptionSchema, response: { 200: ref('User'), ...errors(400, 401, 403, 404, 422) } },
    },
    async (request) => {
      const user = await userParam(request);
      const updated = await users.edit(user, request.body, doerOf(request));
      return convert.userFor(updated, request.doer);
    },
  );

  app.delete<{ Params: { username: string }; Querystring: { purge?: boolean } }>(
    '/admin/users/:username',
    {
      config: cfg,
      schema: { tags, operationId: 'adminDeleteUser', summary: 'Delete a user', params: usernameParams, querystring: obj({ purge: bool }), response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } },
    },
    async (request, reply) => {
      const user = await userParam(request);
      await users.delete(user, doerOf(request));
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { username: string }; Body: { new_username: string } }>(
    '/admin/users/:username/rename',
    {
      config: cfg,
      schema: {
        tags,
        operationId: 'adminRenameUser',
        summary: 'Rename a user',
        params: usernameParams,
        body: obj({ new_username: { type: 'string', minLength: 1 } }, ['new_username']),
        response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const user = await userParam(request);
      await app.services.ownerRename.rename(user, request.body.new_username);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { username: string }; Body: { key: string; title: string; read_only?: boolean } }>(
    '/admin/users/:username/keys',
    {
      config: cfg,
      schema: {
        tags,
        operationId: 'adminCreatePublicKey',
        summary: "Add a public key on behalf of a user",
        params: usernameParams,
        body: obj({ key: { type: 'string', minLength: 1 }, title: { type: 'string', minLength: 1, maxLength: 50 }, read_only: bool }, ['key', 'title']),
        response: { 201: ref('PublicKey'), ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const user = await userParam(request);
      const key = await users.addPublicKey(user, request.body);
      return reply.code(201).send(convert.publicKey(key, user, request.doer));
    },
  );

  app.get<{ Params: { username: string } }>(
    '/admin/users/:username/orgs',
    {
      config: cfg,
      schema: { tags, operationId: 'adminListUserOrgs', summary: "List a user's organizations", params: usernameParams, querystring: obj(pagingQuery), response: { 200: listOf('Organization'), ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      const user = await userParam(request);
      const p = paging(app, request);
      const { rows, total } = await orgs.listForUser(user, doerOf(request), p.skip, p.take);
      return sendPage(app, request, reply, rows.map((o) => convert.org(o)), total, p);
    },
  );

  app.post<{ Params: { username: string }; Body: CreateOrgInput }>(
    '/admin/users/:username/orgs',
    {
      config: cfg,
      schema: { tags, operationId: 'adminCreateOrg', summary: 'Create an organization', params: usernameParams, body: CreateOrgOptionSchema, response: { 201: ref('Organization'), ...errors(401, 403, 404, 422) } },
    },
    async (request, reply) => {
      const user = await userParam(request);
      const org = await orgs.create(user, request.body, doerOf(request));
      return reply.code(201).send(convert.org(org));
    },
  );

  app.post<{ Params: { username: string }; Body: CreateRepoInput }>(
    '/admin/users/:username/repos',
    {
      config: { ...cfg, errorStatus: REPO_CREATE_STATUS },
      schema: {
        tags,
        operationId: 'adminCreateRepo',
        summary: 'Create a repository on behalf of a user',
        params: usernameParams,
        body: ref('CreateRepoOption'),
        response: { 201: ref('Repository'), ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const owner = await userParam(request);
      const repo = await repos.create(doerOf(request), owner, request.body);
      return reply.code(201).send(convert.repo(repo, 4));
    },
  );
}
