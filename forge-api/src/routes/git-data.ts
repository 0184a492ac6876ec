/**
 * The repository's git data: /git/refs, /git/commits, /git/trees, /git/blobs, /git/tags,
 * /git/notes, the commit list, /compare, /languages, /licenses and /editorconfig. Every route
 * needs read access to the code unit (Gitea's reqRepoReader(unit.TypeCode)).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CODE_READ } from '../plugins/repo-assignment';
import { exposeHeader, setPagingHeaders } from '../plugins/paging';
import { int, obj, ownerRepoParams, ref, str, listOf } from '../schemas';
import { commitOptionsFromQuery, formBool } from '../services/git-data';
import { errors, paging } from './helpers';

type OwnerRepo = { owner: string; repo: string };
const withParam = (name: string) => obj({ owner: str, repo: str, [name]: str }, ['owner', 'repo', name]);
// Go's FormBool accepts 1/t/true/0/f/false in any case: read as strings, parsed by the service.
const commitFlags = {
  stat: { type: 'string', description: 'include diff stats for every commit (disable for speed, default true)' },
  verification: { type: 'string', description: 'include verification for every commit (disable for speed, default true)' },
  files: { type: 'string', description: 'include a list of affected files for every commit (disable for speed, default true)' },
};

function sendText(reply: FastifyReply, body: unknown) {
  return reply.type('text/plain; charset=utf-8').send(body);
}

export default async function gitDataRoutes(app: FastifyInstance) {
  const gitData = app.services.gitData;
  const tags = ['repository'];
  const read = { scopes: ['repository' as const], repo: CODE_READ };

  const refsHandler = async (request: { params: OwnerRepo & { '*'?: string }; repoCtx: { repo: any } }) =>
    gitData.refs(request.repoCtx.repo, request.params['*'] ?? '');
  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/git/refs',
    { config: read, schema: { tags, operationId: 'repoListAllGitRefs', summary: "Get specified ref or filtered repository's refs", params: ownerRepoParams, response: { 200: listOf('Reference'), ...errors(404) } } },
    async (request) => refsHandler(request),
  );
  app.get<{ Params: OwnerRepo & { '*': string } }>(
    '/repos/:owner/:repo/git/refs/*',
    { config: read, schema: { tags, operationId: 'repoListGitRefs', summary: "Get specified ref or filtered repository's refs", params: withParam('*'), response: { 200: listOf('Reference'), ...errors(404) } } },
    async (request) => refsHandler(request),
  );

  type CommitQuery = { stat?: string; verification?: string; files?: string };
  const singleCommit = async (repo: Parameters<typeof gitData.singleCommit>[0], sha: string, query: CommitQuery, reply: FastifyReply) => {
    const raw = /^(.+)\.(diff|patch)$/.exec(sha);
    if (raw) return sendText(reply, await gitData.rawDiff(repo, raw[1], raw[2] as 'diff' | 'patch'));
    return gitData.singleCommit(repo, sha, commitOptionsFromQuery(query));
  };

  app.get<{ Params: OwnerRepo & { sha: string }; Querystring: CommitQuery }>(
    '/repos/:owner/:repo/git/commits/:sha',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetSingleCommit',
        summary: 'Get a single commit from a repository',
        params: withParam('sha'),
        querystring: obj(commitFlags),
        response: { 200: ref('Commit'), ...errors(404, 422) },
      },
    },
    async (request, reply) => singleCommit(request.repoCtx.repo, request.params.sha, request.query, reply),
  );

  // `{sha}.diff` / `{sha}.patch`. The router splits any name with a dot here (v1.0 too), so a
  // suffix other than diff or patch is put back and the name read as a commit-ish.
  app.get<{ Params: OwnerRepo & { sha: string; diffType: string }; Querystring: CommitQuery }>(
    '/repos/:owner/:repo/git/commits/:sha.:diffType',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoDownloadCommitDiffOrPatch',
        summary: 'Get a commit\'s diff or patch',
        params: obj({ owner: str, repo: str, sha: str, diffType: { type: 'string', description: 'whether the output is diff or patch' } }, ['owner', 'repo', 'sha', 'diffType']),
        querystring: obj(commitFlags),
        produces: ['text/plain'],
        response: { 200: { description: 'the diff or patch text (a commit as JSON when the suffix is neither)' }, ...errors(404, 422) },
      },
    },
    async (request, reply) => singleCommit(request.repoCtx.repo, `${request.params.sha}.${request.params.diffType}`, request.query, reply),
  );

  app.get<{ Params: OwnerRepo & { sha: string }; Querystring: { page?: number; per_page?: number; recursive?: string } }>(
    '/repos/:owner/:repo/git/trees/:sha',
    {
      config: read,
      schema: {
        tags,
        operationId: 'GetTree',
        summary: 'Gets the tree of a repository.',
        params: withParam('sha'),
        querystring: obj({ recursive: str, page: int, per_page: int }),
        response: { 200: ref('GitTreeResponse'), ...errors(400) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const tree = await gitData.tree(request.repoCtx.repo, request.params.sha, clampInt(q.page), clampInt(q.per_page), formBool(q.recursive));
      reply.header('X-Total-Count', String(tree.total_count));
      exposeHeader(reply, 'X-Total-Count');
      return tree;
    },
  );

  app.get<{ Params: OwnerRepo & { sha: string } }>(
    '/repos/:owner/:repo/git/blobs/:sha',
    { config: read, schema: { tags, operationId: 'GetBlob', summary: 'Gets the blob of a repository.', params: withParam('sha'), response: { 200: ref('GitBlobResponse'), ...errors(400) } } },
    async (request) => gitData.blob(request.repoCtx.repo, request.params.sha),
  );

  app.get<{ Params: OwnerRepo & { sha: string } }>(
    '/repos/:owner/:repo/git/tags/:sha',
    {
      config: read,
      schema: { tags, operationId: 'GetAnnotatedTag', summary: 'Gets the tag object of an annotated tag (not lightweight tags)', params: withParam('sha'), response: { 200: ref('AnnotatedTag'), ...errors(400) } },
    },
    async (request) => gitData.annotatedTag(request.repoCtx.repo, request.params.sha),
  );

  app.get<{ Params: OwnerRepo & { sha: string }; Querystring: { verification?: string; files?: string } }>(
    '/repos/:owner/:repo/git/notes/:sha',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetNote',
        summary: 'Get a note corresponding to a single commit from a repository',
        params: withParam('sha'),
        querystring: obj({ verification: commitFlags.verification, files: commitFlags.files }),
        response: { 200: ref('Note'), ...errors(404, 422) },
      },
    },
    async (request) => {
      const o = commitOptionsFromQuery(request.query);
      return gitData.note(request.repoCtx.repo, request.params.sha, { verification: o.verification, files: o.files });
    },
  );

  app.get<{ Params: OwnerRepo; Querystring: { sha?: string; path?: string; not?: string; since?: string; until?: string; stat?: string; verification?: string; files?: string; page?: number; limit?: number } }>(
    '/repos/:owner/:repo/commits',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetAllCommits',
        summary: 'Get a list of all commits from a repository',
        params: ownerRepoParams,
        querystring: obj({
          sha: { type: 'string', description: 'SHA or branch to start listing commits from (usually the default branch)' },
          path: { type: 'string', description: 'filepath of a file/dir' },
          since: { type: 'string', description: 'Only commits after this date will be returned (ISO 8601 format)' },
          until: { type: 'string', description: 'Only commits before this date will be returned (ISO 8601 format)' },
          not: { type: 'string', description: 'commits that match the given specifier will not be listed.' },
          ...commitFlags,
          page: int,
          limit: int,
        }),
        response: { 200: listOf('Commit'), ...errors(404, 409, 422) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const p = paging(app, request);
      const result = await gitData.listCommits(
        request.repoCtx.repo,
        { sha: q.sha || undefined, path: q.path || undefined, not: q.not || undefined, since: q.since || undefined, until: q.until || undefined, page: p.page, limit: p.limit },
        commitOptionsFromQuery(q),
      );
      const pageCount = Math.ceil(result.total / result.pageSize);
      setPagingHeaders(request, reply, result.total, { page: result.page, limit: result.pageSize, skip: 0, take: result.pageSize }, app.config.rootUrl);
      reply.header('X-Page', String(result.page));
      reply.header('X-PerPage', String(result.pageSize));
      reply.header('X-Total', String(result.total));
      reply.header('X-PageCount', String(pageCount));
      reply.header('X-HasMore', String(result.page < pageCount));
      for (const h of ['X-Page', 'X-PerPage', 'X-Total', 'X-PageCount', 'X-HasMore']) exposeHeader(reply, h);
      return result.commits;
    },
  );

  app.get<{ Params: OwnerRepo & { '*': string }; Querystring: { output?: string; verification?: string; files?: string } }>(
    '/repos/:owner/:repo/compare/*',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoCompareDiff',
        summary: 'Get commit comparison information',
        params: withParam('*'),
        querystring: obj({ output: str, verification: commitFlags.verification, files: commitFlags.files }),
        response: { 200: ref('Compare'), ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      const repo = request.repoCtx.repo;
      const o = commitOptionsFromQuery(request.query);
      const output = request.query.output;
      if (output === 'diff' || output === 'patch') {
        const { base, head, sep } = await gitData.compare(repo, request.params['*'], { ...o, refsOnly: true });
        return sendText(reply, gitData.compareRaw(repo, base, head, sep, output === 'patch'));
      }
      return (await gitData.compare(repo, request.params['*'], o)).json;
    },
  );
}

export async function repoStatsRoutes(app: FastifyInstance) {
  const gitData = app.services.gitData;
  const tags = ['repository'];
  const read = { scopes: ['repository' as const], repo: CODE_READ };
  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/languages',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetLanguages',
        summary: 'Get languages and number of bytes of code written',
        params: ownerRepoParams,
        response: { 200: { type: 'object', additionalProperties: { type: 'integer' } }, ...errors(404) },
      },
    },
    async (request) => gitData.languages(request.repoCtx.repo),
  );
  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/licenses',
    { config: read, schema: { tags, operationId: 'repoGetLicenses', summary: 'Get repo licenses', params: ownerRepoParams, response: { 200: { type: 'array', items: str }, ...errors(404) } } },
    async (request) => gitData.licenses(request.repoCtx.repo),
  );
  app.get<{ Params: OwnerRepo & { filepath: string }; Querystring: { ref?: string } }>(
    '/repos/:owner/:repo/editorconfig/:filepath',
    {
      config: read,
      schema: {
        tags,
        operationId: 'repoGetEditorConfig',
        summary: 'Get the EditorConfig definitions of a file in a repository',
        params: withParam('filepath'),
        querystring: obj({ ref: { type: 'string', description: 'The name of the commit/branch/tag. Default to the repository’s default branch.' } }),
        response: {
          200: obj({ charset: str, indent_style: str, indent_size: str, tab_width: int, end_of_line: str, trim_trailing_whitespace: { type: 'boolean' }, insert_final_newline: { type: 'boolean' } }),
          ...errors(404),
        },
      },
    },
    async (request) => gitData.editorconfig(request.repoCtx.repo, request.params.filepath, request.query.ref || undefined),
  );
}

/** Go's FormInt: a value that does not parse is 0. */
function clampInt(v: number | undefined): number {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : 0;
}
