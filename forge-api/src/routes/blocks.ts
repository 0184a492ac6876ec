/**
 * Blocks (Gitea's api.go: /user/blocks under scope user, /orgs/{org}/blocks under scope
 * organization for the org's owners; the user's closed to public-only tokens): list, check (204/404),
 * block with an optional `note` query parameter, unblock. Refusals are 400 as Gitea's
 * shared/block.go answers them; what a block prevents is enforced by the services
 * (services/blocks.ts isBlockedBy).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../services/errors';
import { listOf, obj, orgParams, str, usernameParams } from '../schemas';
import type { User } from '../services/records';
import { contextUser, doerOf, errors, paging, pagingQuery, sendPage } from './helpers';

export default async function blockRoutes(app: FastifyInstance) {
  const { blocks, convert, users } = app.services;
  const userCfg = { auth: 'required' as const, scopes: ['user' as const], rejectPublicOnly: true, errorStatus: { Invalid: 400 } };
  const orgCfg = { auth: 'required' as const, scopes: ['organization' as const], org: { access: 'owner' as const }, errorStatus: { Invalid: 400 } };
  const noteQuery = obj({ note: str });
  const empty = { 204: { type: 'null' }, ...errors(400, 401, 403, 404) };

  /** The user of the path, by name (Gitea's GetUserByName: any user, 404 if none). */
  const blockee = async (name: string): Promise<User> => {
    const u = await users.findByName(name);
    if (!u) throw new NotFoundError('not found', [`user redirect does not exist [name: ${name}]`]);
    return u;
  };

  const orgOf = (request: FastifyRequest): User => request.orgCtx.org;

  const list = async (request: FastifyRequest, reply: FastifyReply, blocker: User) => {
    const p = paging(app, request);
    const { rows, total } = await blocks.list(blocker, p.skip, p.take);
    // Gitea converts the blocked users as seen by the blocker.
    return sendPage(app, request, reply, rows.map((u) => convert.userFor(u, blocker)), total, p);
  };
  const check = async (reply: FastifyReply, blocker: User, name: string) => {
    if (!(await blocks.isBlocking(blocker, await blockee(name)))) return reply.code(404).send();
    return reply.code(204).send();
  };

  app.get('/user/blocks', { config: userCfg, schema: { tags: ['user'], operationId: 'userListBlocks', summary: 'List users blocked by the authenticated user', querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(401, 403) } } }, (request, reply) =>
    list(request, reply, doerOf(request)),
  );

  type UserParams = { Params: { username: string }; Querystring: { note?: string } };
  app.get<UserParams>(
    '/user/blocks/:username',
    { config: userCfg, schema: { tags: ['user'], operationId: 'userCheckUserBlock', summary: 'Check if a user is blocked by the authenticated user', params: usernameParams, response: empty } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      return check(reply, doerOf(request), user.name);
    },
  );
  app.put<UserParams>(
    '/user/blocks/:username',
    { config: userCfg, schema: { tags: ['user'], operationId: 'userBlockUser', summary: 'Block a user', params: usernameParams, querystring: noteQuery, response: empty } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const doer = doerOf(request);
      await blocks.block(doer, doer, user, request.query.note ?? '');
      return reply.code(204).send();
    },
  );
  app.delete<UserParams>(
    '/user/blocks/:username',
    { config: userCfg, schema: { tags: ['user'], operationId: 'userUnblockUser', summary: 'Unblock a user', params: usernameParams, response: empty } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const doer = doerOf(request);
      await blocks.unblock(doer, doer, user);
      return reply.code(204).send();
    },
  );

  const orgUserParams = obj({ org: str, username: str }, ['org', 'username']);
  type OrgUserParams = { Params: { org: string; username: string }; Querystring: { note?: string } };
  app.get<{ Params: { org: string } }>(
    '/orgs/:org/blocks',
    { config: orgCfg, schema: { tags: ['organization'], operationId: 'organizationListBlocks', summary: 'List users blocked by the organization', params: orgParams, querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(401, 403, 404) } } },
    async (request, reply) => list(request, reply, orgOf(request)),
  );
  app.get<OrgUserParams>(
    '/orgs/:org/blocks/:username',
    { config: orgCfg, schema: { tags: ['organization'], operationId: 'organizationCheckUserBlock', summary: 'Check if a user is blocked by the organization', params: orgUserParams, response: empty } },
    async (request, reply) => check(reply, orgOf(request), request.params.username),
  );
  app.put<OrgUserParams>(
    '/orgs/:org/blocks/:username',
    { config: orgCfg, schema: { tags: ['organization'], operationId: 'organizationBlockUser', summary: 'Block a user', params: orgUserParams, querystring: noteQuery, response: empty } },
    async (request, reply) => {
      const org = orgOf(request);
      await blocks.block(doerOf(request), org, await blockee(request.params.username), request.query.note ?? '');
      return reply.code(204).send();
    },
  );
  app.delete<OrgUserParams>(
    '/orgs/:org/blocks/:username',
    { config: orgCfg, schema: { tags: ['organization'], operationId: 'organizationUnblockUser', summary: 'Unblock a user', params: orgUserParams, response: empty } },
    async (request, reply) => {
      const org = orgOf(request);
      await blocks.unblock(doerOf(request), org, await blockee(request.params.username));
      return reply.code(204).send();
    },
  );
}
