/**
 * Repository topics (/repos/{owner}/{repo}/topics) and GET /topics/search, with Gitea's
 * permissions: any reader lists, repository admins change. Gitea answers invalid topics with
 * its own 422 body ({invalidTopics, message}, no url), so those answers are sent here.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { dateTime, int, list, obj, ownerRepoParams, str, strList } from '../schemas';
import { isValidTopic, MAX_TOPICS_PER_REPO, normalizeTopic, sanitizeTopics } from '../services/topics';
import { fmtTime } from '../services/convert';
import { REPO_ADMIN } from '../plugins/repo-assignment';
import { setTotalCount } from '../plugins/paging';
import { errors, paging, pagingQuery } from './helpers';

const topicParams = obj({ owner: str, repo: str, topic: str }, ['owner', 'repo', 'topic']);
const invalidTopics = obj({ invalidTopics: {}, message: str });
const TopicNames = obj({ topics: strList });
const TopicResponse = obj({ id: int, topic_name: str, repo_count: int, created: dateTime, updated: dateTime });

function refuse(reply: FastifyReply, body: { invalidTopics?: string | string[] | null; message: string }) {
  return reply.code(422).send(body);
}

export default async function topicRoutes(app: FastifyInstance) {
  const { topics } = app.services;
  const tags = ['repository'];
  const scopes = ['repository' as const];
  const read = { scopes, repo: { access: 'read' as const } };
  const admin = { auth: 'required' as const, scopes, repo: REPO_ADMIN };
  // Gitea checks reqAdmin before reqToken on /topics/{topic}: anonymous callers get its 403.
  const adminOfTopic = { scopes, repo: { ...REPO_ADMIN, anonymous: 'forbidden' as const } };

  app.get<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo/topics',
    {
      config: read,
      schema: { tags, operationId: 'repoListTopics', summary: 'Get list of topics that a repository has', params: ownerRepoParams, querystring: obj({ ...pagingQuery }), response: { 200: TopicNames, ...errors(404) } },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { names, total } = await topics.listForRepo(request.repoCtx.repo.id, p.skip, p.take);
      setTotalCount(reply, total);
      return { topics: names };
    },
  );

  app.put<{ Params: { owner: string; repo: string }; Body: { topics?: string[] } }>(
    '/repos/:owner/:repo/topics',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'repoUpdateTopics',
        summary: 'Replace list of topics for a repository',
        params: ownerRepoParams,
        body: obj({ topics: strList }),
        response: { 204: { type: 'null' }, 422: invalidTopics, ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { valid, invalid } = sanitizeTopics(request.body?.topics ?? []);
      if (valid.length > MAX_TOPICS_PER_REPO) return refuse(reply, { invalidTopics: null, message: 'Exceeding maximum number of topics per repo' });
      if (invalid.length > 0) return refuse(reply, { invalidTopics: invalid, message: 'Topic names are invalid' });
      await topics.replace(request.repoCtx.repo.id, valid);
      return reply.code(204).send();
    },
  );

  app.put<{ Params: { owner: string; repo: string; topic: string } }>(
    '/repos/:owner/:repo/topics/:topic',
    {
      config: adminOfTopic,
      schema: { tags, operationId: 'repoAddTopic', summary: 'Add a topic to a repository', params: topicParams, response: { 204: { type: 'null' }, 422: invalidTopics, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      const name = normalizeTopic(request.params.topic);
      if (!isValidTopic(name)) return refuse(reply, { invalidTopics: name, message: 'Topic name is invalid' });
      const repoId = request.repoCtx.repo.id;
      if ((await topics.countForRepo(repoId)) >= MAX_TOPICS_PER_REPO) return refuse(reply, { message: 'Exceeding maximum allowed topics per repo.' });
      await topics.add(repoId, name);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { owner: string; repo: string; topic: string } }>(
    '/repos/:owner/:repo/topics/:topic',
    {
      config: adminOfTopic,
      schema: { tags, operationId: 'repoDeleteTopic', summary: 'Delete a topic from a repository', params: topicParams, response: { 204: { type: 'null' }, 422: invalidTopics, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      const name = normalizeTopic(request.params.topic);
      if (!isValidTopic(name)) return refuse(reply, { invalidTopics: name, message: 'Topic name is invalid' });
      await topics.remove(request.repoCtx.repo.id, name);
      return reply.code(204).send();
    },
  );

  app.get<{ Querystring: { q?: string } }>(
    '/topics/search',
    {
      config: { scopes },
      schema: { tags, operationId: 'topicSearch', summary: 'search topics via keyword', querystring: obj({ q: str, ...pagingQuery }), response: { 200: obj({ topics: list(TopicResponse) }), ...errors(403) } },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await topics.search(request.query.q ?? '', p.skip, p.take);
      setTotalCount(reply, total);
      return { topics: rows.map((t) => ({ id: t.id, topic_name: t.name, repo_count: t.repoCount, created: fmtTime(t.createdAt), updated: fmtTime(t.updatedAt) })) };
    },
  );
}
