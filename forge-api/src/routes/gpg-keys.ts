/**
 * OpenPGP keys (scope user): the signed-in user's (GET/POST /user/gpg_keys, GET/DELETE
 * /user/gpg_keys/{id}, GET /user/gpg_key_token, POST /user/gpg_key_verify; not for public-only
 * tokens) and anyone's at GET /users/{username}/gpg_keys. Lists send X-Total-Count, no Link.
 */
import type { FastifyInstance } from 'fastify';
import { bool, int, obj, str, usernameParams } from '../schemas';
import { setTotalCount } from '../plugins/paging';
import { contextUser, doerOf, errors, paging, pagingQuery } from './helpers';

const dateTime = { type: 'string', format: 'date-time' } as const;
const GpgKeyEmail = obj({ email: str, verified: bool });
const subkeyProps = {
  id: int, primary_key_id: str, key_id: str, public_key: str,
  emails: { type: ['array', 'null'], items: GpgKeyEmail }, subkeys: { type: ['array', 'null'] },
  can_sign: bool, can_encrypt_comms: bool, can_encrypt_storage: bool, can_certify: bool, verified: bool, created_at: dateTime, expires_at: dateTime,
};
const GPGKey = obj({ ...subkeyProps, subkeys: { type: ['array', 'null'], items: obj(subkeyProps) } });
const idParams = obj({ id: int }, ['id']);

export default async function gpgKeyRoutes(app: FastifyInstance) {
  const { gpgKeys } = app.services;
  const tags = ['user'];
  const own = { auth: 'required' as const, scopes: ['user' as const], rejectPublicOnly: true };

  app.get(
    '/user/gpg_keys',
    { config: own, schema: { tags, operationId: 'userCurrentListGPGKeys', summary: "List the authenticated user's GPG keys", querystring: obj(pagingQuery), response: { 200: { type: 'array', items: GPGKey }, ...errors(401, 403) } } },
    async (request, reply) => {
      const p = paging(app, request);
      const { data, total } = await gpgKeys.list(doerOf(request).id, p.skip, p.take);
      setTotalCount(reply, total);
      return data;
    },
  );

  app.post<{ Body: { armored_public_key: string; armored_signature?: string } }>(
    '/user/gpg_keys',
    {
      config: own,
      schema: {
        tags,
        operationId: 'userCurrentPostGPGKey',
        summary: 'Create a GPG key',
        body: obj({ armored_public_key: str, armored_signature: str }, ['armored_public_key']),
        response: { 201: GPGKey, ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => reply.code(201).send(await gpgKeys.add(doerOf(request), request.body.armored_public_key, request.body.armored_signature ?? '')),
  );

  app.get<{ Params: { id: number } }>(
    '/user/gpg_keys/:id',
    { config: own, schema: { tags, operationId: 'userCurrentGetGPGKey', summary: 'Get a GPG key', params: idParams, response: { 200: GPGKey, ...errors(401, 403, 404) } } },
    async (request) => gpgKeys.get(doerOf(request), request.params.id),
  );

  app.delete<{ Params: { id: number } }>(
    '/user/gpg_keys/:id',
    { config: own, schema: { tags, operationId: 'userCurrentDeleteGPGKey', summary: 'Remove a GPG key', params: idParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      await gpgKeys.delete(doerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/user/gpg_key_token',
    { config: own, schema: { tags, operationId: 'getVerificationToken', summary: 'Get a Token to verify', produces: ['text/plain'], response: { 200: str, ...errors(401, 403, 404) } } },
    async (request, reply) => reply.type('text/plain;charset=utf-8').send(gpgKeys.verificationToken(doerOf(request))),
  );

  app.post<{ Body: { key_id: string; armored_signature?: string } }>(
    '/user/gpg_key_verify',
    {
      config: own,
      schema: { tags, operationId: 'userVerifyGPGKey', summary: 'Verify a GPG key', body: obj({ key_id: str, armored_signature: str }, ['key_id']), response: { 200: GPGKey, ...errors(401, 403, 404, 422) } },
    },
    async (request) => gpgKeys.verify(doerOf(request), request.body.key_id, request.body.armored_signature ?? ''),
  );

  app.get<{ Params: { username: string } }>(
    '/users/:username/gpg_keys',
    // Gitea asks for a token before it looks the user up: anonymous callers get 401.
    { config: { auth: 'required' as const, scopes: ['user' as const] }, schema: { tags, operationId: 'userListGPGKeys', summary: 'List the given user\'s GPG keys', params: usernameParams, querystring: obj(pagingQuery), response: { 200: { type: 'array', items: GPGKey }, ...errors(404) } } },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const p = paging(app, request);
      const { data, total } = await gpgKeys.list(user.id, p.skip, p.take);
      setTotalCount(reply, total);
      return data;
    },
  );
}
