/**
 * The forge's OAuth2 / OpenID Connect provider, at Gitea's paths, on `oidc-provider`: an
 * OpenID-certified implementation of the protocol (authorization code with PKCE, refresh token
 * rotation with reuse detection, client authentication, ID tokens, JWKS, introspection) that
 * takes its storage, accounts and clients from the host application, so the forge writes no JWT,
 * PKCE or client-authentication code of its own; what is Gitea's (paths, client rules, scope
 * names, login and consent) is configured around it here.
 *
 * oidc-provider is an ES module; this CommonJS code loads it with require(), which Node >= 20.19
 * (the project's engines) answers with the module namespace. It is loaded on first use, so a
 * forge that never sees an OAuth2 request does not pay for it (nor print its runtime notice).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { default as ProviderType, AdapterPayload, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { ForgeConfig } from '../../config';
import type { Prisma } from '../database';
import type { User } from '../records';
import type { UserService } from '../users';
import { parseScopes, type ScopeSet } from '../scopes';
import { redirectUriAllowed, type OAuth2ApplicationService, type OAuth2Client } from './applications';
import { authorizationFailedPage } from './pages';
import { authorizeFailure, giteaErrorRedirect, grantError, type ProviderError } from './gitea-errors';
import { loadProviderKey } from './provider-key';
import { ProviderStore } from './provider-store';
import { GENERAL_SCOPES, OAUTH2_PATHS, SCOPES_SUPPORTED } from './gitea-provider';

type OidcModule = typeof import('oidc-provider');

/** What a request presents that a client lookup may depend on (the redirect URI under Gitea's rule). */
interface RequestContext {
  redirectUri?: string;
}

export interface VerifiedOAuth2Token {
  user: User;
  scopes: ScopeSet;
  clientId: string;
}

/**
 * Gitea's rule for the API access an OAuth2 token gives: the scopes the grant holds other than
 * the OpenID ones, normalized; none (or only unparseable ones) means all, as since Gitea 1.22.
 */
export function accessScopesOf(grantScope: string): ScopeSet {
  const access = grantScope.split(' ').filter((s) => s && !(GENERAL_SCOPES as readonly string[]).includes(s) && s !== 'offline_access');
  if (access.length) {
    try {
      return parseScopes(access);
    } catch {
      // Gitea keeps 1.22's behaviour here: invalid scopes grant all.
    }
  }
  return parseScopes('all');
}

/**
 * Rewrites the provider's error answers into Gitea's (gitea-errors.ts): statuses, bodies and the
 * authorization error redirect.
 */
function giteaErrorAnswer(ctx: KoaContextWithOIDC): void {
  const status = ctx.status;
  if (ctx.path === OAUTH2_PATHS.token && status >= 400 && ctx.method === 'POST') {
    const grantType = String(ctx.oidc?.params?.grant_type ?? '');
    ctx.status = 400;
    ctx.remove('WWW-Authenticate');
    ctx.body = grantError(grantType, (ctx.state.grantError as ProviderError | undefined) ?? {});
  } else if (ctx.path === OAUTH2_PATHS.userinfo && status === 401) {
    // Gitea: no token is "no valid authorization" with a Bearer challenge; a token that does not
    // authenticate is refused before the endpoint, in its sign-in layer's words.
    ctx.remove('WWW-Authenticate');
    ctx.type = 'text/plain; charset=utf-8';
    if (ctx.get('authorization')) ctx.body = 'Failed to authenticate user';
    else {
      ctx.set('WWW-Authenticate', 'Bearer realm="Gitea OAuth2"');
      ctx.body = 'no valid authorization';
    }
    ctx.status = 401;
  } else if (ctx.path === OAUTH2_PATHS.introspect && (status === 400 || status === 401)) {
    ctx.set('WWW-Authenticate', 'Basic realm="Gitea OAuth2"');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = 'no valid authorization';
    ctx.status = 401;
  } else if (ctx.path.startsWith(OAUTH2_PATHS.authorize) || ctx.path.startsWith(OAUTH2_PATHS.interaction)) {
    const location = status >= 300 && status < 400 ? ctx.response.get('location') : '';
    const rewritten = location ? giteaErrorRedirect(location) : null;
    if (rewritten) {
      ctx.redirect(rewritten);
      ctx.status = 303;
    } else if (status === 400 && ctx.body && typeof ctx.body === 'object' && 'error' in ctx.body) {
      const out = ctx.body as { error: string; error_description?: string };
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = authorizationFailedPage(authorizeFailure(out.error, out.error_description ?? '').error_description);
      ctx.status = 400;
    }
  }
}

