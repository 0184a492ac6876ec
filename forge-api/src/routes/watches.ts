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
  const config = { auth: 'required' as const, scopes: ['repository' as const] };

  const info = (repo: { id: number; owner: { name: string }; name: string }, createdAt: Date) => {
    const api = `${app.config.rootUrl}api/v1/repos/${repo.owner.name}/${repo.name}`;
    return { subscribed: true, ignored: false, reason: null, created_at: fmtTime(createdAt), url: `${api}/subscription`, repository_url: api };
  };

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/subscription',
    { config, schema: { tags, operationId: 'userCurrentCheckSubscription', summary: 'Check if the current user is watching a repo', params: ownerRepoParams, response: { 200: WatchInfo, ...errors(401, 404) } } },
    async (request) => {
      const doer = doerOf(request);
      const { repo } = await app.services.repos.getReadable(request.params.owner, request.params.repo, doer);
      const w = await app.prisma.watch.findUnique({ where: { userId_repoId: { userId: doer.id, repoId: repo.id } } });
      if (!w || (w.mode !== 1 && w.mode !== 3)) throw new NotFoundError('not found', ['not watching']);
      return info(repo, w.createdAt);
    },
  );

  app.put<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/subscription',
    { config, schema: { tags, operationId: 'userCurrentPutSubscription', summary: 'Watch a repo', params: ownerRepoParams, response: { 200: WatchInfo, ...errors(401, 403, 404) } } },
    async (request) => {
      const doer = doerOf(request);
      const { repo } = await app.services.repos.getReadable(request.params.owner, request.params.repo, doer);
      const w = await app.prisma.watch.upsert({ where: { userId_repoId: { userId: doer.id, repoId: repo.id } }, create: { userId: doer.id, repoId: repo.id, mode: 1 }, update: { mode: 1 } });
      await app.prisma.repository.update({ where: { id: repo.id }, data: { numWatches: await app.prisma.watch.count({ where: { repoId: repo.id, mode: { in: [1, 3] } } }) } });
      return info(repo, w.createdAt);
    },
  );

  app.delete<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/subscription',
    { config, schema: { tags, operationId: 'userCurrentDeleteSubscription', summary: 'Unwatch a repo', params: ownerRepoParams, response: { 204: { type: 'null' }, ...errors(401, 404) } } },
    async (request, reply) => {
      const doer = doerOf(request);
      const { repo } = await app.services.repos.getReadable(request.params.owner, request.params.repo, doer);
      await app.prisma.watch.deleteMany({ where: { userId: doer.id, repoId: repo.id } });
      await app.prisma.repository.update({ where: { id: repo.id }, data: { numWatches: await app.prisma.watch.count({ where: { repoId: repo.id, mode: { in: [1, 3] } } }) } });
      return reply.code(204).send();
    },
  );
}
