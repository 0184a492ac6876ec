/**
 * Who takes part in an issue: assignees (POST / DELETE /issues/{index}/assignees, writers;
 * GET /assignees/{assignee}, readers), the conversation lock (PUT / DELETE /issues/{index}/lock,
 * repository admins, as Gitea's reqAdmin) and subscriptions (GET /subscriptions, readers;
 * /subscriptions/check and PUT / DELETE /subscriptions/{user} signed in). Scope `issue`.
 */
import type { FastifyInstance } from 'fastify';
import { bool, dateTime, listOf, obj, ref, str, strList } from '../schemas';
import { ISSUES_CHANGE, ISSUES_READ, changeCtx } from '../plugins/repo-assignment';
import { setTotalCount } from '../plugins/paging';
import { doerOf, errors, paging, pagingQuery } from './helpers';
import { ownerRepoIndexParams, ownerRepoIndexWith, pathNumber, type IndexParams } from './issue-helpers';

const IssueAssigneesOption = obj({ assignees: strList });
const WatchInfo = obj({ subscribed: bool, ignored: bool, reason: { type: 'null' }, created_at: dateTime, url: str, repository_url: str });

export default async function issuePeopleRoutes(app: FastifyInstance) {
  const { issues, assignments, locks, subscriptions } = app.services.tracker;
  const tags = ['issue'];
  const read = { scopes: ['issue' as const], repo: ISSUES_READ };
  const signedRead = { auth: 'required' as const, scopes: ['issue' as const], repo: ISSUES_READ };
  const write = { auth: 'required' as const, scopes: ['issue' as const], repo: ISSUES_CHANGE };
  const admin = { auth: 'required' as const, scopes: ['issue' as const], repo: { access: 'admin' as const, unit: 'issues' as const } };

  for (const method of ['POST', 'DELETE'] as const) {
    const add = method === 'POST';
    app.route<{ Params: IndexParams; Body: { assignees?: string[] } }>({
      method,
      url: '/repos/:owner/:repo/issues/:index/assignees',
      config: write,
      schema: {
        tags,
        operationId: add ? 'issueAddAssignees' : 'issueRemoveAssignees',
        summary: add ? 'Add assignees to an issue' : 'Remove assignees from an issue',
        params: ownerRepoIndexParams,
        body: IssueAssigneesOption,
        response: { [add ? 201 : 200]: ref('Issue'), ...errors(401, 403, 404, 422, 423) },
      },
      handler: async (request, reply) => {
        const rc = changeCtx(request);
        const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
        return reply.code(add ? 201 : 200).send(await assignments.change(rc, issue, request.body?.assignees ?? [], add));
      },
    });
  }

  app.get<{ Params: IndexParams & { assignee: string } }>(
    '/repos/:owner/:repo/issues/:index/assignees/:assignee',
    {
      config: read,
      schema: { tags, operationId: 'issueCheckAssignee', summary: 'Check if a user can be assigned to an issue', params: ownerRepoIndexWith('assignee'), response: { 204: { type: 'null' }, ...errors(404) } },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      await assignments.check(rc, request.params.assignee);
      return reply.code(204).send();
    },
  );

  for (const method of ['PUT', 'DELETE'] as const) {
    const lock = method === 'PUT';
    app.route<{ Params: IndexParams; Body: { lock_reason?: string } }>({
      method,
      url: '/repos/:owner/:repo/issues/:index/lock',
      config: admin,
      schema: {
        tags,
        operationId: lock ? 'issueLockIssue' : 'issueUnlockIssue',
        summary: lock ? 'Lock an issue' : 'Unlock an issue',
        params: ownerRepoIndexParams,
        ...(lock ? { body: obj({ lock_reason: str }) } : {}),
        response: { 204: { type: 'null' }, ...errors(401, 403, 404) },
      },
      handler: async (request, reply) => {
        const rc = changeCtx(request);
        const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
        await locks.setLocked(rc.doer, issue, lock, request.body?.lock_reason ?? '');
        return reply.code(204).send();
      },
    });
  }

  app.get<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index/subscriptions',
    {
      config: read,
      schema: { tags, operationId: 'issueSubscriptions', summary: 'Get users who subscribed on an issue.', params: ownerRepoIndexParams, querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(404) } },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      const p = paging(app, request);
      const { data, total } = await subscriptions.list(issue, rc.doer, p.skip, p.take);
      // Gitea counts the subscribers but sends no Link header here.
      setTotalCount(reply, total);
      return data;
    },
  );

  app.get<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index/subscriptions/check',
    {
      config: signedRead,
      schema: { tags, operationId: 'issueCheckSubscription', summary: 'Check if user is subscribed to an issue', params: ownerRepoIndexParams, response: { 200: WatchInfo, ...errors(401, 404) } },
    },
    async (request) => {
      const rc = request.repoCtx;
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      return subscriptions.check(doerOf(request), issue, rc.repo);
    },
  );

  for (const method of ['PUT', 'DELETE'] as const) {
    const watch = method === 'PUT';
    app.route<{ Params: IndexParams & { user: string } }>({
      method,
      url: '/repos/:owner/:repo/issues/:index/subscriptions/:user',
      config: signedRead,
      schema: {
        tags,
        operationId: watch ? 'issueAddSubscription' : 'issueDeleteSubscription',
        summary: watch ? 'Subscribe user to issue' : 'Unsubscribe user from issue',
        params: ownerRepoIndexWith('user'),
        response: { 200: { type: 'null' }, 201: { type: 'null' }, ...errors(401, 403, 404) },
      },
      handler: async (request, reply) => {
        const rc = request.repoCtx;
        const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
        const changed = await subscriptions.set(doerOf(request), issue, request.params.user, watch);
        return reply.code(changed ? 201 : 200).send();
      },
    });
  }
}
