/**
 * Watching a repository (GET / PUT / DELETE /repos/{owner}/{repo}/subscription, scope
 * repository): watchers receive the repository's notifications and activities.
 */
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../services/errors';
import { bool, dateTime, obj, ownerRepoParams, str } from '../schemas';
import { fmtTime } from '../services/convert';
import { doerOf, errors } from './helpers';
import type { OwnerRepo } from './issue-helpers';

const WatchInfo = obj({ subscribed: bool, ignored: bool, reason: { type: 'null' }, created_at: dateTime, url: str, repository_url: str });

export default async function watchRoutes(app: FastifyInstance) {
  const tags = ['repository'];
  // The repository of the path, readable by the caller: plugins/repo-assignment.ts.
  const config = { auth: 'required' as const, scopes: ['repository' as const], repo: { access: 'read' as const } };

  const info = (repo: { id: number; owner: { name: string }; name: string }, createdAt: Date) => {
    const api = `${app.config.rootUrl}api/v1/repos/${repo.owner.name}/${repo.name}`;
    return { subscribed: true, ignored: false, reason: null, created_at: fmtTime(createdAt), url: `${api}/subscription`, repository_url: api };
  };

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/subscription',
    { config, schema: { tags, operationId: 'userCurrentCheckSubscription', summary: 'Check if the current user is watching a repo', params: ownerRepoParams, response: { 200: WatchInfo, ...errors(401, 404) } } },
    async (request) => {
      const doer = doerOf(request);
      const { repo } = request.repoCtx;
      const w = await app.services.watches.find(doer.id, repo.id);
      if (!w) throw new NotFoundError('not found', ['not watching']);
      return info(repo, w.createdAt);
    },
  );

  app.put<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/subscription',
    { config, schema: { tags, operationId: 'userCurrentPutSubscription', summary: 'Watch a repo', params: ownerRepoParams, response: { 200: WatchInfo, ...errors(401, 403, 404) } } },
    async (request) => {
      const doer = doerOf(request);
      const { repo } = request.repoCtx;
      const w = await app.services.watches.watch(doer, repo);
      return info(repo, w.createdAt);
    },
  );

  app.delete<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/subscription',
    { config, schema: { tags, operationId: 'userCurrentDeleteSubscription', summary: 'Unwatch a repo', params: ownerRepoParams, response: { 204: { type: 'null' }, ...errors(401, 404) } } },
    async (request, reply) => {
      const doer = doerOf(request);
      const { repo } = request.repoCtx;
      await app.services.watches.unwatch(doer.id, repo.id);
      return reply.code(204).send();
    },
  );
}
