/** Milestones of a repository (scope issue): list, create, get, edit, delete by id or name. */
import type { FastifyInstance } from 'fastify';
import { listOf, obj, ownerRepoParams, ref, str } from '../schemas';
import type { MilestoneInput } from '../services/issues/milestones';
import { errors, paging, pagingQuery } from './helpers';
import { ownerRepoIdParams, writerOnly, type OwnerRepo } from './issue-helpers';
import { changeCtx, ISSUES_CHANGE, ISSUES_READ } from '../plugins/repo-assignment';
import { setPagingHeaders } from '../plugins/paging';

const nullableTime = { type: ['string', 'null'], format: 'date-time' };
const CreateMilestoneOption = obj({ title: str, description: str, due_on: nullableTime, state: { type: 'string', enum: ['open', 'closed'] } }, ['title']);
const EditMilestoneOption = obj({ title: str, description: str, due_on: nullableTime, state: str });

export default async function milestoneRoutes(app: FastifyInstance) {
  const { milestones } = app.services.tracker;
  const tags = ['issue'];
  const read = { scopes: ['issue' as const], repo: ISSUES_READ };
  const write = { auth: 'required' as const, scopes: ['issue' as const], repo: ISSUES_CHANGE };

  app.get<{ Params: OwnerRepo; Querystring: { state?: string; name?: string } }>(
    '/repos/:owner/:repo/milestones',
    {
      config: read,
      schema: { tags, operationId: 'issueGetMilestonesList', summary: 'Get all of a repository\'s opened milestones', params: ownerRepoParams, querystring: obj({ state: str, name: str, ...pagingQuery }), response: { 200: listOf('Milestone'), ...errors(404) } },
    },
    async (request, reply) => {
      const rc = request.repoCtx;
      const p = paging(app, request);
      const { data, total } = await milestones.list(rc, request.query.state, request.query.name, p.skip, p.take);
      setPagingHeaders(request, reply, total, p, app.config.rootUrl);
      return data;
    },
  );

  app.post<{ Params: OwnerRepo; Body: MilestoneInput }>(
    '/repos/:owner/:repo/milestones',
    { config: write, schema: { tags, operationId: 'issueCreateMilestone', summary: 'Create a milestone', params: ownerRepoParams, body: CreateMilestoneOption, response: { 201: ref('Milestone'), ...errors(401, 403, 404, 422, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      writerOnly(rc);
      return reply.code(201).send(await milestones.create(rc, request.body));
    },
  );

  app.get<{ Params: OwnerRepo & { id: string } }>(
    '/repos/:owner/:repo/milestones/:id',
    { config: read, schema: { tags, operationId: 'issueGetMilestone', summary: 'Get a milestone', params: ownerRepoIdParams, response: { 200: ref('Milestone'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      return app.services.tracker.convert.milestone(await milestones.find(rc, request.params.id));
    },
  );

  app.patch<{ Params: OwnerRepo & { id: string }; Body: MilestoneInput }>(
    '/repos/:owner/:repo/milestones/:id',
    { config: write, schema: { tags, operationId: 'issueEditMilestone', summary: 'Update a milestone', params: ownerRepoIdParams, body: EditMilestoneOption, response: { 200: ref('Milestone'), ...errors(401, 403, 404, 422, 423) } } },
    async (request) => {
      const rc = changeCtx(request);
      writerOnly(rc);
      return milestones.edit(rc, request.params.id, request.body ?? {});
    },
  );

  app.delete<{ Params: OwnerRepo & { id: string } }>(
    '/repos/:owner/:repo/milestones/:id',
    { config: write, schema: { tags, operationId: 'issueDeleteMilestone', summary: 'Delete a milestone', params: ownerRepoIdParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      writerOnly(rc);
      await milestones.delete(rc, request.params.id);
      return reply.code(204).send();
    },
  );
}
