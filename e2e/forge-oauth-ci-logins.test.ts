/**
 * CI systems logging in to the forge through its OAuth2 provider, with the forge behind the
 * gateway's real nginx (an HTTPRoute to the forge's port, ROOT_URL the gateway's address), as a
 * site runs it: every request of the flows below (discovery, authorize, sign-in and consent, the
 * token endpoint, the API, git over HTTP) passes through nginx.
 *
 * Woodpecker and Drone themselves are Go programs this machine cannot build, so their flows are
 * driven with a real OAuth2 client library (openid-client) configured as each of them is:
 * - Woodpecker: authorization code without PKCE, the client secret in the basic header, no scope
 *   asked for (full access), the access token refreshed when it runs out;
 * - Drone: the same with the client secret in the form body.
 * One forge (SQLite): the database paths of the provider are covered by forge-api's suites.
 */
import * as oidc from 'openid-client';
import { startForge, PASSWORD, type Forge } from '../forge-api/test/support/forge';
import { authorizeAt, discoverAt } from '../forge-api/test/support/oauth2-login';
import { git } from '../forge-api/test/support/git';
import { startGatewayFixture, type GatewayFixture } from './support/gateway';
import { httpRoute, rule, serviceFor } from './support/manifests';
import { makeTempDir, removeDir } from './support/tmp';

const ALICE: [string, string] = ['alice', PASSWORD];

describe('CI logins through the gateway', () => {
  let gw: GatewayFixture;
  let forge: Forge;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    dir = await makeTempDir('portcullis-ci-login-');
    gw = await startGatewayFixture();
    base = `http://127.0.0.1:${gw.port}`;
    forge = await startForge('sqlite', { rootUrl: `${base}/` });
    await gw.write('10-forge.yaml', [...serviceFor('forge', Number(new URL(forge.url).port)), httpRoute('forge', { rules: [rule('forge')] })]);
    await forge.user('alice');
    expect((await forge.request('POST', '/user/repos', { basic: ALICE, body: { name: 'app', private: true, auto_init: true } })).status).toBe(201);
  });
  afterAll(async () => {
    await forge?.close();
    await gw?.close();
    if (dir) await removeDir(dir);
  });

  /** The login a CI system makes: authorize (no PKCE, no scope), sign in and consent, code for tokens. */
  async function ciLogin(name: string, auth: (secret: string) => oidc.ClientAuth, redirectUri: string) {
    const created = await fetch(`${base}/api/v1/user/applications/oauth2`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(ALICE.join(':')).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, redirect_uris: [redirectUri], confidential_client: true }),
    });
    expect(created.status).toBe(201);
    const app = (await created.json()) as { client_id: string; client_secret: string };
    const config = await discoverAt(base, app.client_id, auth(app.client_secret), app.client_secret);
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, state });
    expect(url.origin).toBe(base);
    const back = await authorizeAt(base, url, { as: ALICE, expectConsent: true });
    expect(back.origin + back.pathname).toBe(redirectUri);
    const tokens = await oidc.authorizationCodeGrant(config, back, { expectedState: state });
    return { config, tokens };
  }

  const api = (token: string, path: string, init: RequestInit = {}) => fetch(`${base}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

  test('Woodpecker: secret in the basic header; the token lists repositories, sets a hook and clones; refresh rotates', async () => {
    const { config, tokens } = await ciLogin('woodpecker', (s) => oidc.ClientSecretBasic(s), 'https://ci.example/authorize');
    const me = await api(tokens.access_token, '/user');
    expect([me.status, ((await me.json()) as { login: string }).login]).toEqual([200, 'alice']);
    const repos = (await (await api(tokens.access_token, '/user/repos')).json()) as { full_name: string; permissions: { admin: boolean } }[];
    expect(repos.map((r) => [r.full_name, r.permissions.admin])).toEqual([['alice/app', true]]);
    // Woodpecker activates a repository by adding its hook.
    const hook = await api(tokens.access_token, '/repos/alice/app/hooks', { method: 'POST', body: JSON.stringify({ type: 'gitea', config: { url: 'https://ci.example/api/hook', content_type: 'json' }, events: ['push', 'pull_request'], active: true }) });
    expect(hook.status).toBe(201);
    // The pipeline clones with the token over git HTTP, through the gateway too.
    const clone = await git(dir, 'clone', `${base.replace('://', `://oauth2:${tokens.access_token}@`)}/alice/app.git`, 'app');
    expect(clone.exitCode).toBe(0);

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await api(refreshed.access_token, '/user')).status).toBe(200);
    // A second login is not asked again: the application is confidential and was granted.
    const state = oidc.randomState();
    const again = await authorizeAt(base, oidc.buildAuthorizationUrl(config, { redirect_uri: 'https://ci.example/authorize', state }), { as: ALICE, expectConsent: false });
    expect((await oidc.authorizationCodeGrant(config, again, { expectedState: state })).access_token).toBeTruthy();
  });

  test('Drone: secret in the form body; the token works on the API; a wrong secret is refused as Gitea refuses it', async () => {
    const { config, tokens } = await ciLogin('drone', (s) => oidc.ClientSecretPost(s), 'https://drone.example/login');
    expect((await api(tokens.access_token, '/repos/alice/app')).status).toBe(200);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect((await api(refreshed.access_token, '/repos/alice/app')).status).toBe(200);
    // The spent refresh token is refused in Gitea's words, through nginx unchanged.
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ status: 400, error: 'unauthorized_client', error_description: 'token was already used' });
    const wrong = await fetch(`${base}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: config.clientMetadata().client_id, client_secret: 'gto_wrong', refresh_token: refreshed.refresh_token as string }),
    });
    expect([wrong.status, await wrong.json()]).toEqual([400, { error: 'invalid_client', error_description: 'invalid client secret' }]);
  });
});
