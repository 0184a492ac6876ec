/**
 * Package records under /api/v1 (scope package): GET /packages/{owner} (type and q filters,
 * paged, newest first), GET/DELETE /packages/{owner}/{type}/{name}/{version} and
 * GET .../files. Reading needs read access to the owner's packages (anyone who may see the
 * owner), deleting needs write access (the owner, org members with write, site admins);
 * Gitea answers a lack of access with 403.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { list, obj, str } from '../schemas';
import { AccessMode } from '../services/convert';
import { PACKAGE_TYPES } from '../services/packages';
import type { User } from '../services/records';
import { errors, paging, pagingQuery, sendPage } from './helpers';

const anyObject = { type: 'object', additionalProperties: true };
const versionParams = obj({ owner: str, type: str, name: str, version: str }, ['owner', 'type', 'name', 'version']);

export default async function packageRoutes(app: FastifyInstance) {
  const { packages, users, permissions } = app.services;
  const tags = ['package'];

  async function ownerWith(request: FastifyRequest, name: string, need: number): Promise<User> {
    const owner = await users.findByName(name);
    if (!owner || !(await permissions.canSeeOwner(request.doer, owner))) throw new NotFoundError('not found', [`user redirect does not exist [name: ${name}]`]);
    if (request.auth?.scopes?.publicOnly && owner.visibility === 2) throw new PermissionDeniedError('token scope is limited to public packages');
    if ((await packages.accessMode(request.doer, owner)) < need) throw new PermissionDeniedError('user should have specific permission or be a site admin');
    return owner;
  }

  app.get<{ Params: { owner: string }; Querystring: { type?: string; q?: string } }>(
    '/packages/:owner',
    {
      config: { scopes: ['package'] },
      schema: {
        tags,
        operationId: 'listPackages',
        summary: 'Gets all packages of an owner',
        params: obj({ owner: str }, ['owner']),
        querystring: obj({ type: { type: 'string', enum: PACKAGE_TYPES }, q: str, ...pagingQuery }),
        response: { 200: list(anyObject), ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Read);
      const p = paging(app, request);
      const { rows, total } = await packages.list(owner, { type: request.query.type, q: request.query.q, skip: p.skip, take: p.take });
      const data = await Promise.all(rows.map((v) => packages.toJson(v, owner, request.doer)));
      return sendPage(app, request, reply, data, total, p);
    },
  );

  app.get<{ Params: { owner: string; type: string; name: string; version: string } }>(
    '/packages/:owner/:type/:name/:version',
    { config: { scopes: ['package'] }, schema: { tags, operationId: 'getPackage', summary: 'Gets a package', params: versionParams, response: { 200: anyObject, ...errors(401, 403, 404) } } },
    async (request) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Read);
      const ver = await packages.findVersion(owner, request.params.type, request.params.name, request.params.version);
      if (!ver) throw new NotFoundError('not found', ['package does not exist']);
      return packages.toJson(ver, owner, request.doer);
    },
  );

  app.delete<{ Params: { owner: string; type: string; name: string; version: string } }>(
    '/packages/:owner/:type/:name/:version',
    {
      config: { auth: 'required', scopes: ['package'] },
      schema: { tags, operationId: 'deletePackage', summary: 'Delete a package', params: versionParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Write);
      const ver = await packages.findVersion(owner, request.params.type, request.params.name, request.params.version);
      if (!ver) throw new NotFoundError('not found', ['package does not exist']);
      await packages.deleteVersion(ver);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { owner: string; type: string; name: string; version: string } }>(
    '/packages/:owner/:type/:name/:version/files',
    {
      config: { scopes: ['package'] },
      schema: { tags, operationId: 'listPackageFiles', summary: 'Gets all files of a package', params: versionParams, response: { 200: list(anyObject), ...errors(401, 403, 404) } },
    },
    async (request) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Read);
      const ver = await packages.findVersion(owner, request.params.type, request.params.name, request.params.version);
      if (!ver) throw new NotFoundError('not found', ['package does not exist']);
      return packages.filesJson(ver.files);
    },
  );
}


