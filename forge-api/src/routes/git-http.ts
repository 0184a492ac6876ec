/**
 * git over smart HTTP at /{owner}/{repo}.git (the ".git" is optional, as in Gitea):
 *   GET  .../info/refs?service=git-upload-pack|git-receive-pack
 *   POST .../git-upload-pack, .../git-receive-pack
 * Bodies are streamed to `git upload-pack|receive-pack --stateless-rpc` and back; gzip request
 * bodies (sent by git for large negotiations) are inflated on the way.
 *
 * Access follows Gitea's httpBase: a pull from a public repository needs nothing; anything else
 * asks for credentials with 401 + `WWW-Authenticate: Basic` (git then prompts or asks its
 * credential helper); a signed-in caller who may not read (or, for a push, write) gets 404; a
 * token must hold read:repository (pull) or write:repository (push), else 403.
 */
import { hasScope, InvalidScopeError, parseScopes, type ScopeLevel } from '../services/scopes';
import fs from 'node:fs';
import { PassThrough, Readable } from 'stream';
import zlib from 'zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { repositoryPath } from '../services/git';
import type { AuthResult } from '../plugins/auth';
import { TooManyRequestsError } from '../services/errors';
import { USER_TYPE_ORGANIZATION } from '../services/permissions';
import type { User } from '../services/records';
import type { RepoWithOwner } from '../services/repos';
import { GitTransport, type PushedRefUpdate } from '../services/git/transport';
import type { ProcReceiveAnswer, ProcReceiveCommand, ProcReceiveHandler } from '../services/git/proc-receive';
import type { GitProcess } from '../services/git/spawner';
import { isLsRefsRequest, lsRefsAnswer, MAX_LS_REFS_REQUEST, uploadPackAdvertisement } from '../services/git/upload-pack-memo';

export type { PushedRefUpdate } from '../services/git/transport';

type Service = 'upload-pack' | 'receive-pack';

export interface GitHttpUser {
  id: number;
  name: string;
  isAdmin?: boolean;
}

export interface GitHttpAuth<U extends GitHttpUser = GitHttpUser> {
  user: U | null;
  /** Scopes of the token used, or null when the caller signed in with a password. */
  tokenScopes: string[] | null;
  /** Set when credentials were sent but are wrong (or a password needs a second factor). */
  error?: string;
  /** Set when the account may not sign in (inactive, prohibited): 403 with this message. */
  blocked?: string;
  /** Set when the client failed to sign in too often: 429, retry after this many seconds. */
  retryAfterSeconds?: number;
}

export interface GitHttpRepo {
  id: number;
  ownerName: string;
  name: string;
  isPrivate: boolean;
  isArchived?: boolean;
  isMirror?: boolean;
  /** Anonymous pulls need a public owner too (Gitea asks for credentials otherwise); default true. */
  ownerIsPublic?: boolean;
  /** Repositories of an inactive individual owner cannot be reached (403); default true. */
  ownerIsActive?: boolean;
  /** The wiki unit is on (`<repo>.wiki.git` is served); default false. */
  hasWiki?: boolean;
}

export interface GitHttpAccess {
  read: boolean;
  write: boolean;
}

