/** POST /repos/{owner}/{repo}/merge-upstream: reqToken, mustNotBeArchived, reqRepoWriter(code), as Gitea. */
import type { FastifyInstance } from 'fastify';
import { changeCtx, CODE_WRITE } from '../plugins/repo-assignment';
import { ownerRepoParams, ref } from '../schemas';
import { errors } from './helpers';

export default async function mergeUpstreamRoutes(app: FastifyInstance) {
  const { mergeUpstream } = app.services;
  app.post<{ Params: { owner: string; repo: string }; Body: { branch?: string; ff_only?: boolean } }>(
    '/repos/:owner/:repo/merge-upstream',
    {
      config: { auth: 'required', scopes: ['repository'], repo: CODE_WRITE },
      schema: {
        tags: ['repository'],
        operationId: 'repoMergeUpstream',
        summary: 'Merge a branch from upstream',
        params: ownerRepoParams,
        body: ref('MergeUpstreamRequest'),
        response: { 200: ref('MergeUpstreamResponse'), ...errors(400, 401, 403, 404, 409, 422, 423) },
      },
    },
    async (request) => {
      const rc = changeCtx(request);
      const body = request.body ?? {};
      return { merge_type: await mergeUpstream.merge(rc.doer, rc.repo, body.branch ?? '', body.ff_only ?? false) };
    },
  );
}
