/**
 * Branches, branch protections, tags and tag protections of a repository. Permissions follow
 * Gitea's route middleware: reading needs code read access; branch and tag changes reqRepoWriter
 * (code) and a non-archived repository; protections are for repository admins.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { changeCtx, CODE_READ, CODE_WRITE, REPO_ADMIN } from '../plugins/repo-assignment';
import { setTotalCount } from '../plugins/paging';
import { bool, int, list, listOf, obj, ownerRepoParams, ref, str } from '../schemas';
import { CreateBranchProtectionOption, EditBranchProtectionOption } from '../schemas/branch';
import type { ProtectionInput } from '../services/branch-protection';
import type { RepoWithOwner } from '../services/repos';
import type { TagProtectionInput } from '../services/tag-protection';
import { errors, paging, pagingQuery, sendPage } from './helpers';

type OwnerRepo = { owner: string; repo: string };
type Wild = OwnerRepo & { '*': string };
const wildParams = obj({ owner: str, repo: str, '*': str }, ['owner', 'repo', '*']);
const idParams = obj({ owner: str, repo: str, id: str }, ['owner', 'repo', 'id']);
const noContent = { 204: { type: 'null' } };

export default async function branchRoutes(app: FastifyInstance) {
  const { branches, tags, branchProtections, tagProtections } = app.services;
  const tagsOf = { repository: ['repository'] };
  const scopes = ['repository' as const];
  const read = { scopes, repo: CODE_READ };
  const write = { auth: 'required' as const, scopes, repo: CODE_WRITE };
  const admin = { auth: 'required' as const, scopes, repo: REPO_ADMIN };
  const adminChange = { auth: 'required' as const, scopes, repo: { ...REPO_ADMIN, archived: 'refuse' as const } };
  const ctxOf = (request: FastifyRequest) => {
    const rc = request.repoCtx;
    return { repo: rc.repo as RepoWithOwner, doer: rc.doer, isAdmin: rc.isAdmin };
  };
  const writeCtxOf = (request: FastifyRequest) => {
    const rc = changeCtx(request);
    return { repo: rc.repo as RepoWithOwner, doer: rc.doer, isAdmin: rc.isAdmin };
  };

  /* ---------- branches ---------- */

  app.get<{ Params: OwnerRepo; Querystring: { q?: string; page?: number; limit?: number } }>(
    '/repos/:owner/:repo/branches',
    { config: read, schema: { tags: tagsOf.repository, operationId: 'repoListBranches', summary: "List a repository's branches", params: ownerRepoParams, querystring: obj({ q: str, ...pagingQuery }), response: { 200: listOf('Branch'), ...errors(404) } } },
    async (request, reply) => {
      const p = paging(app, request);
      const { data, total } = await branches.list(ctxOf(request), p.skip, p.take, request.query.q);
      return sendPage(app, request, reply, data, total, p);
    },
  );

  app.get<{ Params: Wild }>(
    '/repos/:owner/:repo/branches/*',
    { config: read, schema: { tags: tagsOf.repository, operationId: 'repoGetBranch', summary: 'Retrieve a specific branch from a repository, including its effective branch protection', params: wildParams, response: { 200: ref('Branch'), ...errors(404) } } },
    async (request) => branches.get(ctxOf(request), request.params['*']),
  );

  app.post<{ Params: OwnerRepo; Body: { new_branch_name?: string; old_branch_name?: string; old_ref_name?: string } }>(
    '/repos/:owner/:repo/branches',
    {
      config: write,
      schema: {
        tags: tagsOf.repository,
        operationId: 'repoCreateBranch',
        summary: 'Create a branch',
        params: ownerRepoParams,
        body: obj({ new_branch_name: str, old_branch_name: str, old_ref_name: str }),
        response: { 201: ref('Branch'), ...errors(401, 403, 404, 409, 422, 423) },
      },
    },
    async (request, reply) => reply.code(201).send(await branches.create(writeCtxOf(request), request.body ?? {})),
  );

  app.put<{ Params: Wild; Body: { new_commit_id?: string; old_commit_id?: string; force?: boolean } }>(
    '/repos/:owner/:repo/branches/*',
    {
      config: write,
      schema: {
        tags: tagsOf.repository,
        operationId: 'repoUpdateBranch',
        summary: 'Update a branch reference to a new commit',
        params: wildParams,
        body: obj({ new_commit_id: str, old_commit_id: str, force: bool }),
        response: { ...noContent, ...errors(401, 403, 404, 409, 422, 423) },
      },
    },
    async (request, reply) => {
      await branches.update(writeCtxOf(request), request.params['*'], request.body ?? {});
      return reply.code(204).send();
    },
  );

  app.patch<{ Params: Wild; Body: { name?: string } }>(
    '/repos/:owner/:repo/branches/*',
    {
      config: write,
      schema: { tags: tagsOf.repository, operationId: 'repoRenameBranch', summary: 'Rename a branch', params: wildParams, body: obj({ name: str }), response: { ...noContent, ...errors(401, 403, 404, 409, 422, 423) } },
    },
    async (request, reply) => {
      await branches.rename(writeCtxOf(request), request.params['*'], request.body?.name ?? '');
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: Wild }>(
    '/repos/:owner/:repo/branches/*',
    { config: write, schema: { tags: tagsOf.repository, operationId: 'repoDeleteBranch', summary: 'Delete a specific branch from a repository', params: wildParams, response: { ...noContent, ...errors(401, 403, 404, 409, 423) } } },
    async (request, reply) => {
      await branches.delete(writeCtxOf(request), request.params['*']);
      return reply.code(204).send();
    },
  );

  /* ---------- branch protections ---------- */

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/branch_protections',
    { config: admin, schema: { tags: tagsOf.repository, operationId: 'repoListBranchProtection', summary: 'List branch protections for a repository', params: ownerRepoParams, response: { 200: listOf('BranchProtection'), ...errors(401, 403, 404) } } },
    async (request) => {
      const rules = await branchProtections.list(request.repoCtx.repo.id);
      return Promise.all(rules.map((r) => branchProtections.json(r)));
    },
  );

  app.post<{ Params: OwnerRepo; Body: ProtectionInput }>(
    '/repos/:owner/:repo/branch_protections',
    {
      config: { ...adminChange, errorStatus: { Malformed: 400 } },
      schema: { tags: tagsOf.repository, operationId: 'repoCreateBranchProtection', summary: 'Create a branch protections for a repository', params: ownerRepoParams, body: CreateBranchProtectionOption, response: { 201: ref('BranchProtection'), ...errors(400, 401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      const rule = await branchProtections.create(request.repoCtx.repo as RepoWithOwner, request.body ?? {});
      return reply.code(201).send(await branchProtections.json(rule));
    },
  );

  app.post<{ Params: OwnerRepo; Body: { ids?: number[] } }>(
    '/repos/:owner/:repo/branch_protections/priority',
    {
      config: adminChange,
      schema: { tags: tagsOf.repository, operationId: 'repoUpdateBranchProtectionPriories', summary: 'Update the priorities of branch protections for a repository.', params: ownerRepoParams, body: obj({ ids: list(int) }), response: { ...noContent, ...errors(401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      await branchProtections.reorder(request.repoCtx.repo as RepoWithOwner, request.body?.ids ?? []);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: Wild }>(
    '/repos/:owner/:repo/branch_protections/*',
    { config: admin, schema: { tags: tagsOf.repository, operationId: 'repoGetBranchProtection', summary: 'Get a specific branch protection for the repository', params: wildParams, response: { 200: ref('BranchProtection'), ...errors(401, 403, 404) } } },
    async (request) => branchProtections.json(await branchProtections.get(request.repoCtx.repo.id, request.params['*'])),
  );

  app.patch<{ Params: Wild; Body: ProtectionInput }>(
    '/repos/:owner/:repo/branch_protections/*',
    {
      config: adminChange,
      schema: { tags: tagsOf.repository, operationId: 'repoEditBranchProtection', summary: 'Edit a branch protections for a repository. Only fields that are set will be changed', params: wildParams, body: EditBranchProtectionOption, response: { 200: ref('BranchProtection'), ...errors(401, 403, 404, 422, 423) } },
    },
    async (request) => branchProtections.json(await branchProtections.edit(request.repoCtx.repo as RepoWithOwner, request.params['*'], request.body ?? {})),
  );

  app.delete<{ Params: Wild }>(
    '/repos/:owner/:repo/branch_protections/*',
    { config: adminChange, schema: { tags: tagsOf.repository, operationId: 'repoDeleteBranchProtection', summary: 'Delete a specific branch protection for the repository', params: wildParams, response: { ...noContent, ...errors(401, 403, 404, 423) } } },
    async (request, reply) => {
      await branchProtections.delete(request.repoCtx.repo as RepoWithOwner, request.params['*']);
      return reply.code(204).send();
    },
  );

  /* ---------- tags ---------- */

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/tags',
    { config: read, schema: { tags: tagsOf.repository, operationId: 'repoListTags', summary: "List a repository's tags", params: ownerRepoParams, querystring: obj({ ...pagingQuery }), response: { 200: listOf('Tag'), ...errors(404) } } },
    async (request, reply) => {
      const p = paging(app, request);
      const { data, total } = await tags.list(ctxOf(request), p.skip, p.take);
      setTotalCount(reply, total);
      return data;
    },
  );

  app.get<{ Params: Wild }>(
    '/repos/:owner/:repo/tags/*',
    { config: read, schema: { tags: tagsOf.repository, operationId: 'repoGetTag', summary: 'Get the tag of a repository by tag name', params: wildParams, response: { 200: ref('Tag'), ...errors(404) } } },
    async (request) => tags.get(ctxOf(request), request.params['*']),
  );

  app.post<{ Params: OwnerRepo; Body: { tag_name?: string; message?: string; target?: string } }>(
    '/repos/:owner/:repo/tags',
    {
      config: write,
      schema: { tags: tagsOf.repository, operationId: 'repoCreateTag', summary: 'Create a new git tag in a repository', params: ownerRepoParams, body: obj({ tag_name: str, message: str, target: str }), response: { 201: ref('Tag'), ...errors(401, 403, 404, 405, 409, 422, 423) } },
    },
    async (request, reply) => reply.code(201).send(await tags.create(writeCtxOf(request), request.body ?? {})),
  );

  app.delete<{ Params: Wild }>(
    '/repos/:owner/:repo/tags/*',
    { config: write, schema: { tags: tagsOf.repository, operationId: 'repoDeleteTag', summary: "Delete a repository's tag by name", params: wildParams, response: { ...noContent, ...errors(401, 403, 404, 405, 409, 422, 423) } } },
    async (request, reply) => {
      await tags.delete(writeCtxOf(request), request.params['*']);
      return reply.code(204).send();
    },
  );

  /* ---------- tag protections ---------- */

  const tagProtectionId = (raw: string) => (/^\d{1,18}$/.test(raw) ? Number(raw) : NaN);

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/tag_protections',
    { config: admin, schema: { tags: tagsOf.repository, operationId: 'repoListTagProtection', summary: 'List tag protections for a repository', params: ownerRepoParams, response: { 200: listOf('TagProtection'), ...errors(401, 403, 404) } } },
    async (request) => Promise.all((await tagProtections.list(request.repoCtx.repo.id)).map((pt) => tagProtections.json(pt))),
  );

  const tagProtectionBody = obj({ name_pattern: { type: ['string', 'null'] }, whitelist_usernames: { type: ['array', 'null'], items: str }, whitelist_teams: { type: ['array', 'null'], items: str } });

  app.post<{ Params: OwnerRepo; Body: TagProtectionInput }>(
    '/repos/:owner/:repo/tag_protections',
    {
      config: { ...adminChange, errorStatus: { Malformed: 400 } },
      schema: { tags: tagsOf.repository, operationId: 'repoCreateTagProtection', summary: 'Create a tag protections for a repository', params: ownerRepoParams, body: tagProtectionBody, response: { 201: ref('TagProtection'), ...errors(400, 401, 403, 404, 422, 423) } },
    },
    async (request, reply) => reply.code(201).send(await tagProtections.json(await tagProtections.create(request.repoCtx.repo as RepoWithOwner, request.body ?? {}))),
  );

  app.get<{ Params: OwnerRepo & { id: string } }>(
    '/repos/:owner/:repo/tag_protections/:id',
    { config: admin, schema: { tags: tagsOf.repository, operationId: 'repoGetTagProtection', summary: 'Get a specific tag protection for the repository', params: idParams, response: { 200: ref('TagProtection'), ...errors(401, 403, 404) } } },
    async (request) => tagProtections.json(await tagProtections.get(request.repoCtx.repo.id, tagProtectionId(request.params.id))),
  );

  app.patch<{ Params: OwnerRepo & { id: string }; Body: TagProtectionInput }>(
    '/repos/:owner/:repo/tag_protections/:id',
    {
      config: adminChange,
      schema: { tags: tagsOf.repository, operationId: 'repoEditTagProtection', summary: 'Edit a tag protections for a repository. Only fields that are set will be changed', params: idParams, body: tagProtectionBody, response: { 200: ref('TagProtection'), ...errors(401, 403, 404, 422, 423) } },
    },
    async (request) => tagProtections.json(await tagProtections.edit(request.repoCtx.repo as RepoWithOwner, tagProtectionId(request.params.id), request.body ?? {})),
  );

  app.delete<{ Params: OwnerRepo & { id: string } }>(
    '/repos/:owner/:repo/tag_protections/:id',
    { config: admin, schema: { tags: tagsOf.repository, operationId: 'repoDeleteTagProtection', summary: 'Delete a specific tag protection for the repository', params: idParams, response: { ...noContent, ...errors(401, 403, 404) } } },
    async (request, reply) => {
      await tagProtections.delete(request.repoCtx.repo as RepoWithOwner, tagProtectionId(request.params.id));
      return reply.code(204).send();
    },
  );
}
