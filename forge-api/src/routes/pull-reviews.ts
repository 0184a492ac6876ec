/**
 * Reviews of pull requests and requested reviewers (Gitea's /repos/{owner}/{repo}/pulls/{index}/reviews...,
 * /requested_reviewers, /pulls/comments/{id}/resolve|unresolve, /pulls/{index}/comments/{id}/replies),
 * behind the pull request routes' checks (mustAllowPulls + code reader).
 */
import type { FastifyInstance } from 'fastify';
import { bool, int, listOf, obj, ref, str, strList } from '../schemas';
import { PermissionDeniedError } from '../services/errors';
import { errors, paging, pagingQuery } from './helpers';
import { ownerRepoIdParams, ownerRepoIndexParams, ownerRepoIndexWith, pathNumber, type IndexParams, type OwnerRepo } from './issue-helpers';
import { changeCtx, PULLS_CHANGE, PULLS_READ } from '../plugins/repo-assignment';
import { exposeHeader } from '../plugins/paging';
import type { CreateReviewInput } from '../services/pulls/reviews';

type ReviewParams = IndexParams & { id: string };

const reviewParams = ownerRepoIndexWith('id');

const CreatePullReviewOptions = obj({
  event: str,
  body: str,
  commit_id: str,
  comments: {
    type: 'array',
    items: obj({ path: str, body: str, old_position: int, new_position: int }),
  },
});

const PullReviewRequestOptions = obj({ reviewers: { ...strList, nullable: true }, team_reviewers: { ...strList, nullable: true } });