export class OAuth2Provider {
  private provider: Promise<ProviderType> | null = null;
  private readonly requestContext = new AsyncLocalStorage<RequestContext>();

  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
    private readonly users: UserService,
    private readonly apps: OAuth2ApplicationService,
    private readonly avatarUrl: (user: User) => string,
  ) {}

  /** Gitea's issuer: ROOT_URL without its trailing slash. */
  get issuer(): string {
    return this.config.rootUrl.replace(/\/$/, '');
  }

  instance(): Promise<ProviderType> {
    this.provider ??= this.create().catch((err) => {
      this.provider = null;
      throw err;
    });
    return this.provider;
  }

  /** Hands a request to the provider (its own Koa application), with what the client lookup needs. */
  async handle(req: IncomingMessage, res: ServerResponse, context: RequestContext = {}): Promise<void> {
    const provider = await this.instance();
    // The URLs the provider makes from the request (where the browser resumes after signing in)
    // come from ROOT_URL, as every URL Gitea makes does: a proxy in front may pass the host
    // without its port (nginx's $host in X-Forwarded-Host) or name the upstream in Host.
    const root = new URL(this.config.rootUrl);
    req.headers['x-forwarded-host'] = root.host;
    req.headers['x-forwarded-proto'] = root.protocol.slice(0, -1);
    const callback = provider.callback();
    await this.requestContext.run(context, () => callback(req, res));
  }

  private clientMetadata(client: OAuth2Client): AdapterPayload | undefined {
    // Gitea's redirect rule (case, trailing slash, any loopback port for public clients) is
    // applied here: the URI presented is registered for this lookup when the rule allows it.
    const presented = this.requestContext.getStore()?.redirectUri;
    const uris = [...client.redirectUris];
    if (presented && !uris.includes(presented) && redirectUriAllowed(client, presented)) uris.push(presented);
    const web = uris.filter((u) => /^https?:\/\//i.test(u));
    const native = uris.filter((u) => !/^https?:\/\//i.test(u));
    if (!web.length && !native.length) return undefined;
    return {
      client_id: client.clientId,
      client_name: client.name,
      ...(client.secretHash ? { client_secret: client.secretHash, token_endpoint_auth_method: 'client_secret_basic' } : { token_endpoint_auth_method: 'none' }),
      // oidc-provider checks a web client's URIs to be http(s), a native one's not to be;
      // Gitea allows both kinds on any client, so the kind follows what is registered.
      application_type: web.length ? 'web' : 'native',
      redirect_uris: web.length ? web : native,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  /** Gitea's groups claim: each organization the user belongs to, and `org:team` for each of their teams. */
  private async groupsOf(userId: number, onlyPublic = false): Promise<string[]> {
    const [orgs, teams] = await Promise.all([
      this.prisma.orgUser.findMany({
        // Public only (Gitea's rule): public organizations whose membership the user made public.
        where: { userId, ...(onlyPublic ? { isPublic: true, org: { visibility: 0 } } : {}) },
        select: { org: { select: { id: true, name: true } } },
        orderBy: { org: { lowerName: 'asc' } },
      }),
      this.prisma.teamUser.findMany({ where: { userId }, select: { orgId: true, team: { select: { lowerName: true } } }, orderBy: { team: { lowerName: 'asc' } } }),
    ]);
    return orgs.flatMap(({ org }) => [org.name, ...teams.filter((t) => t.orgId === org.id).map((t) => `${org.name}:${t.team.lowerName}`)]);
  }

  private async findAccount(_ctx: KoaContextWithOIDC, sub: string) {
    const user = /^\d+$/.test(sub) ? await this.users.findById(Number(sub)) : null;
    if (!user || !user.isActive || user.prohibitLogin) return undefined;
    const profile = `${this.config.rootUrl}${user.name}`;
    return {
      accountId: sub,
      claims: async () => ({
        // (the claims of the scopes granted are picked from these by the provider)
        sub,
        name: user.fullName || user.name,
        preferred_username: user.name,
        profile,
        picture: this.avatarUrl(user),
        website: user.website,
        locale: user.language,
        updated_at: Math.floor(user.updatedAt.getTime() / 1000),
        email: user.email,
        email_verified: true,
        groups: await this.groupsOf(user.id),
      }),
    };
  }

  private async create(): Promise<ProviderType> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const oidc = require('oidc-provider') as OidcModule;
    const key = await loadProviderKey(this.prisma);
    const lookup = async (clientId: string) => {
      const client = await this.apps.findClient(clientId);
      return client ? this.clientMetadata(client) : undefined;
    };
    const prisma = this.prisma;
    const configuration: Configuration = {
      adapter: (name: string) => new ProviderStore(prisma, name, lookup),
      findAccount: (ctx, sub) => this.findAccount(ctx, sub),
      jwks: { keys: [key.jwk] },
      cookies: { keys: [key.cookieKey] },
      routes: {
        authorization: OAUTH2_PATHS.authorize,
        token: OAUTH2_PATHS.token,
        userinfo: OAUTH2_PATHS.userinfo,
        introspection: OAUTH2_PATHS.introspect,
        jwks: OAUTH2_PATHS.keys,
        end_session: '/login/oauth/end_session',
        revocation: '/login/oauth/revoke',
        device_authorization: '/login/oauth/device',
        pushed_authorization_request: '/login/oauth/par',
        code_verification: '/login/oauth/device/verify',
        backchannel_authentication: '/login/oauth/backchannel',
        challenge: '/login/oauth/challenge',
      },
      interactions: { url: (_ctx, interaction) => `${OAUTH2_PATHS.interaction}/${interaction.uid}` },
      scopes: [...SCOPES_SUPPORTED],
      claims: {
        openid: ['sub'],
        profile: ['name', 'preferred_username', 'profile', 'picture', 'website', 'locale', 'updated_at'],
        email: ['email', 'email_verified'],
        groups: ['groups'],
      },
      // Gitea puts the profile claims into the ID token itself.
      conformIdTokenClaims: false,
      features: {
        devInteractions: { enabled: false },
        introspection: { enabled: true },
        revocation: { enabled: false },
        userinfo: { enabled: true },
      },
      responseTypes: ['code'],
      clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
      enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
      // Only the grant the consent page just settled: never one remembered in the provider's own
      // session, so every authorization request reaches the forge's consent page, which applies
      // Gitea's rule for asking again (routes/oauth2-provider.ts) to the browser's signed-in user.
      loadExistingGrant: async (ctx) => {
        const grantId = ctx.oidc.result?.consent?.grantId;
        return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
      },
      // Gitea issues a refresh token with every code exchange, offline_access or not.
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      // Every refresh returns a new refresh token; reusing a spent one revokes the grant.
      rotateRefreshToken: true,
      ttl: {
        AccessToken: this.config.oauth2AccessTokenTtlSeconds,
        AuthorizationCode: 600,
        RefreshToken: this.config.oauth2RefreshTokenTtlSeconds,
        Grant: this.config.oauth2RefreshTokenTtlSeconds,
        IdToken: this.config.oauth2AccessTokenTtlSeconds,
        Interaction: 3600,
        Session: 14 * 24 * 3600,
      },
      renderError: async (ctx, out) => {
        ctx.type = 'application/json';
        ctx.body = out;
      },
    };
    const provider = new oidc.default(this.issuer, configuration);
    // What the provider found wrong with a code or refresh token, for Gitea's answer below.
    provider.on('grant.error', (ctx: KoaContextWithOIDC, err: ProviderError) => {
      ctx.state.grantError = err;
    });
    provider.use(async (ctx, next) => {
      await next();
      giteaErrorAnswer(ctx as KoaContextWithOIDC);
    });
    // The forwarded host and scheme, which handle() sets from ROOT_URL, are the ones it uses.
    provider.proxy = true;
    return provider;
  }

  /**
   * Gitea's userinfo answer: the same six claims whatever scopes were granted, `groups` limited to
   * public organizations for a public-only OAuth2 grant, and null rather than empty, as Gitea
   * encodes a user in no organization.
   */
  async giteaUserinfo(user: User, onlyPublicGroups = false) {
    const groups = await this.groupsOf(user.id, onlyPublicGroups);
    return {
      sub: String(user.id),
      name: user.fullName.trim() || user.name,
      preferred_username: user.name,
      email: user.email,
      picture: this.avatarUrl(user),
      groups: groups.length ? groups : null,
    };
  }

  /** The caller behind an access token of this provider, with the API scopes its grant gives; null if it is none. */
  async verifyAccessToken(token: string): Promise<VerifiedOAuth2Token | null> {
    // oidc-provider's opaque tokens: 43 base64url characters; anything else is not ours.
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const provider = await this.instance();
    const at = await provider.AccessToken.find(token);
    if (!at || !at.accountId || !at.clientId) return null;
    if (at.grantId && !(await provider.Grant.find(at.grantId))) return null;
    const user = await this.users.findById(Number(at.accountId));
    if (!user) return null;
    return { user, scopes: accessScopesOf(at.scope ?? ''), clientId: at.clientId };
  }
}
