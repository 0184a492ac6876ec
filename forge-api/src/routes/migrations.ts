/** POST /repos/migrate (reqToken, not with a public-only token) and POST /repos/{owner}/{repo}/mirror-sync. */
import type { FastifyInstance } from 'fastify';
import { changeCtx, CODE_WRITE } from '../plugins/repo-assignment';
import { bool, int, obj, ownerRepoParams, ref, str } from '../schemas';
import { AccessMode } from '../services/convert';
import { PermissionDeniedError } from '../services/errors';
import type { MigrateInput } from '../services/migrations';
import { errors, publicOnly } from './helpers';

const MigrateRepoOptionsSchema = obj(
  {
    clone_addr: { type: 'string', minLength: 1 },
    repo_name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[-\\w.]+$' },
    repo_owner: str,
    uid: int,
    auth_username: str,
    auth_password: str,
    auth_token: str,
    mirror: bool,
    private: bool,
    description: { type: 'string', maxLength: 2048 },
    mirror_interval: str,
    service: str,
    wiki: bool,
    milestones: bool,
    labels: bool,
    issues: bool,
    pull_requests: bool,
    releases: bool,
    lfs: bool,
    lfs_endpoint: str,
  },
  ['clone_addr', 'repo_name'],
);

export default async function migrationRoutes(app: FastifyInstance) {
  const { convert, migrations } = app.services;
  const tags = ['repository'];

  app.post<{ Body: MigrateInput }>(
    '/repos/migrate',
    {
      config: { auth: 'required', scopes: ['repository'], errorStatus: { AlreadyExists: 409 } },
      schema: { tags, operationId: 'repoMigrate', summary: 'Migrate a remote git repository', body: MigrateRepoOptionsSchema, response: { 201: ref('Repository'), ...errors(401, 403, 409, 422) } },
    },
    async (request, reply) => {
      if (publicOnly(request)) throw new PermissionDeniedError('token scope is limited to public repos');
      const repo = await migrations.migrate(request.doer!, request.body);
      return reply.code(201).send(convert.repo(repo, AccessMode.Owner));
    },
  );

  app.post<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo/mirror-sync',
    {
      config: { auth: 'required', scopes: ['repository'], repo: CODE_WRITE },
      schema: { tags, operationId: 'repoMirrorSync', summary: 'Sync a mirrored repository', params: ownerRepoParams, response: { 200: { type: 'null' }, ...errors(400, 401, 403, 404, 422, 423) } },
    },
    async (request, reply) => {
      const rc = changeCtx(request);
      await migrations.sync(rc.doer, rc.repo);
      return reply.code(200).send();
    },
  );
}
