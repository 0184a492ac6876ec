/**
 * The repository's files: contents (get, ext, batch), raw and media downloads, file writes
 * (create, update, delete, several at once, diffpatch) and archives. Paths, middleware and
 * statuses as Gitea 1.27's: reads need code read access; writes need a signed-in caller who may
 * write to the target branch (403 "user should have a permission to write to the target
 * branch"), on a repository whose editor is enabled (423 for archived and mirror repositories).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CODE_READ } from '../plugins/repo-assignment';
import { bool, obj, ownerRepoParams, str, strList } from '../schemas';
import { ArchivedError, MalformedError, PermissionDeniedError, UnauthenticatedError, ValidationError } from '../services/errors';
import type { ContentsOptions } from '../services/content/contents';
import type { CommitOptions, FileChangeInput, FileOperation } from '../services/content/changes';
import { openArchive } from '../services/content/archive';
import { LFS_POINTER_MAX, parseLfsPointer } from '../services/content/lfs';
import { blobHeaders, notModified, openBlob } from '../services/content/serve';
import { readBlob } from '../services/content/git-read';
import type { RepoCtx } from '../services/issues/context';
import type { User } from '../services/records';
import { errors } from './helpers';

const tags = ['repository'];
const read = { scopes: ['repository' as const], repo: CODE_READ };
/** Writes: Gitea's contents group is reqRepoReader; branch write access is checked per request. */
const write = { auth: 'required' as const, scopes: ['repository' as const], repo: { ...CODE_READ, archived: 'allow' as const } };
/** Reads of a path answer a malformed path with 400, as Gitea's ErrFilenameInvalid on GET. */
const readStatus = { Invalid: 400 };
/** Blobs up to this size are served from memory; larger ones are streamed. */
const SMALL_BLOB = 1024 * 1024;

const filepathParams = obj({ owner: str, repo: str, '*': str }, ['owner', 'repo']);
const refQuery = obj({ ref: str });
const identity = obj({ name: str, email: str });
const fileOptions = {
  message: str,
  branch: { type: 'string', maxLength: 100 },
  new_branch: { type: 'string', maxLength: 100 },
  force_push: bool,
  author: identity,
  committer: identity,
  dates: obj({ author: str, committer: str }),
  signoff: bool,
};
const CreateFileOptions = obj({ ...fileOptions, content: str });
const UpdateFileOptions = obj({ ...fileOptions, content: str, sha: str, from_path: { type: 'string', maxLength: 500 } });
const DeleteFileOptions = obj({ ...fileOptions, sha: str });
const ChangeFilesOptions = obj({
  ...fileOptions,
  files: { type: 'array', items: obj({ operation: str, path: { type: 'string', maxLength: 500 }, content: str, sha: str, from_path: str }, ['operation', 'path']) },
}, ['files']);
const ApplyDiffPatchFileOptions = obj({ ...fileOptions, content: str });

type FilepathParams = { owner: string; repo: string; '*'?: string };
type FileOptionsBody = {
  message?: string;
  branch?: string;
  new_branch?: string;
  force_push?: boolean;
  author?: { name?: string; email?: string };
  committer?: { name?: string; email?: string };
  dates?: { author?: string; committer?: string };
  signoff?: boolean;
};

/** Go's base64.StdEncoding.DecodeString: strict, padding required; Gitea answers 422 with Go's message. */
function decodeBase64(s: string | undefined): Buffer {
  const text = s ?? '';
  const bad = text.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0 || text.length % 4 !== 0 || /=[^=]/.test(text)) {
    const at = bad >= 0 ? bad : Math.max(0, text.length - (text.length % 4 || 4));
    throw new ValidationError(`illegal base64 data at input byte ${at}`);
  }
  return Buffer.from(text, 'base64');
}

function commitOptions(b: FileOptionsBody): CommitOptions {
  return {
    message: b.message,
    branch: b.branch,
    newBranch: b.new_branch,
    forcePush: b.force_push,
    author: b.author,
    committer: b.committer,
    dates: b.dates,
    signoff: b.signoff,
  };
}

