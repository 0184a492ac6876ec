/**
 * Organizations: create, get, edit, delete, rename, list, members (list, check, remove), public
 * members (list, check, publicize, conceal), repositories (list, create, delete all). Owner-only
 * routes declare ORG_OWNER (plugins/org-assignment.ts: 403 "Must be an organization owner").
 */
import { visibleOwnerTypes } from '../services/permissions';
import type { FastifyInstance } from 'fastify';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { bool, listOf, obj, orgParams, ref, str } from '../schemas';
import { CreateOrgOptionSchema } from './admin';
import { ORG_OWNER, ORG_READ } from '../plugins/org-assignment';
import { avatarBody } from './user-account';
import { contextUser, decodeStdBase64, doerOf, errors, paging, pagingQuery, publicOnly, sendPage, REPO_CREATE_STATUS } from './helpers';
import type { CreateOrgInput } from '../services/orgs';
import type { CreateRepoInput } from '../services/repos';

export default async function orgRoutes(app: FastifyInstance) {
  const { convert, orgs, repos, permissions, ownerRename } = app.services;
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
    return convert.repo(repo, await permissions.repoModes(doer, repo));
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

  const EditOrgOption = obj({
    full_name: { type: 'string', maxLength: 100 },
    email: { type: 'string', maxLength: 255 },
    description: { type: 'string', maxLength: 255 },
    website: { type: 'string', maxLength: 255 },
    location: { type: 'string', maxLength: 50 },
    visibility: { type: 'string' },
    repo_admin_change_team_access: bool,
  });
  const owner = { auth: 'required' as const, scopes: ['organization' as const], org: ORG_OWNER };

  app.post<{ Params: { org: string }; Body: { image: string } }>(
    '/orgs/:org/avatar',
    {
      config: owner,
      schema: { tags, operationId: 'orgUpdateAvatar', summary: 'Update Avatar', params: orgParams, body: avatarBody, response: { 204: { type: 'null' }, ...errors(400, 401, 403, 404, 422) } },
    },
    async (request, reply) => {
      await app.services.userAvatars.upload(request.orgCtx.org, decodeStdBase64(request.body.image));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { org: string } }>(
    '/orgs/:org/avatar',
    { config: owner, schema: { tags, operationId: 'orgDeleteAvatar', summary: 'Delete Avatar', params: orgParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      await app.services.userAvatars.remove(request.orgCtx.org);
      return reply.code(204).send();
    },
  );

  app.patch<{ Params: { org: string }; Body: Omit<CreateOrgInput, 'username'> }>(
    '/orgs/:org',
    { config: owner, schema: { tags, operationId: 'orgEdit', summary: 'Edit an organization', params: orgParams, body: EditOrgOption, response: { 200: ref('Organization'), ...errors(401, 403, 404, 422) } } },
    async (request) => convert.org(await orgs.edit(request.orgCtx.org, request.body ?? {})),
  );

  app.delete<{ Params: { org: string } }>(
    '/orgs/:org',
    { config: owner, schema: { tags, operationId: 'orgDelete', summary: 'Delete an organization', params: orgParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      await orgs.delete(request.orgCtx.org);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { org: string }; Body: { new_name: string } }>(
    '/orgs/:org/rename',
    {
      config: owner,
      schema: {
        tags,
        operationId: 'renameOrg',
        summary: 'Rename an organization',
        params: orgParams,
        body: obj({ new_name: { type: 'string', minLength: 1, maxLength: 40 } }, ['new_name']),
        response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      await ownerRename.rename(request.orgCtx.org, request.body.new_name);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { org: string } }>(
    '/orgs/:org/repos',
    {
      config: { auth: 'required', scopes: ['organization', 'repository'], org: ORG_OWNER },
      schema: { tags, operationId: 'orgDeleteRepos', summary: "Delete all repositories in an organization", params: orgParams, response: { 202: { type: 'null' }, 204: { type: 'null' }, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      // Gitea answers 202 and deletes in the background; here the repositories are gone when it answers.
      const deleted = await repos.deleteAllOf(doerOf(request), request.orgCtx.org);
      return reply.code(deleted ? 202 : 204).send();
    },
  );

  type OrgUser = { Params: { org: string; username: string } };
  const orgUserParams = obj({ org: str, username: str }, ['org', 'username']);
  const empty = { 204: { type: 'null' }, ...errors(401, 403, 404, 422) };

  app.get<OrgUser>(
    '/orgs/:org/members/:username',
    {
      config: { auth: 'required', scopes: ['organization'], org: ORG_READ },
      schema: { tags, operationId: 'orgIsMember', summary: 'Check if a user is a member of an organization', params: orgUserParams, response: { 204: { type: 'null' }, 303: { type: 'null' }, ...errors(401, 404) } },
    },
    async (request, reply) => {
      const { org } = request.orgCtx;
      const doer = doerOf(request);
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      // Members and site admins learn any membership; others are sent to the public membership check.
      if (doer.isAdmin || (await orgs.isMember(org, doer.id))) {
        if (!(await orgs.isMember(org, user.id))) throw new NotFoundError();
        return reply.code(204).send();
      }
      if (doer.id === user.id) throw new NotFoundError();
      // Gitea answers 303 with a path (its AppSubURL, empty at the root).
      return reply.redirect(`${new URL(app.config.rootUrl).pathname}api/v1/orgs/${encodeURIComponent(org.name)}/public_members/${encodeURIComponent(user.name)}`, 303);
    },
  );

  app.delete<OrgUser>(
    '/orgs/:org/members/:username',
    { config: owner, schema: { tags, operationId: 'orgDeleteMember', summary: 'Remove a member from an organization', params: orgUserParams, response: empty } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      await orgs.removeMember(request.orgCtx.org, user);
      return reply.code(204).send();
    },
  );

  app.get<OrgUser>(
    '/orgs/:org/public_members/:username',
    { config: { scopes: ['organization'], org: ORG_READ }, schema: { tags, operationId: 'orgIsPublicMember', summary: 'Check if a user is a public member of an organization', params: orgUserParams, response: { 204: { type: 'null' }, ...errors(404) } } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      if (!(await orgs.isPublicMember(request.orgCtx.org, user.id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  for (const [method, operationId, summary, isPublic] of [
    ['PUT', 'orgPublicizeMember', "Publicize a user's membership", true],
    ['DELETE', 'orgConcealMember', "Conceal a user's membership", false],
  ] as const) {
    app.route<OrgUser>({
      method,
      url: '/orgs/:org/public_members/:username',
      config: { auth: 'required', scopes: ['organization'], org: { access: 'member' } },
      schema: { tags, operationId, summary, params: orgUserParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } },
      handler: async (request, reply) => {
        const user = await contextUser(app, request, reply, request.params.username);
        if (!user) return reply;
        await orgs.setMembershipPublic(request.orgCtx.org, user, doerOf(request), isPublic);
        return reply.code(204).send();
      },
    });
  }
}