/** What the routes need from the rest of the forge; built from the app's decorations by default. */
export interface GitHttpDeps<U extends GitHttpUser = GitHttpUser, R extends GitHttpRepo = GitHttpRepo> {
  reposDir: string;
  realm: string;
  authenticate(request: FastifyRequest): Promise<GitHttpAuth<U>>;
  findRepo(owner: string, name: string): Promise<R | null>;
  /** `user` and `repo` are what authenticate() and findRepo() returned (so are the others'). */
  access(user: U | null, repo: R, unit?: 'repo.code' | 'repo.wiki'): Promise<GitHttpAccess>;
  /** The wiki repository of `repo` on disk, created on the first push (Gitea's InitWiki); null when the forge has no wikis. */
  wikiPath?(repo: R, create: boolean): Promise<string | null>;
  /** Called when a push ended; `pusher` is who authenticated it. */
  afterPush(repo: R, repoPath: string, pusher: U | null): Promise<void>;
  /**
   * Gitea's pre-receive checks: the refusal the git client must see, or null to let the ref
   * updates in. `env` reaches the objects of the incoming pack (git's quarantine directory).
   * `canWrite`: the pusher may write the code (only reading it is enough for an AGit push).
   */
  checkPush?(repo: R, repoPath: string, pusher: U | null, updates: PushedRefUpdate[], env: Record<string, string>, canWrite: boolean): Promise<string | null>;
  /**
   * The refs/for/* updates of a push (AGit pull requests), after the pre-receive checks passed.
   * With it a push to the code needs only read access, as in Gitea: checkPush then refuses
   * the updates of other refs to those who may not write.
   */
  procReceive?(repo: R, repoPath: string, pusher: U | null, commands: ProcReceiveCommand[], options: string[]): Promise<ProcReceiveAnswer>;
  /** What the client is shown once a push's ref updates went in (the pull request hint). */
  postReceive?(repo: R, updates: PushedRefUpdate[]): Promise<string>;
}

export interface GitHttpOptions {
  deps?: Partial<GitHttpDeps>;
}

const NO_CACHE = {
  expires: 'Fri, 01 Jan 1980 00:00:00 GMT',
  pragma: 'no-cache',
  'cache-control': 'no-cache, max-age=0, must-revalidate',
};

/** Gitea's filter for the Git-Protocol header before it reaches git's environment. */
const SAFE_GIT_PROTOCOL = /^[0-9a-zA-Z]+=[0-9a-zA-Z]+(:[0-9a-zA-Z]+=[0-9a-zA-Z]+)*$/;

function pktLine(s: string): string {
  return (s.length + 4).toString(16).padStart(4, '0') + s;
}

/** Does a token with these scopes reach repository code at this level? (services/scopes rules) */
function allowsRepository(scopes: string[], level: ScopeLevel): boolean {
  try {
    return hasScope(parseScopes(scopes), 'repository', level);
  } catch (err) {
    if (err instanceof InvalidScopeError) return false;
    throw err;
  }
}

/** A git service that exited with an error: what it wrote. */
interface GitOutputError extends Error {
  stdout?: Buffer;
  stderr?: string;
}

/** Runs a spawned git service to its end: its stdout, or a GitOutputError when it failed. */
function collect(child: GitProcess, input?: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4096)));
  child.stdin.on('error', () => undefined);
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    const fail = (code: number | null) => reject(Object.assign(new Error(`git exited with ${code}`), { stdout: Buffer.concat(chunks), stderr }));
    child.on('error', () => fail(-1));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : fail(code)));
  });
}

/** The whole of a small request body, or null when it is longer than `limit` (then the stream is left as it was). */
function readAll(input: Readable, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onError);
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size > limit) {
        // Longer than announced: hand the rest on as a stream, with what was read put back.
        done();
        input.pause();
        input.unshift(Buffer.concat(chunks));
        resolve(null);
      }
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('error', onError);
  });
}

/* ---------- the forge's dependencies: the app's decorations (types/fastify.ts) ---------- */

/** A repository as the forge finds it, with what the routes ask of its owner. */
type ForgeGitRepo = RepoWithOwner & GitHttpRepo;

/** A token's scopes as the scope strings allowsRepository reads; null for a password. */
function scopesOf(result: AuthResult): string[] | null {
  const set = result.scopes;
  // A token without a scope list (a signed request) reaches no repository code.
  if (!set) return result.method === 'token' ? [] : null;
  const out: string[] = set.publicOnly ? ['public-only'] : [];
  const level = set.all ? 2 : set.levels.repository ?? 0;
  if (level >= 2) out.push('write:repository');
  else if (level === 1) out.push('read:repository');
  return out;
}

