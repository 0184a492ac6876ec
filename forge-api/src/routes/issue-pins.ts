/**
 * Pinned issues: POST/DELETE /repos/{owner}/{repo}/issues/{index}/pin, PATCH
 * /issues/{index}/pin/{position} (a token and repository admin, as Gitea), GET /issues/pinned
 * (readers of the issues), GET /new_pin_allowed (readers of the repository). Gitea answers a
 * pin past the limit with 400 and the pin order appears as `pin_order` in the issue JSON.
 */
import type { FastifyInstance } from 'fastify';
import { bool, listOf, obj, ownerRepoParams, str } from '../schemas';
import { ISSUES_READ, changeCtx } from '../plugins/repo-assignment';
import { errors } from './helpers';
import { ownerRepoIndexParams, pathNumber, type IndexParams, type OwnerRepo } from './issue-helpers';

const NewIssuePinsAllowed = obj({ issues: bool, pull_requests: bool });

export default async function issuePinRoutes(app: FastifyInstance) {
  const { issues, pins } = app.services.tracker;
  const tags = ['issue'];
  const admin = { auth: 'required' as const, scopes: ['issue' as const], repo: { access: 'admin' as const, unit: 'issues' as const } };

  app.post<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index/pin',
    { config: admin, schema: { tags, operationId: 'pinIssue', summary: 'Pin an Issue', params: ownerRepoIndexParams, response: { 204: { type: 'null' }, ...errors(400, 401, 403, 404) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      await pins.pin(rc.doer, await issues.byIndex(rc.repo.id, pathNumber(request.params.index)));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index/pin',
    { config: admin, schema: { tags, operationId: 'unpinIssue', summary: 'Unpin an Issue', params: ownerRepoIndexParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      await pins.unpin(rc.doer, await issues.byIndex(rc.repo.id, pathNumber(request.params.index)));
      return reply.code(204).send();
    },
  );

  app.patch<{ Params: IndexParams & { position: string } }>(
    '/repos/:owner/:repo/issues/:index/pin/:position',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'moveIssuePin',
        summary: 'Moves the Pin to the given Position',
        params: obj({ owner: str, repo: str, index: str, position: str }, ['owner', 'repo', 'index', 'position']),
        response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      // A position that is not a number is Gitea's 0: below 1.
      const position = /^-?\d{1,15}$/.test(request.params.position) ? Number(request.params.position) : 0;
      await pins.move(issue, position);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/issues/pinned',
    { config: { scopes: ['issue'], repo: ISSUES_READ }, schema: { tags: ['repository'], operationId: 'repoListPinnedIssues', summary: "List a repo's pinned issues", params: ownerRepoParams, response: { 200: listOf('Issue'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      return issues.toJson(await issues.loadFull(await pins.pinnedIds(rc.repo.id, false)), rc.repo, rc.doer);
    },
  );

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/new_pin_allowed',
    { config: { scopes: ['repository'], repo: { access: 'read' } }, schema: { tags: ['repository'], operationId: 'repoNewPinAllowed', summary: 'Returns if new Issue Pins are allowed', params: ownerRepoParams, response: { 200: NewIssuePinsAllowed, ...errors(404) } } },
    async (request) => pins.newPinAllowed(request.repoCtx.repo.id),
  );
}
