/**
 * What users and organizations did and watch: GET /users/{username}/heatmap, the activity feeds
 * of a user (/users/{username}/activities/feeds) and of an organization
 * (/orgs/{org}/activities/feeds), and the watched repositories (/user/subscriptions,
 * /users/{username}/subscriptions). Middleware as Gitea's api.go: heatmap and feeds need no
 * token (scope user, or organization for the org feed), the subscription lists do. Rows of
 * repositories the doer cannot read never appear (services/permissions.ts readableRepoFilter).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { setTotalCount } from '../plugins/paging';
import { bool, int, list, listOf, obj, orgParams, usernameParams } from '../schemas';
import { ActivityService } from '../services/activities';
import type { User } from '../services/records';
import { contextUser, doerOf, errors, paging, pagingQuery, publicOnly, sendPage } from './helpers';

const Activity = { type: 'object', additionalProperties: true };
const dateQuery = { date: { type: 'string', format: 'date' } };

export default async function userActivityRoutes(app: FastifyInstance) {
  const { activities, watches, convert, repos, permissions } = app.services;

  app.get<{ Params: { username: string } }>(
    '/users/:username/heatmap',
    {
      config: { scopes: ['user'] },
      schema: { tags: ['user'], operationId: 'userGetHeatmapData', summary: "Get a user's heatmap", params: usernameParams, response: { 200: list(obj({ timestamp: int, contributions: int })), ...errors(404) } },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      return activities.heatmap(user, request.doer);
    },
  );

  app.get<{ Params: { username: string }; Querystring: { 'only-performed-by'?: boolean; date?: string } }>(
    '/users/:username/activities/feeds',
    {
      config: { scopes: ['user'] },
      schema: {
        tags: ['user'],
        operationId: 'userListActivityFeeds',
        summary: "List a user's activity feeds",
        params: usernameParams,
        querystring: obj({ 'only-performed-by': bool, ...dateQuery, ...pagingQuery }),
        response: { 200: list(Activity), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      const doer = request.doer;
      // Private rows (events of private repositories) for the user and site admins only.
      const includePrivate = doer !== null && (doer.isAdmin || doer.id === user.id) && !publicOnly(request);
      return feed(request, reply, user, includePrivate, { onlyPerformedBy: request.query['only-performed-by'] === true, exempt: [] });
    },
  );

  app.get<{ Params: { org: string }; Querystring: { date?: string } }>(
    '/orgs/:org/activities/feeds',
    {
      config: { scopes: ['organization'], org: { access: 'read' } },
      schema: {
        tags: ['organization'],
        operationId: 'orgListActivityFeeds',
        summary: "List an organization's activity feeds",
        params: orgParams,
        querystring: obj({ ...dateQuery, ...pagingQuery }),
        response: { 200: list(Activity), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { org } = request.orgCtx;
      const doer = request.doer;
      // Private rows for the organization's members and site admins.
      const includePrivate = doer !== null && !publicOnly(request) && (doer.isAdmin || (await permissions.isOrgMember(doer.id, org.id)));
      return feed(request, reply, org, includePrivate, { onlyPerformedBy: false, exempt: [org.id] });
    },
  );

  async function feed(request: FastifyRequest, reply: FastifyReply, owner: User, includePrivate: boolean, opts: { onlyPerformedBy: boolean; exempt: number[] }) {
    const p = paging(app, request);
    const { rows, total } = await activities.list({
      userId: owner.id,
      viewer: request.doer,
      onlyPerformedBy: opts.onlyPerformedBy,
      date: (request.query as { date?: string }).date,
      includePrivate,
      hideUnseenActors: { exempt: opts.exempt },
      skip: p.skip,
      take: p.take,
    });
    // Gitea sends X-Total-Count only on the feeds, no Link.
    setTotalCount(reply, total);
    return activities.toJson(rows, request.doer);
  }

  const repoList = { 200: listOf('Repository'), ...errors(401, 403, 404) };
  const sendWatched = async (request: FastifyRequest, reply: FastifyReply, watcher: User, own: boolean) => {
    const p = paging(app, request);
    // The watcher's own list holds the private repositories they still read (not through a public-only token).
    const viewer = own ? (request.doer as User) : watcher;
    const { rows, total } = await watches.watchedRepos(viewer, own && !publicOnly(request), p.skip, p.take);
    // Permissions are the watcher's, as Gitea converts them.
    const modes = await repos.accessModes(watcher, rows);
    return sendPage(app, request, reply, rows.map((r, i) => convert.repo(r, modes[i])), total, p);
  };

  app.get(
    '/user/subscriptions',
    {
      config: { auth: 'required', scopes: ['user'] },
      schema: { tags: ['user'], operationId: 'userCurrentListSubscriptions', summary: 'List repositories watched by the authenticated user', querystring: obj(pagingQuery), response: repoList },
    },
    (request, reply) => sendWatched(request, reply, doerOf(request), true),
  );

  app.get<{ Params: { username: string } }>(
    '/users/:username/subscriptions',
    {
      config: { auth: 'required', scopes: ['user'] },
      schema: { tags: ['user'], operationId: 'userListSubscriptions', summary: 'List the repositories watched by a user', params: usernameParams, querystring: obj(pagingQuery), response: repoList },
    },
    async (request, reply) => {
      const user = await contextUser(app, request, reply, request.params.username);
      if (!user) return reply;
      return sendWatched(request, reply, user, user.id === doerOf(request).id);
    },
  );
}
