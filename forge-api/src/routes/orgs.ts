/** Organizations: create, get, list, members, public members, repositories. */
import { visibleOwnerTypes } from '../services/permissions';
import type { FastifyInstance } from 'fastify';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { listOf, obj, orgParams, ref } from '../schemas';
import { CreateOrgOptionSchema } from './admin';
import { ORG_READ } from '../plugins/org-assignment';
import { doerOf, errors, paging, pagingQuery, publicOnly, sendPage, REPO_CREATE_STATUS } from './helpers';
import type { CreateOrgInput } from '../services/orgs';
import type { CreateRepoInput } from '../services/repos';

export default async function orgRoutes(app: FastifyInstance) {
  const { convert, orgs, repos, permissions } = app.services;
  const tags = ['organization'];

  app.get(
    '/orgs',
    { config: { scopes: ['organization'] }, schema: { tags, operationId: 'orgGetAll', summary: 'Get list of organizations', querystring: obj(pagingQuery), response: { 200: listOf('Organization') } } },
    async (request, reply) => {
      const p = paging(app, request);
      const doer = request.doer;
      const vis = visibleOwnerTypes(doer);
      const { rows, total } = await orgs.listAll(p.skip, p.take, vis);
      return sendPage(app, request, reply, rows.map((o) => convert.org(o)), total, p);
    },
  );

  app.post<{ Body: CreateOrgInput }>(
    '/orgs',
    {
      config: { auth: 'required', scopes: ['organization'] },
      schema: { tags, operationId: 'orgCreate', summary: 'Create an organization', body: CreateOrgOptionSchema, response: { 201: ref('Organization'), ...errors(401, 403, 422) } },
    },
    async (request, reply) => {
      const doer = doerOf(request);
      const org = await orgs.create(doer, request.body, doer);
      return reply.code(201).send(convert.org(org));
    },
  );

  app.get<{ Params: { org: string } }>(
    '/orgs/:org',
    { config: { scopes: ['organization'], org: ORG_READ }, schema: { tags, operationId: 'orgGet', summary: 'Get an organization', params: orgParams, response: { 200: ref('Organization'), ...errors(404) } } },
    async (request) => {
      const { org } = request.orgCtx;
      if (publicOnly(request) && org.visibility !== 0) throw new PermissionDeniedError('token scope is limited to public orgs');
      return convert.org(org);
    },
  );

  app.get<{ Params: { org: string } }>(
    '/orgs/:org/members',
    {
      config: { auth: 'required', scopes: ['organization'], org: ORG_READ },
      schema: { tags, operationId: 'orgListMembers', summary: "List an organization's members", params: orgParams, querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(401, 404) } },
    },
    async (request, reply) => {
      const doer = doerOf(request);
      const { org } = request.orgCtx;
      // Members (and admins) see every member; others only the public ones.
      const publicOnly = !doer.isAdmin && !(await permissions.isOrgMember(doer.id, org.id));
      const p = paging(app, request);
      const { rows, total } = await orgs.members(org, publicOnly, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((u) => convert.userFor(u, doer)), total, p);
    },
  );

  app.get<{ Params: { org: string } }>(
    '/orgs/:org/public_members',
    {
      config: { scopes: ['organization'], org: ORG_READ },
      schema: { tags, operationId: 'orgListPublicMembers', summary: "List an organization's public members", params: orgParams, querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(404) } },
    },
    async (request, reply) => {
      const { org } = request.orgCtx;
      const p = paging(app, request);
      const { rows, total } = await orgs.members(org, true, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((u) => convert.userFor(u, request.doer)), total, p);
    },
  );

  app.get<{ Params: { org: string } }>(
    '/orgs/:org/repos',
    {
      config: { scopes: ['organization'], org: ORG_READ },
      schema: { tags, operationId: 'orgListRepos', summary: "List an organization's repos", params: orgParams, querystring: obj(pagingQuery), response: { 200: listOf('Repository'), ...errors(404) } },
    },
    async (request, reply) => {
      const { org } = request.orgCtx;
      const p = paging(app, request);
      const { rows, total } = await repos.listForOwner(org, request.doer, p.skip, p.take);
      const modes = await repos.accessModes(request.doer, rows);
      return sendPage(app, request, reply, rows.map((r, i) => convert.repo(r, modes[i])), total, p);
    },
  );

  const createOrgRepo = async (orgName: string, doerReq: Parameters<typeof doerOf>[0], body: CreateRepoInput) => {
    const doer = doerOf(doerReq);
    const org = await orgs.findByName(orgName);
    if (!org) throw new NotFoundError('not found', [`org does not exist [name: ${orgName}]`]);
    if (!(await permissions.canSeeOwner(doer, org))) throw new NotFoundError('not found');
    await repos.assertCanCreateIn(doer, org);
    const repo = await repos.create(doer, org, body);
    return convert.repo(repo, await permissions.repoAccessMode(doer, repo));
  };
  const createSchema = (operationId: string, deprecated = false) => ({
    tags,
    operationId,
    summary: 'Create a repository in an organization',
    ...(deprecated ? { deprecated: true } : {}),
    params: orgParams,
    body: ref('CreateRepoOption'),
    response: { 201: ref('Repository'), ...errors(400, 401, 403, 404, 409, 422) },
  });

  app.post<{ Params: { org: string }; Body: CreateRepoInput }>(
    '/orgs/:org/repos',
    { config: { auth: 'required', scopes: ['organization'], errorStatus: REPO_CREATE_STATUS }, schema: createSchema('createOrgRepo') },
    async (request, reply) => reply.code(201).send(await createOrgRepo(request.params.org, request, request.body)),
  );
  // Deprecated path, still used by older clients: needs both scopes.
  app.post<{ Params: { org: string }; Body: CreateRepoInput }>(
    '/org/:org/repos',
    { config: { auth: 'required', scopes: ['organization', 'repository'], errorStatus: REPO_CREATE_STATUS }, schema: createSchema('createOrgRepoDeprecated', true) },
    async (request, reply) => reply.code(201).send(await createOrgRepo(request.params.org, request, request.body)),
  );
}
