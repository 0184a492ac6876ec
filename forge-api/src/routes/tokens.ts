/** Personal access tokens: /users/{username}/tokens (HTTP basic authentication only), and /token, the token a request is made with. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { int, listOf, obj, ref, str, strList, usernameParams } from '../schemas';
import { doerOf, errors, paging, pagingQuery, sendPage } from './helpers';
import type { User } from '../services/records';

export default async function tokenRoutes(app: FastifyInstance) {
  const { convert, users, tokens } = app.services;

  /** The `{username}` must be the caller (or the caller a site admin): 403 otherwise. */
  async function target(request: FastifyRequest<{ Params: { username: string } }>): Promise<User> {
    const doer = doerOf(request);
    const user = await users.findIndividual(request.params.username);
    if (!user) throw new NotFoundError('not found', [`user redirect does not exist [name: ${request.params.username}]`]);
    if (user.id !== doer.id && !doer.isAdmin) throw new PermissionDeniedError('doer should be the site admin or the user itself');
    return user;
  }

  const base = { config: { auth: 'basic' as const, scopes: ['user' as const] } };

  app.get<{ Params: { username: string } }>(
    '/users/:username/tokens',
    {
      ...base,
      schema: {
        tags: ['user'],
        operationId: 'userGetTokens',
        summary: "List the authenticated user's access tokens",
        params: usernameParams,
        querystring: obj(pagingQuery),
        response: { 200: listOf('AccessToken'), ...errors(401, 403) },
      },
    },
    async (request, reply) => {
      const user = await target(request);
      const p = paging(app, request);
      const { rows, total } = await tokens.list(user.id, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((t) => convert.token(t, t.scope ? t.scope.split(',') : [])), total, p);
    },
  );

  app.post<{ Params: { username: string }; Body: { name: string; scopes?: string[] } }>(
    '/users/:username/tokens',
    {
      // Gitea answers a bad scope or a taken token name with 400.
      config: { ...base.config, errorStatus: { Invalid: 400, AlreadyExists: 400 } },
      schema: {
        tags: ['user'],
        operationId: 'userCreateToken',
        summary: 'Create an access token',
        params: usernameParams,
        body: obj({ name: { type: 'string', minLength: 1 }, scopes: strList }, ['name'], { $id: 'CreateAccessTokenOption' }),
        response: { 201: ref('AccessToken'), ...errors(400, 401, 403, 422) },
      },
    },
    async (request, reply) => {
      const user = await target(request);
      const parent = request.auth.method === 'token' ? request.auth.scopes : null;
      if (request.auth.method === 'token' && !parent) throw new PermissionDeniedError('the authenticating token has no scope');
      const created = await tokens.create(user, request.body.name, request.body.scopes ?? [], parent);
      return reply.code(201).send(convert.token(created.row, created.scopes, created.secret));
    },
  );

  app.delete<{ Params: { username: string; token: string } }>(
    '/users/:username/tokens/:token',
    {
      ...base,
      schema: {
        tags: ['user'],
        operationId: 'userDeleteAccessToken',
        summary: 'Delete an access token (by id or name)',
        params: obj({ username: str, token: str }, ['username', 'token']),
        response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const user = await target(request);
      await tokens.delete(user.id, request.params.token);
      return reply.code(204).send();
    },
  );

  // The token of the request itself (Gitea's token introspection): any token, whatever its scopes.
  const CurrentAccessToken = obj({ id: int, name: str, scopes: strList, created_at: { type: 'string', format: 'date-time' }, last_used_at: { type: 'string', format: 'date-time' }, user: obj({ id: int, login: str }) });
  const current = { config: { auth: 'required' as const } };

  app.get(
    '/token',
    { ...current, schema: { tags: ['miscellaneous'], operationId: 'getCurrentToken', summary: 'Get the currently authenticated token', response: { 200: CurrentAccessToken, ...errors(401, 404) } } },
    async (request) => {
      const { row, scopes } = await tokens.presented(request.headers.authorization, request.auth.tokenId);
      return convert.currentToken(row, scopes, row.user);
    },
  );

  app.delete(
    '/token',
    { ...current, schema: { tags: ['miscellaneous'], operationId: 'deleteCurrentToken', summary: 'Delete the currently authenticated token', response: { 204: { type: 'null' }, ...errors(401, 404) } } },
    async (request, reply) => {
      const { row } = await tokens.presented(request.headers.authorization, request.auth.tokenId);
      await tokens.delete(row.userId, String(row.id));
      return reply.code(204).send();
    },
  );
}
