/**
 * Teams: /orgs/{org}/teams (list, create, search) and /teams/{id} (get, edit, delete, members,
 * repositories, activity feed) with Gitea's access rules (api.go): every /teams/{id} route
 * needs team membership (org owners and site admins pass; an org member outside the team gets
 * 403, anyone else 404); edit/delete and member changes need org ownership (404 otherwise,
 * since those routes carry no organization context); adding/removing a repository needs admin
 * access to it (403 "Must have admin-level access to the repository").
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { setTotalCount } from '../plugins/paging';
import { bool, int, list, listOf, obj, orgParams, ref, str, strList } from '../schemas';
import { AccessMode } from '../services/convert';
import { visibleTeamVisibilities, type TeamInput, type TeamWithUnits } from '../services/teams';
import { toTeam } from '../services/convert/team';
import type { User } from '../services/records';
import { doerOf, errors, paging, pagingQuery, sendPage } from './helpers';
import { ORG_MEMBER, ORG_OWNER } from '../plugins/org-assignment';

// Any string: Gitea 1.27 binds no values (an unknown one gives a team of no access).
const modeEnum = { type: 'string' };
const unitsMapSchema = { type: 'object', additionalProperties: { type: 'string' } };

const teamBody = (requireName: boolean) =>
  obj(
    {
      name: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[-\\w.]+$' },
      description: { type: 'string', maxLength: 255 },
      permission: modeEnum,
      units: strList,
      units_map: unitsMapSchema,
      includes_all_repositories: bool,
      can_create_org_repo: bool,
      visibility: { type: 'string', enum: ['public', 'limited', 'private', ''] },
    },
    requireName ? ['name'] : [],
  );

const idParams = obj({ id: int }, ['id']);
const memberParams = obj({ id: int, username: str }, ['id', 'username']);
const repoParams = obj({ id: int, org: str, repo: str }, ['id', 'org', 'repo']);

export default async function teamRoutes(app: FastifyInstance) {
  const { convert, orgs, permissions, teams, users, repos, activities } = app.services;
  const tags = ['organization'];
  const cfg = { auth: 'required' as const, scopes: ['organization' as const] };
  // The organization (or team) of the path and the caller's standing in it: plugins/org-assignment.ts.
  const orgMemberCfg = { ...cfg, org: ORG_MEMBER };
  const orgOwnerCfg = { ...cfg, org: ORG_OWNER };
  const teamReadCfg = { ...cfg, team: { access: 'read' as const } };
  const teamMembersCfg = { ...cfg, team: { access: 'read' as const, orgMember: true } };
  const teamCfg = { ...cfg, team: { access: 'member' as const } };
  const teamOwnerCfg = { ...cfg, team: { access: 'owner' as const } };

  const teamJson = async (t: TeamWithUnits, withOrg: boolean) => {
    const org = withOrg ? await users.findById(t.orgId) : null;
    return toTeam(t, org ? convert.org(org) : null);
  };

  async function userParam(name: string): Promise<User> {
    const u = await users.findByName(name);
    if (!u) throw new NotFoundError('not found', [`user redirect does not exist [name: ${name}]`]);
    return u;
  }

  /** getRepositoryByParams: the repository is looked up in the team's org ({org} is not used). */
  async function teamRepo(team: TeamWithUnits, name: string) {
    const repo = await repos.findInOwner(team.orgId, name);
    if (!repo) throw new NotFoundError('not found', [`repository does not exist [name: ${name}]`]);
    return repo;
  }

  app.get<{ Params: { org: string } }>(
    '/orgs/:org/teams',
    { config: orgMemberCfg, schema: { tags, operationId: 'orgListTeams', summary: "List an organization's teams", params: orgParams, querystring: obj(pagingQuery), response: { 200: listOf('Team'), ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const { org } = request.orgCtx;
      const p = paging(app, request);
      const { rows, total } = await teams.search(org.id, { ...(await teams.listFilter(org.id, doerOf(request))), skip: p.skip, take: p.take });
      setTotalCount(reply, total);
      return Promise.all(rows.map((t) => teamJson(t, false)));
    },
  );

  app.post<{ Params: { org: string }; Body: TeamInput }>(
    '/orgs/:org/teams',
    { config: orgOwnerCfg, schema: { tags, operationId: 'orgCreateTeam', summary: 'Create a team', params: orgParams, body: teamBody(true), response: { 201: ref('Team'), ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      const doer = doerOf(request);
      const { org } = request.orgCtx;
      const team = await teams.create(org, request.body);
      return reply.code(201).send(await teamJson(team, true));
    },
  );

  app.get<{ Params: { org: string }; Querystring: { q?: string; include_desc?: boolean } }>(
    '/orgs/:org/teams/search',
    {
      config: orgMemberCfg,
      schema: {
        tags,
        operationId: 'teamSearch',
        summary: 'Search for teams within an organization',
        params: orgParams,
        querystring: obj({ q: str, include_desc: bool, ...pagingQuery }),
        response: { 200: obj({ ok: bool, data: listOf('Team') }), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const doer = doerOf(request);
      const { org } = request.orgCtx;
      const p = paging(app, request);
      const { rows, total } = await teams.search(org.id, {
        ...(await teams.listFilter(org.id, doer)),
        q: request.query.q,
        includeDesc: request.query.include_desc ?? true,
        skip: p.skip,
        take: p.take,
      });
      sendPage(app, request, reply, rows, total, p);
      return { ok: true, data: await Promise.all(rows.map((t) => teamJson(t, false))) };
    },
  );

  app.get(
    '/user/teams',
    {
      config: { auth: 'required', scopes: ['user', 'organization'], rejectPublicOnly: true },
      schema: { tags: ['user'], operationId: 'userListTeams', summary: 'List all the teams a user belongs to', querystring: obj(pagingQuery), response: { 200: listOf('Team'), ...errors(401, 403) } },
    },
    async (request, reply) => {
      const p = paging(app, request);
      const { rows, total } = await teams.ofUser(doerOf(request).id, p.skip, p.take);
      setTotalCount(reply, total);
      return Promise.all(rows.map((t) => teamJson(t, true)));
    },
  );

  app.get<{ Params: { id: number } }>(
    '/teams/:id',
    { config: teamReadCfg, schema: { tags, operationId: 'orgGetTeam', summary: 'Get a team', params: idParams, response: { 200: ref('Team'), ...errors(401, 403, 404) } } },
    async (request) => teamJson(request.team, true),
  );

  app.patch<{ Params: { id: number }; Body: TeamInput }>(
    '/teams/:id',
    { config: teamOwnerCfg, schema: { tags, operationId: 'orgEditTeam', summary: 'Edit a team', params: idParams, body: teamBody(true), response: { 200: ref('Team'), ...errors(401, 403, 404, 422) } } },
    async (request) => teamJson(await teams.edit(request.team, request.body), false),
  );

  app.delete<{ Params: { id: number } }>(
    '/teams/:id',
    { config: teamOwnerCfg, schema: { tags, operationId: 'orgDeleteTeam', summary: 'Delete a team', params: idParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      await teams.delete(request.team);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { id: number } }>(
    '/teams/:id/members',
    { config: teamMembersCfg, schema: { tags, operationId: 'orgListTeamMembers', summary: "List a team's members", params: idParams, querystring: obj(pagingQuery), response: { 200: listOf('User'), ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const team = request.team;
      const p = paging(app, request);
      const { rows, total } = await teams.members(team, p.skip, p.take);
      setTotalCount(reply, total);
      return rows.map((u) => convert.userFor(u, request.doer));
    },
  );

  app.get<{ Params: { id: number; username: string } }>(
    '/teams/:id/members/:username',
    { config: teamMembersCfg, schema: { tags, operationId: 'orgListTeamMember', summary: 'List a particular member of team', params: memberParams, response: { 200: ref('User'), ...errors(401, 403, 404) } } },
    async (request) => {
      const team = request.team;
      const user = await userParam(request.params.username);
      if (!(await teams.isMember(team.id, user.id))) throw new NotFoundError('not found');
      return convert.userFor(user, request.doer);
    },
  );

  app.put<{ Params: { id: number; username: string } }>(
    '/teams/:id/members/:username',
    { config: teamOwnerCfg, schema: { tags, operationId: 'orgAddTeamMember', summary: 'Add a team member', params: memberParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      const team = request.team;
      await teams.addMember(team, await userParam(request.params.username));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { id: number; username: string } }>(
    '/teams/:id/members/:username',
    { config: teamOwnerCfg, schema: { tags, operationId: 'orgRemoveTeamMember', summary: 'Remove a team member', params: memberParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      const team = request.team;
      await teams.removeMember(team, await userParam(request.params.username));
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { id: number } }>(
    '/teams/:id/repos',
    { config: teamReadCfg, schema: { tags, operationId: 'orgListTeamRepos', summary: "List a team's repos", params: idParams, querystring: obj(pagingQuery), response: { 200: listOf('Repository'), ...errors(401, 403, 404) } } },
    async (request, reply) => {
      const team = request.team;
      const p = paging(app, request);
      const { rows, total } = await teams.repos(team, request.doer, p.skip, p.take);
      const modes = await repos.accessModes(request.doer, rows);
      setTotalCount(reply, total);
      return rows.map((r, i) => convert.repo(r, modes[i]));
    },
  );

  app.get<{ Params: { id: number; org: string; repo: string } }>(
    '/teams/:id/repos/:org/:repo',
    { config: teamReadCfg, schema: { tags, operationId: 'orgListTeamRepo', summary: 'List a particular repo of team', params: repoParams, response: { 200: ref('Repository'), ...errors(401, 403, 404) } } },
    async (request) => {
      const team = request.team;
      const repo = await teamRepo(team, request.params.repo);
      if (!(await teams.hasRepo(team, repo))) throw new NotFoundError('not found');
      return convert.repo(repo, await permissions.repoModes(request.doer, repo));
    },
  );

  const changeRepo = (op: 'add' | 'remove') => async (request: FastifyRequest<{ Params: { id: number; org: string; repo: string } }>) => {
    const team = request.team;
    const repo = await teamRepo(team, request.params.repo);
    if ((await permissions.repoAccessMode(request.doer, repo)) < AccessMode.Admin) throw new PermissionDeniedError('Must have admin-level access to the repository');
    if (op === 'add') await teams.addRepo(team, repo);
    else await teams.removeRepo(team, repo);
  };

  app.put<{ Params: { id: number; org: string; repo: string } }>(
    '/teams/:id/repos/:org/:repo',
    { config: teamCfg, schema: { tags, operationId: 'orgAddTeamRepository', summary: 'Add a repository to a team', params: repoParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 422) } } },
    async (request, reply) => {
      await changeRepo('add')(request);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { id: number; org: string; repo: string } }>(
    '/teams/:id/repos/:org/:repo',
    {
      config: teamCfg,
      schema: {
        tags,
        operationId: 'orgRemoveTeamRepository',
        summary: 'Remove a repository from a team',
        description: 'This does not delete the repository, it only removes the repository from the team.',
        params: repoParams,
        response: { 204: { type: 'null' }, ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await changeRepo('remove')(request);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { id: number }; Querystring: { date?: string } }>(
    '/teams/:id/activities/feeds',
    {
      config: teamReadCfg,
      schema: {
        tags,
        operationId: 'orgListTeamActivityFeeds',
        summary: "List a team's activity feeds",
        params: idParams,
        querystring: obj({ date: { type: 'string', format: 'date' }, ...pagingQuery }),
        response: { 200: list({ type: 'object', additionalProperties: true }), ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const team = request.team;
      const p = paging(app, request);
      // The org's feed restricted to the team's repositories; rows of repositories the caller
      // cannot read (private activity) are left out by the feed query.
      const { rows, total } = await activities.list({
        userId: team.orgId,
        viewer: request.doer,
        repoIds: await teams.repoIds(team),
        date: request.query.date,
        skip: p.skip,
        take: p.take,
      });
      setTotalCount(reply, total);
      return activities.toJson(rows, request.doer);
    },
  );
}
