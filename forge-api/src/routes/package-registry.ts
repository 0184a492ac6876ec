/**
 * The generic package registry at /api/packages/{owner}/generic/{name}/{version}/{file}
 * (Gitea's routers/api/packages/generic): PUT uploads (201; 409 when the file exists),
 * GET downloads, DELETE removes a file or a whole version (204). Clients authenticate with
 * basic auth or a token (scope package); errors are plain text, and missing rights answer 401
 * with a Basic challenge, as Gitea's package API does.
 */
import fs from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { statusOf } from '../plugins/errors';
import { DomainError } from '../services/errors';
import { NotFoundError, UnauthenticatedError } from '../services/errors';
import { AccessMode } from '../services/convert';
import type { User } from '../services/records';
import { hasScope, levelForMethod } from '../services/scopes';

interface FileParams {
  owner: string;
  name: string;
  version: string;
  file: string;
}

/** The generic registry answers a bad name 400 and a second upload of a file 409 (routers/api/packages/generic). */
const REGISTRY_STATUS = { Invalid: 400, AlreadyExists: 409 } as const;

function plain(reply: FastifyReply, code: number, message: string) {
  return reply.code(code).type('text/plain; charset=utf-8').send(message);
}

export default async function packageRegistryRoutes(app: FastifyInstance) {
  const { packages, users, permissions } = app.services;

  // Bodies stay streams for any content type (the file is streamed to disk).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  app.setErrorHandler((err: Error & { statusCode?: number }, _request, reply) => {
    const code = err instanceof DomainError ? statusOf(err, REGISTRY_STATUS) : err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
    if (code === 401) reply.header('WWW-Authenticate', 'Basic realm="Gitea Package API"');
    return plain(reply, code, code === 500 ? 'internal server error' : err.message);
  });

  /** The owner and the caller's access; 401 with a challenge when `need` is not met. */
  async function context(request: FastifyRequest, ownerName: string, need: number): Promise<{ owner: User; doer: User | null }> {
    const auth = await app.auth.resolveUser(request);
    const doer = auth.user;
    if (doer && (!doer.isActive || doer.prohibitLogin)) throw new UnauthenticatedError('user is not allowed to sign in');
    if (auth.scopes && !hasScope(auth.scopes, 'package', levelForMethod(request.method))) throw new UnauthenticatedError('token does not have the required package scope');
    const owner = await users.findByName(ownerName);
    if (!owner || !(await permissions.canSeeOwner(doer, owner))) throw new NotFoundError('user does not exist');
    if ((await packages.accessMode(doer, owner)) < need) throw new UnauthenticatedError('user should have specific permission or be a site admin');
    return { owner, doer };
  }

  const fileRoute = '/:owner/generic/:name/:version/:file';

  app.put<{ Params: FileParams }>(fileRoute, { schema: { hide: true } }, async (request, reply) => {
    const { owner, doer } = await context(request, request.params.owner, AccessMode.Write);
    const p = request.params;
    await packages.uploadGeneric(owner, doer as User, p.name, p.version, p.file, request.body as Readable);
    return reply.code(201).send();
  });

  app.get<{ Params: FileParams }>(fileRoute, { schema: { hide: true } }, async (request, reply) => {
    const { owner } = await context(request, request.params.owner, AccessMode.Read);
    const p = request.params;
    const { file, path } = await packages.openGenericFile(owner, p.name, p.version, p.file);
    return reply
      .header('Content-Length', String(file.size))
      .header('Content-Disposition', `attachment; filename="${file.name.replace(/"/g, '')}"`)
      .header('ETag', `"${file.hashSha256}"`)
      .type('application/octet-stream')
      .send(fs.createReadStream(path));
  });

  app.delete<{ Params: FileParams }>(fileRoute, { schema: { hide: true } }, async (request, reply) => {
    const { owner } = await context(request, request.params.owner, AccessMode.Write);
    const p = request.params;
    await packages.deleteGenericFile(owner, p.name, p.version, p.file);
    return reply.code(204).send();
  });

  app.delete<{ Params: Omit<FileParams, 'file'> }>('/:owner/generic/:name/:version', { schema: { hide: true } }, async (request, reply) => {
    const { owner } = await context(request, request.params.owner, AccessMode.Write);
    const ver = await packages.findVersion(owner, 'generic', request.params.name, request.params.version);
    if (!ver) throw new NotFoundError('package does not exist');
    await packages.deleteVersion(ver);
    return reply.code(204).send();
  });
}
