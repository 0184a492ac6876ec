/**
 * SSH keys of the signed-in user (scope user): GET/POST /user/keys, GET/DELETE
 * /user/keys/{id}; a user's public keys at GET /users/{username}/keys; and the admin deletion
 * DELETE /admin/users/{username}/keys/{id} (the admin routes add keys). `fingerprint`
 * filters the lists, as in Gitea.
 */
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../services/errors';
import { bool, int, listOf, obj, ref, str, usernameParams } from '../schemas';
import { contextUser, doerOf, errors, paging, pagingQuery, sendPage } from './helpers';

const keyBody = obj({ key: { type: 'string', minLength: 1 }, title: { type: 'string', minLength: 1, maxLength: 50 }, read_only: bool }, ['key', 'title']);
const idParams = obj({ id: int }, ['id']);

export default async function keyRoutes(app: FastifyInstance) {
  const { convert, users, keys } = app.services;
  const tags = ['user'];
  const cfg = { auth: 'required' as const, scopes: ['user' as const], rejectPublicOnly: true };

  app.get<{ Querystring: { fingerprint?: string } }>(
    '/user/keys',
    { config: cfg, schema: { tags, operationId: 'userCurrentListKeys', summary: 'List the authenticated user\'s public keys', querystring: obj({ fingerprint: str, ...pagingQuery }), response: { 200: listOf('PublicKey'), ...errors(401, 403) } } },
    async (request, reply) => {
      const doer = doerOf(request);
      const p = paging(app, request);
      const { rows, total } = await keys.list(doer.id, request.query.fingerprint, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((k) => convert.publicKey(k, doer, doer)), total, p);
    },
  );

  app.post<{ Body: { key: string; title: string; read_only?: boolean } }>(
    '/user/keys',
    { config: cfg, schema: { tags, operationId: 'userCurrentPostKey', summary: 'Create a public key', body: keyBody, response: { 201: ref('PublicKey'), ...errors(401, 403, 422) } } },
    async (request, reply) => {
      const doer = doerOf(request);
      const key = await users.addPublicKey(doer, request.body);
      return reply.code(201).send(convert.publicKey(key, doer, doer));
    },
  );

  app.get<{ Params: { id: number } }>(
    '/user/keys/:id',
    { config: cfg, schema: { tags, operationId: 'userCurrentGetKey', summary: 'Get a public key', params: idParams, response: { 200: ref('PublicKey'), ...errors(401, 403, 404) } } },
    async (request) => {
      const doer = doerOf(request);
      const key = await keys.getOwn(doer, request.params.id);
      const owner = key.ownerId === doer.id ? doer : await app.services.users.findById(key.ownerId);
      if (!owner) throw new NotFoundError('not found', [`public key does not exist [id: ${key.id}]`]);
      return convert.publicKey(key, owner, doer);
    },
  );

  app.delete<{ Params: { id: number } }>(
    '/user/keys/:id',
    { config: cfg, schema: { tags, operationId: 'userCurrentDeleteKey', summary: 'Delete a public key', params: idParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      await keys.deleteOwn(doerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { username: string }; Querystring: { fingerprint?: string } }>(
    '/users/:username/keys',
    {
      // Gitea asks for a token before it looks the user up: anonymous callers get 401.
      config: { auth: 'required', scopes: ['user'] },
      schema: { tags, operationId: 'userListKeys', summary: 'List the given user\'s public keys', params: usernameParams, querystring: obj({ fingerprint: str, ...pagingQuery }), response: { 200: listOf('PublicKey'), ...errors(401, 404) } },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const p = paging(app, request);
      const { rows, total } = await keys.list(user.id, request.query.fingerprint, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((k) => convert.publicKey(k, user, request.doer)), total, p);
    },
  );

  app.delete<{ Params: { username: string; id: number } }>(
    '/admin/users/:username/keys/:id',
    {
      config: { auth: 'admin', scopes: ['admin'] },
      schema: { tags: ['admin'], operationId: 'adminDeleteUserPublicKey', summary: "Delete a user's public key", params: obj({ username: str, id: int }, ['username', 'id']), response: { 204: { type: 'null' }, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      const user = await users.findByName(request.params.username);
      if (!user) throw new NotFoundError('not found', [`user redirect does not exist [name: ${request.params.username}]`]);
      await keys.deleteOwn(doerOf(request), request.params.id, user);
      return reply.code(204).send();
    },
  );
}
