/** Repositories: search, get, delete. (Creation lives with its owner: user, org, admin routes.) */
import type { FastifyInstance } from 'fastify';
import { InvalidError, isNotFound, PermissionDeniedError } from '../services/errors';
import { bool, int, obj, ownerRepoParams, ref, str } from '../schemas';
import { RepoService } from '../services/repos';
import { doerOf, errors, paging, pagingQuery, publicOnly } from './helpers';
import { dbId, setPagingHeaders } from '../plugins/paging';

interface SearchQuery {
  q?: string;
  topic?: boolean;
  includeDesc?: boolean;
  uid?: number;
  priority_owner_id?: number;
  team_id?: number;
  starredBy?: number;
  private?: boolean;
  is_private?: boolean;
  template?: boolean;
  archived?: boolean;
  mode?: string;
  exclusive?: boolean;
  sort?: string;
  order?: string;
}

export default async function repoRoutes(app: FastifyInstance) {
  const { convert, repos } = app.services;
  const tags = ['repository'];

  app.get<{ Querystring: SearchQuery }>(
    '/repos/search',
    {
      config: { scopes: ['repository'] },
      schema: {
        tags,
        operationId: 'repoSearch',
        summary: 'Search for repositories',
        querystring: obj({
          q: str,
          topic: bool,
          includeDesc: bool,
          uid: int,
          priority_owner_id: int,
          team_id: int,
          starredBy: int,
          private: bool,
          is_private: bool,
          template: bool,
          archived: bool,
          mode: str,
          exclusive: bool,
          sort: str,
          order: str,
          ...pagingQuery,
        }),
        response: { 200: ref('SearchResults'), ...errors(422) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      if (q.mode && !['fork', 'source', 'mirror', 'collaborative'].includes(q.mode)) throw new InvalidError(`Invalid search mode: "${q.mode}"`);
      if (q.order && !['asc', 'desc'].includes(q.order)) throw new InvalidError(`Invalid sort order: "${q.order}"`);
      if (q.sort && !RepoService.isValidSort(q.sort)) throw new InvalidError(`Invalid sort mode: "${q.sort}"`);
      const p = paging(app, request);
      if (q.starredBy) {
        // Stars arrive with a later issue: nobody has starred anything yet.
        setPagingHeaders(request, reply, 0, p, app.config.rootUrl);
        return { ok: true, data: [] };
      }
      const doer = request.doer;
      const { rows, total } = await repos.search(doer, {
        q: q.q,
        topicOnly: q.topic,
        includeDesc: q.includeDesc,
        uid: dbId(q.uid),
        priorityOwnerId: dbId(q.priority_owner_id),
        teamId: dbId(q.team_id),
        includePrivate: doer !== null && q.private !== false && !publicOnly(request),
        isPrivate: q.is_private,
        template: q.template,
        archived: q.archived,
        mode: q.mode,
        exclusive: q.exclusive,
        sort: q.sort,
        order: q.order,
        skip: p.skip,
        take: p.take,
      });
      const data = rows;
      const modes = await repos.accessModes(doer, data);
      setPagingHeaders(request, reply, total, p, app.config.rootUrl);
      return { ok: true, data: data.map((r, i) => convert.repo(r, modes[i])) };
    },
  );

  app.get<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo',
    {
      config: { scopes: ['repository'] },
      schema: { tags, operationId: 'repoGet', summary: 'Get a repository', params: ownerRepoParams, response: { 200: ref('Repository'), ...errors(404) } },
    },
    async (request, reply) => {
      const { owner, repo: name } = request.params;
      try {
        const { repo, mode } = await repos.getReadable(owner, name, request.doer);
        if (publicOnly(request) && repo.isPrivate) throw new PermissionDeniedError('token scope is limited to public repos');
        const transferJson = await app.services.transfers.transferJson(repo, (u) => convert.userPublic(u));
        return convert.repo({ ...(await app.services.forks.withParent(repo)), transferJson }, await app.services.permissions.repoModes(request.doer, repo, mode));
      } catch (err) {
        // A renamed owner keeps answering under its old name with a redirect (Gitea's 307).
        const target = isNotFound(err) ? await app.services.users.redirectTarget(owner) : null;
        if (!target) throw err;
        await repos.getReadable(target.name, name, request.doer);
        return reply.redirect(request.url.replace(`/repos/${owner}/`, `/repos/${encodeURIComponent(target.name)}/`), 307);
      }
    },
  );

  app.delete<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo',
    {
      config: { auth: 'required', scopes: ['repository'], repo: { access: 'read', archived: 'allow' } },
      schema: { tags, operationId: 'repoDelete', summary: 'Delete a repository', params: ownerRepoParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      const { repo, mode } = request.repoCtx;
      await repos.delete(doerOf(request), repo, mode);
      return reply.code(204).send();
    },
  );
}
