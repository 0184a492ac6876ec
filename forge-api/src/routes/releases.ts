/**
 * Releases (/repos/{owner}/{repo}/releases) and their assets, with Gitea's middleware: the
 * release unit readable for every route, reqRepoWriter(releases) for changes. Drafts show only
 * to writers whose token (if any) has write:repository. Assets upload as multipart
 * `attachment` (optional ?name=) or as a raw body with ?name=, as Gitea 1.27. The web download
 * /{owner}/{repo}/releases/download/{tag}/{name} is registered at the root (releaseDownloadRoutes).
 */
import fs from 'node:fs';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { bool, int, list, obj, ref, str } from '../schemas';
import { NotFoundError } from '../services/errors';
import { hasScope } from '../services/scopes';
import { AccessMode } from '../services/convert';
import { changeCtx, type RepoAssignment } from '../plugins/repo-assignment';
import { attachmentPart, errors, paging, pagingQuery, sendPage } from './helpers';
import { pathNumber } from './issue-helpers';

const READ: RepoAssignment = { access: 'read', unit: 'releases' };
const WRITE: RepoAssignment = { access: 'write', unit: 'releases' };

const ReleaseSchema = obj({
  id: int,
  tag_name: str,
  target_commitish: str,
  name: str,
  body: str,
  url: str,
  html_url: str,
  tarball_url: str,
  zipball_url: str,
  upload_url: str,
  draft: bool,
  prerelease: bool,
  created_at: str,
  published_at: str,
  author: ref('User'),
  assets: list(ref('Attachment')),
});

type P = { owner: string; repo: string; id?: string; tag?: string; attachment_id?: string };
const params = (...keys: string[]) => obj(Object.fromEntries(['owner', 'repo', ...keys].map((k) => [k, str])), ['owner', 'repo', ...keys]);

/** Gitea's canAccessReleaseDraft: a writer of the release unit, through a token with write:repository. */
function canSeeDrafts(request: FastifyRequest): boolean {
  const rc = request.repoCtx;
  if (!rc.doer || !(rc.canWrite || rc.isAdmin)) return false;
  const scopes = request.auth?.scopes;
  return !scopes || hasScope(scopes, 'repository', 'write');
}

