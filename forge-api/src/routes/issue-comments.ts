/**
 * Comments: per issue and per repository, get/edit/delete by id (also through the deprecated
 * /issues/{index}/comments/{id} form, whose index is ignored), and comment reactions.
 */
import type { FastifyInstance } from 'fastify';
import { setTotalCount } from '../plugins/paging';
import { listOf, obj, ownerRepoParams, ref, str } from '../schemas';
import type { CommentRange } from '../services/issues/comments';
import { errors, paging, pagingQuery, sendPage } from './helpers';
import { ownerRepoIdParams, ownerRepoIndexParams, pathNumber, type IndexParams, type OwnerRepo } from './issue-helpers';
import { changeCtx, ISSUES_CHANGE, ISSUES_READ } from '../plugins/repo-assignment';

type IdParams = OwnerRepo & { id: string };

const rangeQuery = { since: { type: 'string', format: 'date-time' }, before: { type: 'string', format: 'date-time' } };

export default async function issueCommentRoutes(app: FastifyInstance) {
  const { issues, comments, reactions } = app.services.tracker;
  const tags = ['issue'];
  const read = { scopes: ['issue' as const], repo: ISSUES_READ };
  const write = { auth: 'required' as const, scopes: ['issue' as const], repo: ISSUES_CHANGE };

  app.get<{ Params: IndexParams; Querystring: CommentRange }>(
    '/repos/:owner/:repo/issues/:index/comments',
    {
      config: read,
      schema: { tags, operationId: 'issueGetComments', summary: 'List all comments on an issue', params: ownerRepoIndexParams, querystring: obj(rangeQuery), response: { 200: listOf('Comment'), ...errors(404, 422) } },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      const data = await comments.listForIssue(rc, issue, request.query);
      setTotalCount(reply, data.length);
      return data;
    },
  );

  app.get<{ Params: IndexParams; Querystring: CommentRange }>(
    '/repos/:owner/:repo/issues/:index/timeline',
    {
      config: read,
      schema: {
        tags,
        operationId: 'issueGetCommentsAndTimeline',
        summary: 'List all comments and events on an issue',
        params: ownerRepoIndexParams,
        querystring: obj({ ...rangeQuery, ...pagingQuery }),
        // An entry may be `null` (a reference whose comment was deleted; timeline.ts).
        response: { 200: { type: 'array', items: { anyOf: [ref('TimelineComment'), { type: 'null' }] }, nullable: true }, ...errors(404, 422) },
      },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      const data = await app.services.tracker.timeline.list(rc, issue, request.query, paging(app, request));
      // Gitea counts the entries of this page only, and sends no Link header; a page without
      // entries is `null` there (an unfilled list), not [].
      setTotalCount(reply, data.length);
      return data.length ? data : null;
    },
  );

  app.post<{ Params: IndexParams; Body: { body: string } }>(
    '/repos/:owner/:repo/issues/:index/comments',
    {
      config: write,
      schema: { tags, operationId: 'issueCreateComment', summary: 'Add a comment to an issue', params: ownerRepoIndexParams, body: obj({ body: str }, ['body']), response: { 201: ref('Comment'), ...errors(401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      return reply.code(201).send(await comments.create(rc, issue, request.body.body));
    },
  );

  app.get<{ Params: OwnerRepo; Querystring: CommentRange }>(
    '/repos/:owner/:repo/issues/comments',
    {
      config: read,
      schema: {
        tags,
        operationId: 'issueGetRepoComments',
        summary: 'List all comments in a repository',
        params: ownerRepoParams,
        querystring: obj({ ...rangeQuery, ...pagingQuery }),
        response: { 200: listOf('Comment'), ...errors(404, 422) },
      },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const p = paging(app, request);
      const { data, total } = await comments.listForRepo(rc, request.query, p.skip, p.take);
      return sendPage(app, request, reply, data, total, p);
    },
  );

  app.get<{ Params: IdParams }>(
    '/repos/:owner/:repo/issues/comments/:id',
    { config: read, schema: { tags, operationId: 'issueGetComment', summary: 'Get a comment', params: ownerRepoIdParams, response: { 200: ref('Comment'), 204: { type: 'null' }, ...errors(403, 404) } } },
    async (request, reply) => {
      const rc = request.repoCtx;
      const c = await comments.find(rc, pathNumber(request.params.id));
      // Gitea answers 204 for timeline events (no content to show).
      if (c.type !== 0) return reply.code(204).send();
      return comments.json(rc, c.id);
    },
  );

  const editSchema = (operationId: string, params: unknown) => ({
    tags,
    operationId,
    summary: 'Edit a comment',
    params,
    body: obj({ body: str }, ['body']),
    response: { 200: ref('Comment'), 204: { type: 'null' }, ...errors(401, 403, 404, 422, 423) },
  });
  const deleteSchema = (operationId: string, params: unknown) => ({ tags, operationId, summary: 'Delete a comment', params, response: { 204: { type: 'null' }, ...errors(400, 401, 403, 404, 423) } });
  const deprecatedParams = {
    type: 'object',
    properties: { owner: str, repo: str, index: str, id: str },
    required: ['owner', 'repo', 'index', 'id'],
  };

  for (const [url, params, suffix] of [
    ['/repos/:owner/:repo/issues/comments/:id', ownerRepoIdParams, ''],
    ['/repos/:owner/:repo/issues/:index/comments/:id', deprecatedParams, 'Deprecated'],
  ] as const) {
    app.patch<{ Params: IdParams; Body: { body: string } }>(url, { config: write, schema: editSchema(`issueEditComment${suffix}`, params) }, async (request, reply) => {
      const rc = changeCtx(request);
      const json = await comments.edit(rc, pathNumber(request.params.id), request.body.body);
      if (json === null) return reply.code(204).send();
      return json;
    });
    // Gitea refuses to delete a comment that is an event (not text) with 400.
    app.delete<{ Params: IdParams }>(url, { config: { ...write, errorStatus: { Invalid: 400 } }, schema: deleteSchema(`issueDeleteComment${suffix}`, params) }, async (request, reply) => {
      const rc = changeCtx(request);
      await comments.delete(rc, pathNumber(request.params.id));
      return reply.code(204).send();
    });
  }

  // Reactions on a comment.
  app.get<{ Params: IdParams }>(
    '/repos/:owner/:repo/issues/comments/:id/reactions',
    { config: read, schema: { tags, operationId: 'issueGetCommentReactions', summary: 'Get a list of reactions from a comment of an issue', params: ownerRepoIdParams, response: { 200: listOf('Reaction'), ...errors(403, 404) } } },
    async (request) => {
      const rc = request.repoCtx;
      const c = await comments.find(rc, pathNumber(request.params.id));
      return (await reactions.list(rc, c.issueId, c.id)).data;
    },
  );

  app.post<{ Params: IdParams; Body: { content: string } }>(
    '/repos/:owner/:repo/issues/comments/:id/reactions',
    {
      config: write,
      schema: { tags, operationId: 'issuePostCommentReaction', summary: 'Add a reaction to a comment of an issue', params: ownerRepoIdParams, body: obj({ content: str }), response: { 200: ref('Reaction'), 201: ref('Reaction'), ...errors(401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const c = await comments.find(rc, pathNumber(request.params.id));
      const { created, json } = await reactions.add(rc, c.issue, c.id, request.body?.content);
      return reply.code(created ? 201 : 200).send(json);
    },
  );

  app.delete<{ Params: IdParams; Body: { content: string } }>(
    '/repos/:owner/:repo/issues/comments/:id/reactions',
    {
      config: write,
      schema: { tags, operationId: 'issueDeleteCommentReaction', summary: 'Remove a reaction from a comment of an issue', params: ownerRepoIdParams, body: obj({ content: str }), response: { ...errors(401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const c = await comments.find(rc, pathNumber(request.params.id));
      await reactions.remove(rc, c.issue, c.id, request.body?.content);
      return reply.code(200).send();
    },
  );
}
