/** Deploy keys of a repository: reqToken + reqAdmin, as Gitea. */
import type { FastifyInstance } from 'fastify';
import { changeCtx, REPO_ADMIN } from '../plugins/repo-assignment';
import { int, listOf, obj, ref, str } from '../schemas';
import type { DeployKeyRow } from '../services/deploy-keys';
import type { RepoWithOwner } from '../services/repos';
import type { User } from '../services/records';
import { fmtTime } from '../services/convert';
import { errors, paging, pagingQuery, sendPage } from './helpers';

type RepoParams = { owner: string; repo: string };
const idParams = obj({ owner: str, repo: str, id: int }, ['owner', 'repo', 'id']);

export default async function deployKeyRoutes(app: FastifyInstance) {
  const { convert, deployKeys } = app.services;
  const tags = ['repository'];
  const config = { auth: 'required' as const, scopes: ['repository' as const], repo: REPO_ADMIN };

  /** convert.ToDeployKey, plus the repository for a site admin or the repository's owner. */
  function json(key: DeployKeyRow, repo: RepoWithOwner, doer: User) {
    const base = `${app.config.rootUrl}api/v1/repos/${encodeURIComponent(repo.owner.name)}/${encodeURIComponent(repo.name)}/keys/`;
    const out: Record<string, unknown> = {
      id: key.id,
      key_id: key.keyId,
      key: key.content,
      url: `${base}${key.id}`,
      title: key.name,
      fingerprint: key.fingerprint,
      created_at: fmtTime(key.createdAt),
      read_only: key.mode === 1,
    };
    if (doer.isAdmin || doer.id === repo.ownerId) out.repository = convert.repo(repo, key.mode);
    return out;
  }

  app.get<{ Params: RepoParams; Querystring: { key_id?: number; fingerprint?: string } }>(
    '/repos/:owner/:repo/keys',
    {
      config,
      schema: {
        tags,
        operationId: 'repoListKeys',
        summary: "List a repository's keys",
        querystring: { type: 'object', properties: { key_id: int, fingerprint: str, ...pagingQuery } },
        response: { 200: listOf('DeployKey'), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const p = paging(app, request);
      const { rows, total } = await deployKeys.list(rc.repo, { keyId: request.query.key_id, fingerprint: request.query.fingerprint }, p.skip, p.take);
      return sendPage(app, request, reply, rows.map((k) => json(k, rc.repo, rc.doer)), total, p);
    },
  );

  app.post<{ Params: RepoParams; Body: { title: string; key: string; read_only?: boolean } }>(
    '/repos/:owner/:repo/keys',
    {
      config,
      schema: { tags, operationId: 'repoCreateKey', summary: 'Add a key to a repository', body: ref('CreateKeyOption'), response: { 201: ref('DeployKey'), ...errors(401, 403, 404, 422) } },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const key = await deployKeys.add(rc.doer, rc.repo, request.body);
      // Gitea answers the creation without the private part (no repository).
      const { repository: _r, ...body } = json(key, rc.repo, rc.doer);
      return reply.code(201).send(body);
    },
  );

  app.get<{ Params: RepoParams & { id: number } }>(
    '/repos/:owner/:repo/keys/:id',
    { config, schema: { tags, operationId: 'repoGetKey', summary: "Get a repository's key by id", params: idParams, response: { 200: ref('DeployKey'), ...errors(401, 403, 404) } } },
    async (request) => {
      const rc = changeCtx(request);
      return json(await deployKeys.get(rc.repo, request.params.id), rc.repo, rc.doer);
    },
  );

  app.delete<{ Params: RepoParams & { id: number } }>(
    '/repos/:owner/:repo/keys/:id',
    { config, schema: { tags, operationId: 'repoDeleteKey', summary: 'Delete a key from a repository', params: idParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      await deployKeys.remove(changeCtx(request).repo, request.params.id);
      return reply.code(204).send();
    },
  );
}