export default async function pullReviewRoutes(app: FastifyInstance) {
  const { pulls, reviews, reviewRequests } = app.services.pulls;
  const tags = ['repository'];
  const read = { scopes: ['repository' as const], repo: PULLS_READ };
  // Gitea checks no archived state on reviews and review requests (only comments' routes do).
  const change = { auth: 'required' as const, scopes: ['repository' as const], repo: { ...PULLS_CHANGE, archived: 'allow' as const } };
  const changeUnarchived = { auth: 'required' as const, scopes: ['repository' as const], repo: PULLS_CHANGE };

  const prOf = async (rc: { repo: { id: number } }, index: string) => pulls.byIndex(rc.repo.id, pathNumber(index));

  app.get<{ Params: IndexParams; Querystring: { page?: number; limit?: number } }>(
    '/repos/:owner/:repo/pulls/:index/reviews',
    {
      config: read,
      schema: { tags, operationId: 'repoListPullReviews', summary: 'List all reviews for a pull request', params: ownerRepoIndexParams, querystring: obj({ ...pagingQuery }), response: { 200: listOf('PullReview'), ...errors(404) } },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const pr = await prOf(rc, request.params.index);
      const p = paging(app, request);
      const { data, total } = await reviews.list(rc, pr, p.skip, p.take);
      // Gitea sends the count only here, no Link.
      reply.header('X-Total-Count', String(total));
      exposeHeader(reply, 'X-Total-Count');
      return data;
    },
  );

  app.post<{ Params: IndexParams; Body: CreateReviewInput }>(
    '/repos/:owner/:repo/pulls/:index/reviews',
    {
      config: change,
      schema: { tags, operationId: 'repoCreatePullReview', summary: 'Create a review to an pull request', params: ownerRepoIndexParams, body: CreatePullReviewOptions, response: { 200: ref('PullReview'), ...errors(404, 422) } },
    },
    async (request) => {
      const rc = changeCtx(request);
      return reviews.create(rc, await prOf(rc, request.params.index), request.body ?? {});
    },
  );

  app.get<{ Params: ReviewParams }>(
    '/repos/:owner/:repo/pulls/:index/reviews/:id',
    { config: read, schema: { tags, operationId: 'repoGetPullReview', summary: 'Get a specific review for a pull request', params: reviewParams, response: { 200: ref('PullReview'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      const pr = await prOf(rc, request.params.index);
      return reviews.one(rc, pr, await reviews.byId(rc, pr, pathNumber(request.params.id)));
    },
  );

  app.post<{ Params: ReviewParams; Body: { event?: string; body?: string } }>(
    '/repos/:owner/:repo/pulls/:index/reviews/:id',
    {
      config: change,
      schema: { tags, operationId: 'repoSubmitPullReview', summary: 'Submit a pending review to an pull request', params: reviewParams, body: obj({ event: str, body: str }), response: { 200: ref('PullReview'), ...errors(404, 422) } },
    },
    async (request) => {
      const rc = changeCtx(request);
      const pr = await prOf(rc, request.params.index);
      return reviews.submit(rc, pr, await reviews.byId(rc, pr, pathNumber(request.params.id)), request.body ?? {});
    },
  );

  app.delete<{ Params: ReviewParams }>(
    '/repos/:owner/:repo/pulls/:index/reviews/:id',
    { config: change, schema: { tags, operationId: 'repoDeletePullReview', summary: 'Delete a specific review from a pull request', params: reviewParams, response: { 204: { type: 'null' }, ...errors(403, 404) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      const pr = await prOf(rc, request.params.index);
      await reviews.delete(rc, pr, await reviews.byId(rc, pr, pathNumber(request.params.id)));
      return reply.code(204).send();
    },
  );

  app.get<{ Params: ReviewParams }>(
    '/repos/:owner/:repo/pulls/:index/reviews/:id/comments',
    { config: read, schema: { tags, operationId: 'repoGetPullReviewComments', summary: 'Get a specific review for a pull request', params: reviewParams, response: { 200: listOf('PullReviewComment'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      const pr = await prOf(rc, request.params.index);
      return reviews.comments(rc, pr, await reviews.byId(rc, pr, pathNumber(request.params.id)));
    },
  );

  for (const [suffix, dismiss] of [['dismissals', true], ['undismissals', false]] as const) {
    app.post<{ Params: ReviewParams; Body: { message?: string; priors?: boolean } }>(
      `/repos/:owner/:repo/pulls/:index/reviews/:id/${suffix}`,
      {
        config: change,
        schema: {
          tags,
          operationId: dismiss ? 'repoDismissPullReview' : 'repoUnDismissPullReview',
          summary: dismiss ? 'Dismiss a review for a pull request' : 'Cancel to dismiss a review for a pull request',
          params: reviewParams,
          ...(dismiss ? { body: obj({ message: str, priors: bool }) } : {}),
          response: { 200: ref('PullReview'), ...errors(403, 404, 422) },
        },
      },
      async (request) => {
        const rc = changeCtx(request);
        // Gitea asks for repository administration before it looks at the review.
        if (!rc.isAdmin) throw new PermissionDeniedError('Must be repo admin');
        const pr = await prOf(rc, request.params.index);
        const review = await reviews.byId(rc, pr, pathNumber(request.params.id));
        return reviews.dismiss(rc, pr, review, dismiss, dismiss ? (request.body?.message ?? '') : '', dismiss ? Boolean(request.body?.priors) : false);
      },
    );
  }

  for (const method of ['POST', 'DELETE'] as const) {
    app.route<{ Params: IndexParams; Body: { reviewers?: string[]; team_reviewers?: string[] } }>({
      method,
      url: '/repos/:owner/:repo/pulls/:index/requested_reviewers',
      config: change,
      schema: {
        tags,
        operationId: method === 'POST' ? 'repoCreatePullReviewRequests' : 'repoDeletePullReviewRequests',
        summary: method === 'POST' ? 'create review requests for a pull request' : 'cancel review requests for a pull request',
        params: ownerRepoIndexParams,
        body: PullReviewRequestOptions,
        response: method === 'POST' ? { 201: listOf('PullReview'), ...errors(403, 404, 422) } : { 204: { type: 'null' }, ...errors(403, 404, 422) },
      },
      handler: async (request, reply) => {
        const rc = changeCtx(request);
        const pr = await prOf(rc, request.params.index);
        const added = await reviewRequests.change(rc, pr, request.body ?? {}, method === 'POST');
        if (method === 'DELETE') return reply.code(204).send();
        return reply.code(201).send(await reviews.json(rc.repo, pr, added, rc.doer));
      },
    });
  }

  for (const [suffix, resolve] of [['resolve', true], ['unresolve', false]] as const) {
    app.post<{ Params: OwnerRepo & { id: string } }>(
      `/repos/:owner/:repo/pulls/comments/:id/${suffix}`,
      {
        config: changeUnarchived,
        schema: {
          tags,
          operationId: resolve ? 'repoResolvePullReviewComment' : 'repoUnresolvePullReviewComment',
          summary: resolve ? 'Resolve a pull request review comment' : 'Unresolve a pull request review comment',
          params: ownerRepoIdParams,
          response: { 204: { type: 'null' }, ...errors(400, 403, 404) },
        },
      },
      async (request, reply) => {
        await reviews.resolve(changeCtx(request), pathNumber(request.params.id), resolve);
        return reply.code(204).send();
      },
    );
  }

  app.post<{ Params: ReviewParams; Body: { body: string } }>(
    '/repos/:owner/:repo/pulls/:index/comments/:id/replies',
    {
      config: changeUnarchived,
      schema: {
        tags,
        operationId: 'repoCreatePullReviewCommentReply',
        summary: 'Reply to a pull request review comment',
        params: reviewParams,
        body: obj({ body: str }, ['body']),
        response: { 201: ref('PullReviewComment'), ...errors(400, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const pr = await prOf(rc, request.params.index);
      return reply.code(201).send(await reviews.reply(rc, pr, pathNumber(request.params.id), request.body.body));
    },
  );
}
