/**
 * Attachments of issues and comments (multipart field `attachment`, optional ?name=), and the
 * download route /attachments/{uuid} at the root (browser_download_url), which counts downloads.
 */
import fs from 'node:fs';
import path from 'node:path';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, PermissionDeniedError, ValidationError } from '../services/errors';
import { int, listOf, obj, ref, str } from '../schemas';
import { ALLOWED_TYPES, type AttachmentOwner } from '../services/issues/attachments';
import type { RepoCtx } from '../services/issues/context';
import { attachmentPart, errors } from './helpers';
import { pathNumber, type OwnerRepo } from './issue-helpers';
import { changeCtx, ISSUES_CHANGE, ISSUES_READ } from '../plugins/repo-assignment';

type Params = OwnerRepo & { index?: string; id?: string; attachment_id?: string };

const MIME: Record<string, string> = {
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp', '.avif': 'image/avif',
  '.pdf': 'application/pdf', '.txt': 'text/plain; charset=utf-8', '.md': 'text/plain; charset=utf-8', '.log': 'text/plain; charset=utf-8',
  '.json': 'application/json', '.zip': 'application/zip', '.gz': 'application/gzip', '.tgz': 'application/gzip', '.mp4': 'video/mp4', '.webm': 'video/webm',
};

export default async function issueAttachmentRoutes(app: FastifyInstance) {
  const { issues, comments, attachments } = app.services.tracker;
  await app.register(multipart, { limits: { fileSize: attachments.maxSize, files: 1, fields: 10 } });
  const tags = ['issue'];
  const read = { scopes: ['issue' as const], repo: ISSUES_READ };
  const write = { auth: 'required' as const, scopes: ['issue' as const], repo: ISSUES_CHANGE };

  /** The issue or comment of the path, and whether the caller may change its attachments. */
  async function target(rc: RepoCtx, params: Params): Promise<{ owner: AttachmentOwner; canChange: boolean; denied: string }> {
    if (params.index !== undefined) {
      const issue = await issues.byIndex(rc.repo.id, pathNumber(params.index));
      return { owner: { issueId: issue.id, commentId: null }, canChange: rc.canWrite || rc.doer?.id === issue.posterId, denied: 'user should have permission to write issue' };
    }
    const c = await comments.find(rc, pathNumber(params.id ?? ''));
    return { owner: { issueId: c.issueId, commentId: c.id }, canChange: comments.canChange(rc, c), denied: 'user should have permission to edit comment' };
  }

  const prefixes = [
    { base: '/repos/:owner/:repo/issues/:index/assets', key: 'index', op: 'Issue', what: 'an issue' },
    { base: '/repos/:owner/:repo/issues/comments/:id/assets', key: 'id', op: 'Comment', what: 'a comment' },
  ] as const;

  for (const { base, key, op, what } of prefixes) {
    const params = obj({ owner: str, repo: str, [key]: str }, ['owner', 'repo', key]);
    const itemParams = obj({ owner: str, repo: str, [key]: str, attachment_id: str }, ['owner', 'repo', key, 'attachment_id']);

    app.get<{ Params: Params }>(
      base,
      { config: read, schema: { tags, operationId: `issueList${op}Attachments`, summary: `List ${what}'s attachments`, params, response: { 200: listOf('Attachment'), ...errors(404) } } },
      async (request) => {
        const rc = request.repoCtx;
        return attachments.list((await target(rc, request.params)).owner);
      },
    );

    app.post<{ Params: Params; Querystring: { name?: string } }>(
      base,
      {
        config: write,
        schema: {
          tags,
          operationId: `issueCreate${op}Attachment`,
          summary: `Create an attachment for ${what}`,
          consumes: ['multipart/form-data'],
          params,
          querystring: obj({ name: str }),
          response: { 201: ref('Attachment'), ...errors(400, 401, 403, 404, 413, 422, 423) },
        },
      },
      async (request: FastifyRequest<{ Params: Params; Querystring: { name?: string } }>, reply) => {
        const rc = changeCtx(request);
        const t = await target(rc, request.params);
        if (!t.canChange) throw new PermissionDeniedError(t.denied);
        if (!request.isMultipart()) throw new ValidationError('[Attachment]: Required');
        const file = await attachmentPart(request);
        const name = request.query.name || file.filename;
        return reply.code(201).send(await attachments.upload(rc, t.owner, name, file.file));
      },
    );

    app.get<{ Params: Params }>(
      `${base}/:attachment_id`,
      { config: read, schema: { tags, operationId: `issueGet${op}Attachment`, summary: `Get ${what} attachment`, params: itemParams, response: { 200: ref('Attachment'), ...errors(404) } } },
      async (request) => {
        const rc = request.repoCtx;
        const t = await target(rc, request.params);
        return app.services.tracker.convert.attachment(await attachments.find(t.owner, pathNumber(request.params.attachment_id ?? '')));
      },
    );

    app.patch<{ Params: Params; Body: { name?: string } }>(
      `${base}/:attachment_id`,
      {
        config: write,
        schema: { tags, operationId: `issueEdit${op}Attachment`, summary: `Edit ${what} attachment`, params: itemParams, body: obj({ name: str }), response: { 201: ref('Attachment'), ...errors(401, 403, 404, 422, 423) } },
      },
      async (request, reply) => {
        const rc = changeCtx(request);
        const t = await target(rc, request.params);
        if (!t.canChange) throw new PermissionDeniedError(t.denied);
        // Gitea answers a rename with 201.
        return reply.code(201).send(await attachments.rename(t.owner, pathNumber(request.params.attachment_id ?? ''), request.body?.name));
      },
    );

    app.delete<{ Params: Params }>(
      `${base}/:attachment_id`,
      { config: write, schema: { tags, operationId: `issueDelete${op}Attachment`, summary: `Delete ${what} attachment`, params: itemParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 423) } } },
      async (request, reply) => {
        const rc = changeCtx(request);
        const t = await target(rc, request.params);
        if (!t.canChange) throw new PermissionDeniedError(t.denied);
        await attachments.delete(t.owner, pathNumber(request.params.attachment_id ?? ''));
        return reply.code(204).send();
      },
    );
  }

  app.get('/settings/attachment', { schema: { tags: ['settings'], operationId: 'getGeneralAttachmentSettings', response: { 200: obj({ enabled: { type: 'boolean' }, allowed_types: str, max_size: int, max_files: int }) } } }, async () => ({
    enabled: true,
    allowed_types: ALLOWED_TYPES.join(','),
    max_size: attachments.maxSize,
    max_files: 5,
  }));
}

/** GET /attachments/{uuid} at the root (outside /api/v1): the file, for anyone who can read the repository. */
export async function attachmentDownloadRoutes(app: FastifyInstance) {
  app.get<{ Params: { uuid: string } }>('/attachments/:uuid', { schema: { hide: true } as never }, async (request, reply) => {
    const auth = await app.auth.resolveUser(request);
    const { attachment, path: file } = await app.services.tracker.attachments.openForDownload(request.params.uuid, auth.user);
    const stream = fs.createReadStream(file);
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    }).catch(() => {
      throw new NotFoundError('not found', ['attachment file is missing']);
    });
    const ext = path.extname(attachment.name).toLowerCase();
    reply.header('Content-Type', MIME[ext] ?? 'application/octet-stream');
    reply.header('Content-Length', String(attachment.size));
    reply.header('Content-Disposition', `${MIME[ext]?.startsWith('image/') ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(attachment.name)}`);
    reply.header('Cache-Control', 'private, max-age=300');
    return reply.send(stream);
  });
}
