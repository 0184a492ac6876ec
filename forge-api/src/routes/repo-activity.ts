/**
 * GET /repos/{owner}/{repo}/activities/feeds: the repository's activity feed (Gitea's
 * ListRepoActivityFeeds), open to whoever reads the repository; `date` (YYYY-MM-DD) keeps one
 * day, and a date that does not parse is ignored, as Gitea only logs it.
 */
import type { FastifyInstance } from 'fastify';
import { setTotalCount } from '../plugins/paging';
import { list, obj, ownerRepoParams } from '../schemas';
import { errors, paging, pagingQuery } from './helpers';
import type { OwnerRepo } from './issue-helpers';

export default async function repoActivityRoutes(app: FastifyInstance) {
  const { activities } = app.services;
  app.get<{ Params: OwnerRepo; Querystring: { date?: string } }>(
    '/repos/:owner/:repo/activities/feeds',
    {
      config: { scopes: ['repository'], repo: { access: 'read' } },
      schema: {
        tags: ['repository'],
        operationId: 'repoListActivityFeeds',
        summary: "List a repository's activity feeds",
        params: ownerRepoParams,
        querystring: obj({ date: { type: 'string', description: 'the date of the activities to be found (YYYY-MM-DD)' }, ...pagingQuery }),
        response: { 200: list({ type: 'object', additionalProperties: true }), ...errors(404) },
      },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await activities.listForRepo(request.repoCtx.repo.id, request.doer, request.query.date, p.skip, p.take);
      setTotalCount(reply, total);
      return activities.toJson(rows, request.doer);
    },
  );
}