/** Gitea's mustEnableEditor, reqToken and "write to the target branch" checks. */
function writer(request: FastifyRequest, b: FileOptionsBody): { rc: RepoCtx; doer: User } {
  const rc = request.repoCtx;
  if (rc.repo.isArchived || rc.repo.isMirror) throw new ArchivedError('repo is not allowed to edit');
  if (!rc.doer) throw new UnauthenticatedError('token is required');
  if (!rc.canWrite && !rc.doer.isAdmin) throw new PermissionDeniedError('user should have a permission to write to the target branch');
  void b;
  return { rc, doer: rc.doer };
}

export default async function contentRoutes(app: FastifyInstance) {
  const { contents, contentChanges } = app.services;

  const getContents = async (request: FastifyRequest<{ Params: FilepathParams; Querystring: { ref?: string } }>) => {
    const rc = request.repoCtx;
    const o: ContentsOptions = { content: true, lfsMetadata: false, commitMetadata: true, commitMessage: false };
    const r = await contents.contents(rc.repo, request.query.ref?.trim(), request.params['*'] ?? '', o);
    return r.file ?? r.dir;
  };
  const contentsSchema = (operationId: string, summary: string, params: unknown) => ({
    tags,
    operationId,
    summary,
    params,
    querystring: refQuery,
    response: errors(400, 404),
  });

  app.get('/repos/:owner/:repo/contents', { config: { ...read, errorStatus: readStatus }, schema: contentsSchema('repoGetContentsList', 'Gets the metadata of all the entries of the root dir.', ownerRepoParams) }, getContents);
  app.get('/repos/:owner/:repo/contents/*', { config: { ...read, errorStatus: readStatus }, schema: contentsSchema('repoGetContents', 'Gets the metadata and contents (if a file) of an entry in a repository, or a list of entries if a dir.', filepathParams) }, getContents);

  const getExt = async (request: FastifyRequest<{ Params: FilepathParams; Querystring: { ref?: string; includes?: string } }>) => {
    const rc = request.repoCtx;
    let p = request.params['*'] ?? '';
    if (p === '.' || p === '/') p = '';
    const o: ContentsOptions = { content: false, lfsMetadata: false, commitMetadata: false, commitMessage: false };
    for (const inc of (request.query.includes ?? '').split(',')) {
      if (inc === '') continue;
      if (inc === 'file_content') o.content = true;
      else if (inc === 'lfs_metadata') o.lfsMetadata = true;
      else if (inc === 'commit_metadata') o.commitMetadata = true;
      else if (inc === 'commit_message') o.commitMessage = true;
      else throw new MalformedError(`unknown include option "${inc}"`);
    }
    const r = await contents.contents(rc.repo, request.query.ref?.trim(), p, o);
    return r.file ? { file_contents: r.file } : r.dir && r.dir.length ? { dir_contents: r.dir } : {};
  };
  const extSchema = (params: unknown) => ({
    tags,
    operationId: 'repoGetContentsExt',
    summary: 'The extended "contents" API, to get file metadata and/or content, or list a directory.',
    params,
    querystring: obj({ ref: str, includes: str }),
    response: errors(400, 404),
  });
  app.get('/repos/:owner/:repo/contents-ext', { config: { ...read, errorStatus: readStatus }, schema: extSchema(ownerRepoParams) }, getExt);
  app.get('/repos/:owner/:repo/contents-ext/*', { config: { ...read, errorStatus: readStatus }, schema: extSchema(filepathParams) }, getExt);

  app.get<{ Params: FilepathParams; Querystring: { ref?: string; body?: string } }>(
    '/repos/:owner/:repo/file-contents',
    {
      config: read,
      schema: { tags, operationId: 'repoGetFileContents', summary: 'Get the metadata and contents of requested files', params: ownerRepoParams, querystring: obj({ ref: str, body: str }), response: errors(400, 404) },
    },
    async (request) => {
      let files: unknown;
      try {
        files = (JSON.parse(request.query.body ?? '') as { files?: unknown })?.files;
      } catch {
        throw new MalformedError('invalid body parameter');
      }
      const list = Array.isArray(files) ? files.filter((f): f is string => typeof f === 'string') : [];
      return contents.fileContents(request.repoCtx.repo, request.query.ref?.trim(), list);
    },
  );
  app.post<{ Params: FilepathParams; Querystring: { ref?: string }; Body: { files: string[] } }>(
    '/repos/:owner/:repo/file-contents',
    {
      config: read,
      schema: { tags, operationId: 'repoGetFileContentsPost', summary: 'Get the metadata and contents of requested files', params: ownerRepoParams, querystring: refQuery, body: obj({ files: strList }, ['files']), response: errors(404, 422) },
    },
    async (request) => contents.fileContents(request.repoCtx.repo, request.query.ref?.trim(), request.body.files),
  );

  const serve = (media: boolean) => async (request: FastifyRequest<{ Params: FilepathParams; Querystring: { ref?: string } }>, reply: FastifyReply) => {
    const rc = request.repoCtx;
    const { entry, type, lastModified, repoPath } = await contents.blobForServe(rc.repo, request.params['*'] ?? '', request.query.ref?.trim() || undefined);
    const isPublic = !rc.repo.isPrivate && rc.repo.owner.visibility === 0;
    if (media && entry.size <= LFS_POINTER_MAX) {
      // Gitea writes small blobs (possible LFS pointers) directly: with no LFS object stored,
      // a pointer is served as its own text, like any small file, without download headers.
      const data = await readBlob(contents.reader(rc.repo), entry.oid);
      void parseLfsPointer(data);
      reply.header('x-gitea-object-type', type);
      reply.header('cache-control', 'max-age=0, private, must-revalidate');
      reply.header('x-content-type-options', 'nosniff');
      reply.type(blobHeaders({ head: data, size: data.length, filename: entry.name, oid: entry.oid, lastModified, isPublic, objectType: type }).contentType);
      return reply.send(data);
    }
    const etag = `"${entry.oid}"`;
    if (notModified(request.headers['if-none-match'], etag)) {
      reply.header('etag', etag);
      if (lastModified) reply.header('last-modified', lastModified.toUTCString());
      return reply.code(304).send();
    }
    if (entry.size <= SMALL_BLOB) {
      // Small blobs come from the shared reader (no process); large ones stream from git.
      const data = await readBlob(contents.reader(rc.repo), entry.oid);
      reply.headers(blobHeaders({ head: data.subarray(0, 1024), size: data.length, filename: entry.name, oid: entry.oid, lastModified, isPublic, objectType: type }).headers);
      return reply.send(data);
    }
    const blob = await openBlob(repoPath, entry.oid);
    request.raw.once('close', () => blob.kill());
    const h = blobHeaders({ head: blob.head, size: entry.size, filename: entry.name, oid: entry.oid, lastModified, isPublic, objectType: type });
    reply.headers(h.headers);
    return reply.send(blob.stream);
  };
  const rawSchema = (operationId: string, summary: string) => ({ tags, operationId, summary, params: filepathParams, querystring: refQuery, produces: ['application/octet-stream'], response: errors(404) });
  app.get('/repos/:owner/:repo/raw/*', { config: read, schema: rawSchema('repoGetRawFile', 'Get a file from a repository') }, serve(false));
  app.get('/repos/:owner/:repo/media/*', { config: read, schema: rawSchema('repoGetRawFileOrLFS', "Get a file or it's LFS object from a repository") }, serve(true));

  app.get<{ Params: FilepathParams; Querystring: { path?: string | string[] } }>(
    '/repos/:owner/:repo/archive/*',
    { config: read, schema: { tags, operationId: 'repoGetArchive', summary: 'Get an archive of a repository', params: filepathParams, querystring: obj({ path: { anyOf: [str, strList] } }), response: errors(400, 404) } },
    async (request, reply) => {
      const rc = request.repoCtx;
      const paths = request.query.path === undefined ? [] : Array.isArray(request.query.path) ? request.query.path : [request.query.path];
      const a = await openArchive(rc.repo, contents.reader(rc.repo), request.params['*'] ?? '', paths, app.services.gitHousekeeping);
      request.raw.once('close', () => a.stream.destroy());
      const api = `${app.config.rootUrl}api/v1/repos/${rc.repo.owner.name}/${rc.repo.name}`;
      reply.headers({
        'access-control-expose-headers': 'Content-Disposition',
        'content-disposition': `attachment; filename=${a.filename}`,
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        'content-type': 'application/octet-stream',
        'x-content-type-options': 'nosniff',
        link: `<${api}/archive/${a.commit}.${a.format}?rev=${a.commit}>; rel="immutable"`,
      });
      return reply.send(a.stream);
    },
  );

  // ----------------------------------------------------------------------------- writes
  const writeResponses = (ok: number) => ({ ...errors(400, 401, 403, 404, 409, 422, 423), [ok]: { type: 'object', additionalProperties: true } });

  app.post<{ Params: FilepathParams; Body: FileOptionsBody & { content?: string } }>(
    '/repos/:owner/:repo/contents/*',
    { config: write, schema: { tags, operationId: 'repoCreateFile', summary: 'Create a file in a repository', params: filepathParams, body: CreateFileOptions, response: errors(401, 403, 404, 409, 422, 423) } },
    async (request, reply) => {
      const { rc, doer } = writer(request, request.body);
      const content = decodeBase64(request.body.content);
      const r = await contentChanges.changeFiles(doer, rc.repo, [{ operation: 'create', path: request.params['*'] ?? '', content }], commitOptions(request.body));
      return reply.code(201).send({ content: r.files[0] ?? {}, commit: r.commit, verification: r.verification });
    },
  );

  app.put<{ Params: FilepathParams; Body: FileOptionsBody & { content?: string; sha?: string; from_path?: string } }>(
    '/repos/:owner/:repo/contents/*',
    {
      config: write,
      schema: {
        tags,
        operationId: 'repoUpdateFile',
        summary: 'Update a file in a repository if SHA is set, or create the file if SHA is not set',
        params: filepathParams,
        body: UpdateFileOptions,
        response: errors(401, 403, 404, 409, 422, 423),
      },
    },
    async (request, reply) => {
      const { rc, doer } = writer(request, request.body);
      const content = decodeBase64(request.body.content);
      const create = !request.body.sha;
      const file: FileChangeInput = { operation: create ? 'create' : 'update', path: request.params['*'] ?? '', content, sha: request.body.sha, fromPath: request.body.from_path };
      const r = await contentChanges.changeFiles(doer, rc.repo, [file], commitOptions(request.body));
      return reply.code(create ? 201 : 200).send({ content: r.files[0] ?? {}, commit: r.commit, verification: r.verification });
    },
  );

  app.delete<{ Params: FilepathParams; Body: FileOptionsBody & { sha?: string } }>(
    '/repos/:owner/:repo/contents/*',
    { config: write, schema: { tags, operationId: 'repoDeleteFile', summary: 'Delete a file in a repository', params: filepathParams, body: DeleteFileOptions, response: errors(400, 401, 403, 404, 409, 422, 423) } },
    async (request) => {
      const body = request.body ?? {};
      const { rc, doer } = writer(request, body);
      if (!body.sha) throw new ValidationError('[SHA]: Required');
      const r = await contentChanges.changeFiles(doer, rc.repo, [{ operation: 'delete', path: request.params['*'] ?? '', sha: body.sha }], commitOptions(body));
      return { content: null, commit: r.commit, verification: r.verification };
    },
  );

  app.post<{ Params: FilepathParams; Body: FileOptionsBody & { files: { operation: string; path: string; content?: string; sha?: string; from_path?: string }[] } }>(
    '/repos/:owner/:repo/contents',
    { config: write, schema: { tags, operationId: 'repoChangeFiles', summary: 'Modify multiple files in a repository', params: ownerRepoParams, body: ChangeFilesOptions, response: errors(401, 403, 404, 409, 422, 423) } },
    async (request, reply) => {
      const { rc, doer } = writer(request, request.body);
      const files: FileChangeInput[] = request.body.files.map((f) => ({
        operation: f.operation as FileOperation,
        path: f.path,
        fromPath: f.from_path,
        content: decodeBase64(f.content),
        sha: f.sha,
      }));
      const r = await contentChanges.changeFiles(doer, rc.repo, files, commitOptions(request.body));
      return reply.code(201).send(r);
    },
  );

  app.post<{ Params: FilepathParams; Body: FileOptionsBody & { content?: string } }>(
    '/repos/:owner/:repo/diffpatch',
    { config: write, schema: { tags, operationId: 'repoApplyDiffPatch', summary: 'Apply diff patch to repository', params: ownerRepoParams, body: ApplyDiffPatchFileOptions, response: errors(401, 403, 404, 409, 422, 423) } },
    async (request, reply) => {
      const { rc, doer } = writer(request, request.body);
      const r = await contentChanges.applyPatch(doer, rc.repo, request.body.content ?? '', commitOptions(request.body));
      return reply.code(201).send(r);
    },
  );
  void writeResponses;
}
