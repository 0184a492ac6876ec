/**
 * Push mirrors of a repository (services/push-mirrors.ts), with Gitea's middleware: reqAdmin
 * before reqToken (an anonymous caller gets the 403 of reqAdmin), and mustNotBeArchived on
 * the writes and on the sync.
 */
import type { FastifyInstance } from 'fastify';
import { changeCtx, REPO_ADMIN, type RepoAssignment } from '../plugins/repo-assignment';
import { listOf, obj, ownerRepoParams, ref, str } from '../schemas';
import { InvalidError } from '../services/errors';
import type { CreatePushMirrorInput } from '../services/push-mirrors';
import { errors, paging, pagingQuery, sendPage } from './helpers';

type RepoParams = { owner: string; repo: string };
type NameParams = RepoParams & { name: string };
const nameParams = obj({ owner: str, repo: str, name: str }, ['owner', 'repo', 'name']);

const READ: RepoAssignment = { ...REPO_ADMIN, anonymous: 'forbidden' };
const CHANGE: RepoAssignment = { ...REPO_ADMIN, anonymous: 'forbidden', archived: 'refuse' };

export default async function pushMirrorRoutes(app: FastifyInstance) {
  const { pushMirrors } = app.services;
  const tags = ['repository'];
  // No `auth: 'required'`: reqAdmin's 403 comes before reqToken's 401 (repo-assignment refuses anonymous callers).
  const auth = { scopes: ['repository' as const] };

  app.get<{ Params: RepoParams }>(
    '/repos/:owner/:repo/push_mirrors',
    {
      config: { ...auth, repo: READ },
      schema: {
        tags,
        operationId: 'repoListPushMirrors',
        summary: 'Get all push mirrors of the repository',
        params: ownerRepoParams,
        querystring: { type: 'object', properties: { ...pagingQuery } },
        response: { 200: listOf('PushMirror'), ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const p = paging(app, request);
      const { rows, total } = await pushMirrors.list(rc.repo, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((m) => pushMirrors.json(m, rc.repo)), total, p);
    },
  );

  app.post<{ Params: RepoParams; Body: CreatePushMirrorInput }>(
    '/repos/:owner/:repo/push_mirrors',
    {
      config: { ...auth, repo: CHANGE },
      schema: {
        tags,
        operationId: 'repoAddPushMirror',
        summary: 'add a push mirror to the repository',
        params: ownerRepoParams,
        body: ref('CreatePushMirrorOption'),
        response: { 200: ref('PushMirror'), ...errors(400, 401, 403, 404, 422, 423) },
      },
    },
    async (request) => {
      const rc = changeCtx(request);
      const m = await pushMirrors.create(rc.repo, request.body ?? {});
      return pushMirrors.json(m, rc.repo);
    },
  );

  app.get<{ Params: NameParams }>(
    '/repos/:owner/:repo/push_mirrors/:name',
    {
      config: { ...auth, repo: READ },
      schema: {
        tags,
        operationId: 'repoGetPushMirrorByRemoteName',
        summary: 'Get push mirror of the repository by remoteName',
        params: nameParams,
        response: { 200: ref('PushMirror'), ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const rc = changeCtx(request);
      return pushMirrors.json(await pushMirrors.get(rc.repo, request.params.name), rc.repo);
    },
  );

  app.delete<{ Params: NameParams }>(
    '/repos/:owner/:repo/push_mirrors/:name',
    {
      config: { ...auth, repo: CHANGE },
      schema: {
        tags,
        operationId: 'repoDeletePushMirror',
        summary: 'deletes a push mirror from a repository by remoteName',
        params: nameParams,
        response: { 204: { type: 'null' }, ...errors(400, 401, 403, 404, 423) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      await pushMirrors.delete(rc.repo, request.params.name);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: RepoParams }>(
    '/repos/:owner/:repo/push_mirrors-sync',
    {
      config: { ...auth, repo: CHANGE },
      schema: {
        tags,
        operationId: 'repoPushMirrorSync',
        summary: 'Sync all push mirrored repository',
        params: ownerRepoParams,
        response: { 200: { type: 'null' }, ...errors(400, 401, 403, 404, 422, 423) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const failed = await pushMirrors.syncAll(rc.repo);
      if (failed.length) throw new InvalidError(`error occurred when syncing push mirrors: ${failed.join(', ')}`);
      return reply.code(200).send();
    },
  );
}
