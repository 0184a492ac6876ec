/**
 * A user's badges for site admins (scope admin): GET (with X-Total-Count), POST to give and
 * DELETE to take away the badges a body of `badge_slugs` names (Gitea's adminListUserBadges,
 * adminAddUserBadges, adminDeleteUserBadges). Gitea answers an unknown slug or a badge given
 * twice with 500; here they are 404 and 409.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { setTotalCount } from '../plugins/paging';
import { int, list, obj, str, strList, usernameParams } from '../schemas';
import { NotFoundError } from '../services/errors';
import { errors } from './helpers';

/** Gitea's actual keys (see BadgeJson). */
const BadgeSchema = obj({ ID: int, Slug: str, Description: str, ImageURL: str });
const UserBadgeOption = obj({ badge_slugs: strList }, ['badge_slugs']);

export default async function adminBadgeRoutes(app: FastifyInstance) {
  const { users, badges } = app.services;
  const config = { auth: 'admin' as const, scopes: ['admin' as const], errorStatus: { AlreadyExists: 409 } };
  const tags = ['admin'];

  async function userParam(request: FastifyRequest<{ Params: { username: string } }>) {
    const user = await users.findByName(request.params.username);
    if (!user) throw new NotFoundError('not found', [`user redirect does not exist [name: ${request.params.username}]`]);
    return user;
  }

  app.get<{ Params: { username: string } }>(
    '/admin/users/:username/badges',
    { config, schema: { tags, operationId: 'adminListUserBadges', summary: "List a user's badges", params: usernameParams, response: { 200: list(BadgeSchema), ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const rows = await badges.listOf(await userParam(request));
      setTotalCount(reply, rows.length);
      return rows;
    },
  );

  app.post<{ Params: { username: string }; Body: { badge_slugs: string[] } }>(
    '/admin/users/:username/badges',
    {
      config,
      schema: { tags, operationId: 'adminAddUserBadges', summary: 'Add a badge to a user', params: usernameParams, body: UserBadgeOption, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 409, 422) } },
    },
    async (request, reply) => {
      await badges.add(await userParam(request), request.body.badge_slugs);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { username: string }; Body: { badge_slugs: string[] } }>(
    '/admin/users/:username/badges',
    {
      config,
      schema: { tags, operationId: 'adminDeleteUserBadges', summary: 'Remove a badge from a user', params: usernameParams, body: UserBadgeOption, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } },
    },
    async (request, reply) => {
      await badges.remove(await userParam(request), request.body.badge_slugs);
      return reply.code(204).send();
    },
  );
}
