/** The signed-in user's OAuth2 applications: /user/applications/oauth2 (Gitea's user group, `user` scope). */
import type { FastifyInstance } from 'fastify';
import { bool, int, listOf, obj, ref, str, strList } from '../schemas';
import { toOAuth2Application } from '../services/convert/oauth2-application';
import { doerOf, errors, paging, pagingQuery, sendPage } from './helpers';

const idParams = obj({ id: int }, ['id']);
const applicationOption = obj(
  { name: { type: 'string', minLength: 1 }, redirect_uris: strList, confidential_client: bool, skip_secondary_authorization: bool },
  ['name', 'redirect_uris'],
  { $id: 'CreateOAuth2ApplicationOptions' },
);

interface ApplicationBody {
  name: string;
  redirect_uris: string[];
  confidential_client?: boolean;
  skip_secondary_authorization?: boolean;
}

const input = (b: ApplicationBody) => ({
  name: b.name,
  redirectUris: b.redirect_uris,
  confidentialClient: b.confidential_client,
  skipSecondaryAuthorization: b.skip_secondary_authorization,
});

export default async function oauth2ApplicationRoutes(app: FastifyInstance) {
  const { oauth2Apps } = app.services;
  const config = { auth: 'required' as const, scopes: ['user' as const], errorStatus: { Invalid: 400 } };

  app.get('/user/applications/oauth2', {
    config,
    schema: {
      tags: ['user'],
      operationId: 'userGetOAuth2Applications',
      summary: "List the authenticated user's oauth2 applications",
      querystring: obj(pagingQuery),
      response: { 200: listOf('OAuth2Application'), ...errors(401, 403) },
    },
  }, async (request, reply) => {
    const p = paging(app, request);
    const { rows, total } = await oauth2Apps.list(doerOf(request).id, p.skip, p.take);
    return sendPage(app, request, reply, rows.map((r) => toOAuth2Application(r)), total, p);
  });

  app.post<{ Body: ApplicationBody }>('/user/applications/oauth2', {
    config,
    schema: {
      tags: ['user'],
      operationId: 'userCreateOAuth2Application',
      summary: 'Creates a new OAuth2 application',
      body: applicationOption,
      response: { 201: ref('OAuth2Application'), ...errors(400, 401, 403, 422) },
    },
  }, async (request, reply) => {
    const created = await oauth2Apps.create(doerOf(request).id, input(request.body));
    return reply.code(201).send(toOAuth2Application(created.row, created.secret));
  });

  app.get<{ Params: { id: number } }>('/user/applications/oauth2/:id', {
    config,
    schema: {
      tags: ['user'],
      operationId: 'userGetOAuth2Application',
      summary: 'Get an OAuth2 application',
      params: idParams,
      response: { 200: ref('OAuth2Application'), ...errors(401, 403, 404) },
    },
  }, async (request) => toOAuth2Application(await oauth2Apps.get(doerOf(request).id, request.params.id)));

  app.patch<{ Params: { id: number }; Body: ApplicationBody }>('/user/applications/oauth2/:id', {
    config,
    schema: {
      tags: ['user'],
      operationId: 'userUpdateOAuth2Application',
      summary: 'Update an OAuth2 application, this includes regenerating the client secret',
      params: idParams,
      body: applicationOption,
      response: { 200: ref('OAuth2Application'), ...errors(400, 401, 403, 404, 422) },
    },
  }, async (request) => {
    const updated = await oauth2Apps.update(doerOf(request).id, request.params.id, input(request.body));
    return toOAuth2Application(updated.row, updated.secret);
  });

  app.delete<{ Params: { id: number } }>('/user/applications/oauth2/:id', {
    config,
    schema: {
      tags: ['user'],
      operationId: 'userDeleteOAuth2Application',
      summary: 'Delete an OAuth2 application',
      params: idParams,
      response: { 204: { type: 'null' }, ...errors(401, 403, 404) },
    },
  }, async (request, reply) => {
    await oauth2Apps.delete(doerOf(request).id, request.params.id);
    return reply.code(204).send();
  });
}
