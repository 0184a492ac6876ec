/**
 * The doer's own account data (scope user, a token required, closed to public-only tokens as
 * Gitea's rejectPublicOnly): e-mail addresses (GET/POST/DELETE /user/emails) and settings
 * (GET/PATCH /user/settings), the avatar (POST/DELETE /user/avatar) and, outside /api/v1,
 * GET /avatars/{name} where the avatar_url of users and organizations points.
 */
import type { FastifyInstance } from 'fastify';
import { bool, listOf, obj, str, strList } from '../schemas';
import { toEmail } from '../services/convert/email';
import type { EmailAddress, User } from '../services/records';
import { toUserSettings, type UserSettingsInput } from '../services/user-settings';
import { decodeStdBase64, doerOf, errors } from './helpers';

const UserSettings = obj({
  full_name: str,
  website: str,
  description: str,
  location: str,
  language: str,
  theme: str,
  diff_view_style: str,
  hide_email: bool,
  hide_activity: bool,
});

/** structs.UpdateUserAvatarOption: the image, base64-encoded (Gitea binds it as required). */
export const avatarBody = obj({ image: str }, ['image']);

export default async function userAccountRoutes(app: FastifyInstance) {
  const { emails, userSettings, userAvatars } = app.services;
  const config = { auth: 'required' as const, scopes: ['user' as const], rejectPublicOnly: true };
  const tags = ['user'];
  // Gitea's convert.ToEmail leaves user_id and username at their zero values on these routes.
  const emailJson = (rows: EmailAddress[]) => rows.map((e) => toEmail(e, { id: 0, name: '' } as Pick<User, 'id' | 'name'>));

  app.get(
    '/user/emails',
    { config, schema: { tags, operationId: 'userListEmails', summary: "List the authenticated user's email addresses", response: { 200: listOf('Email'), ...errors(401, 403) } } },
    async (request) => emailJson(await emails.list(doerOf(request))),
  );

  app.post<{ Body: { emails?: string[] } }>(
    '/user/emails',
    {
      config,
      schema: { tags, operationId: 'userAddEmail', summary: 'Add email addresses', body: obj({ emails: strList }), response: { 201: listOf('Email'), ...errors(401, 403, 422) } },
    },
    async (request, reply) => reply.code(201).send(emailJson(await emails.add(doerOf(request), request.body?.emails ?? []))),
  );

  app.delete<{ Body: { emails?: string[] } }>(
    '/user/emails',
    {
      config,
      schema: { tags, operationId: 'userDeleteEmail', summary: 'Delete email addresses', body: obj({ emails: strList }), response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } },
    },
    async (request, reply) => {
      await emails.delete(doerOf(request), request.body?.emails ?? []);
      return reply.code(204).send();
    },
  );

  app.get(
    '/user/settings',
    { config, schema: { tags, operationId: 'getUserSettings', summary: 'Get user settings', response: { 200: UserSettings, ...errors(401, 403) } } },
    async (request) => toUserSettings(doerOf(request)),
  );

  app.patch<{ Body: UserSettingsInput }>(
    '/user/settings',
    {
      config,
      schema: {
        tags,
        operationId: 'updateUserSettings',
        summary: 'Update user settings',
        body: obj({ full_name: str, website: str, description: str, location: str, language: str, theme: str, diff_view_style: str, hide_email: bool, hide_activity: bool }),
        response: { 200: UserSettings, ...errors(401, 403, 422) },
      },
    },
    async (request) => toUserSettings(await userSettings.update(doerOf(request), request.body ?? {})),
  );
  app.post<{ Body: { image: string } }>(
    '/user/avatar',
    {
      config,
      schema: { tags, operationId: 'userUpdateAvatar', summary: 'Update Avatar', body: avatarBody, response: { 204: { type: 'null' }, ...errors(400, 401, 403, 422) } },
    },
    async (request, reply) => {
      await userAvatars.upload(doerOf(request), decodeStdBase64(request.body.image));
      return reply.code(204).send();
    },
  );

  app.delete(
    '/user/avatar',
    { config, schema: { tags, operationId: 'userDeleteAvatar', summary: 'Delete Avatar', response: { 204: { type: 'null' }, ...errors(401, 403) } } },
    async (request, reply) => {
      await userAvatars.remove(doerOf(request));
      return reply.code(204).send();
    },
  );
}

/** GET /avatars/{name} (outside /api/v1, where avatar_url points), cached as Gitea lets it be. */
export async function avatarFileRoutes(app: FastifyInstance) {
  app.get<{ Params: { name: string } }>('/avatars/:name', { schema: { hide: true, params: obj({ name: str }, ['name']) } }, async (request, reply) => {
    const { data, contentType } = await app.services.userAvatars.read(request.params.name);
    return reply.type(contentType).header('cache-control', 'public, max-age=21600').send(data);
  });
}