/**
 * The routes' dependencies from the forge's services. The users and repositories the routes
 * hand back to access(), afterPush() and the rest are the ones authenticate() and findRepo()
 * returned, so they are the forge's own records.
 */
function forgeDeps(app: FastifyInstance): GitHttpDeps<User, ForgeGitRepo> {
  const { services } = app;
  return {
    reposDir: app.config.reposDir,
    realm: 'Gitea',
    async authenticate(request) {
      let result: AuthResult;
      try {
        result = await app.auth.resolveUser(request);
      } catch (err) {
        if (err instanceof TooManyRequestsError) return { user: null, tokenScopes: null, error: err.message, retryAfterSeconds: err.retryAfterSeconds };
        let message = (err as Error).message || 'invalid credentials';
        // git cannot send a one-time password: say so as Gitea does.
        if (/OTP/i.test(message)) {
          message =
            'Users with two-factor authentication enabled cannot perform HTTP/HTTPS operations via plain username and password. Please create and use a personal access token on the user settings page';
        }
        return { user: null, tokenScopes: null, error: message };
      }
      const user = result.user;
      if (!user) return { user: null, tokenScopes: null };
      const blocked = !user.isActive || user.prohibitLogin ? 'This account is prohibited from signing in, please contact your site administrator.' : undefined;
      return { user, tokenScopes: scopesOf(result), blocked };
    },
    async findRepo(owner, name) {
      const repo = await services.repos.findByOwnerAndName(owner, name);
      if (!repo) return null;
      return {
        ...repo,
        ownerIsPublic: repo.owner.visibility === 0,
        // organizations (type 1) have no active flag of their own
        ownerIsActive: repo.owner.type === USER_TYPE_ORGANIZATION || repo.owner.isActive,
      };
    },
    async access(user, repo, unit = 'repo.code') {
      const p = await services.permissions.repoAccess(user, repo, unit);
      return { read: p.read, write: p.write };
    },
    async wikiPath(repo, create) {
      if (create) return services.wiki.init(repo);
      const p = services.wiki.wikiPath(repo);
      return fs.existsSync(p) ? p : null;
    },
    async afterPush(repo, _repoPath, pusher) {
      await services.repos.afterPush(pusher, repo.id);
    },
    async checkPush(repo, repoPath, pusher, updates, env, canWrite) {
      // The row again: a push waits on the client, and the repository may have changed meanwhile.
      const full = await services.repos.byId(repo.id);
      if (!full) return 'Repository not found';
      return services.pushRules.check(full, repoPath, pusher, updates, env, { canWrite });
    },
    async procReceive(repo, repoPath, pusher, commands, options) {
      const full = await services.repos.byId(repo.id);
      if (!full || !pusher) return { results: commands.map((c) => ({ ref: c.ref, error: 'Repository not found' })) };
      return services.pulls.agit.procReceive(full, repoPath, pusher, commands, options);
    },
    async postReceive(repo, updates) {
      const full = await services.repos.byId(repo.id);
      return full ? services.pulls.pushMessage.forPush(full, updates) : '';
    },
  };
}

/* ---------- the routes ---------- */

interface Params {
  owner: string;
  repo: string;
}

function plain(reply: FastifyReply, code: number, text: string) {
  return reply.code(code).type('text/plain; charset=utf-8').send(text);
}