export default async function releaseRoutes(app: FastifyInstance) {
  const { releases } = app.services;
  const tags = ['repository'];
  const scopes = ['repository' as const];
  const read = { scopes, repo: READ };
  const write = { auth: 'required' as const, scopes, repo: WRITE };
  const base = '/repos/:owner/:repo/releases';

  const one = async (request: FastifyRequest<{ Params: P }>) => releases.byId(request.repoCtx.repo.id, pathNumber(request.params.id ?? ''), canSeeDrafts(request));

  app.get<{ Params: P; Querystring: { draft?: boolean; 'pre-release'?: boolean } }>(
    base,
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoListReleases',
        summary: "List a repo's releases",
        params: params(),
        querystring: obj({ draft: bool, 'pre-release': bool, ...pagingQuery }),
        response: { 200: list(ReleaseSchema), ...errors(404) },
      },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const rc = request.repoCtx;
      const { rows, total } = await releases.list(rc.repo.id, { includeDrafts: canSeeDrafts(request), draft: request.query.draft, prerelease: request.query['pre-release'], skip: p.skip, take: p.take });
      const data = [];
      for (const r of rows) data.push(await releases.json(rc.repo, r));
      return sendPage(app, request, reply, data, total, p);
    },
  );

  app.post<{ Params: P; Body: { tag_name: string; tag_message?: string; target_commitish?: string; name?: string; body?: string; draft?: boolean; prerelease?: boolean } }>(
    base,
    {
      config: write,
      schema: {
        tags,
        operationId: 'repoCreateRelease',
        summary: 'Create a release',
        params: params(),
        body: obj({ tag_name: { type: 'string', minLength: 1 }, tag_message: str, target_commitish: str, name: str, body: str, draft: bool, prerelease: bool }, ['tag_name']),
        response: { 201: ReleaseSchema, ...errors(401, 403, 404, 409, 422, 423) },
      },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      const rel = await releases.create(rc.doer, rc.repo, request.body);
      return reply.code(201).send(await releases.json(rc.repo, rel));
    },
  );

  app.get<{ Params: P }>(
    `${base}/latest`,
    { config: read, schema: { tags, operationId: 'repoGetLatestRelease', summary: 'Gets the most recent non-prerelease, non-draft release of a repository, sorted by created_at', params: params(), response: { 200: ReleaseSchema, ...errors(404) } } },
    async (request) => releases.json(request.repoCtx.repo, await releases.latest(request.repoCtx.repo.id)),
  );

  app.get<{ Params: P }>(
    `${base}/tags/:tag`,
    { config: read, schema: { tags, operationId: 'repoGetReleaseByTag', summary: 'Get a release by tag name', params: params('tag'), response: { 200: ReleaseSchema, ...errors(404) } } },
    async (request) => releases.json(request.repoCtx.repo, await releases.byTag(request.repoCtx.repo.id, request.params.tag ?? '', canSeeDrafts(request))),
  );

  app.delete<{ Params: P }>(
    `${base}/tags/:tag`,
    { config: write, schema: { tags, operationId: 'repoDeleteReleaseByTag', summary: 'Delete a release by tag name', params: params('tag'), response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      await releases.delete(rc.doer, rc.repo, await releases.byTag(rc.repo.id, request.params.tag ?? '', true));
      return reply.code(204).send();
    },
  );

  app.get<{ Params: P }>(
    `${base}/:id`,
    { config: read, schema: { tags, operationId: 'repoGetRelease', summary: 'Get a release', params: params('id'), response: { 200: ReleaseSchema, ...errors(404) } } },
    async (request) => releases.json(request.repoCtx.repo, await one(request)),
  );

  app.patch<{ Params: P; Body: { tag_name?: string; target_commitish?: string; name?: string; body?: string; draft?: boolean; prerelease?: boolean } }>(
    `${base}/:id`,
    {
      config: write,
      schema: {
        tags,
        operationId: 'repoEditRelease',
        summary: 'Update a release',
        params: params('id'),
        body: obj({ tag_name: str, target_commitish: str, name: str, body: str, draft: bool, prerelease: bool }),
        response: { 200: ReleaseSchema, ...errors(401, 403, 404, 409, 422, 423) },
      },
    },
    async (request) => {
      const rc = changeCtx(request);
      const rel = await releases.edit(rc.doer, rc.repo, await one(request), request.body ?? {});
      return releases.json(rc.repo, rel);
    },
  );

  app.delete<{ Params: P }>(
    `${base}/:id`,
    { config: write, schema: { tags, operationId: 'repoDeleteRelease', summary: 'Delete a release', params: params('id'), response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422, 423) } } },
    async (request, reply) => {
      const rc = changeCtx(request);
      await releases.delete(rc.doer, rc.repo, await one(request));
      return reply.code(204).send();
    },
  );

  // ---- assets

  app.get<{ Params: P }>(
    `${base}/:id/assets`,
    { config: read, schema: { tags, operationId: 'repoListReleaseAttachments', summary: "List release's attachments", params: params('id'), response: { 200: list(ref('Attachment')), ...errors(404) } } },
    async (request) => (await releases.json(request.repoCtx.repo, await one(request))).assets,
  );

  app.get<{ Params: P }>(
    `${base}/:id/assets/:attachment_id`,
    { config: read, schema: { tags, operationId: 'repoGetReleaseAttachment', summary: 'Get a release attachment', params: params('id', 'attachment_id'), response: { 200: ref('Attachment'), ...errors(404) } } },
    async (request) => releases.assetJson(await releases.asset(await one(request), pathNumber(request.params.attachment_id ?? ''))),
  );

  app.patch<{ Params: P; Body: { name?: string } }>(
    `${base}/:id/assets/:attachment_id`,
    {
      config: write,
      schema: { tags, operationId: 'repoEditReleaseAttachment', summary: 'Edit a release attachment', params: params('id', 'attachment_id'), body: obj({ name: str }), response: { 201: ref('Attachment'), ...errors(401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      // Gitea answers an edit with 201.
      const a = await releases.renameAsset(await one(request), pathNumber(request.params.attachment_id ?? ''), request.body?.name);
      return reply.code(201).send(releases.assetJson(a));
    },
  );

  app.delete<{ Params: P }>(
    `${base}/:id/assets/:attachment_id`,
    { config: write, schema: { tags, operationId: 'repoDeleteReleaseAttachment', summary: 'Delete a release attachment', params: params('id', 'attachment_id'), response: { 204: { type: 'null' }, ...errors(401, 403, 404, 423) } } },
    async (request, reply) => {
      await releases.deleteAsset(await one(request), pathNumber(request.params.attachment_id ?? ''));
      return reply.code(204).send();
    },
  );

  // The upload takes multipart or any raw body: its own scope, so the catch-all body parser
  // reaches no other route.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    await scope.register(multipart, { limits: { fileSize: app.services.tracker.attachments.maxSize, files: 1, fields: 10 } });
    scope.post<{ Params: P; Querystring: { name?: string } }>(
      `${base}/:id/assets`,
      {
        config: write,
        schema: {
          tags,
          operationId: 'repoCreateReleaseAttachment',
          summary: 'Create a release attachment',
          consumes: ['multipart/form-data', 'application/octet-stream'],
          params: params('id'),
          querystring: obj({ name: str }),
          response: { 201: ref('Attachment'), ...errors(400, 401, 403, 404, 413, 423) },
        },
      },
      async (request, reply) => {
        const rc = changeCtx(request);
        const rel = await one(request);
        let name = request.query.name ?? '';
        let stream: Readable & { truncated?: boolean };
        if (request.isMultipart()) {
          const file = await attachmentPart(request);
          name = name || file.filename;
          stream = file.file;
        } else {
          stream = (request.body as Readable | undefined) ?? request.raw;
        }
        const a = await releases.upload(rc.doer, rc.repo, rel, name, stream);
        return reply.code(201).send(releases.assetJson(a));
      },
    );
  });
}

/** GET /{owner}/{repo}/releases/download/{tag}/{name}: an asset by name (counted), for readers of the release unit. */
export async function releaseDownloadRoutes(app: FastifyInstance) {
  app.get<{ Params: { owner: string; repo: string; tag: string; name: string } }>(
    '/:owner/:repo/releases/download/:tag/:name',
    { schema: { hide: true } as never },
    async (request, reply) => {
      const auth = await app.auth.resolveUser(request);
      const { repo, mode } = await app.services.repos.getReadable(request.params.owner, request.params.repo, auth.user);
      if (!repo.hasReleases) throw new NotFoundError('not found');
      const a = await app.services.releases.assetByName(repo.id, request.params.tag, request.params.name, mode >= AccessMode.Write);
      const { path: file } = await app.services.tracker.attachments.openForDownload(a.uuid, auth.user);
      const stream = fs.createReadStream(file);
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      }).catch(() => {
        throw new NotFoundError('not found', ['attachment file is missing']);
      });
      reply.header('Content-Type', 'application/octet-stream');
      reply.header('Content-Length', String(a.size));
      reply.header('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(a.name)}`);
      return reply.send(stream);
    },
  );
}
