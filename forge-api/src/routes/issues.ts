/**
 * Issues (Gitea's /repos/{owner}/{repo}/issues...): list, create, get, edit, deadline,
 * reactions on issues, dependencies and blocks. Scope category `issue`.
 */
import { INT64_LIMIT, INT64_MIN } from '../schemas/common';
import type { FastifyInstance } from 'fastify';
import { PermissionDeniedError } from '../services/errors';
import { bool, dateTime, int, listOf, obj, ownerRepoParams, ref, str, strList } from '../schemas';
import type { CreateIssueInput, EditIssueInput, ListIssuesQuery } from '../services/issues/issues';
import type { IssueMeta } from '../services/issues/dependencies';
import type { SearchIssuesQuery } from '../services/issues/search';
import { errors, paging, pagingQuery, sendPage } from './helpers';
import { ownerRepoIndexParams, pathNumber, type IndexParams, type OwnerRepo } from './issue-helpers';
import { changeCtx, ISSUES_CHANGE, ISSUES_READ } from '../plugins/repo-assignment';
import { setTotalCount } from '../plugins/paging';


const CreateIssueOption = obj(
  {
    title: str,
    body: str,
    ref: str,
    assignee: str,
    assignees: strList,
    closed: bool,
    due_date: dateTime,
    labels: { type: 'array', items: int },
    milestone: int,
  },
  ['title'],
);

const EditIssueOption = obj({
  title: str,
  body: str,
  ref: str,
  assignee: str,
  assignees: strList,
  milestone: { type: ['integer', 'null'], minimum: INT64_MIN, exclusiveMaximum: INT64_LIMIT },
  state: str,
  due_date: { type: ['string', 'null'], format: 'date-time' },
  unset_due_date: bool,
});

const IssueMetaSchema = obj({ owner: str, repo: str, index: int }, ['index']);

