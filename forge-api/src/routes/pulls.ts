/**
 * Pull requests (Gitea's /repos/{owner}/{repo}/pulls...): list, create, get by number or by
 * base and head, edit. Scope category `repository`, as Gitea's repository routes.
 */
import type { FastifyInstance } from 'fastify';
import { INT64_LIMIT, INT64_MIN } from '../schemas/common';
import { bool, dateTime, int, listOf, obj, ownerRepoParams, ref, str, strList } from '../schemas';
import type { CreatePullInput, EditPullInput } from '../services/pulls/pulls';
import { errors, paging, pagingQuery, sendPage } from './helpers';
import { many, ownerRepoIndexParams, pathNumber, type OwnerRepo } from './issue-helpers';
import { changeCtx, PULLS_CHANGE, PULLS_READ } from '../plugins/repo-assignment';

type IndexParams = OwnerRepo & { index: string };

const CreatePullRequestOption = obj(
  {
    head: str,
    base: str,
    title: str,
    body: str,
    assignee: str,
    assignees: strList,
    milestone: int,
    labels: { type: 'array', items: int },
    due_date: dateTime,
    reviewers: strList,
    team_reviewers: strList,
    allow_maintainer_edit: bool,
  },
);

const EditPullRequestOption = obj({
  title: str,
  body: str,
  base: str,
  assignee: str,
  assignees: strList,
  milestone: { type: 'integer', minimum: INT64_MIN, exclusiveMaximum: INT64_LIMIT },
  labels: { type: 'array', items: int },
  state: str,
  due_date: { type: ['string', 'null'], format: 'date-time' },
  unset_due_date: bool,
  allow_maintainer_edit: bool,
  content_version: int,
});

type ListQuery = { state?: string; sort?: string; milestone?: number; labels?: string | string[]; poster?: string; base_branch?: string };

export default async function pullRoutes(app: FastifyInstance) {
  const { pulls } = app.services.pulls;
  const tags = ['repository'];
  const read = { scopes: ['repository' as const], repo: PULLS_READ };
  const change = { auth: 'required' as const, scopes: ['repository' as const], repo: PULLS_CHANGE };

  app.get<{ Params: OwnerRepo; Querystring: ListQuery }>(
    '/repos/:owner/:repo/pulls',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoListPullRequests',
        summary: "List a repo's pull requests",
        params: ownerRepoParams,
        querystring: obj({
          base_branch: str,
          state: { type: 'string', enum: ['open', 'closed', 'all'] },
          sort: { type: 'string', enum: ['oldest', 'recentupdate', 'recentclose', 'leastupdate', 'mostcomment', 'leastcomment', 'priority'] },
          milestone: int,
          labels: { anyOf: [str, { type: 'array', items: str }] },
          poster: str,
          ...pagingQuery,
        }),
        response: { 200: listOf('PullRequest'), ...errors(404, 500) },
      },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const p = paging(app, request);
      const labels = (many(request.query.labels) ?? []).map(Number).filter(Number.isSafeInteger);
      const { data, total } = await pulls.list(rc, { ...request.query, labels }, p.skip, p.take);
      return sendPage(app, request, reply, data, total, p);
    },
  );

  app.post<{ Params: OwnerRepo; Body: CreatePullInput }>(
    '/repos/:owner/:repo/pulls',
    {
      config: change,
      schema: {
        tags,
        operationId: 'repoCreatePullRequest',
        summary: 'Create a pull request',
        params: ownerRepoParams,
        body: CreatePullRequestOption,
        response: { 201: ref('PullRequest'), ...errors(403, 404, 409, 422, 423) },
      },
    },
    async (request, reply) => reply.code(201).send(await pulls.create(changeCtx(request), request.body ?? ({} as CreatePullInput))),
  );

  app.get<{ Params: IndexParams }>(
    '/repos/:owner/:repo/pulls/:index',
    { config: read, schema: { tags, operationId: 'repoGetPullRequest', summary: 'Get a pull request', params: ownerRepoIndexParams, response: { 200: ref('PullRequest'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      return pulls.json(rc, await pulls.byIndex(rc.repo.id, pathNumber(request.params.index)));
    },
  );

  app.get<{ Params: OwnerRepo & { base: string; '*': string } }>(
    '/repos/:owner/:repo/pulls/:base/*',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetPullRequestByBaseHead',
        summary: 'Get a pull request by base and head',
        params: obj({ owner: str, repo: str, base: str, '*': str }, ['owner', 'repo', 'base']),
        response: { 200: ref('PullRequest'), ...errors(404) },
      },
    },
    async (request) => {
      const rc = request.repoCtx;
      return pulls.json(rc, await pulls.byBaseHead(rc, request.params.base, request.params['*'] ?? ''));
    },
  );

  app.patch<{ Params: IndexParams; Body: EditPullInput }>(
    '/repos/:owner/:repo/pulls/:index',
    {
      // Gitea's edit has no archived check of its own route; the issue rules refuse what they refuse.
      config: { ...change, repo: { ...PULLS_CHANGE, archived: 'allow' as const } },
      schema: {
        tags,
        operationId: 'repoEditPullRequest',
        summary: 'Update a pull request. If using deadline only the date will be taken into account, and time of day ignored.',
        params: ownerRepoIndexParams,
        body: EditPullRequestOption,
        response: { 201: ref('PullRequest'), ...errors(403, 404, 409, 412, 422) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const pr = await pulls.byIndex(rc.repo.id, pathNumber(request.params.index));
      return reply.code(201).send(await pulls.edit(rc, pr, request.body ?? {}));
    },
  );
}
