/** Labels of repositories (scope issue) and organizations (scope organization). */
import { ORG_OWNER, ORG_READ } from '../plugins/org-assignment';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { bool, int, listOf, obj, orgParams, ownerRepoParams, ref, str } from '../schemas';
import type { LabelInput } from '../services/issues/labels';
import type { User } from '../services/records';
import { doerOf, errors, paging, pagingQuery } from './helpers';
import { ownerRepoIdParams, ownerRepoIndexParams, ownerRepoIndexWith, pathNumber, writerOnly, type IndexParams, type OwnerRepo } from './issue-helpers';
import { changeCtx, ISSUES_CHANGE, ISSUES_READ } from '../plugins/repo-assignment';
import { setPagingHeaders, setTotalCount } from '../plugins/paging';

const CreateLabelOption = obj({ name: str, color: str, description: str, exclusive: bool, is_archived: bool }, ['name', 'color']);
const EditLabelOption = obj({ name: str, color: str, description: str, exclusive: bool, is_archived: bool });
const orgIdParams = obj({ org: str, id: str }, ['org', 'id']);

export default async function labelRoutes(app: FastifyInstance) {
  const { labels } = app.services.tracker;
  const { orgs, permissions } = app.services;
  const tags = ['issue'];
  const read = { scopes: ['issue' as const], repo: ISSUES_READ };
  const write = { auth: 'required' as const, scopes: ['issue' as const], repo: ISSUES_CHANGE };

  app.get<{ Params: OwnerRepo; Querystring: { sort?: string } }>(
    '/repos/:owner/:repo/labels',
    { config: read, schema: { tags, operationId: 'issueListLabels', summary: "Get all of a repository's labels", params: ownerRepoParams, querystring: obj({ sort: str, ...pagingQuery }), response: { 200: listOf('Label'), ...errors(404) } } },
    async (request, reply) => {
      const rc = request.repoCtx;
      const p = paging(app, request);
      const { data, total } = await labels.list({ repo: rc.repo }, request.query.sort, p.skip, p.take);
      setTotalCount(reply, total);
      return data;
    },
  );

  app.post<{ Params: OwnerRepo; Body: LabelInput }>(
    '/repos/:owner/:repo/labels',
    { config: write, schema: { tags, operationId: 'issueCreateLabel', summary: 'Create a label', params: ownerRepoParams, body: CreateLabelOption, response: { 201: ref('Label'), ...errors(401, 403, 404, 422, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      writerOnly(rc);
      return reply.code(201).send(await labels.create({ repo: rc.repo }, request.body));
    },
  );

  app.get<{ Params: OwnerRepo & { id: string } }>(
    '/repos/:owner/:repo/labels/:id',
    { config: read, schema: { tags, operationId: 'issueGetLabel', summary: 'Get a single label', params: ownerRepoIdParams, response: { 200: ref('Label'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      return labels.json(await labels.find({ repo: rc.repo }, pathNumber(request.params.id)), { repo: rc.repo });
    },
  );

  app.patch<{ Params: OwnerRepo & { id: string }; Body: LabelInput }>(
    '/repos/:owner/:repo/labels/:id',
    { config: write, schema: { tags, operationId: 'issueEditLabel', summary: 'Update a label', params: ownerRepoIdParams, body: EditLabelOption, response: { 200: ref('Label'), ...errors(401, 403, 404, 422, 423) } } },
    async (request) => {
      const rc = changeCtx(request);
      writerOnly(rc);
      return labels.edit({ repo: rc.repo }, pathNumber(request.params.id), request.body ?? {});
    },
  );

  app.delete<{ Params: OwnerRepo & { id: string } }>(
    '/repos/:owner/:repo/labels/:id',
    { config: write, schema: { tags, operationId: 'issueDeleteLabel', summary: 'Delete a label', params: ownerRepoIdParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      writerOnly(rc);
      await labels.delete({ repo: rc.repo }, pathNumber(request.params.id));
      return reply.code(204).send();
    },
  );

  // Labels on an issue: list, add, replace, remove one, clear (writers change them; Gitea answers 200 with the list).
  const IssueLabelsOption = obj({ labels: { type: 'array', items: { anyOf: [int, { type: 'string' }] } } });

  app.get<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index/labels',
    { config: read, schema: { tags, operationId: 'issueGetLabels', summary: "Get an issue's labels", params: ownerRepoIndexParams, response: { 200: listOf('Label'), ...errors(404) } } },
    async (request) => {
      const rc = request.repoCtx;
      const issue = await app.services.tracker.issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      return labels.ofIssue(rc.repo, issue.id);
    },
  );

  for (const method of ['POST', 'PUT'] as const) {
    app.route<{ Params: IndexParams; Body: { labels?: (number | string)[] } }>({
      method,
      url: '/repos/:owner/:repo/issues/:index/labels',
      config: write,
      schema: {
        tags,
        operationId: method === 'POST' ? 'issueAddLabel' : 'issueReplaceLabels',
        summary: method === 'POST' ? 'Add a label to an issue' : "Replace an issue's labels",
        params: ownerRepoIndexParams,
        body: IssueLabelsOption,
        response: { 200: listOf('Label'), ...errors(401, 403, 404, 422, 423) },
      },
      handler: async (request) => {
        const rc = changeCtx(request);
        const issue = await app.services.tracker.issues.byIndex(rc.repo.id, pathNumber(request.params.index));
        writerOnly(rc);
        const wanted = await labels.resolve(rc.repo, request.body?.labels ?? []);
        return method === 'POST' ? labels.addToIssue(rc.doer, rc.repo, issue, wanted) : labels.replaceOnIssue(rc.doer, rc.repo, issue, wanted);
      },
    });
  }

  app.delete<{ Params: IndexParams & { id?: string } }>(
    '/repos/:owner/:repo/issues/:index/labels/:id',
    { config: write, schema: { tags, operationId: 'issueRemoveLabel', summary: 'Remove a label from an issue', params: ownerRepoIndexWith('id'), response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await app.services.tracker.issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      writerOnly(rc);
      await labels.removeFromIssue(rc.doer, rc.repo, issue, pathNumber(request.params.id ?? ''));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: IndexParams }>(
    '/repos/:owner/:repo/issues/:index/labels',
    { config: write, schema: { tags, operationId: 'issueClearLabels', summary: "Remove all labels from an issue", params: ownerRepoIndexParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      const issue = await app.services.tracker.issues.byIndex(rc.repo.id, pathNumber(request.params.index));
      writerOnly(rc);
      await labels.removeFromIssue(rc.doer, rc.repo, issue, null);
      return reply.code(204).send();
    },
  );

  // Organization labels.
  const orgTags = ['organization'];

  app.get<{ Params: { org: string }; Querystring: { sort?: string } }>(
    '/orgs/:org/labels',
    { config: { scopes: ['organization'], org: ORG_READ }, schema: { tags: orgTags, operationId: 'orgListLabels', summary: "List an organization's labels", params: orgParams, querystring: obj({ sort: str, ...pagingQuery }), response: { 200: listOf('Label'), ...errors(404) } } },
    async (request, reply) => {
      const { org } = request.orgCtx;
      const p = paging(app, request);
      const { data, total } = await labels.list({ org }, request.query.sort, p.skip, p.take);
      setPagingHeaders(request, reply, total, p, app.config.rootUrl);
      return data;
    },
  );

  app.post<{ Params: { org: string }; Body: LabelInput }>(
    '/orgs/:org/labels',
    { config: { auth: 'required', scopes: ['organization'], org: ORG_OWNER }, schema: { tags: orgTags, operationId: 'orgCreateLabel', summary: 'Create a label for an organization', params: orgParams, body: CreateLabelOption, response: { 201: ref('Label'), ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      const { org } = request.orgCtx;
      return reply.code(201).send(await labels.create({ org }, request.body));
    },
  );

  app.get<{ Params: { org: string; id: string } }>(
    '/orgs/:org/labels/:id',
    { config: { auth: 'required', scopes: ['organization'], org: ORG_READ }, schema: { tags: orgTags, operationId: 'orgGetLabel', summary: 'Get a single label', params: orgIdParams, response: { 200: ref('Label'), ...errors(401, 404) } } },
    async (request) => {
      const { org } = request.orgCtx;
      return labels.json(await labels.find({ org }, pathNumber(request.params.id)), { org });
    },
  );

  app.patch<{ Params: { org: string; id: string }; Body: LabelInput }>(
    '/orgs/:org/labels/:id',
    { config: { auth: 'required', scopes: ['organization'], org: ORG_OWNER }, schema: { tags: orgTags, operationId: 'orgEditLabel', summary: 'Update a label', params: orgIdParams, body: EditLabelOption, response: { 200: ref('Label'), ...errors(401, 403, 404, 422) } } },
    async (request) => {
      const { org } = request.orgCtx;
      return labels.edit({ org }, pathNumber(request.params.id), request.body ?? {});
    },
  );

  app.delete<{ Params: { org: string; id: string } }>(
    '/orgs/:org/labels/:id',
    { config: { auth: 'required', scopes: ['organization'], org: ORG_OWNER }, schema: { tags: orgTags, operationId: 'orgDeleteLabel', summary: 'Delete a label', params: orgIdParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const { org } = request.orgCtx;
      await labels.delete({ org }, pathNumber(request.params.id));
      return reply.code(204).send();
    },
  );
}
