/** Repository transfers: POST /transfer (reqOwner), /transfer/accept and /transfer/reject (reqToken). */
import type { FastifyInstance } from 'fastify';
import { changeCtx } from '../plugins/repo-assignment';
import { int, obj, ownerRepoParams, ref, str } from '../schemas';
import { AccessMode } from '../services/convert';
import { PermissionDeniedError } from '../services/errors';
import type { RepoModes } from '../services/permissions';
import type { RepoWithOwner } from '../services/repos';
import { errors } from './helpers';

type RepoParams = { owner: string; repo: string };

export default async function transferRoutes(app: FastifyInstance) {
  const { convert, transfers, forks, permissions } = app.services;
  const tags = ['repository'];
  const config = { auth: 'required' as const, scopes: ['repository' as const], repo: { access: 'read' as const } };

  const json = async (repo: RepoWithOwner, mode: number | RepoModes) =>
    convert.repo({ ...(await forks.withParent(repo)), transferJson: await transfers.transferJson(repo, (u) => convert.userPublic(u)) }, mode);

  app.post<{ Params: RepoParams; Body: { new_owner: string; team_ids?: number[] } }>(
    '/repos/:owner/:repo/transfer',
    {
      config,
      schema: {
        tags,
        operationId: 'repoTransfer',
        summary: 'Transfer a repo ownership',
        params: ownerRepoParams,
        body: obj({ new_owner: str, team_ids: { type: 'array', items: int } }, ['new_owner']),
        response: { 201: ref('Repository'), 202: ref('Repository'), ...errors(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      // Gitea's reqOwner: the repository's owner, an owner of its organization or a site admin.
      if (rc.mode < AccessMode.Owner) throw new PermissionDeniedError('user should be the owner of the repo');
      const { repo, pending } = await transfers.start(rc.doer, rc.repo, request.body.new_owner, request.body.team_ids);
      return reply.code(pending ? 201 : 202).send(await json(repo, AccessMode.Admin));
    },
  );

  app.post<{ Params: RepoParams }>(
    '/repos/:owner/:repo/transfer/accept',
    { config, schema: { tags, operationId: 'acceptRepoTransfer', summary: 'Accept a repo transfer', params: ownerRepoParams, response: { 202: ref('Repository'), ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      const repo = await transfers.accept(rc.doer, rc.repo);
      return reply.code(202).send(await json(repo, await permissions.repoModes(rc.doer, repo, await permissions.repoAccessMode(rc.doer, repo))));
    },
  );

  app.post<{ Params: RepoParams }>(
    '/repos/:owner/:repo/transfer/reject',
    { config, schema: { tags, operationId: 'rejectRepoTransfer', summary: 'Reject a repo transfer', params: ownerRepoParams, response: { 200: ref('Repository'), ...errors(401, 403, 404) } } },
    async (request) => {
      const rc = changeCtx(request);
      const rejected = await transfers.reject(rc.doer, rc.repo);
      return json(rejected, await permissions.repoModes(rc.doer, rejected, rc.mode));
    },
  );
}