export default async function gitHttpRoutes(app: FastifyInstance, opts: GitHttpOptions = {}) {
  // Inside the forge the app's decorations give every dependency; on their own (tests), the
  // routes take them from `opts.deps`.
  const forge = app.hasDecorator('services');
  const given = { realm: 'Gitea', ...(forge ? forgeDeps(app) : {}), ...(opts.deps ?? {}) };
  const missing = (['reposDir', 'authenticate', 'findRepo', 'access', 'afterPush'] as const).filter((k) => given[k] === undefined);
  if (missing.length) throw new Error(`git over HTTP needs ${missing.join(', ')}`);
  const deps = given as GitHttpDeps;
  // The forge's shared transport (its pre-receive hook serves SSH pushes too); a private one
  // when the routes run without the forge's services.
  let transport: GitTransport | undefined = forge ? app.services.gitTransport : undefined;
  if (!transport) {
    const own = new GitTransport();
    transport = own;
    app.addHook('onClose', async () => own.close());
  }

  // Request bodies stay streams: the parser hands the raw request on untouched, for any type,
  // so that the handler can answer a wrong Content-Type the way Gitea does.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  /**
   * Gitea's httpBase: resolves the repository and checks access. Returns null after replying.
   */
  async function authorize(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, service: Service) {
    const owner = request.params.owner;
    let name = request.params.repo.replace(/\.git$/i, '');
    // `<repo>.wiki.git` is the wiki of <repo>, with the wiki unit's permissions.
    const isWiki = /\.wiki$/i.test(name);
    if (isWiki) name = name.slice(0, -'.wiki'.length);
    const isPull = service === 'upload-pack';
    const unauthorized = (message = 'Unauthorized') => {
      reply.header('www-authenticate', `Basic realm="${deps.realm}"`);
      plain(reply, 401, message);
      return null;
    };

    let repo = await deps.findRepo(owner, name);
    if (repo && isWiki && !repo.hasWiki) repo = null;
    if (repo && repo.ownerIsActive === false) {
      await plain(reply, 403, 'Repository cannot be accessed. You cannot push or open issues/pull-requests.');
      return null;
    }
    if (repo && repo.isArchived && !isPull) {
      await plain(reply, 403, 'This repo is archived. You can view files and clone it, but cannot push or open issues/pull-requests.');
      return null;
    }
    const isPublicPull = repo !== null && !repo.isPrivate && isPull && repo.ownerIsPublic !== false;
    const auth = await deps.authenticate(request);
    if (auth.retryAfterSeconds !== undefined) {
      await plain(reply.header('retry-after', String(auth.retryAfterSeconds)), 429, auth.error ?? 'Too Many Requests');
      return null;
    }
    if (auth.error) return unauthorized(auth.error);
    if (auth.blocked) {
      await plain(reply, 403, auth.blocked);
      return null;
    }

    if (!isPublicPull) {
      if (!auth.user) return unauthorized();
      if (auth.tokenScopes && !allowsRepository(auth.tokenScopes, isPull ? 'read' : 'write')) {
        await plain(reply, 403, 'User permission denied');
        return null;
      }
      if (auth.tokenScopes?.includes('public-only') && repo?.isPrivate) {
        await plain(reply, 403, 'token scope is limited to public repos');
        return null;
      }
    }
    if (!repo) {
      await plain(reply, 404, 'Repository not found');
      return null;
    }
    // Where the forge takes AGit pushes, pushing to the code needs only read access (Gitea
    // since git has proc-receive): pre-receive refuses the other ref updates of readers.
    const agit = !isPull && !isWiki && deps.procReceive !== undefined;
    let canWrite = false;
    if (!isPublicPull) {
      const access = await deps.access(auth.user, repo, isWiki ? 'repo.wiki' : 'repo.code');
      canWrite = access.write;
      if (!(isPull || agit ? access.read : access.write)) {
        await plain(reply, 404, 'Repository not found');
        return null;
      }
      if (!isPull && repo.isMirror) {
        await plain(reply, 403, 'mirror repository is read-only');
        return null;
      }
    }
    if (isWiki) {
      const wikiPath = deps.wikiPath ? await deps.wikiPath(repo, !isPull) : null;
      if (!wikiPath) {
        await plain(reply, 404, 'Repository not found');
        return null;
      }
      return { repo, user: auth.user, path: wikiPath, isWiki, canWrite };
    }
    return { repo, user: auth.user, path: repositoryPath(deps.reposDir, repo.ownerName, repo.name), isWiki, canWrite };
  }

  /** The AGit side of a push to the code, where the forge takes AGit pushes. */
  function procReceiveOf(ctx: { repo: GitHttpRepo; user: GitHttpUser | null; path: string; isWiki: boolean }): ProcReceiveHandler | undefined {
    const handler = deps.procReceive;
    if (!handler || ctx.isWiki) return undefined;
    return (commands, options) => handler(ctx.repo, ctx.path, ctx.user, commands, options);
  }

  function serviceEnv(request: FastifyRequest, user: GitHttpUser | null, repo: GitHttpRepo): Record<string, string> {
    const extra: Record<string, string> = {
      GITEA_REPO_ID: String(repo.id),
      GITEA_REPO_NAME: repo.name,
      GITEA_REPO_USER_NAME: repo.ownerName,
    };
    if (user) {
      extra.GITEA_PUSHER_ID = String(user.id);
      extra.GITEA_PUSHER_NAME = user.name;
    }
    const protocol = request.headers['git-protocol'];
    if (typeof protocol === 'string' && SAFE_GIT_PROTOCOL.test(protocol)) extra.GIT_PROTOCOL = protocol;
    return extra;
  }

  app.get<{ Params: Params; Querystring: { service?: string } }>(
    '/:owner/:repo/info/refs',
    {
      schema: {
        hide: true,
        params: { type: 'object', properties: { owner: { type: 'string' }, repo: { type: 'string' } }, required: ['owner', 'repo'] },
        querystring: { type: 'object', properties: { service: { type: 'string' } } },
      } as FastifySchema,
    },
    async (request, reply) => {
      const service = request.query.service;
      if (service !== 'git-upload-pack' && service !== 'git-receive-pack') {
        return plain(reply, 403, 'Only the smart HTTP protocol is supported: git 1.6.6 or newer');
      }
      const svc = service.slice(4) as Service;
      const ctx = await authorize(request, reply, svc);
      if (!ctx) return reply;
      const env = serviceEnv(request, ctx.user, ctx.repo);
      // The push advertisement announces push options where AGit pushes are taken.
      const advertise = async () => collect(await transport.spawn(svc, ctx.path, { statelessRpc: true, advertiseRefs: true, env, procReceive: svc === 'receive-pack' ? procReceiveOf(ctx) : undefined }));
      let refs: Buffer;
      try {
        // Pulls are most of the traffic and their advertisement changes only with the refs.
        refs = svc === 'upload-pack' ? await uploadPackAdvertisement(ctx.path, env.GIT_PROTOCOL ?? '', advertise) : await advertise();
      } catch (err) {
        request.log.error({ service: svc, repo: ctx.path, stderr: (err as GitOutputError).stderr }, 'git advertise-refs failed');
        return plain(reply, 500, 'git failed');
      }
      return reply
        .code(200)
        .headers(NO_CACHE)
        .type(`application/x-git-${svc}-advertisement`)
        .send(Buffer.concat([Buffer.from(pktLine(`# service=git-${svc}\n`) + '0000'), refs]));
    },
  );

  const rpc = (svc: Service) =>
    async function (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
      const ctx = await authorize(request, reply, svc);
      if (!ctx) return reply;
      if (request.headers['content-type'] !== `application/x-git-${svc}-request`) {
        return plain(reply, 401, 'Unauthorized'); // Gitea answers a wrong Content-Type with a bare 401
      }

      let input = request.body as Readable;
      if (!(input instanceof Readable)) input = request.raw;
      const encoding = String(request.headers['content-encoding'] ?? '').toLowerCase();
      if (encoding === 'gzip' || encoding === 'x-gzip') {
        const gunzip = zlib.createGunzip();
        input.on('error', (err) => gunzip.destroy(err));
        input = input.pipe(gunzip);
      }

      const env = serviceEnv(request, ctx.user, ctx.repo);
      // A protocol v2 ls-refs (the second request of every clone and fetch) is answered from
      // what git said last time while the refs are the same: no git process for it.
      const length = Number(request.headers['content-length']);
      let head: Buffer | null = null;
      if (svc === 'upload-pack' && !encoding && env.GIT_PROTOCOL?.includes('version=2') && length > 0 && length <= MAX_LS_REFS_REQUEST) {
        try {
          head = await readAll(input, MAX_LS_REFS_REQUEST);
        } catch (err) {
          request.log.warn({ err }, 'git request body failed');
          return plain(reply, 400, 'reading the request body failed');
        }
        if (head && isLsRefsRequest(head)) {
          const body = head;
          const answer = async () => collect(await transport.spawn(svc, ctx.path, { statelessRpc: true, env }), body);
          let out: Buffer;
          try {
            out = await lsRefsAnswer(ctx.path, env.GIT_PROTOCOL, body, answer);
          } catch (err) {
            request.log.warn({ service: svc, repo: ctx.path, stderr: (err as GitOutputError).stderr }, 'git service exited with an error');
            out = (err as GitOutputError).stdout ?? Buffer.alloc(0);
          }
          return reply.code(200).headers(NO_CACHE).type(`application/x-git-${svc}-result`).send(out);
        }
      }

      // A clone may wait for a repack before git starts (transport.ts): a client gone meanwhile is
      // seen here, its 'close' having passed before the kill below could listen for it.
      let gone = false;
      reply.raw.once('close', () => (gone = true));
      const child = await transport.spawn(svc, ctx.path, {
        statelessRpc: true,
        env,
        // The code's branch and tag protections do not cover its wiki.
        checkPush: async (updates, env) => (deps.checkPush && !ctx.isWiki ? deps.checkPush(ctx.repo, ctx.path, ctx.user, updates, env, ctx.canWrite) : null),
        procReceive: procReceiveOf(ctx),
        postReceive: deps.postReceive && !ctx.isWiki ? (updates) => deps.postReceive!(ctx.repo, updates) : undefined,
        onCheckError: (err) => request.log.error({ err }, 'checking a push failed'),
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4096)));
      child.stdin.on('error', () => undefined); // git may stop reading early (e.g. "done" seen)
      if (head) {
        child.stdin.end(head);
      } else {
        input.on('error', (err) => {
          request.log.warn({ err }, 'git request body failed');
          child.kill('SIGTERM');
        });
        input.pipe(child.stdin);
      }
      // A client that goes away must not leave git running.
      const stop = () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      };
      reply.raw.on('close', stop);
      if (gone) stop();

      const out = new PassThrough();
      child.stdout.pipe(out, { end: false });
      const exited = new Promise<number>((resolve) => {
        child.on('error', () => resolve(-1));
        child.on('close', (c) => resolve(c ?? -1));
      });
      void exited.then(async (code) => {
        if (code !== 0) request.log.warn({ service: svc, repo: ctx.path, code, stderr }, 'git service exited with an error');
        if (svc === 'receive-pack') {
          // The push reply ends only after size/empty/default branch are refreshed, so a client
          // that asks the API right after `git push` returns sees the new values.
          try {
            // A wiki push changes no code ref: nothing of the repository's to refresh or announce.
            if (!ctx.isWiki) await deps.afterPush(ctx.repo, ctx.path, ctx.user);
          } catch (err) {
            request.log.error({ err }, 'refreshing repository after push failed');
          }
        }
        out.end();
      });

      return reply.code(200).headers(NO_CACHE).type(`application/x-git-${svc}-result`).send(out);
    };

  const rpcSchema = {
    hide: true,
    params: { type: 'object', properties: { owner: { type: 'string' }, repo: { type: 'string' } }, required: ['owner', 'repo'] },
  } as FastifySchema;
  app.post('/:owner/:repo/git-upload-pack', { schema: rpcSchema }, rpc('upload-pack'));
  app.post('/:owner/:repo/git-receive-pack', { schema: rpcSchema }, rpc('receive-pack'));
}
