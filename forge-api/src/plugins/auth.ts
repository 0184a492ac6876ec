/**
 * Authentication and authorization for every API route, as Gitea's API does it:
 *  - credentials: `Authorization: token|bearer <t>`, `?token=` / `?access_token=` (a personal
 *    access token or an access token of the forge's OAuth2 provider, everywhere), HTTP basic
 *    with a password (plus a TOTP code in X-Portcullis-OTP / X-Forgejo-OTP / X-Gitea-OTP when
 *    two-factor is on) or with a token as password (or as user name with an empty password or
 *    `x-oauth-basic`). Any credential that does not verify is a 401, even on public routes.
 *  - sudo (`?sudo=` or `Sudo:`) for site admins only (403 otherwise).
 *  - per route, `config: { auth, scopes }`: `auth` is 'optional' | 'required' | 'admin' | 'basic';
 *    `scopes` are the token categories; the level comes from the method (GET/HEAD read, else
 *    write). Scopes bind only token-authenticated requests; password basic auth is unscoped.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, PermissionDeniedError, UnauthenticatedError } from '../services/errors';
import { shared } from './shared';
import { verifyTotp } from '../services/totp';
import type { User } from '../services/records';
import { publicOnlyViewer } from '../services/permissions';
import { hasScope, levelForMethod, scopeList, type ScopeCategory, type ScopeSet } from '../services/scopes';
import type { TokenService } from '../services/tokens';
import type { UserService } from '../services/users';
import type { HttpSignatureService } from '../services/httpsig';
import type { OAuth2Provider } from '../services/oauth2/provider';
import type { SignInThrottle } from '../services/sign-in-throttle';

export type AuthMethod = 'anonymous' | 'basic' | 'token';

export interface AuthResult {
  user: User | null;
  method: AuthMethod;
  /** Credentials came in an HTTP basic header (password or token). */
  basic: boolean;
  /** The token's scopes when a token authenticated the request; null = unscoped. */
  scopes: ScopeSet | null;
  tokenId: number | null;
  /** The admin who used sudo, when the request runs as another user. */
  actingAdmin?: User | null;
}

export type RouteAuth = 'optional' | 'required' | 'admin' | 'basic';

export const OTP_HEADERS = ['x-portcullis-otp', 'x-forgejo-otp', 'x-gitea-otp'];
const ANONYMOUS: AuthResult = { user: null, method: 'anonymous', basic: false, scopes: null, tokenId: null };
const INVALID = 'invalid username, password or token';
/** The API routes of one repository (Gitea's repoAssignment group). */
const REPO_ROUTE = /^\/api\/v1\/repos\/:owner\/:repo(\/|$)/;

function parseBasic(header: string): { user: string; pass: string } | null {
  const m = /^basic\s+(\S+)$/i.exec(header.trim());
  if (!m) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return null;
  return { user: decoded.slice(0, i), pass: decoded.slice(i + 1) };
}

export class AuthResolver {
  constructor(
    private readonly users: UserService,
    private readonly tokens: TokenService,
    private readonly httpsig: HttpSignatureService,
    private readonly oauth2: Pick<OAuth2Provider, 'verifyAccessToken'>,
    private readonly opts: { disableQueryAuthToken: boolean },
    private readonly throttle: SignInThrottle,
  ) {}

  /**
   * A password check under the sign-in throttle (services/sign-in-throttle.ts): refused with
   * TooManyRequestsError, right or wrong, while the client has failed too often for this account.
   */
  private async passwordHolds(request: FastifyRequest, user: User | null, name: string, password: string): Promise<boolean> {
    this.throttle.check(request.ip, name);
    const holds = !!user && (await this.users.verifyPassword(user, password));
    if (!holds) this.throttle.failed(request.ip, name);
    return holds;
  }

  /** A wrong second factor (passcode or scratch token) counts as a failed sign-in of the account. */
  secondFactorFailed(request: FastifyRequest, user: User): void {
    this.throttle.failed(request.ip, user.name);
  }

  /** A completed sign-in (password and, when enrolled, second factor) clears the account's failures from this client. */
  signedIn(request: FastifyRequest, user: User): void {
    this.throttle.succeeded(request.ip, user.name);
  }

  /**
   * Checks a TOTP code against the user's secret (one 30 s step either side). Like Gitea's API
   * (twofa.ValidateTOTP) a code may be used for several requests within its window.
   */
  checkOtp(user: User, code: string | undefined): boolean {
    if (!user.totpSecret) return true;
    return code !== undefined && verifyTotp(user.totpSecret, code);
  }

