/**
 * The OAuth2 / OpenID Connect provider at Gitea's paths (/login/oauth/..., the discovery
 * document), and its sign-in and consent step.
 *
 * The protocol endpoints are oidc-provider's (services/oauth2/provider.ts); this file only adapts
 * requests to Gitea's conventions before handing them over:
 *  - PKCE `plain` (and a challenge without a method, which means plain): oidc-provider accepts
 *    only S256, so a plain challenge c is passed on as S256(c); the verifier the client later
 *    sends is c itself, whose S256 then matches. Same check, one implementation.
 *  - no scope: Gitea then grants full access; the request is passed on asking for `all`.
 *  - client secrets: only their SHA-256 is stored, so a presented secret (basic header or form
 *    body, both accepted as in Gitea) is hashed before the provider compares it.
 *
 * Sign-in and consent: an authorization request from a browser that has not signed in goes to
 * the sign-in form first (routes/sign-in.ts, Gitea's /user/login?redirect_to=...) and comes back
 * once signed in; the provider then checks it and sends the browser to the consent page, which
 * asks Gitea's grant question for the application unless the user already authorized it and it
 * is confidential or skips secondary authorization (its grant is then reused as it stands). The consent form
 * carries the browser's CSRF token, and the provider's interaction cookie (SameSite=Lax, bound to
 * this interaction) is needed too.
 */
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { InteractionResults } from 'oidc-provider';
import { hasScope } from '../services/scopes';
import { discoveryDocument, OAUTH2_PATHS, SCOPES_SUPPORTED } from '../services/oauth2/gitea-provider';
import { hashClientSecret } from '../services/oauth2/applications';
import { authorizeFailure, tokenRequestError } from '../services/oauth2/gitea-errors';
import { authorizationFailedPage, escapeHtml, page } from '../services/oauth2/pages';
import { CSRF_FIELD } from '../services/web-session';
import { signInLocation } from './sign-in';
import { TWO_FACTOR_ENROL_PATH, TWO_FACTOR_REQUIRED_MESSAGE } from '../services/two-factor';

const PROVIDER_PATHS = [OAUTH2_PATHS.authorize, `${OAUTH2_PATHS.authorize}/*`, OAUTH2_PATHS.token, OAUTH2_PATHS.userinfo, OAUTH2_PATHS.introspect, OAUTH2_PATHS.keys];

/**
 * RFC 7636's code verifier (4.1), which a plain challenge is (4.2), and an S256 challenge's form:
 * 43 to 128 unreserved characters. Gitea takes a challenge of any length; the forge keeps the
 * RFC's minimum, which is the verifier's entropy (a short plain verifier can be guessed by
 * whoever intercepts the code), and refuses such a request at once, back to the client, rather
 * than after sign-in and consent at the token endpoint. Clients generate 43 characters or more
 * (golang.org/x/oauth2's GenerateVerifier, which Go clients such as tea use, openid-client, Git
 * Credential Manager), and an S256 challenge is 43 characters by construction.
 */
const PKCE_FORM = /^[A-Za-z0-9._~-]{43,128}$/;

/** S256 of a plain PKCE challenge (see the file comment). */
function s256(value: string): string {
  return crypto.createHash('sha256').update(value, 'ascii').digest('base64url');
}

/** application/x-www-form-urlencoded value decoding, as RFC 6749 2.3.1 asks of basic credentials. */
function formDecode(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

function formEncode(s: string): string {
  return encodeURIComponent(s);
}

/** The presented client secret replaced by its SHA-256, wherever it travels; other requests untouched. */
function hashPresentedSecret(request: FastifyRequest): string | undefined {
  const body = typeof request.body === 'string' ? request.body : undefined;
  const header = request.headers.authorization;
  const basic = header && /^basic\s+(\S+)$/i.exec(header.trim());
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i > 0) {
      try {
        const id = formDecode(decoded.slice(0, i));
        const secret = formDecode(decoded.slice(i + 1));
        if (secret) request.raw.headers.authorization = `Basic ${Buffer.from(`${formEncode(id)}:${hashClientSecret(secret)}`).toString('base64')}`;
      } catch {
        // malformed: the provider answers it
      }
    }
  }
  if (body !== undefined && /(^|&)client_secret=/.test(body)) {
    const params = new URLSearchParams(body);
    const secret = params.get('client_secret');
    if (secret) params.set('client_secret', hashClientSecret(secret));
    return params.toString();
  }
  return body;
}

