/**
 * Package records under /api/v1 (scope package): GET /packages/{owner} (type and q filters,
 * paged, newest first), GET/DELETE /packages/{owner}/{type}/{name}/{version} and
 * GET .../files, the versions of one package, its latest version, DELETE of a whole package and
 * linking a package to a repository of its owner. Reading needs read access to the owner's packages (anyone who may see the
 * owner), deleting needs write access (the owner, org members with write, site admins);
 * Gitea answers a lack of access with 403. Every route needs a signed-in caller, as Gitea's
 * package group requires a token even for public owners.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { list, obj, str } from '../schemas';
import { AccessMode } from '../services/convert';
import { PACKAGE_TYPES } from '../services/packages';
import type { User } from '../services/records';
import { errors, paging, pagingQuery, sendPage } from './helpers';

const anyObject = { type: 'object', additionalProperties: true };
const packageParams = obj({ owner: str, type: str, name: str }, ['owner', 'type', 'name']);
const versionParams = obj({ owner: str, type: str, name: str, version: str }, ['owner', 'type', 'name', 'version']);

type PackageParams = { owner: string; type: string; name: string };

export default async function packageRoutes(app: FastifyInstance) {
  const { packages, users, permissions, repos } = app.services;
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
      config: { auth: 'required', scopes: ['package'] },
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
      return sendPage(app, request, reply, await packages.toJsonMany(rows, owner, request.doer), total, p);
    },
  );

  async function packageOf(owner: User, type: string, name: string) {
    const pkg = await packages.findPackage(owner, type, name);
    if (!pkg) throw new NotFoundError('not found', ['GetPackageByName: package does not exist']);
    return pkg;
  }

  app.get<{ Params: PackageParams }>(
    '/packages/:owner/:type/:name',
    {
      config: { auth: 'required', scopes: ['package'] },
      schema: { tags, operationId: 'listPackageVersions', summary: 'Gets all versions of a package', params: packageParams, querystring: obj({ ...pagingQuery }), response: { 200: list(anyObject), ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Read);
      const pkg = await packageOf(owner, request.params.type, request.params.name);
      const p = paging(app, request);
      const { rows, total } = await packages.listVersions(pkg, { skip: p.skip, take: p.take });
      return sendPage(app, request, reply, await packages.toJsonMany(rows, owner, request.doer), total, p);
    },
  );

  app.delete<{ Params: PackageParams }>(
    '/packages/:owner/:type/:name',
    {
      config: { auth: 'required', scopes: ['package'] },
      schema: { tags, operationId: 'deletePackage', summary: 'Delete a package', params: packageParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } },
    },
    async (request, reply) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Write);
      await packages.deletePackage(await packageOf(owner, request.params.type, request.params.name));
      return reply.code(204).send();
    },
  );

  app.get<{ Params: PackageParams }>(
    '/packages/:owner/:type/:name/-/latest',
    { config: { auth: 'required', scopes: ['package'] }, schema: { tags, operationId: 'getLatestPackageVersion', summary: 'Gets the latest version of a package', params: packageParams, response: { 200: anyObject, ...errors(401, 403, 404) } } },
    async (request) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Read);
      const ver = await packages.latestVersion(await packageOf(owner, request.params.type, request.params.name));
      if (!ver) throw new NotFoundError();
      return packages.toJson(ver, owner, request.doer);
    },
  );

  app.post<{ Params: PackageParams & { repo_name: string } }>(
    '/packages/:owner/:type/:name/-/link/:repo_name',
    {
      config: { auth: 'required', scopes: ['package'], errorStatus: { Invalid: 400 } },
      schema: {
        tags,
        operationId: 'linkPackage',
        summary: 'Link a package to a repository',
        params: obj({ owner: str, type: str, name: str, repo_name: str }, ['owner', 'type', 'name', 'repo_name']),
        response: { 201: { type: 'null' }, ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Write);
      const pkg = await packageOf(owner, request.params.type, request.params.name);
      const repo = await repos.findInOwner(owner.id, request.params.repo_name);
      if (!repo) throw new NotFoundError('not found', [`repository does not exist [id: 0, uid: ${owner.id}, owner_name: , name: ${request.params.repo_name}]`]);
      await packages.link(pkg, repo, request.doer as User);
      return reply.code(201).send();
    },
  );

  app.post<{ Params: PackageParams }>(
    '/packages/:owner/:type/:name/-/unlink',
    {
      config: { auth: 'required', scopes: ['package'], errorStatus: { Invalid: 400 } },
      schema: { tags, operationId: 'unlinkPackage', summary: 'Unlink a package from a repository', params: packageParams, response: { 204: { type: 'null' }, ...errors(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      const owner = await ownerWith(request, request.params.owner, AccessMode.Write);
      await packages.unlink(await packageOf(owner, request.params.type, request.params.name), owner, request.doer as User);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { owner: string; type: string; name: string; version: string } }>(
    '/packages/:owner/:type/:name/:version',
    { config: { auth: 'required', scopes: ['package'] }, schema: { tags, operationId: 'getPackage', summary: 'Gets a package', params: versionParams, response: { 200: anyObject, ...errors(401, 403, 404) } } },
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
      schema: { tags, operationId: 'deletePackageVersion', summary: 'Delete a package version', params: versionParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404) } },
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
      config: { auth: 'required', scopes: ['package'] },
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