  /**
   * The account of a web sign-in: user name and password in a basic Authorization header, never a
   * token (Gitea's sign-in form takes passwords only), for an account allowed to sign in; null
   * otherwise. The second factor is the caller's to check (services/two-factor.ts).
   */
  async passwordUser(request: FastifyRequest): Promise<User | null> {
    const basic = request.headers.authorization ? parseBasic(request.headers.authorization) : null;
    if (!basic || !basic.user || !basic.pass) return null;
    return this.formSignIn(request, basic.user, basic.pass);
  }

  /**
   * The sign-in form's check: the account by user name or e-mail address (Gitea's "Username or
   * Email Address"), its password under the throttle, and an account allowed to sign in; null
   * otherwise. The second factor is the caller's to check.
   */
  async formSignIn(request: FastifyRequest, login: string, password: string): Promise<User | null> {
    if (!login || !password) return null;
    const user = login.includes('@') ? await this.users.findIndividualByEmail(login) : await this.users.findIndividual(login);
    if (!(await this.passwordHolds(request, user, user?.name ?? login, password))) return null;
    if (!user || !user.isActive || user.prohibitLogin) return null;
    return user;
  }

  /** Refuses (TooManyRequestsError) a second factor tried while the account's failures from this client are too many. */
  secondFactorAllowed(request: FastifyRequest, user: User): void {
    this.throttle.check(request.ip, user.name);
  }

  private async byToken(token: string, basic: boolean): Promise<AuthResult> {
    const found = await this.tokens.verify(token);
    if (found) return { user: found.user, method: 'token', basic, scopes: found.scopes, tokenId: found.token.id };
    const oauth = await this.oauth2.verifyAccessToken(token);
    if (oauth) return { user: oauth.user, method: 'token', basic, scopes: oauth.scopes, tokenId: null };
    throw new UnauthenticatedError(INVALID);
  }

  /**
   * Resolves the caller from the request's credentials (no route rules, no sudo): usable by
   * the git smart HTTP routes. Throws UnauthenticatedError for credentials that do not verify.
   */
  async resolveUser(request: FastifyRequest): Promise<AuthResult> {
    const header = request.headers.authorization;
    const query = (request.query ?? {}) as Record<string, unknown>;
    // Gitea's chain: token, then HTTP signature (a `Signature` header), then basic.
    if (request.headers.signature && !(header && /^(token|bearer)\s/i.test(header.trim()))) {
      // Signed requests count as an API token without scopes (Gitea's IsApiToken).
      return { user: await this.httpsig.verify(request), method: 'token', basic: false, scopes: null, tokenId: null };
    }
    if (header) {
      const scheme = /^(token|bearer)\s+(\S+)$/i.exec(header.trim());
      if (scheme) return this.byToken(scheme[2], false);
      const basic = parseBasic(header);
      if (!basic) throw new UnauthenticatedError(INVALID);
      if ((basic.user && basic.pass === '') || basic.pass === 'x-oauth-basic') return this.byToken(basic.user, true);
      if (/^[0-9a-f]{40}$/.test(basic.pass)) {
        const found = await this.tokens.verify(basic.pass);
        if (found) return { user: found.user, method: 'token', basic: true, scopes: found.scopes, tokenId: found.token.id };
      }
      // Credential helpers (git-credential-oauth, Git Credential Manager) send an OAuth2 access
      // token as the password, with any user name.
      const oauth = await this.oauth2.verifyAccessToken(basic.pass);
      if (oauth) return { user: oauth.user, method: 'token', basic: true, scopes: oauth.scopes, tokenId: null };
      const user = await this.users.findIndividual(basic.user);
      if (!(await this.passwordHolds(request, user, basic.user, basic.pass)) || !user) throw new UnauthenticatedError(INVALID);
      const otp = OTP_HEADERS.map((h) => request.headers[h]).find((v) => typeof v === 'string' && v !== '') as string | undefined;
      if (!this.checkOtp(user, otp)) {
        // Only a passcode that was tried counts: git and other clients that cannot send one are
        // refused with Gitea's message, not locked out.
        if (otp !== undefined) this.secondFactorFailed(request, user);
        throw new UnauthenticatedError('invalid provided OTP');
      }
      this.signedIn(request, user);
      return { user, method: 'basic', basic: true, scopes: null, tokenId: null };
    }
    const q = (typeof query.token === 'string' && query.token) || (typeof query.access_token === 'string' && query.access_token);
    if (q && !this.opts.disableQueryAuthToken) return this.byToken(q, false);
    return ANONYMOUS;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    scopes?: ScopeCategory[];
    /** Gitea's rejectPublicOnly(): the route is closed to public-only tokens (403). */
    rejectPublicOnly?: boolean;
  }
  interface FastifyRequest {
    auth: AuthResult;
    /** The user the request acts as (after sudo), or null. */
    doer: User | null;
  }
}

