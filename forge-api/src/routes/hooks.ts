/**
 * Webhooks at Gitea's paths: /admin/hooks (system and default hooks, site admins, scope admin),
 * /orgs/{org}/hooks (org owners, scope organization), /user/hooks (the caller's own hooks, scope
 * user), /repos/{owner}/{repo}/hooks (repository admins, scope repository) and the repository test delivery. Creation is validated by the
 * service with Gitea's messages; every list is ordered by id.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { setTotalCount } from '../plugins/paging';
import { bool, int, listOf, obj, ownerRepoParams, ref, str, strList } from '../schemas';
import type { CreateHookInput, EditHookInput, HookScope } from '../services/webhooks';
import { type OrgAssignment } from '../plugins/org-assignment';
import { REPO_ADMIN, type RepoAssignment } from '../plugins/repo-assignment';
import { doerOf, errors, paging, pagingQuery } from './helpers';

const configSchema = { type: 'object', additionalProperties: { type: 'string' } };

export const HookSchema = obj(
  {
    id: int,
    name: str,
    type: str,
    branch_filter: str,
    config: configSchema,
    events: strList,
    authorization_header: str,
    active: bool,
    updated_at: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
  },
  [],
  { $id: 'Hook' },
);

/** Gitea's MaxSize(255) on the name, counted in characters. */
const hookName = { type: 'string', maxLength: 255 };
const CreateHookOption = obj(
  { type: { type: 'string', minLength: 1 }, name: hookName, config: configSchema, events: strList, branch_filter: str, authorization_header: str, active: bool },
  ['type', 'config'],
);
const EditHookOption = obj({ name: hookName, config: configSchema, events: strList, branch_filter: str, authorization_header: str, active: bool });

