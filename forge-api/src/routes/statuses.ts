/**
 * Commit statuses: report one (writers of the code), list them per commit id or per ref, and
 * the combined status of a ref. `/commits/{ref}/status(es)` take refs with slashes, as Gitea.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CODE_READ, CODE_WRITE, changeCtx } from '../plugins/repo-assignment';
import { obj, ownerRepoParams, ref, str, listOf, int } from '../schemas';
import { NotFoundError } from '../services/errors';
import { COMMIT_STATUS_STATES, type CreateStatusInput } from '../services/git-data/statuses';
import { errors, paging, sendPage } from './helpers';

type OwnerRepo = { owner: string; repo: string };
type ListQuery = { sort?: string; state?: string; page?: number; limit?: number };

const listQuery = obj({
  sort: { type: 'string', description: 'type of sort: oldest, recentupdate, leastupdate, leastindex, highestindex' },
  state: { type: 'string', description: 'type of state: pending, success, error, failure, warning' },
  page: int,
  limit: int,
});

const CreateStatusOption = obj(
  { state: { type: 'string', enum: [...COMMIT_STATUS_STATES] }, target_url: str, description: str, context: str },
  ['state'],
);

export default async function statusRoutes(app: FastifyInstance) {
  const statuses = app.services.commitStatuses;
  const tags = ['repository'];
  const read = { scopes: ['repository' as const], repo: CODE_READ };

  app.post<{ Params: OwnerRepo & { sha: string }; Body: CreateStatusInput }>(
    '/repos/:owner/:repo/statuses/:sha',
    {
      config: { auth: 'required', scopes: ['repository'], repo: CODE_WRITE },
      schema: {
        tags,
        operationId: 'repoCreateStatus',
        summary: 'Create a commit status',
        params: obj({ owner: str, repo: str, sha: str }, ['owner', 'repo', 'sha']),
        body: CreateStatusOption,
        response: { 201: ref('CommitStatus'), ...errors(400, 401, 403, 404, 422, 423) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      return reply.code(201).send(await statuses.create(rc.doer, rc.repo, request.params.sha, request.body));
    },
  );

  const list = async (request: FastifyRequest<{ Querystring: ListQuery }>, reply: FastifyReply, sha: string) => {
    const p = paging(app, request);
    const { data, total } = await statuses.list(request.repoCtx.repo, sha, { sort: request.query.sort?.trim(), state: request.query.state?.trim(), skip: p.skip, take: p.take });
    return sendPage(app, request, reply, data, total, p);
  };

  app.get<{ Params: OwnerRepo & { sha: string }; Querystring: ListQuery }>(
    '/repos/:owner/:repo/statuses/:sha',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoListStatuses',
        summary: "Get a commit's statuses",
        params: obj({ owner: str, repo: str, sha: str }, ['owner', 'repo', 'sha']),
        querystring: listQuery,
        response: { 200: listOf('CommitStatus'), ...errors(400, 404) },
      },
    },
    async (request, reply) => list(request, reply, request.params.sha),
  );

  const byRef = async (request: FastifyRequest<{ Querystring: ListQuery }>, reply: FastifyReply, refName: string, what: 'status' | 'statuses') => {
    const rc = request.repoCtx;
    const sha = await statuses.resolveRef(rc.repo, refName);
    if (what === 'statuses') return list(request, reply, sha);
    const p = paging(app, request);
    const { json, total } = await statuses.combined(rc.repo, sha, app.services.convert.repo(rc.repo, await app.services.permissions.repoModes(rc.doer, rc.repo, rc.mode)), p.skip, p.take);
    sendPage(app, request, reply, [], total, p);
    return json;
  };
  const refParams = obj({ owner: str, repo: str, ref: str }, ['owner', 'repo', 'ref']);

  app.get<{ Params: OwnerRepo & { ref: string }; Querystring: ListQuery }>(
    '/repos/:owner/:repo/commits/:ref/status',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetCombinedStatusByRef',
        summary: "Get a commit's combined status, by branch/tag/commit reference",
        params: refParams,
        querystring: obj({ page: int, limit: int }),
        response: { 200: ref('CombinedStatus'), ...errors(400, 404) },
      },
    },
    async (request, reply) => byRef(request, reply, request.params.ref, 'status'),
  );

  app.get<{ Params: OwnerRepo & { ref: string }; Querystring: ListQuery }>(
    '/repos/:owner/:repo/commits/:ref/statuses',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoListStatusesByRef',
        summary: "Get a commit's statuses, by branch/tag/commit reference",
        params: refParams,
        querystring: listQuery,
        response: { 200: listOf('CommitStatus'), ...errors(400, 404) },
      },
    },
    async (request, reply) => byRef(request, reply, request.params.ref, 'statuses'),
  );

  // The same two for refs holding slashes (feature/x), which one path segment cannot match;
  // declared once above, so this route stays out of the OpenAPI document.
  app.get<{ Params: OwnerRepo & { '*': string }; Querystring: ListQuery }>(
    '/repos/:owner/:repo/commits/*',
    {
      config: read,
      schema: {
        hide: true,
        params: obj({ owner: str, repo: str, '*': str }, ['owner', 'repo', '*']),
        querystring: listQuery,
        response: { 200: { anyOf: [ref('CombinedStatus'), listOf('CommitStatus')] }, ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      const m = /^(.*)\/(status|statuses)$/.exec(request.params['*']);
      if (!m) throw new NotFoundError();
      return byRef(request, reply, m[1], m[2] as 'status' | 'statuses');
    },
  );
}
