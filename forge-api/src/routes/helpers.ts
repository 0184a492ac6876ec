import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import { MalformedError, NotFoundError, PermissionDeniedError, UnauthenticatedError, ValidationError } from '../services/errors';
import { pagingQuery, parsePaging, setPagingHeaders, type Paging } from '../plugins/paging';
import { normaliseMultipart } from '../plugins/input';
import type { User } from '../services/records';

export { pagingQuery };

export function paging(app: FastifyInstance, request: FastifyRequest): Paging {
  return parsePaging(request.query, app.config);
}

export function sendPage<T>(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, data: T[], total: number, p: Paging) {
  setPagingHeaders(request, reply, total, p, app.config.rootUrl);
  return data;
}

/** Gitea answers a taken repository name with 409 (other taken names are 422). */
export const REPO_CREATE_STATUS = { AlreadyExists: 409 } as const;

/** Status codes the route may answer with Gitea's error body. */
export function errors(...codes: number[]) {
  return Object.fromEntries(codes.map((c) => [c, { $ref: 'APIError#' }]));
}

/** The request used a token with the `public-only` modifier (Gitea: private things are 403). */
export function publicOnly(request: FastifyRequest): boolean {
  return request.auth?.scopes?.publicOnly === true;
}

export function doerOf(request: FastifyRequest): User {
  if (!request.doer) throw new UnauthenticatedError('token is required');
  return request.doer;
}

/**
 * The user or org named in the path, visible to the caller; a renamed one answers 307 to the
 * new name (Gitea keeps redirects), a missing or invisible one 404.
 */
export async function contextUser(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, name: string): Promise<User | null> {
  const user = await app.services.users.findByName(name);
  if (user) {
    if (!(await app.services.permissions.canSeeOwner(request.doer, user))) throw new NotFoundError('not found', [`user redirect does not exist [name: ${name}]`]);
    // Gitea's checkTokenPublicOnly: a public-only token reaches public users and orgs only.
    if (publicOnly(request) && user.visibility !== 0) throw new PermissionDeniedError(user.type === 1 ? 'token scope is limited to public orgs' : 'token scope is limited to public users');
    return user;
  }
  const target = await app.services.users.redirectTarget(name);
  if (target && (await app.services.permissions.canSeeOwner(request.doer, target))) {
    const url = request.url.replace(`/${encodeURIComponent(name)}`, `/${encodeURIComponent(target.name)}`).replace(`/${name}`, `/${target.name}`);
    await reply.redirect(url, 307);
    return null;
  }
  throw new NotFoundError('not found', [`user redirect does not exist [name: ${name}]`]);
}

/**
 * The `attachment` part of a multipart upload (issue, comment and release attachments), with
 * Gitea's answers: a broken body is 400, a missing part 422 "[Attachment]: Required".
 */
export async function attachmentPart(request: FastifyRequest): Promise<MultipartFile> {
  let file: MultipartFile | undefined;
  try {
    file = await request.file();
  } catch (err) {
    throw new MalformedError(`invalid multipart body: ${(err as Error).message}`);
  }
  if (!file || file.fieldname !== 'attachment') {
    file?.file.resume();
    throw new ValidationError('[Attachment]: Required');
  }
  try {
    normaliseMultipart(file, 'attachment');
  } catch (err) {
    file.file.resume();
    throw err;
  }
  return file;
}

/** Go's base64.StdEncoding: padded, standard alphabet; its error names the first bad byte. */
export function decodeStdBase64(s: string): Buffer {
  const body = s.replace(/={1,2}$/, '');
  const bad = body.search(/[^A-Za-z0-9+/]/);
  if (bad >= 0) throw new MalformedError(`illegal base64 data at input byte ${bad}`);
  if (s.length % 4 !== 0) throw new MalformedError(`illegal base64 data at input byte ${s.length - (s.length % 4)}`);
  return Buffer.from(s, 'base64');
}
