/**
 * A repository's settings: PATCH /repos/{owner}/{repo} (Gitea's reqAdmin: an archived
 * repository can still be edited, or it could never be un-archived), GET /repositories/{id},
 * the repository avatar (POST/DELETE /repos/{owner}/{repo}/avatar) and, outside /api/v1,
 * GET /repo-avatars/{name} where avatar_url points.
 */
import type { FastifyInstance } from 'fastify';
import { changeCtx, REPO_ADMIN } from '../plugins/repo-assignment';
import { int, obj, ownerRepoParams, ref, str } from '../schemas';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { AccessMode } from '../services/convert';
import type { EditRepoInput } from '../services/repo-settings';
import { decodeStdBase64, errors, publicOnly } from './helpers';

type RepoParams = { owner: string; repo: string };

export default async function repoSettingsRoutes(app: FastifyInstance) {
  const { convert, repoSettings, repoAvatars, forks, permissions } = app.services;
  const tags = ['repository'];

  app.patch<{ Params: RepoParams; Body: EditRepoInput }>(
    '/repos/:owner/:repo',
    {
      config: { auth: 'required', scopes: ['repository'], repo: REPO_ADMIN },
      schema: {
        tags,
        operationId: 'repoEdit',
        summary: "Edit a repository's properties. Only fields that are set will be changed.",
        params: ownerRepoParams,
        body: ref('EditRepoOption'),
        response: { 200: ref('Repository'), ...errors(401, 403, 404, 422) },
      },
    },
    async (request) => {
      const rc = changeCtx(request);
      const updated = await repoSettings.edit(rc.doer, rc.repo, request.body ?? {});
      return convert.repo(await forks.withParent(updated), await app.services.permissions.repoModes(rc.doer, updated, rc.mode));
    },
  );

  app.get<{ Params: { id: number } }>(
    '/repositories/:id',
    {
      config: { auth: 'required', scopes: ['repository'] },
      schema: { tags, operationId: 'repoGetByID', summary: 'Get a repository by id', params: obj({ id: int }, ['id']), response: { 200: ref('Repository'), ...errors(401, 404) } },
    },
    async (request) => {
      const repo = await app.services.repos.byId(request.params.id);
      const missing = () => new NotFoundError('not found', [`repository does not exist [id: ${request.params.id}]`]);
      if (!repo) throw missing();
      const mode = await permissions.repoAccessMode(request.doer, repo);
      if (mode < AccessMode.Read) throw missing();
      if (publicOnly(request) && repo.isPrivate) throw new PermissionDeniedError('token scope is limited to public repos');
      return convert.repo(await forks.withParent(repo), await permissions.repoModes(request.doer, repo, mode));
    },
  );

  app.post<{ Params: RepoParams; Body: { image?: string } }>(
    '/repos/:owner/:repo/avatar',
    {
      config: { auth: 'required', scopes: ['repository'], repo: REPO_ADMIN },
      schema: {
        tags,
        operationId: 'repoUpdateAvatar',
        summary: 'Update avatar',
        params: ownerRepoParams,
        body: ref('UpdateRepoAvatarOption'),
        response: { 204: { type: 'null' }, ...errors(400, 401, 403, 404, 413, 422) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      await repoAvatars.upload(rc.repo, decodeStdBase64(request.body?.image ?? ''));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: RepoParams }>(
    '/repos/:owner/:repo/avatar',
    {
      config: { auth: 'required', scopes: ['repository'], repo: REPO_ADMIN },
      schema: { tags, operationId: 'repoDeleteAvatar', summary: 'Delete avatar', params: ownerRepoParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      await repoAvatars.remove(changeCtx(request).repo);
      return reply.code(204).send();
    },
  );
}

/** GET /repo-avatars/{name}: the uploaded image (outside /api/v1, as Gitea serves it). */
export async function repoAvatarFileRoutes(app: FastifyInstance) {
  app.get<{ Params: { name: string } }>(
    '/repo-avatars/:name',
    { schema: { hide: true, params: obj({ name: str }, ['name']) } },
    async (request, reply) => {
      const { data, contentType } = await app.services.repoAvatars.read(request.params.name);
      return reply.type(contentType).header('cache-control', 'private, max-age=21600').send(data);
    },
  );
}
