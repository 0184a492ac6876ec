/**
 * The people and teams around a repository: GET /assignees, /assignees/{assignee}, /reviewers
 * and the repository's teams (GET /teams, GET/PUT/DELETE /teams/{team}). Middleware as Gitea's
 * api.go: a token and read access for all; changing teams needs repository admin, then Gitea's
 * CanChangeRepoTeamAccess (organization owner, site admin, or any repository admin when the
 * organization allows it). Team routes of a personal repository answer 405.
 */
import type { FastifyInstance } from 'fastify';
import { REPO_ADMIN } from '../plugins/repo-assignment';
import { listOf, obj, ownerRepoParams, ref, str } from '../schemas';
import { toTeam } from '../services/convert/team';
import { NotFoundError, PermissionDeniedError } from '../services/errors';
import { orgOwned } from '../services/repo-teams';
import { doerOf, errors } from './helpers';
import type { OwnerRepo } from './issue-helpers';

type TeamParams = OwnerRepo & { team: string };
const teamParams = obj({ owner: str, repo: str, team: str }, ['owner', 'repo', 'team']);
const assigneeParams = obj({ owner: str, repo: str, assignee: str }, ['owner', 'repo', 'assignee']);

export default async function repoPeopleRoutes(app: FastifyInstance) {
  const tags = ['repository'];
  const { assignees, repoTeams, convert, users } = app.services;
  const read = { auth: 'required' as const, scopes: ['repository' as const], repo: { access: 'read' as const } };
  const admin = { auth: 'required' as const, scopes: ['repository' as const], repo: REPO_ADMIN };

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/assignees',
    { config: read, schema: { tags, operationId: 'repoGetAssignees', summary: 'Return all users that have write access and can be assigned to issues', params: ownerRepoParams, response: { 200: listOf('User'), ...errors(401, 404) } } },
    async (request) => (await assignees.assignees(request.repoCtx.repo)).map((u) => convert.userFor(u, request.doer)),
  );

  app.get<{ Params: OwnerRepo & { assignee: string } }>(
    '/repos/:owner/:repo/assignees/:assignee',
    {
      // Gitea's CanBeAssigned refuses an organization as an invalid argument (400).
      config: { ...read, errorStatus: { Invalid: 400 } },
      schema: { tags, operationId: 'repoCheckAssignee', summary: 'Check if a user is assignable to issues in a repository', params: assigneeParams, response: { 204: { type: 'null' }, ...errors(400, 401, 404) } },
    },
    async (request, reply) => {
      const name = request.params.assignee;
      const user = await users.findByName(name);
      if (!user) throw new NotFoundError(`user does not exist [uid: 0, name: ${name}]`);
      if (!(await assignees.canBeAssigned(user, request.repoCtx.repo))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/reviewers',
    { config: read, schema: { tags, operationId: 'repoGetReviewers', summary: 'Return all users that can be requested to review in this repo', params: ownerRepoParams, response: { 200: listOf('User'), ...errors(401, 403, 404) } } },
    async (request) => {
      const repo = request.repoCtx.repo;
      if (!(await assignees.canChooseReviewers(doerOf(request), repo))) throw new PermissionDeniedError('doer has no permission to get reviewers');
      return (await assignees.reviewers(repo)).map((u) => convert.userFor(u, request.doer));
    },
  );

  app.get<{ Params: OwnerRepo }>(
    '/repos/:owner/:repo/teams',
    { config: read, schema: { tags, operationId: 'repoListTeams', summary: "List a repository's teams", params: ownerRepoParams, response: { 200: listOf('Team'), ...errors(401, 404, 405) } } },
    async (request) => {
      const repo = request.repoCtx.repo;
      orgOwned(repo);
      return (await repoTeams.list(repo)).map((t) => toTeam(t));
    },
  );

  app.get<{ Params: TeamParams }>(
    '/repos/:owner/:repo/teams/:team',
    { config: read, schema: { tags, operationId: 'repoCheckTeam', summary: 'Check if a team is assigned to a repository', params: teamParams, response: { 200: ref('Team'), ...errors(401, 404, 405) } } },
    async (request) => {
      const repo = request.repoCtx.repo;
      orgOwned(repo);
      const team = await repoTeams.byName(repo, request.params.team);
      if (!(await repoTeams.has(team, repo))) throw new NotFoundError();
      return toTeam(team);
    },
  );

  app.put<{ Params: TeamParams }>(
    '/repos/:owner/:repo/teams/:team',
    { config: admin, schema: { tags, operationId: 'repoAddTeam', summary: 'Add a team to a repository', params: teamParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 405, 422) } } },
    async (request, reply) => {
      await repoTeams.add(doerOf(request), request.repoCtx.repo, request.params.team);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: TeamParams }>(
    '/repos/:owner/:repo/teams/:team',
    { config: admin, schema: { tags, operationId: 'repoDeleteTeam', summary: 'Delete a team from a repository', params: teamParams, response: { 204: { type: 'null' }, ...errors(401, 403, 404, 405, 422) } } },
    async (request, reply) => {
      await repoTeams.remove(doerOf(request), request.repoCtx.repo, request.params.team);
      return reply.code(204).send();
    },
  );
}
