/**
 * The OAuth2 / OpenID provider end to end with a real client library (openid-client), the way
 * CI systems and credential helpers use it: code + PKCE for public clients (tea, git
 * credentials), confidential clients with the secret in the basic header (Woodpecker) or the
 * form body (Drone), refresh with rotation, the token on the API and on git HTTP, revocation.
 * The browser is played by fetch with a cookie jar: the sign-in form, then the consent form.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import { describeForge, PASSWORD, type Forge } from './support/forge';
import { authorizeAt, browser, csrfOf, discoverAt, signedInBrowser, submitSignIn } from './support/oauth2-login';
import { git } from './support/git';
import { loadProviderKey } from '../src/services/oauth2/provider-key';

const TEA = 'd57cb8c4-630c-4168-8324-ec79935e18d4';
const ALICE: [string, string] = ['alice', PASSWORD];

const authorizeInBrowser = (f: Forge, url: URL, opts: Parameters<typeof authorizeAt>[2] = {}) => authorizeAt(f.url, url, { as: ALICE, ...opts });
const discover = (f: Forge, clientId: string, auth: oidc.ClientAuth, secret?: string) => discoverAt(f.url, clientId, auth, secret);

async function codeFlow(f: Forge, config: oidc.Configuration, redirectUri: string, scope?: string, consent?: 'grant' | 'deny') {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    ...(scope ? { scope } : {}),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const back = await authorizeInBrowser(f, url, { consent, expectConsent: consent ? true : undefined });
  return { back, tokens: () => oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state }) };
}

describeForge('OAuth2 provider at Gitea\'s paths', (f) => {
  let repoDir: string;
  beforeAll(async () => {
    await f().user('alice');
    await f().user('root', { admin: true });
    await f().user('carol');
    expect((await f().request('POST', '/orgs', { basic: ALICE, body: { username: 'acme' } })).status).toBe(201);
    const res = await f().request('POST', '/user/repos', { basic: ALICE, body: { name: 'secret', private: true, auto_init: true } });
    expect(res.status).toBe(201);
    repoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oauth2-clone-'));
  });
  afterAll(() => fs.rmSync(repoDir, { recursive: true, force: true }));

  test('discovery answers Gitea\'s document; JWKS serves the RS256 key kept in the database', async () => {
    const doc = await (await fetch(`${f().url}/.well-known/openid-configuration`)).json();
    expect(doc).toMatchObject({
      issuer: f().url,
      authorization_endpoint: `${f().url}/login/oauth/authorize`,
      token_endpoint: `${f().url}/login/oauth/access_token`,
      jwks_uri: `${f().url}/login/oauth/keys`,
      userinfo_endpoint: `${f().url}/login/oauth/userinfo`,
      introspection_endpoint: `${f().url}/login/oauth/introspect`,
      code_challenge_methods_supported: ['plain', 'S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      scopes_supported: ['openid', 'profile', 'email', 'groups'],
    });
    const jwks = (await (await fetch(`${f().url}/login/oauth/keys`)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(jwks.keys[0].d).toBeUndefined();
    const kept = await loadProviderKey(f().app.prisma);
    expect(kept.jwk.kid).toBe(jwks.keys[0].kid);
  });

  test('a built-in public client (tea) with PKCE S256 on any loopback port: ID token, API, refresh with rotation', async () => {
    const config = await discover(f(), TEA, oidc.None());
    const { back, tokens: exchange } = await codeFlow(f(), config, 'http://127.0.0.1:38123/', 'openid profile email groups');
    expect(back.origin).toBe('http://127.0.0.1:38123');
    const tokens = await exchange();
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toBeTruthy();
    const claims = tokens.claims();
    expect(claims).toMatchObject({ iss: f().url, aud: TEA, preferred_username: 'alice', email: 'alice@example.com', groups: ['acme', 'acme:owners'] });

    // Where the spec accepts it: bearer header, token and access_token query parameters.
    expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('alice');
    expect((await f().request('GET', `/user?token=${tokens.access_token}`)).body.login).toBe('alice');
    expect((await f().request('GET', `/user?access_token=${tokens.access_token}`)).body.login).toBe('alice');
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims?.sub as string);
    expect(info).toMatchObject({ sub: claims?.sub, preferred_username: 'alice' });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await f().request('GET', '/user', { bearer: refreshed.access_token })).body.login).toBe('alice');
    // The spent refresh token is refused in Gitea's words (and its reuse revokes the grant).
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ status: 400, error: 'unauthorized_client', error_description: 'token was already used' });
    expect((await f().request('GET', '/user', { bearer: refreshed.access_token })).status).toBe(401);
  });

  test('public clients must use PKCE; plain PKCE works as Gitea allows it; challenges are RFC 7636\'s 43 to 128 characters', async () => {
    const go = await signedInBrowser(f().url, ALICE);
    const q = new URLSearchParams({ client_id: TEA, redirect_uri: 'http://127.0.0.1:4000', response_type: 'code', state: 's' });
    const res = await go(`/login/oauth/authorize?${q}`);
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get('location') as string);
    expect(to.origin).toBe('http://127.0.0.1:4000');
    expect(to.searchParams.get('error')).toBe('invalid_request');
    expect(to.searchParams.get('error_description')).toBe('PKCE is required for public clients');
    expect(to.searchParams.get('state')).toBe('s');

    const verifier = oidc.randomPKCECodeVerifier();
    q.set('code_challenge', verifier);
    q.set('code_challenge_method', 'plain');
    const back = await authorizeInBrowser(f(), new URL(`${f().url}/login/oauth/authorize?${q}`));
    const code = back.searchParams.get("code") as string;
    expect(code).toBeTruthy();
    const exchange = (v: string) =>
      fetch(`${f().url}/login/oauth/access_token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: TEA, redirect_uri: 'http://127.0.0.1:4000', code_verifier: v }),
      });
    const wrong = await exchange(oidc.randomPKCECodeVerifier());
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual({ error: 'unauthorized_client', error_description: 'failed PKCE code challenge' });
    const right = await exchange(verifier);
    expect(right.status).toBe(200);
    const body = (await right.json()) as { access_token: string };
    expect((await f().request('GET', '/user', { bearer: body.access_token })).body.login).toBe('alice');
    // RFC 7636's 43 to 128 characters, for a plain challenge (the verifier itself) as for S256,
    // refused back to the client at once (Gitea takes any challenge: a deliberate difference).
    for (const method of ['plain', 'S256']) {
      for (const challenge of ['abc', 'x'.repeat(129), `${'a'.repeat(42)}+`]) {
        const short = new URLSearchParams({ client_id: TEA, redirect_uri: 'http://127.0.0.1:4000', response_type: 'code', state: 's', code_challenge: challenge, code_challenge_method: method });
        const res = await (await signedInBrowser(f().url, ALICE))(`/login/oauth/authorize?${short}`);
        const to = new URL(res.headers.get('location') as string);
        expect([res.status, to.origin, to.searchParams.get('error'), to.searchParams.get('error_description')]).toEqual([
          303,
          'http://127.0.0.1:4000',
          'invalid_request',
          'code challenge must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~" (RFC 7636)',
        ]);
      }
    }
    // A code is good once: Gitea deletes it, so a second exchange finds none.
    const again = await exchange(verifier);
    expect([again.status, await again.json()]).toEqual([400, { error: 'unauthorized_client', error_description: 'client is not authorized' }]);
  });

  test('Woodpecker: confidential client, secret in the basic header, Gitea scope names limit the token', async () => {
    const created = await f().request('POST', '/user/applications/oauth2', { basic: ALICE, body: { name: 'woodpecker', redirect_uris: ['https://ci.example/authorize'], confidential_client: true } });
    const { client_id, client_secret } = created.body;
    const config = await discover(f(), client_id, oidc.ClientSecretBasic(client_secret), client_secret);
    const { tokens: exchange } = await codeFlow(f(), config, 'https://ci.example/authorize', 'read:user read:repository');
    const tokens = await exchange();
    expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('alice');
    expect((await f().request('GET', '/repos/alice/secret', { bearer: tokens.access_token })).status).toBe(200);
    const denied = await f().request('POST', '/user/repos', { bearer: tokens.access_token, body: { name: 'nope' } });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('token does not have at least one of required scope(s)');
    const intro = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(intro).toMatchObject({ active: true, client_id, scope: 'read:user read:repository' });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect((await f().request('GET', '/user', { bearer: refreshed.access_token })).status).toBe(200);

    // A wrong secret is refused.
    const bad = await discover(f(), client_id, oidc.ClientSecretBasic('gto_wrong'), 'gto_wrong');
    await expect(oidc.refreshTokenGrant(bad, refreshed.refresh_token as string)).rejects.toMatchObject({ status: 400, error: 'invalid_client', error_description: 'invalid client secret' });
  });

  test('Drone: secret in the form body, no scope asked (full access); the token clones over git HTTP; deleting the application revokes it', async () => {
    const created = await f().request('POST', '/user/applications/oauth2', { basic: ALICE, body: { name: 'drone', redirect_uris: ['https://drone.example/login'], confidential_client: true, skip_secondary_authorization: true } });
    const { id, client_id, client_secret } = created.body;
    const config = await discover(f(), client_id, oidc.ClientSecretPost(client_secret), client_secret);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'https://drone.example/login', state: 'st', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const back = await authorizeInBrowser(f(), url, { expectConsent: true });
    const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: 'st' });
    const made = await f().request('POST', '/user/repos', { bearer: tokens.access_token, body: { name: 'by-drone' } });
    expect(made.status).toBe(201);

    // git over HTTP: anonymous is challenged the way credential helpers expect, the token clones.
    const refs = await fetch(`${f().url}/alice/secret.git/info/refs?service=git-upload-pack`);
    expect(refs.status).toBe(401);
    expect(refs.headers.get('www-authenticate')).toBe('Basic realm="Gitea"');
    const cloneUrl = `${f().url.replace('://', `://oauth2:${tokens.access_token}@`)}/alice/secret.git`;
    const clone = await git(repoDir, 'clone', cloneUrl, 'secret');
    expect(clone.exitCode).toBe(0);
    expect(fs.existsSync(path.join(repoDir, 'secret', 'README.md'))).toBe(true);

    expect((await f().request('DELETE', `/user/applications/oauth2/${id}`, { basic: ALICE })).status).toBe(204);
    expect((await f().request('GET', '/user', { bearer: tokens.access_token })).status).toBe(401);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toBeTruthy();
  });

  test('consent: asked the first time; asked every time by a public client; not again by a confidential or skip_secondary_authorization one, whose grant stands', async () => {
    const again = async (clientId: string, auth: oidc.ClientAuth, secret: string | undefined, redirectUri: string, scope: string, expectConsent: boolean, refused?: string) => {
      const config = await discover(f(), clientId, auth, secret);
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope, state: 'c', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const back = await authorizeInBrowser(f(), url, { expectConsent });
      if (refused) {
        expect([back.searchParams.get('error'), back.searchParams.get('error_description')]).toEqual(['server_error', refused]);
        return;
      }
      const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: 'c' });
      expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('alice');
      return tokens.access_token;
    };
    // tea, a public client: every authorization asks (RFC 6749 10.2, as Gitea).
    await again(TEA, oidc.None(), undefined, 'http://127.0.0.1:7001/', 'read:user', true);
    await again(TEA, oidc.None(), undefined, 'http://127.0.0.1:7001/', 'read:user', true);
    const skip = await f().request('POST', '/user/applications/oauth2', { basic: ALICE, body: { name: 'skipper', redirect_uris: ['http://127.0.0.1/cb'], skip_secondary_authorization: true } });
    await again(skip.body.client_id, oidc.None(), undefined, 'http://127.0.0.1/cb', 'read:user', true);
    await again(skip.body.client_id, oidc.None(), undefined, 'http://127.0.0.1/cb', 'read:user', false);
    const conf = await f().request('POST', '/user/applications/oauth2', { basic: ALICE, body: { name: 'confidential', redirect_uris: ['https://conf.example/cb'], confidential_client: true } });
    const { client_id, client_secret } = conf.body;
    await again(client_id, oidc.ClientSecretBasic(client_secret), client_secret, 'https://conf.example/cb', 'read:user', true);
    await again(client_id, oidc.ClientSecretBasic(client_secret), client_secret, 'https://conf.example/cb', 'read:user', false);
    // More than was granted, asked by a confidential application: as Gitea 1.27.3, no question,
    // and the token has the grant's scopes (read:user), not the ones asked for.
    const more = await again(client_id, oidc.ClientSecretBasic(client_secret), client_secret, 'https://conf.example/cb', 'read:user write:repository', false);
    expect((await f().request('POST', '/user/repos', { bearer: more, body: { name: 'unasked' } })).status).toBe(403);
    // A public client is asked, and the consent to other scopes than the grant's is Gitea's
    // server_error (the grant stays as it was).
    const differ = 'a grant exists with different scope';
    await again(TEA, oidc.None(), undefined, 'http://127.0.0.1:7001/', 'read:user read:repository', true, differ);
    await again(TEA, oidc.None(), undefined, 'http://127.0.0.1:7001/', 'read:organization', true, differ);
    await again(TEA, oidc.None(), undefined, 'http://127.0.0.1:7001/', 'read:user', true);
  });

  test("sign-out at Gitea's GET /user/logout: 303 to the home page, the session over, even for a copy of its cookie (POST is 405)", async () => {
    const go = browser(f().url);
    const signedIn = await submitSignIn(go, '/user/login', ALICE);
    const copy = signedIn.headers.getSetCookie().find((c) => c.startsWith('i_like_gitea='))!.split(';')[0];
    const authorize = `/login/oauth/authorize?${new URLSearchParams({ client_id: TEA, redirect_uri: 'http://127.0.0.1:7001/', response_type: 'code', state: 's' })}`;
    expect((await go(authorize)).headers.get('location')).not.toMatch(/^\/user\/login/);
    const out = await go('/user/logout');
    expect([out.status, out.headers.get('location')]).toEqual([303, '/']);
    expect(out.headers.getSetCookie().some((c) => /^i_like_gitea=;.*Max-Age=0/.test(c))).toBe(true);
    expect((await go(authorize)).headers.get('location')).toBe(`/user/login?${new URLSearchParams({ redirect_to: authorize })}`);
    const replayed = await fetch(new URL(authorize, f().url), { headers: { cookie: copy }, redirect: 'manual' });
    expect(replayed.headers.get('location')).toBe(`/user/login?${new URLSearchParams({ redirect_to: authorize })}`);
    // Signed out already: the same answer.
    expect((await go('/user/logout')).status).toBe(303);
    const post = await go('/user/logout', { method: 'POST', body: '' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET']);
  });

  test('refused authorization requests are answered as Gitea 1.27.3 answers them', async () => {
    const app = await f().request('POST', '/user/applications/oauth2', { basic: ALICE, body: { name: 'pub-cmp', redirect_uris: ['http://127.0.0.1/cb'] } });
    const id = app.body.client_id as string;
    const go = await signedInBrowser(f().url, ALICE);
    const authorize = async (params: Record<string, string>) => {
      const res = await go(`/login/oauth/authorize?${new URLSearchParams(params)}`);
      return [res.status, res.status === 303 ? res.headers.get('location') : (/Client ID not registered|Unregistered Redirect URI/.exec(await res.text()) ?? [''])[0]];
    };
    const cb = 'http://127.0.0.1/cb';
    const pkce = { code_challenge: 'abc', code_challenge_method: 'S256' };
    // An anonymous browser is sent to sign in first, whatever the request (Gitea checks it only
    // once signed in); the real Gitea answered these two with these locations.
    const anonymous = browser(f().url);
    for (const q of ['client_id=nope&redirect_uri=http%3A%2F%2Fx%2Fcb&response_type=code&state=s', `client_id=${id}&redirect_uri=http%3A%2F%2Fevil.example%2F`]) {
      const res = await anonymous(`/login/oauth/authorize?${q}`);
      expect([res.status, res.headers.get('location')]).toEqual([303, `/user/login?redirect_to=${encodeURIComponent(`/login/oauth/authorize?${q}`)}`]);
    }
    // Each answer is what the real Gitea gave to the same request (by a signed-in user there).
    expect(await authorize({ client_id: 'nope', redirect_uri: cb, response_type: 'code', state: 's' })).toEqual([400, 'Client ID not registered']);
    expect(await authorize({ client_id: 'nope', redirect_uri: cb, response_type: 'token', state: 's' })).toEqual([400, 'Client ID not registered']);
    expect(await authorize({ client_id: id, redirect_uri: 'http://evil.example/', response_type: 'code', state: 's' })).toEqual([400, 'Unregistered Redirect URI']);
    expect(await authorize({ client_id: id, redirect_uri: cb, response_type: 'token', state: 's' })).toEqual([303, `${cb}?error=unsupported_response_type&error_description=Only+code+response+type+is+supported.&state=s`]);
    expect(await authorize({ client_id: id, redirect_uri: cb, state: 's', ...pkce })).toEqual([303, `${cb}?error=unsupported_response_type&error_description=Only+code+response+type+is+supported.&state=s`]);
    expect(await authorize({ client_id: id, redirect_uri: cb, response_type: 'code', state: 's' })).toEqual([303, `${cb}?error=invalid_request&error_description=PKCE+is+required+for+public+clients&state=s`]);
    expect(await authorize({ client_id: id, redirect_uri: cb, response_type: 'code', state: 's', code_challenge: 'abc', code_challenge_method: 'S512' })).toEqual([
      303,
      `${cb}?error=invalid_request&error_description=unsupported+code+challenge+method&state=s`,
    ]);
    // A loopback redirect URI of a public client matches on any port; no state is fine. (Gitea
    // takes any challenge; the provider wants RFC 7636's 43 characters at least, as clients send.)
    pkce.code_challenge = await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier());
    const signIn = [303, expect.stringMatching(/\/login\/oauth\/interaction\/[\w-]+$/)];
    expect(await authorize({ client_id: id, redirect_uri: 'http://127.0.0.1:9999/cb', response_type: 'code', state: 's', ...pkce })).toEqual(signIn);
    expect(await authorize({ client_id: id, redirect_uri: cb, response_type: 'code', ...pkce })).toEqual(signIn);
  });

  test('the sign-in form as Gitea answers it: a wrong password shows the form again (200) with the user name kept; an e-mail address signs in; forms from elsewhere and foreign redirect_to are refused', async () => {
    const go = browser(f().url);
    let res = await go('/user/login?redirect_to=%2Fuser%2Fsettings%2Fsecurity');
    const html = await res.text();
    expect(html).toContain('<label for="user_name">Username or Email Address</label>');
    const csrf = csrfOf(html);
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${f().url}/user/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; '), ...headers },
        body: new URLSearchParams(fields),
      });
    const wrong = await post({ _csrf: csrf, user_name: 'alice', password: 'not-it', redirect_to: '/user/settings/security' });
    const wrongHtml = await wrong.text();
    expect(wrong.status).toBe(200);
    expect(wrongHtml).toContain('Username or password is incorrect.');
    expect(wrongHtml).toContain('value="alice"');
    expect(wrong.headers.getSetCookie().some((c) => c.startsWith('i_like_gitea='))).toBe(false);
    const byEmail = await post({ _csrf: csrf, user_name: 'alice@example.com', password: PASSWORD, redirect_to: '/user/settings/security' });
    expect([byEmail.status, byEmail.headers.get('location')]).toEqual([303, '/user/settings/security']);
    expect(byEmail.headers.getSetCookie().some((c) => /^i_like_gitea=\d+\./.test(c) && /HttpOnly/.test(c) && /SameSite=Lax/.test(c))).toBe(true);
    // Another site's form: no token, or the browser saying so.
    for (const [fields, headers] of [
      [{ user_name: 'alice', password: PASSWORD }, {}],
      [{ _csrf: 'x'.repeat(43), user_name: 'alice', password: PASSWORD }, {}],
      [{ _csrf: csrf, user_name: 'alice', password: PASSWORD }, { 'sec-fetch-site': 'cross-site' }],
      [{ _csrf: csrf, user_name: 'alice', password: PASSWORD }, { origin: 'https://evil.example' }],
    ] as Array<[Record<string, string>, Record<string, string>]>) {
      const refused = await post(fields, headers);
      expect([refused.status, refused.headers.getSetCookie().some((c) => c.startsWith('i_like_gitea='))]).toEqual([400, false]);
    }
    // Only places on this site are gone back to.
    for (const elsewhere of ['https://evil.example/', '//evil.example/', '/\\evil.example/']) {
      const back = await post({ _csrf: csrf, user_name: 'alice', password: PASSWORD, redirect_to: elsewhere });
      expect([back.status, back.headers.get('location')]).toEqual([303, '/']);
    }
    // Signed in, the sign-in page sends the browser on (Gitea's /user/login?redirect_to=).
    const signed = await signedInBrowser(f().url, ALICE);
    res = await signed('/user/login?redirect_to=%2Fexplore');
    expect([res.status, res.headers.get('location')]).toEqual([303, '/explore']);
  });

  test('denying consent returns access_denied to the client; a wrong redirect URI is refused by the forge', async () => {
    const config = await discover(f(), TEA, oidc.None());
    const { back } = await codeFlow(f(), config, 'http://127.0.0.1:5000', 'read:notification', 'deny');
    expect(back.searchParams.get('error')).toBe('access_denied');
    const go = await signedInBrowser(f().url, ALICE);
    const q = new URLSearchParams({ client_id: TEA, redirect_uri: 'https://evil.example/', response_type: 'code', code_challenge: oidc.randomPKCECodeVerifier(), code_challenge_method: 'S256' });
    const res = await go(`/login/oauth/authorize?${q}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('Unregistered Redirect URI');
    // No redirect URI at all is refused the same way, though the provider could fall back on
    // the only one an application registered.
    const app = await f().request('POST', '/user/applications/oauth2', { basic: ALICE, body: { name: 'one-uri', redirect_uris: ['https://one.example/cb'] } });
    for (const missing of [{}, { redirect_uri: '' }] as Record<string, string>[]) {
      const q2 = new URLSearchParams({ client_id: app.body.client_id, response_type: 'code', state: 's', code_challenge: oidc.randomPKCECodeVerifier(), code_challenge_method: 'S256', ...missing });
      const refused = await go(`/login/oauth/authorize?${q2}`);
      expect([refused.status, refused.headers.get('location')]).toEqual([400, null]);
      expect(await refused.text()).toContain('Unregistered Redirect URI');
    }
  });

  test('userinfo answers personal access tokens and the provider\'s own tokens as Gitea does: read:user required, Gitea\'s six claims', async () => {
    const withUser = await f().token('alice', ['read:user']);
    const without = await f().token('alice', ['read:repository']);
    const alice = (await f().request('GET', '/user', { token: withUser })).body;
    for (const init of [{ headers: { authorization: `token ${withUser}` } }, { headers: { authorization: `Bearer ${withUser}` } }, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `access_token=${withUser}` }] as RequestInit[]) {
      const res = await fetch(`${f().url}/login/oauth/userinfo`, init);
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
      expect(await res.json()).toEqual({ sub: String(alice.id), name: 'alice', preferred_username: 'alice', email: alice.email, picture: alice.avatar_url, groups: ['acme', 'acme:owners'] });
    }
    const carol = await fetch(`${f().url}/login/oauth/userinfo?token=${await f().token('carol', ['read:user'])}`);
    expect(((await carol.json()) as { groups: unknown }).groups).toBeNull();
    const refused = await fetch(`${f().url}/login/oauth/userinfo`, { headers: { authorization: `token ${without}` } });
    expect([refused.status, refused.headers.get('www-authenticate'), await refused.text()]).toEqual([403, 'Bearer realm="Gitea OAuth2"', 'token does not have required scope: read:user']);

    // The provider's own tokens get the same answer (a grant of OpenID scopes only has all API
    // scopes); public-only leaves out organizations whose membership is not public.
    const userinfo = async (scope: string) => {
      const app = await f().request('POST', '/user/applications/oauth2', { basic: ALICE, body: { name: `info-${scope}`, redirect_uris: ['https://info.example/cb'], confidential_client: true } });
      const config = await discover(f(), app.body.client_id, oidc.ClientSecretBasic(app.body.client_secret), app.body.client_secret);
      const { tokens } = await codeFlow(f(), config, 'https://info.example/cb', scope);
      const res = await fetch(`${f().url}/login/oauth/userinfo`, { headers: { authorization: `Bearer ${(await tokens()).access_token}` } });
      return [res.status, res.status === 200 ? await res.json() : await res.text()];
    };
    expect(await userinfo('openid read:repository')).toEqual([403, 'token does not have required scope: read:user']);
    expect(await userinfo('openid')).toEqual([200, { sub: String(alice.id), name: 'alice', preferred_username: 'alice', email: alice.email, picture: alice.avatar_url, groups: ['acme', 'acme:owners'] }]);
    expect(await userinfo('openid read:user public-only')).toEqual([200, expect.objectContaining({ preferred_username: 'alice', groups: null })]);
  });

  test('failed token, userinfo and introspection requests are answered as Gitea answers them', async () => {
    const created = await f().request('POST', '/user/applications/oauth2', { basic: ALICE, body: { name: 'errs', redirect_uris: ['https://errs.example/cb', 'https://errs.example/other'], confidential_client: true } });
    const { client_id: id, client_secret: secret } = created.body;
    const token = async (form: Record<string, string>, authorization?: string) => {
      const res = await fetch(`${f().url}/login/oauth/access_token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
        body: new URLSearchParams(form),
      });
      return [res.status, await res.json()];
    };
    const e = (error: string, error_description: string) => [400, { error, error_description }];
    const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
    // Each answer below is what Gitea 1.27.3 gave to the same request.
    expect(await token({})).toEqual(e('unsupported_grant_type', 'Only refresh_token or authorization_code grant type is supported'));
    expect(await token({ grant_type: 'password', client_id: id, client_secret: secret })).toEqual(e('unsupported_grant_type', 'Only refresh_token or authorization_code grant type is supported'));
    expect(await token({ grant_type: 'authorization_code', client_id: 'nope', client_secret: 'x', code: 'abc' })).toEqual(e('invalid_client', "cannot load client with client id: 'nope'"));
    expect(await token({ grant_type: 'refresh_token', client_id: 'nope', refresh_token: 'abc' })).toEqual(e('invalid_client', 'cannot load client with client id: "nope"'));
    expect(await token({ grant_type: 'authorization_code', client_id: id, client_secret: 'wrong', code: 'abc' })).toEqual(e('unauthorized_client', 'invalid client secret'));
    expect(await token({ grant_type: 'authorization_code', client_id: id, code: 'abc' })).toEqual(e('unauthorized_client', 'invalid empty client secret'));
    expect(await token({ grant_type: 'refresh_token', client_id: id, client_secret: 'wrong', refresh_token: 'abc' })).toEqual(e('invalid_client', 'invalid client secret'));
    expect(await token({ grant_type: 'authorization_code', client_id: id, client_secret: secret, code: 'abc', redirect_uri: 'https://errs.example/cb' })).toEqual(e('unauthorized_client', 'client is not authorized'));
    expect(await token({ grant_type: 'authorization_code', client_id: id, client_secret: secret, code: 'abc', redirect_uri: 'https://evil.example/cb' })).toEqual(e('unauthorized_client', 'unexpected redirect URI'));
    expect(await token({ grant_type: 'refresh_token', client_id: id, client_secret: secret, refresh_token: 'abc' })).toEqual(e('unauthorized_client', 'unable to parse refresh token'));
    expect(await token({ grant_type: 'refresh_token', client_id: id, refresh_token: 'abc' }, basic('other', secret))).toEqual(e('invalid_request', 'client_id in request body inconsistent with Authorization header'));

    const none = await fetch(`${f().url}/login/oauth/userinfo`);
    expect([none.status, none.headers.get('www-authenticate'), await none.text()]).toEqual([401, 'Bearer realm="Gitea OAuth2"', 'no valid authorization']);
    const bad = await fetch(`${f().url}/login/oauth/userinfo`, { headers: { authorization: 'Bearer abc' } });
    expect([bad.status, await bad.text()]).toEqual([401, 'Failed to authenticate user']);
    const intro = await fetch(`${f().url}/login/oauth/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=abc' });
    expect([intro.status, intro.headers.get('www-authenticate'), await intro.text()]).toEqual([401, 'Basic realm="Gitea OAuth2"', 'no valid authorization']);

    // A code sent back with another (registered) redirect URI than it was issued for.
    const config = await discover(f(), id, oidc.ClientSecretBasic(secret), secret);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'https://errs.example/cb', state: 'e', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const back = await authorizeInBrowser(f(), url, { consent: 'grant' });
    const code = back.searchParams.get('code') as string;
    expect(await token({ grant_type: 'authorization_code', client_id: id, client_secret: secret, code, code_verifier: verifier, redirect_uri: 'https://errs.example/other' })).toEqual(
      e('invalid_grant', 'redirect_uri differs from the original authorization request'),
    );
  });

  test('deleting a user deletes their applications and every grant and token they gave', async () => {
    const carol: [string, string] = ['carol', PASSWORD];
    const app = await f().request('POST', '/user/applications/oauth2', { basic: carol, body: { name: 'carols', redirect_uris: ['https://c.example/cb'], confidential_client: true } });
    expect(app.status).toBe(201);
    const config = await discover(f(), TEA, oidc.None());
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:6000/', state: 'c', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const back = await authorizeInBrowser(f(), url, { as: carol });
    const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: 'c' });
    expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('carol');
    const user = await f().app.services.users.findIndividual('carol');
    expect((await f().request('DELETE', '/admin/users/carol', { basic: ['root', PASSWORD] })).status).toBe(204);
    expect((await f().request('GET', '/user', { bearer: tokens.access_token })).status).toBe(401);
    expect(await f().app.prisma.oAuth2ProviderRecord.count({ where: { accountId: String(user?.id) } })).toBe(0);
    expect(await f().app.prisma.oAuth2Application.count({ where: { userId: user?.id } })).toBe(0);
  });
});
