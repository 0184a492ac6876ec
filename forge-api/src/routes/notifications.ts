/**
 * Notifications (scope notification, signed in): the caller's threads and a repository's,
 * marking (PUT answers 205 with the changed threads), one thread (GET, PATCH 205), the unread
 * count. Threads of repositories the caller cannot read are never shown.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MalformedError, NotFoundError, ValidationError } from '../services/errors';
import { setTotalCount } from '../plugins/paging';
import { int, listOf, obj, ownerRepoParams, ref, str, strList } from '../schemas';
import { NotificationStatus, parseStatuses, parseSubjects, parseTargetStatus, type ThreadFilter } from '../services/issues/notifications';
import { doerOf, errors, paging, pagingQuery } from './helpers';
import { many, type OwnerRepo } from './issue-helpers';

interface ListQuery {
  all?: boolean | string;
  'status-types'?: string[];
  'subject-type'?: string[];
  since?: string;
  before?: string;
}

interface MarkQuery {
  all?: string;
  last_read_at?: string;
  'status-types'?: string[];
  'to-status'?: string;
}

const listQuery = obj({ all: str, 'status-types': strList, 'subject-type': strList, since: str, before: str, ...pagingQuery });
const markQuery = obj({ all: str, last_read_at: str, 'status-types': strList, 'to-status': str });

/** A time from the query: unparsable is a binding error (422), or malformed (400) where Gitea parses it itself. */
function time(value: string | undefined, field: string, parsedByHandler = false): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw parsedByHandler ? new MalformedError(`invalid ${field}: ${value}`) : new ValidationError(`[${field}]: DateTime`);
  return d;
}

function listFilter(q: ListQuery): ThreadFilter {
  return {
    all: q.all === true || q.all === 'true',
    statuses: parseStatuses(many(q['status-types']), [NotificationStatus.Unread, NotificationStatus.Pinned]),
    subjects: parseSubjects(many(q['subject-type'])),
    since: time(q.since, 'Since'),
    before: time(q.before, 'Before'),
  };
}

export default async function notificationRoutes(app: FastifyInstance) {
  const { notifications } = app.services.tracker;
  const tags = ['notification'];
  const config = { auth: 'required' as const, scopes: ['notification' as const] };
  // Gitea 1.27 closes the user's mailbox to public-only tokens (it mixes public and private
  // repositories); a repository's notifications stay open for public repositories.
  const mailbox = { ...config, rejectPublicOnly: true };
  // A repository's threads: the repository of the path, readable by the caller (plugins/repo-assignment.ts).
  const ofRepo = { ...config, repo: { access: 'read' as const } };


  async function list(request: FastifyRequest<{ Querystring: ListQuery }>, reply: import('fastify').FastifyReply, repo?: number) {
    const doer = doerOf(request);
    const p = paging(app, request);
    const { data, total } = await notifications.list(doer, { ...listFilter(request.query), repoId: repo }, p.skip, p.take);
    setTotalCount(reply, total);
    return data;
  }

  async function mark(request: FastifyRequest<{ Querystring: MarkQuery }>, reply: import('fastify').FastifyReply, repo?: number) {
    const doer = doerOf(request);
    const q = request.query;
    const lastReadAt = time(q.last_read_at, 'last_read_at', true);
    const all = q.all === 'true';
    const data = await notifications.markAll(
      doer,
      { all, statuses: parseStatuses(many(q['status-types']), [1]), subjects: [], repoId: repo, lastReadAt },
      parseTargetStatus(q['to-status']),
    );
    return reply.code(205).send(data);
  }

  app.get<{ Querystring: ListQuery }>(
    '/notifications',
    { config: mailbox, schema: { tags, operationId: 'notifyGetList', summary: 'List users\'s notification threads', querystring: listQuery, response: { 200: listOf('NotificationThread'), ...errors(401, 403, 422) } } },
    (request, reply) => list(request, reply),
  );

  app.put<{ Querystring: MarkQuery }>(
    '/notifications',
    { config: mailbox, schema: { tags, operationId: 'notifyReadList', summary: 'Mark notification threads as read, pinned or unread', querystring: markQuery, response: { 205: listOf('NotificationThread'), ...errors(400, 401, 403) } } },
    (request, reply) => mark(request, reply),
  );

  app.get(
    '/notifications/new',
    { config: mailbox, schema: { tags, operationId: 'notifyNewAvailable', summary: 'Check if unread notifications exist', response: { 200: obj({ new: int }), ...errors(401, 403) } } },
    async (request) => ({ new: await notifications.newCount(doerOf(request)) }),
  );

  const threadParams = obj({ id: str }, ['id']);
  const threadId = (id: string) => {
    if (!/^\d{1,15}$/.test(id)) throw new NotFoundError('not found', [`notification does not exist [id: ${id}]`]);
    return Number(id);
  };

  app.get<{ Params: { id: string } }>(
    '/notifications/threads/:id',
    { config: mailbox, schema: { tags, operationId: 'notifyGetThread', summary: 'Get notification thread by ID', params: threadParams, response: { 200: ref('NotificationThread'), ...errors(401, 403, 404) } } },
    async (request) => notifications.threadJson(doerOf(request), threadId(request.params.id)),
  );

  app.patch<{ Params: { id: string }; Querystring: { 'to-status'?: string } }>(
    '/notifications/threads/:id',
    {
      config: mailbox,
      schema: { tags, operationId: 'notifyReadThread', summary: 'Mark notification thread as read by ID', params: threadParams, querystring: obj({ 'to-status': str }), response: { 205: ref('NotificationThread'), ...errors(401, 403, 404) } },
    },
    async (request, reply) => reply.code(205).send(await notifications.markThread(doerOf(request), threadId(request.params.id), parseTargetStatus(request.query['to-status']))),
  );

  app.get<{ Params: OwnerRepo; Querystring: ListQuery }>(
    '/repos/:owner/:repo/notifications',
    {
      config: ofRepo,
      schema: { tags, operationId: 'notifyGetRepoList', summary: 'List users\'s notification threads on a specific repo', params: ownerRepoParams, querystring: listQuery, response: { 200: listOf('NotificationThread'), ...errors(401, 403, 404, 422) } },
    },
    async (request, reply) => list(request, reply, request.repoCtx.repo.id),
  );

  app.put<{ Params: OwnerRepo; Querystring: MarkQuery }>(
    '/repos/:owner/:repo/notifications',
    {
      config: ofRepo,
      schema: { tags, operationId: 'notifyReadRepoList', summary: 'Mark notification threads as read, pinned or unread on a specific repo', params: ownerRepoParams, querystring: markQuery, response: { 205: listOf('NotificationThread'), ...errors(400, 401, 403, 404) } },
    },
    async (request, reply) => mark(request, reply, request.repoCtx.repo.id),
  );
}
