/**
 * buildApp(options): the forge as a Fastify instance (no listen). Applies migrations, opens
 * Prisma, decorates the app (config, prisma, auth, services: the contract with the git HTTP
 * routes) and registers the API under /api/v1 and git smart HTTP at the root; with
 * START_SSH_SERVER, git over SSH too.
 */
import fs from 'node:fs';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import './types/fastify';
import { lazySchemaCompilers } from './plugins/lazy-compilers';
import { loadConfig, type ForgeConfigInput } from './config';
import authPlugin, { AuthResolver } from './plugins/auth';
import backgroundPlugin from './plugins/background';
import errorsPlugin from './plugins/errors';
import formBody from './plugins/form-body';
import { bodyInput, urlInput } from './plugins/input';
import nullFields from './plugins/null-fields';
import repoAssignment from './plugins/repo-assignment';
import orgAssignment from './plugins/org-assignment';
import swaggerPlugin from './plugins/swagger';
import { SHARED_SCHEMAS } from './schemas';
import { createPrisma, migrate, tunePrisma, type Prisma } from './services/database';
import { createServices } from './services';
import versionRoutes from './routes/version';
import settingsRoutes from './routes/settings';
import userRoutes from './routes/users';
import tokenRoutes from './routes/tokens';
import oauth2ApplicationRoutes from './routes/oauth2-applications';
import adminRoutes from './routes/admin';
import adminBadgeRoutes from './routes/admin-badges';
import orgRoutes from './routes/orgs';
import repoRoutes from './routes/repos';
import contentRoutes from './routes/contents';
import repoSettingsRoutes, { repoAvatarFileRoutes } from './routes/repo-settings';
import forkRoutes, { generateRoutes } from './routes/forks';
import deployKeyRoutes from './routes/deploy-keys';
import transferRoutes from './routes/transfers';
import migrationRoutes from './routes/migrations';
import repoMiscRoutes, { issueTemplateRoutes } from './routes/repo-misc';
import teamRoutes from './routes/teams';
import collaboratorRoutes from './routes/collaborators';
import hookRoutes from './routes/hooks';
import keyRoutes from './routes/keys';
import gpgKeyRoutes from './routes/gpg-keys';
import packageRoutes from './routes/packages';
import packageRegistryRoutes from './routes/package-registry';
import cronRoutes from './routes/cron';
import pushMirrorRoutes from './routes/push-mirrors';
import mergeUpstreamRoutes from './routes/merge-upstream';
import trackerRoutes, { attachmentDownloadRoutes } from './routes/tracker';
import pullRoutes from './routes/pulls';
import pullReviewRoutes from './routes/pull-reviews';
import gitDataRoutes, { repoStatsRoutes } from './routes/git-data';
import statusRoutes from './routes/statuses';
import miscellaneousRoutes from './routes/miscellaneous';
import gitHttpRoutes from './routes/git-http';
import oauth2ProviderRoutes from './routes/oauth2-provider';
import twoFactorRoutes from './routes/two-factor';
import signInRoutes from './routes/sign-in';
import branchRoutes from './routes/branches';
import topicRoutes from './routes/topics';
import releaseRoutes, { releaseDownloadRoutes } from './routes/releases';
import wikiRoutes from './routes/wiki';
import starRoutes from './routes/stars';
import followRoutes from './routes/follows';
import blockRoutes from './routes/blocks';
import userAccountRoutes, { avatarFileRoutes } from './routes/user-account';
import userActivityRoutes from './routes/user-activity';
import repoPeopleRoutes from './routes/repo-people';
import issuePinRoutes from './routes/issue-pins';
import repoActivityRoutes from './routes/repo-activity';
import { SignInThrottle } from './services/sign-in-throttle';

export interface BuildAppOptions {
  /** Overrides of the environment-derived configuration. */
  config?: ForgeConfigInput;
  /** Fastify logger option (default: off; the server turns it on). */
  logger?: FastifyServerOptions['logger'];
  /** Use this client instead of opening one (the caller then owns it). */
  prisma?: Prisma;
  /** Skip applying migrations (the caller did). */
  skipMigrations?: boolean;
  /** Run no background work (webhook deliveries, cron): another process of a cluster does. */
  noBackground?: boolean;
  /** Compile every route's request and response schemas at startup, as Fastify does by default. */
  eagerSchemas?: boolean;
}

