/**
 * The time tracker's routes, with Gitea 1.27's middleware: a token everywhere; the issue routes
 * (issue scope) on a repository whose issues are enabled, archived or not (Gitea's /times and
 * /stopwatch groups do not check archiving); the repository lists (repository scope) likewise;
 * /user/times and /user/stopwatches (user scope). Gitea answers some refusals without its error
 * body: a bare 403, and `{"Message": ...}` for a disabled tracker on the DELETE routes. Lists
 * send X-Total-Count but no Link header, as Gitea's time and stopwatch lists do.
 */
import type { FastifyInstance } from 'fastify';
import { listOf, obj, ref, str } from '../schemas';
import type { RepoAssignment } from '../plugins/repo-assignment';
import { ISSUES_READ } from '../plugins/repo-assignment';
import { doerOf, errors, paging, pagingQuery } from './helpers';
import { ownerRepoIndexParams, type IndexParams, type OwnerRepo } from './issue-helpers';
import { setTotalCount } from '../plugins/paging';


/** Gitea's ParamsInt64: a path segment that is not a number reads as 0 (which names nothing). */
function pathInt(value: string): number {
  return /^\d{1,15}$/.test(value) ? Number(value) : 0;
}

const timeQuery = obj({
  user: { type: 'string', description: 'optional filter by user (available for issue managers)' },
  since: { type: 'string', description: 'Only show times updated after the given time. This is a timestamp in RFC 3339 format' },
  before: { type: 'string', description: 'Only show times updated before the given time. This is a timestamp in RFC 3339 format' },
  ...pagingQuery,
});
const sinceBeforeQuery = obj({ since: timeQuery.properties.since, before: timeQuery.properties.before, ...pagingQuery });