/** Gitea's verifyAuthWithOptions checks on a signed-in API caller (403 with these messages). */
function accountState(user: User, rootUrl: string): string | null {
  if (!user.isActive || user.prohibitLogin) return 'This account is prohibited from signing in, please contact your site administrator.';
  if (user.mustChangePassword) return `You must change your password. Change it at: ${rootUrl}user/change_password`;
  return null;
}

async function authPlugin(app: FastifyInstance) {
  app.decorateRequest('auth', null as unknown as AuthResult);
  app.decorateRequest('doer', null);

  // onRequest, before the body is even parsed: Gitea authenticates before it binds the body,
  // so an anonymous request with a bad (or malformed) body is a 401 and a token without the
  // scope a 403, never a 422. Nothing here reads the body.
  app.addHook('onRequest', async (request, reply) => {
    const cfg = request.routeOptions.config ?? {};
    const routeAuth: RouteAuth = cfg.auth ?? 'optional';
    const auth = await app.auth.resolveUser(request);
    request.auth = auth;
    let doer = auth.user;
    if (doer) {
      const state = accountState(doer, app.config.rootUrl);
      if (state) throw new PermissionDeniedError(state);
    }
    const query = request.query as Record<string, unknown> | undefined;
    if (auth.method === 'token' && !request.headers.authorization && (typeof query?.token === 'string' || typeof query?.access_token === 'string')) {
      reply.header('X-Gitea-Warning', 'token and access_token API authentication is deprecated and will be removed in gitea 1.23. Please use AuthorizationHeaderToken instead. Existing queries will continue to work but without authorization.');
    }

    // Sudo comes right after authentication, as in Gitea's middleware chain: only a signed-in
    // admin may use it (anyone else, anonymous included, 403 with Gitea's bare body).
    const sudo = (typeof query?.sudo === 'string' && query.sudo) || (typeof request.headers.sudo === 'string' && request.headers.sudo) || '';
    if (sudo) {
      if (!doer?.isAdmin) {
        return reply.code(403).type('application/json').send({ message: 'Only administrators allowed to sudo.' });
      }
      const target = await app.services.users.findIndividual(sudo);
      if (!target) throw new NotFoundError('not found', [`user redirect does not exist [name: ${sudo}]`]);
      auth.actingAdmin = doer;
      doer = target;
    }
    // Scope: token requests need every category of the route at the method's level.
    const scopes = cfg.scopes ?? [];
    if (auth.scopes && scopes.length) {
      const level = levelForMethod(request.method);
      const missing = scopes.filter((c) => !hasScope(auth.scopes as ScopeSet, c, level));
      if (missing.length) {
        throw new PermissionDeniedError(`token does not have at least one of required scope(s), required=[${scopes.map((c) => `${level}:${c}`).join(' ')}], token scope=${scopeList(auth.scopes).join(',')}`,
        );
      }
    }

    // public-only tokens: the doer carries the restriction into every list query.
    request.doer = doer && auth.scopes?.publicOnly ? publicOnlyViewer(doer) : doer;
    if (auth.scopes?.publicOnly && cfg.rejectPublicOnly) throw new PermissionDeniedError('this endpoint is not available for public-only tokens');

    // Gitea's TWO_FACTOR_AUTH = enforced: a caller without two-factor authentication has no
    // access to any repository under /repos/{owner}/{repo}, its own and public ones included
    // (404, as for a repository it cannot see); other routes and git HTTP are unaffected.
    if (app.config.twoFactorAuthEnforced && doer && !doer.totpSecret && REPO_ROUTE.test(request.routeOptions.url ?? '')) throw new NotFoundError();

    if (routeAuth === 'basic' && !auth.basic) throw new UnauthenticatedError('auth required');
    if (routeAuth !== 'optional' && !doer) throw new UnauthenticatedError('token is required');
    if (routeAuth === 'admin' && !doer?.isAdmin) throw new PermissionDeniedError('user should be the site admin');
  });
}

export default shared(authPlugin);