export default async function issueRoutes(app: FastifyInstance) {
  const { issues, reactions, dependencies } = app.services.tracker;
  const tags = ['issue'];
  const read = { scopes: ['issue' as const], repo: ISSUES_READ };
  const write = { auth: 'required' as const, scopes: ['issue' as const], repo: ISSUES_CHANGE };

  app.get<{ Querystring: SearchIssuesQuery }>(
    '/repos/issues/search',
    {
      // An unknown owner or team, or a team without its owner, is Gitea's 400.
      config: { scopes: ['issue' as const], errorStatus: { Invalid: 400 } },
      schema: {
        tags,
        operationId: 'issueSearchIssues',
        summary: 'Search for issues across the repositories that the user has access to',
        querystring: obj({
          state: str, labels: str, milestones: str, q: str, priority_repo_id: str, type: str, since: str, before: str,
          assigned: str, created: str, mentioned: str, review_requested: str, reviewed: str, owner: str, team: str, created_by: str, ...pagingQuery,
        }),
        response: { 200: listOf('Issue'), ...errors(400, 404, 422) },
      },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { data, total } = await app.services.tracker.search.search(request.doer, request.query, p.skip, p.take);
      return sendPage(app, request, reply, data, total, p);
    },
  );

  app.get<{ Params: OwnerRepo; Querystring: ListIssuesQuery }>(
    '/repos/:owner/:repo/issues',
    {
      config: read,
      schema: {
        tags,
        operationId: 'issueListIssues',
        summary: "List a repository's issues",
        params: ownerRepoParams,
        querystring: obj({ state: str, labels: str, q: str, type: str, milestones: str, since: str, before: str, created_by: str, assigned_by: str, mentioned_by: str, ...pagingQuery }),
        response: { 200: listOf('Issue'), ...errors(404, 422) },
      },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const p = paging(app, request);
      const { data, total } = await issues.list(rc, request.query, p.skip, p.take);
      return sendPage(app, request, reply, data, total, p);
    },
  );

  app.post<{ Params: OwnerRepo; Body: CreateIssueInput }>(
    '/repos/:owner/:repo/issues',
    {
      config: write,
      schema: { tags, operationId: 'issueCreateIssue', summary: 'Create an issue', params: ownerRepoParams, body: CreateIssueOption, response: { 201: ref('Issue'), ...errors(401, 403, 404, 412, 422, 423) } },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      return reply.code(201).send(await issues.create(rc, request.body));
    },
  );

  app.get<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index',
    { config: read, schema: { tags, operationId: 'issueGetIssue', summary: 'Get an issue', params: ownerRepoIndexParams, response: { 200: ref('Issue'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      return issues.json(issue.id, rc.repo, rc.doer);
    },
  );

  app.patch<{ Params: IndexParams; Body: EditIssueInput }>(
    '/repos/:owner/:repo/issues/:index',
    {
      config: write,
      schema: {
        tags,
        operationId: 'issueEditIssue',
        summary: 'Edit an issue. If using deadline only the date will be taken into account, and time of day ignored.',
        params: ownerRepoIndexParams,
        body: EditIssueOption,
        response: { 201: ref('Issue'), ...errors(401, 403, 404, 412, 422, 423) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      // Gitea answers an edit with 201.
      return reply.code(201).send(await issues.edit(rc, issue, request.body ?? {}));
    },
  );

  app.delete<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index',
    { config: write, schema: { tags, operationId: 'issueDelete', summary: 'Delete an issue', params: ownerRepoIndexParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      const files = await issues.delete(rc, issue);
      await Promise.all(files.map((uuid) => app.services.tracker.attachments.removeFile(uuid)));
      return reply.code(204).send();
    },
  );

  app.post<{ Params: IndexParams; Body: { due_date: string } }>(
    '/repos/:owner/:repo/issues/:index/deadline',
    {
      config: write,
      schema: {
        tags,
        operationId: 'issueEditIssueDeadline',
        summary: 'Set an issue deadline. If set to null, the deadline is deleted. If using deadline only the date will be taken into account, and time of day ignored.',
        params: ownerRepoIndexParams,
        body: obj({ due_date: { type: ['string', 'null'], format: 'date-time' } }, ['due_date']),
        response: { 201: obj({ due_date: { type: ['string', 'null'], format: 'date-time' } }), ...errors(401, 403, 404, 422, 423) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      const deadline = await issues.setDeadline(rc, issue, request.body.due_date);
      return reply.code(201).send({ due_date: deadline ? deadline.toISOString().replace(/\.\d{3}Z$/, 'Z') : null });
    },
  );

  // Reactions on the issue itself.
  app.get<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index/reactions',
    {
      config: read,
      schema: { tags, operationId: 'issueGetIssueReactions', summary: 'Get a list reactions of an issue', params: ownerRepoIndexParams, querystring: obj(pagingQuery), response: { 200: listOf('Reaction'), ...errors(403, 404) } },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      const p = paging(app, request);
      const { data, total } = await reactions.list(rc, issue.id, 0, p.skip, p.take);
      setTotalCount(reply, total);
      return data;
    },
  );

  app.post<{ Params: IndexParams; Body: { content: string } }>(
    '/repos/:owner/:repo/issues/:index/reactions',
    {
      config: write,
      schema: { tags, operationId: 'issuePostIssueReaction', summary: 'Add a reaction to an issue', params: ownerRepoIndexParams, body: obj({ content: str }), response: { 200: ref('Reaction'), 201: ref('Reaction'), ...errors(401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      const { created, json } = await reactions.add(rc, issue, 0, request.body?.content);
      return reply.code(created ? 201 : 200).send(json);
    },
  );

  app.delete<{ Params: IndexParams; Body: { content: string } }>(
    '/repos/:owner/:repo/issues/:index/reactions',
    {
      config: write,
      schema: { tags, operationId: 'issueDeleteIssueReaction', summary: 'Remove a reaction from an issue', params: ownerRepoIndexParams, body: obj({ content: str }), response: { ...errors(401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      await reactions.remove(rc, issue, 0, request.body?.content);
      return reply.code(200).send();
    },
  );

  // Dependencies ("this issue depends on") and blocks ("this issue blocks").
  for (const kind of ['dependencies', 'blocks'] as const) {
    const op = kind === 'dependencies' ? 'IssueDependencies' : 'IssueBlocks';
    app.get<{ Params: IndexParams }>(
      `/repos/:owner/:repo/issues/:index/${kind}`,
      {
        config: read,
        schema: {
          tags,
          operationId: kind === 'dependencies' ? 'issueListIssueDependencies' : 'issueListBlocks',
          summary: kind === 'dependencies' ? "List an issue's dependencies, i.e all issues that block this issue." : 'List issues that are blocked by this issue',
          params: ownerRepoIndexParams,
          querystring: obj(pagingQuery),
          response: { 200: listOf('Issue'), ...errors(404) },
        },
      },
      async (request, reply) => {
        const rc = request.repoCtx;
        dependencies.assertEnabled(rc);
        const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
        const p = paging(app, request);
        const { data, total } = await dependencies.list(rc, issue, kind, p.skip, p.take);
        // Gitea counts the dependencies list for X-Total-Count but not the blocks list.
        if (kind === 'dependencies') setTotalCount(reply, total);
        return data;
      },
    );

    for (const method of ['POST', 'DELETE'] as const) {
      app.route<{ Params: IndexParams; Body: IssueMeta }>({
        method,
        url: `/repos/:owner/:repo/issues/:index/${kind}`,
        config: write,
        schema: {
          tags,
          operationId: `issue${method === 'POST' ? 'Create' : 'Remove'}${op}`,
          summary: `${method === 'POST' ? 'Add' : 'Remove'} ${kind === 'dependencies' ? 'a dependency of' : 'an issue blocked by'} this issue`,
          params: ownerRepoIndexParams,
          body: IssueMetaSchema,
          response: { 201: ref('Issue'), ...errors(401, 404, 422, 423) },
        },
        handler: async (request, reply) => {
          const rc = changeCtx(request);
          dependencies.assertEnabled(rc);
          const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
          const here = { issue, mode: rc.mode, repo: rc.repo };
          const other = await dependencies.resolve(rc, request.body);
          // dependencies: the path issue depends on the body's; blocks: the body's depends on the path's.
          const [dependent, blocker] = kind === 'dependencies' ? [here, other] : [other, here];
          if (method === 'POST') await dependencies.add(rc.doer, dependent, blocker);
          else await dependencies.remove(rc.doer, dependent, blocker);
          // Gitea answers both with the issue of the path.
          return reply.code(201).send(await issues.json(issue.id, rc.repo, rc.doer));
        },
      });
    }
  }
}
