/**
 * The wiki API (/repos/{owner}/{repo}/wiki/...), with Gitea's middleware: the wiki unit
 * readable for all routes, reqRepoWriter(wiki) and not archived for changes. Page names are
 * taken from the raw request path, still escaped, as Gitea's PathParamRaw.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { int, list, obj, str } from '../schemas';
import { changeCtx, type RepoAssignment } from '../plugins/repo-assignment';
import { setPagingHeaders, setTotalCount } from '../plugins/paging';
import { webPathFromRequest } from '../services/wiki-names';
import { errors, pagingQuery } from './helpers';

const READ: RepoAssignment = { access: 'read', unit: 'wiki' };
const WRITE: RepoAssignment = { access: 'write', unit: 'wiki' };

const CommitUser = obj({ name: str, email: str, date: str });
const WikiCommit = obj({ sha: str, author: CommitUser, commiter: CommitUser, message: str });
const metaProps = { title: str, html_url: str, sub_url: str, last_commit: WikiCommit };
const WikiPageMeta = obj(metaProps);
const WikiPage = obj({ ...metaProps, content_base64: str, commit_count: int, sidebar: str, footer: str });
const WikiOptions = obj({ title: str, content_base64: str, message: str });

type P = { owner: string; repo: string; pageName?: string };
const params = (...keys: string[]) => obj(Object.fromEntries(['owner', 'repo', ...keys].map((k) => [k, str])), ['owner', 'repo', ...keys]);

/** The still-escaped path segment after `marker` (Gitea reads the raw page name). */
function rawPageName(request: FastifyRequest, marker: string): string {
  const url = (request.raw.url ?? '').split('?')[0];
  const at = url.indexOf(marker);
  return at < 0 ? '' : url.slice(at + marker.length);
}

/** Gitea's page/limit for the wiki list: a limit of 0 or 1 means the default. */
function wikiPaging(app: FastifyInstance, q: { page?: number; limit?: number }) {
  const page = Math.max(1, q.page ?? 1);
  let limit = q.limit ?? 0;
  if (limit <= 1) limit = app.config.defaultPagingNum;
  return { page, limit: Math.min(limit, app.config.maxResponseItems) };
}

export default async function wikiRoutes(app: FastifyInstance) {
  const { wiki } = app.services;
  const tags = ['repository'];
  const scopes = ['repository' as const];
  const read = { scopes, repo: READ };
  const write = { auth: 'required' as const, scopes, repo: WRITE };
  const base = '/repos/:owner/:repo/wiki';

  app.get<{ Params: P; Querystring: { page?: number; limit?: number } }>(
    `${base}/pages`,
    { config: read, schema: { tags, operationId: 'repoGetWikiPages', summary: 'Get all wiki pages', params: params(), querystring: obj({ ...pagingQuery }), response: { 200: list(WikiPageMeta), ...errors(404) } } },
    async (request, reply) => {
      const { page, limit } = wikiPaging(app, request.query);
      const { pages, total } = await wiki.listPages(request.repoCtx.repo, page, limit);
      setPagingHeaders(request, reply, total, { page, limit, skip: (page - 1) * limit, take: limit }, app.config.rootUrl);
      return pages;
    },
  );

  app.get<{ Params: P }>(
    `${base}/page/:pageName`,
    { config: read, schema: { tags, operationId: 'repoGetWikiPage', summary: 'Get a wiki page', params: params('pageName'), response: { 200: WikiPage, ...errors(404) } } },
    async (request) => wiki.page(request.repoCtx.repo, webPathFromRequest(rawPageName(request, '/wiki/page/'))),
  );

  app.get<{ Params: P; Querystring: { page?: number } }>(
    `${base}/revisions/:pageName`,
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetWikiPageRevisions',
        summary: 'Get revisions of a wiki page',
        params: params('pageName'),
        querystring: obj({ page: pagingQuery.page }),
        response: { 200: obj({ commits: list(WikiCommit), count: int }), ...errors(404) },
      },
    },
    async (request, reply) => {
      const res = await wiki.revisions(request.repoCtx.repo, webPathFromRequest(rawPageName(request, '/wiki/revisions/')), Math.max(1, request.query.page ?? 1));
      setTotalCount(reply, res.count);
      return res;
    },
  );

  app.post<{ Params: P; Body: { title?: string; content_base64?: string; message?: string } }>(
    `${base}/new`,
    { config: write, schema: { tags, operationId: 'repoCreateWikiPage', summary: 'Create a wiki page', params: params(), body: WikiOptions, response: { 201: WikiPage, ...errors(400, 401, 403, 404, 409, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      const b = request.body ?? {};
      const webPath = await wiki.create(rc.doer, rc.repo, b.title ?? '', b.content_base64, b.message);
      return reply.code(201).send(await wiki.page(rc.repo, webPath));
    },
  );

  app.patch<{ Params: P; Body: { title?: string; content_base64?: string; message?: string } }>(
    `${base}/page/:pageName`,
    { config: write, schema: { tags, operationId: 'repoEditWikiPage', summary: 'Edit a wiki page', params: params('pageName'), body: WikiOptions, response: { 200: WikiPage, ...errors(400, 401, 403, 404, 409, 423) } } },
    async (request) => {
      const rc = changeCtx(request);
      const b = request.body ?? {};
      const webPath = await wiki.edit(rc.doer, rc.repo, webPathFromRequest(rawPageName(request, '/wiki/page/')), b.title, b.content_base64, b.message);
      return wiki.page(rc.repo, webPath);
    },
  );

  app.delete<{ Params: P }>(
    `${base}/page/:pageName`,
    { config: write, schema: { tags, operationId: 'repoDeleteWikiPage', summary: 'Delete a wiki page', params: params('pageName'), response: { 204: { type: 'null' }, ...errors(401, 403, 404, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      await wiki.delete(rc.doer, rc.repo, webPathFromRequest(rawPageName(request, '/wiki/page/')));
      return reply.code(204).send();
    },
  );
}