export default async function trackedTimeRoutes(app: FastifyInstance) {
  const { times, stopwatches } = app.services.tracker;
  const issueTags = ['issue'];
  const change: RepoAssignment = { access: 'change', unit: 'issues', archived: 'allow' };
  const read = { auth: 'required' as const, scopes: ['issue' as const], repo: ISSUES_READ };
  const write = { auth: 'required' as const, scopes: ['issue' as const], repo: change, errorBody: { PermissionDenied: 'empty' as const } };
  const remove = { ...write, errorBody: { PermissionDenied: 'empty' as const, Malformed: 'Message' as const } };

  app.get<{ Params: IndexParams; Querystring: { user?: string; since?: string; before?: string } }>(
    '/repos/:owner/:repo/issues/:index/times',
    {
      config: read,
      schema: { tags: issueTags, operationId: 'issueTrackedTimes', summary: "List an issue's tracked times", params: ownerRepoIndexParams, querystring: timeQuery, response: { 200: listOf('TrackedTime'), ...errors(401, 403, 404, 422) } },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { data, total } = await times.listForIssue(request.repoCtx, doerOf(request), pathInt(request.params.index), request.query, p);
      setTotalCount(reply, total);
      return data;
    },
  );

  app.post<{ Params: IndexParams; Body: { time: number; created?: string; user_name?: string } }>(
    '/repos/:owner/:repo/issues/:index/times',
    {
      config: write,
      schema: { tags: issueTags, operationId: 'issueAddTime', summary: 'Add tracked time to a issue', params: ownerRepoIndexParams, body: ref('AddTimeOption'), response: { 200: ref('TrackedTime'), ...errors(400, 401, 403, 404, 422) } },
    },
    async (request) => times.add(request.repoCtx, doerOf(request), pathInt(request.params.index), request.body ?? { time: 0 }),
  );

  app.delete<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index/times',
    {
      config: remove,
      schema: { tags: issueTags, operationId: 'issueResetTime', summary: 'Reset a tracked time of an issue', params: ownerRepoIndexParams, response: { 204: { type: 'null' }, ...errors(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      await times.reset(request.repoCtx, doerOf(request), pathInt(request.params.index));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: IndexParams & { id: string } }>(
    '/repos/:owner/:repo/issues/:index/times/:id',
    {
      config: remove,
      schema: {
        tags: issueTags,
        operationId: 'issueDeleteTime',
        summary: 'Delete specific tracked time',
        params: obj({ owner: str, repo: str, index: str, id: str }, ['owner', 'repo', 'index', 'id']),
        response: { 204: { type: 'null' }, ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await times.deleteOne(request.repoCtx, doerOf(request), pathInt(request.params.index), pathInt(request.params.id));
      return reply.code(204).send();
    },
  );

  const stopwatchRoute = (method: 'post' | 'delete', action: string, operationId: string, summary: string, status: 201 | 204, run: typeof stopwatches.start) =>
    app[method]<{ Params: IndexParams }>(
      `/repos/:owner/:repo/issues/:index/stopwatch/${action}`,
      {
        config: write,
        schema: { tags: issueTags, operationId, summary, params: ownerRepoIndexParams, response: { [status]: { type: 'null' }, ...errors(401, 403, 404, 409) } },
      },
      async (request, reply) => {
        await run.call(stopwatches, request.repoCtx, doerOf(request), pathInt(request.params.index));
        return reply.code(status).send();
      },
    );
  stopwatchRoute('post', 'start', 'issueStartStopWatch', 'Start stopwatch on an issue.', 201, stopwatches.start);
  stopwatchRoute('post', 'stop', 'issueStopStopWatch', "Stop an issue's existing stopwatch.", 201, stopwatches.stop);
  stopwatchRoute('delete', 'delete', 'issueDeleteStopWatch', "Delete an issue's existing stopwatch.", 204, stopwatches.cancel);

  const repoRead = { auth: 'required' as const, scopes: ['repository' as const], repo: ISSUES_READ };

  app.get<{ Params: OwnerRepo; Querystring: { user?: string; since?: string; before?: string } }>(
    '/repos/:owner/:repo/times',
    {
      config: repoRead,
      schema: { tags: ['repository'], operationId: 'repoTrackedTimes', summary: "List a repo's tracked times", params: obj({ owner: str, repo: str }, ['owner', 'repo']), querystring: timeQuery, response: { 200: listOf('TrackedTime'), ...errors(400, 401, 403, 404, 422) } },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { data, total } = await times.listForRepo(request.repoCtx, doerOf(request), request.query, p);
      setTotalCount(reply, total);
      return data;
    },
  );

  app.get<{ Params: OwnerRepo & { user: string } }>(
    '/repos/:owner/:repo/times/:user',
    {
      config: repoRead,
      schema: {
        tags: ['repository'],
        operationId: 'userTrackedTimes',
        summary: "List a user's tracked times in a repo",
        deprecated: true,
        params: obj({ owner: str, repo: str, user: str }, ['owner', 'repo', 'user']),
        response: { 200: listOf('TrackedTime'), ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => times.listForUserInRepo(request.repoCtx, doerOf(request), request.params.user),
  );

  app.get<{ Querystring: { since?: string; before?: string } }>(
    '/user/times',
    {
      config: { auth: 'required', scopes: ['user'] },
      schema: { tags: ['user'], operationId: 'userCurrentTrackedTimes', summary: "List the current user's tracked times", querystring: sinceBeforeQuery, response: { 200: listOf('TrackedTime'), ...errors(401, 403, 422) } },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { data, total } = await times.listMine(doerOf(request), request.query, p);
      setTotalCount(reply, total);
      return data;
    },
  );

  app.get(
    '/user/stopwatches',
    {
      config: { auth: 'required', scopes: ['user'] },
      schema: { tags: ['user'], operationId: 'userGetStopWatches', summary: 'Get list of all existing stopwatches', querystring: obj(pagingQuery), response: { 200: listOf('StopWatch'), ...errors(401, 403) } },
    },
    async (request, reply) => {
      const { data, total } = await stopwatches.listMine(doerOf(request), paging(app, request));
      setTotalCount(reply, total);
      return data;
    },
  );
}
