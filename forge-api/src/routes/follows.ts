/**
 * Followers and following (Gitea's api.go user groups, scope user, a token required): the lists
 * of the doer and of any visible user, the check, follow (PUT) and unfollow (DELETE). Lists hold
 * the users the doer may see (services/permissions.ts visibleUserFilter), paged with Link and
 * X-Total-Count.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../services/errors';
import { listOf, obj, str, usernameParams } from '../schemas';
import type { User } from '../services/records';
import { contextUser, doerOf, errors, paging, pagingQuery, sendPage } from './helpers';

export default async function followRoutes(app: FastifyInstance) {
  const { follows, convert, users } = app.services;
  const config = { auth: 'required' as const, scopes: ['user' as const] };
  const tags = ['user'];
  const userList = { 200: listOf('User'), ...errors(401, 403, 404) };
  const empty = { 204: { type: 'null' }, ...errors(401, 403, 404) };

  const sendUsers = (which: 'followers' | 'following') => async (request: FastifyRequest, reply: FastifyReply, user: User) => {
    const p = paging(app, request);
    const { rows, total } = await follows[which](user, request.doer, p.skip, p.take);
    return sendPage(app, request, reply, rows.map((u) => convert.userFor(u, request.doer)), total, p);
  };

  app.get('/user/followers', { config, schema: { tags, operationId: 'userCurrentListFollowers', summary: "List the authenticated user's followers", querystring: obj(pagingQuery), response: userList } }, (request, reply) =>
    sendUsers('followers')(request, reply, doerOf(request)),
  );
  app.get('/user/following', { config, schema: { tags, operationId: 'userCurrentListFollowing', summary: 'List the users that the authenticated user is following', querystring: obj(pagingQuery), response: userList } }, (request, reply) =>
    sendUsers('following')(request, reply, doerOf(request)),
  );

  app.get<{ Params: { username: string } }>(
    '/users/:username/followers',
    { config, schema: { tags, operationId: 'userListFollowers', summary: 'List the given user\'s followers', params: usernameParams, querystring: obj(pagingQuery), response: userList } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      return sendUsers('followers')(request, reply, user);
    },
  );
  app.get<{ Params: { username: string } }>(
    '/users/:username/following',
    { config, schema: { tags, operationId: 'userListFollowing', summary: 'List the users that the given user is following', params: usernameParams, querystring: obj(pagingQuery), response: userList } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      return sendUsers('following')(request, reply, user);
    },
  );

  app.get<{ Params: { username: string; target: string } }>(
    '/users/:username/following/:target',
    {
      config,
      schema: { tags, operationId: 'userCheckFollowing', summary: 'Check if one user is following another user', params: obj({ username: str, target: str }, ['username', 'target']), response: empty },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const target = await users.findByName(request.params.target);
      if (!target) throw new NotFoundError('not found', [`user redirect does not exist [name: ${request.params.target}]`]);
      if (!(await follows.isFollowing(user.id, target.id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { username: string } }>(
    '/user/following/:username',
    { config, schema: { tags, operationId: 'userCurrentCheckFollowing', summary: 'Check whether a user is followed by the authenticated user', params: usernameParams, response: empty } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      if (!(await follows.isFollowing(doerOf(request).id, user.id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  app.put<{ Params: { username: string } }>(
    '/user/following/:username',
    { config, schema: { tags, operationId: 'userCurrentPutFollow', summary: 'Follow a user', params: usernameParams, response: empty } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      await follows.follow(doerOf(request), user);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { username: string } }>(
    '/user/following/:username',
    { config, schema: { tags, operationId: 'userCurrentDeleteFollow', summary: 'Unfollow a user', params: usernameParams, response: empty } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      await follows.unfollow(doerOf(request).id, user.id);
      return reply.code(204).send();
    },
  );
}