export default async function hookRoutes(app: FastifyInstance) {
  const { webhooks } = app.services;
  app.addSchema(HookSchema);

  interface Group {
    prefix: string;
    params?: Record<string, unknown>;
    tags: string[];
    ids: { list: string; create: string; get: string; edit: string; delete: string };
    scopes: ('admin' | 'organization' | 'repository' | 'user')[];
    auth: 'required' | 'admin';
    /** Resolves and authorizes the scope of the request. */
    scope(request: FastifyRequest): Promise<HookScope>;
    /** Lists are paged except the admin one (Gitea sends every system hook). */
    paged: boolean;
    /** The organization or repository of the path and the caller's access, checked before the handler. */
    assign?: { org?: OrgAssignment; repo?: RepoAssignment };
  }

  const groups: Group[] = [
    {
      prefix: '/admin/hooks',
      tags: ['admin'],
      ids: { list: 'adminListHooks', create: 'adminCreateHook', get: 'adminGetHook', edit: 'adminEditHook', delete: 'adminDeleteHook' },
      scopes: ['admin'],
      auth: 'admin',
      paged: false,
      scope: async () => ({ kind: 'system' }),
    },
    {
      prefix: '/orgs/:org/hooks',
      params: { org: str },
      tags: ['organization'],
      ids: { list: 'orgListHooks', create: 'orgCreateHook', get: 'orgGetHook', edit: 'orgEditHook', delete: 'orgDeleteHook' },
      scopes: ['organization'],
      auth: 'required',
      paged: true,
      assign: { org: { access: 'owner', outsider: 'notFound' } },
      scope: async (request) => ({ kind: 'owner', ownerId: request.orgCtx.org.id }),
    },
    {
      prefix: '/user/hooks',
      tags: ['user'],
      ids: { list: 'userListHooks', create: 'userCreateHook', get: 'userGetHook', edit: 'userEditHook', delete: 'userDeleteHook' },
      scopes: ['user'],
      auth: 'required',
      paged: true,
      scope: async (request) => ({ kind: 'owner', ownerId: doerOf(request).id }),
    },
    {
      prefix: '/repos/:owner/:repo/hooks',
      params: { owner: str, repo: str },
      tags: ['repository'],
      ids: { list: 'repoListHooks', create: 'repoCreateHook', get: 'repoGetHook', edit: 'repoEditHook', delete: 'repoDeleteHook' },
      scopes: ['repository'],
      auth: 'required',
      paged: true,
      assign: { repo: REPO_ADMIN },
      scope: async (request) => ({ kind: 'repo', repoId: request.repoCtx.repo.id }),
    },
  ];

  for (const g of groups) {
    const baseParams = g.params ? obj(g.params, Object.keys(g.params)) : undefined;
    const idParams = obj({ ...(g.params ?? {}), id: int }, [...Object.keys(g.params ?? {}), 'id']);
    const config = { auth: g.auth, scopes: g.scopes, ...g.assign };

    app.get(
      g.prefix,
      {
        config,
        schema: {
          tags: g.tags,
          operationId: g.ids.list,
          summary: 'List webhooks',
          ...(baseParams ? { params: baseParams } : {}),
          querystring: obj({ ...pagingQuery, ...(g.paged ? {} : { type: { type: 'string', enum: ['system', 'default', 'all'] } }) }),
          response: { 200: listOf('Hook'), ...errors(401, 403, 404) },
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const scope = await g.scope(request);
        const p = paging(app, request);
        const q = request.query as { type?: string };
        const { rows, total } = await webhooks.list(scope, g.paged ? { skip: p.skip, take: p.take } : { adminType: q.type });
        if (g.paged) setTotalCount(reply, total);
        return rows.map((h) => webhooks.toJson(h));
      },
    );

    app.post(
      g.prefix,
      {
        config,
        schema: {
          tags: g.tags,
          operationId: g.ids.create,
          summary: 'Create a hook',
          ...(baseParams ? { params: baseParams } : {}),
          body: CreateHookOption,
          response: { 201: ref('Hook'), ...errors(401, 403, 404, 422) },
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const scope = await g.scope(request);
        const hook = await webhooks.create(scope, request.body as CreateHookInput);
        return reply.code(201).send(webhooks.toJson(hook));
      },
    );

    app.get(
      `${g.prefix}/:id`,
      { config, schema: { tags: g.tags, operationId: g.ids.get, summary: 'Get a hook', params: idParams, response: { 200: ref('Hook'), ...errors(401, 403, 404) } } },
      async (request: FastifyRequest) => {
        const scope = await g.scope(request);
        return webhooks.toJson(await webhooks.get(scope, (request.params as { id: number }).id));
      },
    );

    app.patch(
      `${g.prefix}/:id`,
      {
        config,
        schema: { tags: g.tags, operationId: g.ids.edit, summary: 'Update a hook', params: idParams, body: EditHookOption, response: { 200: ref('Hook'), ...errors(401, 403, 404, 422) } },
      },
      async (request: FastifyRequest) => {
        const scope = await g.scope(request);
        return webhooks.toJson(await webhooks.edit(scope, (request.params as { id: number }).id, (request.body ?? {}) as EditHookInput));
      },
    );

    app.delete(
      `${g.prefix}/:id`,
      { config, schema: { tags: g.tags, operationId: g.ids.delete, summary: 'Delete a hook', params: idParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } } },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const scope = await g.scope(request);
        await webhooks.delete(scope, (request.params as { id: number }).id);
        return reply.code(204).send();
      },
    );
  }

  app.post<{ Params: { owner: string; repo: string; id: number }; Querystring: { ref?: string } }>(
    '/repos/:owner/:repo/hooks/:id/tests',
    {
      config: { auth: 'required', scopes: ['repository'], repo: REPO_ADMIN },
      schema: {
        tags: ['repository'],
        operationId: 'repoTestHook',
        summary: 'Test a push webhook',
        params: obj({ ...ownerRepoParams.properties, id: int }, ['owner', 'repo', 'id']),
        querystring: obj({ ref: str }),
        response: { 204: { type: 'null' }, ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const doer = doerOf(request);
      const { repo } = request.repoCtx;
      // Gitea's test push: the default branch's last commit (a ref given only renames the ref);
      // an empty repository is sent nothing, whatever the hook.
      const commit = await app.services.branches.tipPayloadCommit(repo, repo.defaultBranch);
      if (!commit) return reply.code(204).send();
      const hook = await webhooks.get({ kind: 'repo', repoId: repo.id }, request.params.id);
      const sender = webhooks.userJson(doer);
      await webhooks.queueTest(hook, {
        ref: request.query.ref || `refs/heads/${repo.defaultBranch}`,
        before: commit.id,
        after: commit.id,
        compare_url: `${app.config.rootUrl}${encodeURIComponent(repo.owner.name)}/${encodeURIComponent(repo.name)}/compare/${commit.id}...${commit.id}`,
        commits: [commit],
        total_commits: 1,
        head_commit: commit,
        repository: webhooks.repoJson(repo),
        pusher: sender,
        sender,
      });
      return reply.code(204).send();
    },
  );
}