export default async function oauth2ProviderRoutes(app: FastifyInstance) {
  const { oauth2, oauth2Apps, prisma, twoFactor, webSessions } = { ...app.services, prisma: app.prisma };

  // Bodies reach the provider as the text that came: it parses form and JSON bodies itself.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  // Not part of the API v1 document (Gitea's swagger has none of these either).
  const hidden = { schema: { hide: true } };
  app.get(OAUTH2_PATHS.discovery, hidden, async (_request, reply) => reply.type('application/json').send(discoveryDocument(oauth2.issuer)));

  /**
   * userinfo as Gitea answers it, for its OAuth2 sign-in method's tokens: this provider's access
   * tokens and personal access tokens alike, found where Gitea looks (the `token` or
   * `access_token` parameter unless query tokens are off, then the Authorization header's token or
   * bearer). The token needs the `read:user` scope (403 otherwise; a grant without API scopes has
   * all of them); the answer is Gitea's six claims. A request without a token that verifies goes
   * to the provider, which refuses it (with Gitea's words, services/oauth2/provider.ts). True when
   * answered.
   */
  async function giteaUserinfo(request: FastifyRequest, reply: FastifyReply, body: string | undefined): Promise<boolean> {
    const params = new URL(request.url, 'http://forge.invalid').searchParams;
    const form = request.method === 'POST' && body !== undefined && /^application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '') ? new URLSearchParams(body) : null;
    const fromForm = (name: string) => params.get(name) || form?.get(name) || '';
    const header = /^(?:token|bearer)\s+(\S+)$/i.exec(request.headers.authorization?.trim() ?? '');
    const presented = (!app.config.disableQueryAuthToken && (fromForm('token') || fromForm('access_token'))) || header?.[1] || '';
    if (!presented) return false;
    const found = (await app.services.tokens.verify(presented)) ?? (await oauth2.verifyAccessToken(presented));
    if (!found) return false;
    if (!hasScope(found.scopes, 'user', 'read')) {
      await reply.code(403).header('www-authenticate', 'Bearer realm="Gitea OAuth2"').type('text/plain; charset=utf-8').send('token does not have required scope: read:user');
      return true;
    }
    // Gitea limits the groups only for its own OAuth2 tokens' public-only scope.
    const onlyPublicGroups = 'clientId' in found && found.scopes.publicOnly;
    await reply.header('cache-control', 'max-age=0, private, must-revalidate').type('application/json; charset=utf-8').send(await oauth2.giteaUserinfo(found.user, onlyPublicGroups));
    return true;
  }

  async function toProvider(request: FastifyRequest, reply: FastifyReply) {
    let body = typeof request.body === 'string' ? request.body : undefined;
    let redirectUri: string | undefined;
    const path = request.url.split('?')[0];
    if (path === OAUTH2_PATHS.authorize) {
      // Gitea's authorize page is for signed-in users only: an anonymous browser is sent to the
      // sign-in form first, whatever the request holds; the request is checked once it is back.
      const user = await webSessions.signedInUser(request);
      if (!user) return reply.code(303).header('location', signInLocation(request.url)).send();
      const url = new URL(request.url, 'http://forge.invalid');
      const params = request.method === 'POST' && body !== undefined ? new URLSearchParams(body) : url.searchParams;
      const challenge = params.get('code_challenge');
      const method = params.get('code_challenge_method');
      if (challenge && (method === null || method === 'plain')) {
        // A challenge outside RFC 7636's form is passed on as it is, for the provider to refuse
        // it as it refuses such an S256 challenge (see PKCE_FORM).
        if (PKCE_FORM.test(challenge)) params.set('code_challenge', s256(challenge));
        params.set('code_challenge_method', 'S256');
      }
      // Gitea grants full API access when no scope is asked for (CI systems ask for none); the
      // provider grants nothing without a scope, so the request asks for `all` instead.
      if (!params.get('scope')?.trim()) params.set('scope', 'all');
      // Gitea's rule for a confidential application, or one that skips secondary authorization,
      // which the user already authorized: its grant is reused as it stands, without a question,
      // whatever this request asks for; the code and its tokens carry the grant's scopes (more
      // scopes are had by revoking the application's access and authorizing it again).
      const client = await oauth2Apps.findClient(params.get('client_id') ?? '');
      if (client && (client.confidential || client.skipSecondaryAuthorization)) {
        const grant = await previousGrant(client.clientId, String(user.id));
        if (grant) params.set('scope', grant.getOIDCScope());
      }
      redirectUri = params.get('redirect_uri') ?? undefined;
      // Gitea requires the redirect URI even of an application with only one registered (the
      // provider would fall back on that one): its 400 page, once the client is known.
      if (!redirectUri && (await oauth2Apps.findClient(params.get('client_id') ?? ''))) {
        return reply.code(400).type('text/html; charset=utf-8').send(authorizationFailedPage(authorizeFailure('invalid_redirect_uri', '').error_description));
      }
      if (request.method === 'POST' && body !== undefined) body = params.toString();
      else request.raw.url = `${url.pathname}?${params.toString()}`;
    } else if (path === OAUTH2_PATHS.userinfo) {
      if (await giteaUserinfo(request, reply, body)) return reply;
    } else if (path === OAUTH2_PATHS.token || path === OAUTH2_PATHS.introspect) {
      if (path === OAUTH2_PATHS.token && request.method === 'POST') {
        const failed = await tokenRequestError(new URLSearchParams(body ?? ''), request.headers.authorization, (id) => oauth2Apps.findClient(id));
        if (failed) return reply.code(400).header('cache-control', 'no-store').send(failed);
      }
      body = hashPresentedSecret(request);
    }
    if (body !== undefined) (request.raw as unknown as { body: string }).body = body;
    reply.hijack();
    await oauth2.handle(request.raw, reply.raw, { redirectUri });
  }
  for (const url of PROVIDER_PATHS) app.route({ method: ['GET', 'POST'], url, ...hidden, handler: toProvider });

  /** The latest grant this user gave the application, if it still stands. */
  async function previousGrant(clientId: string, accountId: string) {
    const provider = await oauth2.instance();
    const previous = await prisma.oAuth2ProviderRecord.findFirst({ where: { kind: 'Grant', clientId, accountId }, orderBy: { expiresAt: 'desc' } });
    return previous ? provider.Grant.find(previous.id) : undefined;
  }

  async function interaction(request: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply) {
    const provider = await oauth2.instance();
    let details;
    try {
      details = await provider.interactionDetails(request.raw, reply.raw);
    } catch {
      return reply
        .code(400)
        .type('text/html; charset=utf-8')
        .send(page('Authorization request expired', '<h1>Authorization request expired</h1><p>Start again from the application.</p>'));
    }
    if (details.uid !== request.params.uid) return reply.code(400).type('text/plain').send('interaction mismatch');
    // Signed in with the sign-in form (and its two-factor step); a browser whose sign-in expired
    // since the authorization request signs in again and comes back here.
    const user = await webSessions.signedInUser(request);
    if (!user) return reply.code(303).header('location', signInLocation(request.url)).send();
    const clientId = String(details.params.client_id ?? '');
    const client = await oauth2Apps.findClient(clientId);
    if (!client) return reply.code(400).type('text/plain').send('unknown application');
    const requested = String(details.params.scope ?? '')
      .split(' ')
      .filter((s) => SCOPES_SUPPORTED.includes(s));
    const accountId = String(user.id);

    const finish = async (result: InteractionResults) => {
      const to = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: false });
      return reply.code(303).header('location', to).send();
    };

    if (app.config.twoFactorAuthEnforced && !twoFactor.isEnrolled(user)) {
      // Gitea's [security] TWO_FACTOR_AUTH = enforced: no application is authorized for an
      // account without two-factor authentication (its 400 page, with the way to enrol).
      return reply
        .code(400)
        .type('text/html; charset=utf-8')
        .send(authorizationFailedPage('two-factor authentication is required', `<p><a href="${TWO_FACTOR_ENROL_PATH}">${escapeHtml(TWO_FACTOR_REQUIRED_MESSAGE)}</a></p>`));
    }
    const form = new URLSearchParams(request.method === 'POST' && typeof request.body === 'string' ? request.body : '');
    if (request.method === 'POST') {
      if (!(await webSessions.formFromForge(request, form, app.config.rootUrl))) {
        return reply.code(400).type('text/html; charset=utf-8').send(page('Authorization request expired', '<h1>Authorization request expired</h1><p role="alert">The form could not be verified. Start again from the application.</p>'));
      }
      if (form.get('granted') !== 'true') return finish({ error: 'access_denied', error_description: 'the request is denied' });
    }

    // Gitea's rule for asking again: a grant this user already gave is reused without a question
    // only for a confidential application or one that skips secondary authorization (whose
    // request then asks for the grant's scopes, see toProvider); a public client (tea, credential
    // helpers) is asked every time (RFC 6749 10.2), and every application the first time.
    let grant = await previousGrant(clientId, accountId);
    const granted = (grant?.getOIDCScope() ?? '').split(' ').filter(Boolean);
    const covered = !!grant && requested.every((s) => granted.includes(s));
    const reused = covered && (client.confidential || client.skipSecondaryAuthorization);
    if (request.method === 'GET' && !reused) {
      const scopes = requested.length ? requested : ['all'];
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(
          page(
            `Authorize ${client.name}`,
            `<h1>Authorize application</h1>
<p><strong>${escapeHtml(client.name)}</strong> would like to access your account <strong>${escapeHtml(user.name)}</strong>.</p>
<p>Scopes asked for:</p>
<ul>${scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>
<p>If you authorize it, it can access and modify all your account information, including private repositories and organizations, within those scopes.</p>
<form method="post" action="${OAUTH2_PATHS.interaction}/${escapeHtml(details.uid)}">
<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(await webSessions.csrfToken(request, reply))}">
<button type="submit" name="granted" value="true">Authorize Application</button>
<button type="submit" name="granted" value="false">Cancel</button>
</form>`,
          ),
        );
    }
    // Gitea's answer to a consent given for other scopes than those of the grant the user already
    // gave the application (a public client asking for more or fewer, ...): server_error, the
    // grant left as it is (revoking the application's access in the settings ends it). Not a
    // security matter either way, since the user has just consented; Gitea compares the scope
    // strings, the forge the sets (the same scopes in another order are the same grant).
    if (request.method === 'POST' && grant && (granted.length !== requested.length || !covered)) return finish({ error: 'server_error', error_description: 'a grant exists with different scope' });
    grant ??= new provider.Grant({ accountId, clientId });
    if (requested.length) grant.addOIDCScope(requested.join(' '));
    const grantId = await grant.save();
    return finish({ login: { accountId }, consent: { grantId } });
  }
  app.get(`${OAUTH2_PATHS.interaction}/:uid`, hidden, interaction);
  app.post(`${OAUTH2_PATHS.interaction}/:uid`, hidden, interaction);
}