export async function buildApp(options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const config = loadConfig(options.config);
  fs.mkdirSync(config.reposDir, { recursive: true });
  if (!options.skipMigrations && !options.prisma) await migrate(config.databaseUrl);
  const prisma = options.prisma ?? createPrisma(config.databaseUrl);
  if (!options.prisma) await tunePrisma(prisma, config.databaseUrl);

  const app = Fastify({
    logger: options.logger ?? false,
    // One access line per request (onResponse below) instead of Fastify's two, which also
    // carry the query string, where a token may travel (?token=, ?access_token=).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 32 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: true, useDefaults: true, allErrors: false } },
    schemaController: lazySchemaCompilers(options.eagerSchemas),
  });
  const services = createServices(prisma, config, { logError: (err, event) => app.log.error({ err }, `notify ${event} failed`) });
  // A crash during repository creation leaves at most pending work that is undone here.
  await services.repos.recoverInterruptedCreations();
  app.decorate('config', config);
  app.decorate('prisma', prisma);
  app.decorate('services', services);
  app.decorate('auth', new AuthResolver(services.users, services.tokens, services.httpsig, services.oauth2, { disableQueryAuthToken: config.disableQueryAuthToken }, new SignInThrottle({ maxFailures: config.signInMaxFailures, windowMs: config.signInFailureWindowMs })));
  if (!options.prisma) app.addHook('onClose', async () => prisma.$disconnect());
  app.addHook('onClose', async () => services.gitReaders.close());
  app.addHook('onClose', async () => services.gitTransport.close());
  app.addHook('onClose', async () => services.gitHousekeeping.close());
  app.addHook('onClose', async () => services.hot.close());
  // Pushes to mirrors started by this process finish before the database closes.
  app.addHook('onClose', async () => services.pushMirrors.idle());
  // A check in progress finishes before the database closes.
  app.addHook('onClose', async () => services.pulls.checker.idle());
  app.addHook('onResponse', async (request, reply) => {
    const q = request.url.indexOf('?');
    const path = q < 0 ? request.url : request.url.slice(0, q);
    request.log.info(`${request.method} ${path} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)}ms`);
  });

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  await app.register(errorsPlugin);
  await app.register(urlInput);
  if (config.enableSwagger) await app.register(swaggerPlugin);
  if (!options.noBackground) await app.register(backgroundPlugin);

  await app.register(
    async (api) => {
      await api.register(authPlugin);
      await api.register(bodyInput);
      await api.register(repoAssignment);
      await api.register(orgAssignment);
      await formBody(api);
      await api.register(nullFields);
      await api.register(versionRoutes);
      await api.register(settingsRoutes);
      await api.register(userRoutes);
      await api.register(tokenRoutes);
      await api.register(oauth2ApplicationRoutes);
      await api.register(adminRoutes);
      await api.register(adminBadgeRoutes);
      await api.register(orgRoutes);
      await api.register(repoRoutes);
      await api.register(contentRoutes);
      await api.register(repoSettingsRoutes);
      await api.register(forkRoutes);
      await api.register(generateRoutes);
      await api.register(deployKeyRoutes);
      await api.register(transferRoutes);
      await api.register(migrationRoutes);
      await api.register(pushMirrorRoutes);
      await api.register(mergeUpstreamRoutes);
      await api.register(repoMiscRoutes);
      await api.register(issueTemplateRoutes);
      await api.register(teamRoutes);
      await api.register(collaboratorRoutes);
      await api.register(hookRoutes);
      await api.register(keyRoutes);
      await api.register(gpgKeyRoutes);
      await api.register(packageRoutes);
      await api.register(cronRoutes);
      await api.register(trackerRoutes);
      await api.register(pullRoutes);
      await api.register(pullReviewRoutes);
      await api.register(miscellaneousRoutes);
      await api.register(gitDataRoutes);
      await api.register(repoStatsRoutes);
      await api.register(statusRoutes);
      await api.register(branchRoutes);
      await api.register(topicRoutes);
      await api.register(releaseRoutes);
      await api.register(wikiRoutes);
      await api.register(starRoutes);
      await api.register(followRoutes);
      await api.register(blockRoutes);
      await api.register(userAccountRoutes);
      await api.register(userActivityRoutes);
      await api.register(repoPeopleRoutes);
      await api.register(issuePinRoutes);
      await api.register(repoActivityRoutes);
    },
    { prefix: '/api/v1' },
  );

  await app.register(attachmentDownloadRoutes);
  await app.register(releaseDownloadRoutes);
  await app.register(repoAvatarFileRoutes);
  await app.register(avatarFileRoutes);
  await app.register(packageRegistryRoutes, { prefix: '/api/packages' });
  await app.register(oauth2ProviderRoutes);
  await app.register(twoFactorRoutes);
  await app.register(signInRoutes);
  await app.register(gitHttpRoutes);
  app.decorate('sshPort', 0);
  if (config.startSshServer) {
    // Listens with the HTTP server (listen() makes the app ready) and stops with it. Loaded only
    // when asked for: ssh2 sets up a 16 MiB WASM heap (its poly1305) as soon as it is loaded.
    // (A require, not import(): the forge runs its TypeScript through tsx's CommonJS hook, which
    // a native import() of a .ts file would bypass.)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ForgeSshServer } = require('./ssh/server') as typeof import('./ssh/server');
    const ssh = new ForgeSshServer(config, services, app.log);
    app.addHook('onReady', async () => {
      app.sshPort = await ssh.start();
    });
    app.addHook('onClose', async () => ssh.close());
  }
  return app;
}
