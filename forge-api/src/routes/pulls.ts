/**
 * Pull requests (Gitea's /repos/{owner}/{repo}/pulls...): list, create, get by number or by
 * base and head, edit. Scope category `repository`, as Gitea's repository routes.
 */
import type { FastifyInstance } from 'fastify';
import { INT64_LIMIT, INT64_MIN } from '../schemas/common';
import { bool, dateTime, int, listOf, obj, ownerRepoParams, ref, str, strList } from '../schemas';
import type { CreatePullInput, EditPullInput } from '../services/pulls/pulls';
import { MERGE_STYLES, type MergeInput } from '../services/pulls/merge';
import { NotFoundError } from '../services/errors';
import { errors, paging, pagingQuery, sendPage } from './helpers';
import { many, ownerRepoIndexParams, pathNumber, type IndexParams, type OwnerRepo } from './issue-helpers';
import { changeCtx, CODE_READ, PULLS_CHANGE, PULLS_READ } from '../plugins/repo-assignment';
import { exposeHeader, setPagingHeaders } from '../plugins/paging';
import { commitOptionsFromQuery, formBool } from '../services/git-data';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Paging } from '../plugins/paging';


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
  const { pulls, changes, merges, autoMerge } = app.services.pulls;

  /** Gitea's paging headers of the commit and file lists (Link, X-Total-Count, X-Page...). */
  const pageHeaders = (request: FastifyRequest, reply: FastifyReply, total: number, p: Paging) => {
    const pageCount = Math.ceil(total / p.limit);
    setPagingHeaders(request, reply, total, p, app.config.rootUrl);
    reply.header('X-Page', String(p.page));
    reply.header('X-PerPage', String(p.limit));
    reply.header('X-PageCount', String(pageCount));
    reply.header('X-HasMore', String(p.page < pageCount));
    for (const h of ['X-Page', 'X-PerPage', 'X-PageCount', 'X-HasMore']) exposeHeader(reply, h);
  };
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
          // Gitea lists every pull request for another state, and in its default order for another sort.
          state: { type: 'string', description: 'open, closed or all' },
          sort: { type: 'string', description: 'oldest, recentupdate, recentclose, leastupdate, mostcomment, leastcomment or priority' },
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

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/pulls/pinned',
    { config: read, schema: { tags, operationId: 'repoListPinnedPullRequests', summary: "List a repo's pinned pull requests", params: ownerRepoParams, response: { 200: listOf('PullRequest'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      return pulls.jsonMany(rc, await pulls.byIssueIds(await app.services.tracker.pins.pinnedIds(rc.repo.id, true)), true);
    },
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

  app.get<{ Params: IndexParams & { diffType: string }; Querystring: { binary?: string } }>(
    '/repos/:owner/:repo/pulls/:index.:diffType',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoDownloadPullDiffOrPatch',
        summary: 'Get a pull request diff or patch',
        params: obj({ owner: str, repo: str, index: str, diffType: { type: 'string', enum: ['diff', 'patch'] } }, ['owner', 'repo', 'index', 'diffType']),
        querystring: obj({ binary: str }),
        produces: ['text/plain'],
        response: { 200: { description: 'the diff or patch text', type: 'string' }, ...errors(404) },
      },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const pr = await pulls.byIndex(rc.repo.id, pathNumber(request.params.index));
      const text = await changes.raw(rc.repo, pr, request.params.diffType === 'diff' ? 'diff' : 'patch', formBool(request.query.binary));
      return reply.type('text/plain; charset=utf-8').send(text);
    },
  );

  app.get<{ Params: IndexParams; Querystring: { verification?: string; files?: string; page?: number; limit?: number } }>(
    '/repos/:owner/:repo/pulls/:index/commits',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetPullRequestCommits',
        summary: 'Get commits for a pull request',
        params: ownerRepoIndexParams,
        querystring: obj({ ...pagingQuery, verification: str, files: str }),
        response: { 200: listOf('Commit'), ...errors(404) },
      },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const pr = await pulls.byIndex(rc.repo.id, pathNumber(request.params.index));
      const p = paging(app, request);
      const { data, total } = await changes.commits(rc.repo, pr, p.skip, p.take, commitOptionsFromQuery(request.query));
      pageHeaders(request, reply, total, p);
      return data;
    },
  );

  app.get<{ Params: IndexParams; Querystring: { 'skip-to'?: string; whitespace?: string; page?: number; limit?: number } }>(
    '/repos/:owner/:repo/pulls/:index/files',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetPullRequestFiles',
        summary: 'Get changed files for a pull request',
        params: ownerRepoIndexParams,
        querystring: obj({ 'skip-to': str, whitespace: { type: 'string', enum: ['ignore-all', 'ignore-change', 'ignore-eol', 'show-all'] }, ...pagingQuery }),
        response: { 200: listOf('ChangedFile'), ...errors(404) },
      },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const pr = await pulls.byIndex(rc.repo.id, pathNumber(request.params.index));
      const p = paging(app, request);
      const { data, total } = await changes.files(rc.repo, pr, p.skip, p.take);
      pageHeaders(request, reply, total, p);
      return data;
    },
  );

  app.get<{ Params: OwnerRepo & { sha: string } }>(
    '/repos/:owner/:repo/commits/:sha/pull',
    {
      // Gitea serves this among the repository's code routes (reqRepoReader(code)).
      config: { scopes: ['repository' as const], repo: CODE_READ },
      schema: {
        tags,
        operationId: 'repoGetCommitPullRequest',
        summary: 'Get the merged pull request of the commit',
        params: obj({ owner: str, repo: str, sha: str }, ['owner', 'repo', 'sha']),
        response: { 200: ref('PullRequest'), ...errors(404) },
      },
    },
    async (request) => {
      const rc = request.repoCtx;
      return pulls.json(rc, await pulls.byMergedCommit(rc.repo.id, request.params.sha));
    },
  );

  app.post<{ Params: IndexParams; Querystring: { style?: string } }>(
    '/repos/:owner/:repo/pulls/:index/update',
    {
      // Gitea's update route has no archived check of its own.
      config: { ...change, repo: { ...PULLS_CHANGE, archived: 'allow' as const } },
      schema: {
        tags,
        operationId: 'repoUpdatePullRequest',
        summary: "Merge PR's baseBranch into headBranch",
        params: ownerRepoIndexParams,
        querystring: obj({ style: { type: 'string', enum: ['merge', 'rebase'] } }),
        response: { 200: { type: 'null' }, ...errors(403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const pr = await pulls.byIndex(rc.repo.id, pathNumber(request.params.index));
      await app.services.pulls.updates.update(rc, pr, request.query.style ?? 'merge');
      return reply.code(200).send();
    },
  );

  app.get<{ Params: IndexParams }>(
    '/repos/:owner/:repo/pulls/:index/merge',
    {
      config: read,
      schema: { tags, operationId: 'repoPullRequestIsMerged', summary: 'Check if a pull request has been merged', params: ownerRepoIndexParams, response: { 204: { type: 'null' }, ...errors(404) } },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const pr = await pulls.byIndex(rc.repo.id, pathNumber(request.params.index));
      if (!pr.hasMerged) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  app.post<{ Params: IndexParams; Body: MergeInput }>(
    '/repos/:owner/:repo/pulls/:index/merge',
    {
      config: change,
      schema: {
        tags,
        operationId: 'repoMergePullRequest',
        summary: 'Merge a pull request',
        params: ownerRepoIndexParams,
        body: obj({
          Do: { type: 'string', enum: [...MERGE_STYLES] },
          do: { type: 'string', enum: [...MERGE_STYLES] },
          merge_title_field: str,
          merge_message_field: str,
          merge_commit_id: str,
          head_commit_id: str,
          force_merge: bool,
          merge_when_checks_succeed: bool,
          delete_branch_after_merge: bool,
        }),
        response: { 200: { type: 'null' }, 201: { type: 'null' }, ...errors(404, 405, 409, 423) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const pr = await pulls.byIndex(rc.repo.id, pathNumber(request.params.index));
      const done = await merges.merge(rc, pr, request.body ?? {});
      return reply.code(done === 'scheduled' ? 201 : 200).send();
    },
  );

  app.delete<{ Params: IndexParams }>(
    '/repos/:owner/:repo/pulls/:index/merge',
    {
      config: change,
      schema: {
        tags,
        operationId: 'repoCancelScheduledAutoMerge',
        summary: 'Cancel the scheduled auto merge for the given pull request',
        params: ownerRepoIndexParams,
        response: { 204: { type: 'null' }, ...errors(403, 404, 423) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const pr = await pulls.byIndex(rc.repo.id, pathNumber(request.params.index));
      await autoMerge.cancel(rc.doer, rc.repo, pr);
      return reply.code(204).send();
    },
  );
}
