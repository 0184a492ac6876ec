/**
 * The site's sign-in policy, on one forge configured as an operator would: failed sign-ins
 * throttled (SIGN_IN_MAX_FAILURES=3 here) on the API, git over HTTP and the sign-in pages, per
 * client and account; and Gitea's TWO_FACTOR_AUTH = enforced (repositories closed on the API to
 * accounts without two-factor authentication, no OAuth2 authorization for them, git HTTP as
 * before), then opened again once the account enrols through the pages.
 */
import * as oidc from 'openid-client';
import { totpCode } from '../src/services/totp';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';
import { signedInBrowser } from './support/oauth2-login';

const TEA = 'd57cb8c4-630c-4168-8324-ec79935e18d4';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describeForge(
  'sign-in policy: throttling and enforced two-factor authentication',
  (f) => {
    beforeAll(async () => {
      for (const name of ['erin', 'frank', 'gina']) await f().user(name);
      // Repositories are created outside /repos/{owner}/{repo}, which enforcement leaves open.
      for (const [owner, name] of [['erin', 'notes'], ['gina', 'site']]) {
        expect((await f().request('POST', '/user/repos', { basic: [owner, PASSWORD], body: { name, auto_init: true } })).status).toBe(201);
      }
    });

    /** A page request signed in with basic credentials (form body when given). */
    async function web(path: string, user: string, pass: string, form?: Record<string, string>, headers: Record<string, string> = {}) {
      const res = await fetch(new URL(path, f().url), {
        method: form ? 'POST' : 'GET',
        headers: { authorization: basic(user, pass), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
        body: form ? new URLSearchParams(form) : undefined,
        redirect: 'manual',
      });
      return { status: res.status, headers: res.headers, html: await res.text() };
    }

    test('after 3 failed passwords the account is refused from this client with 429, even the right password; tokens and other accounts are not', async () => {
      const token = await f().token('erin', ['all']);
      for (let i = 0; i < 3; i++) expect((await f().request('GET', '/user', { basic: ['erin', `wrong-${i}`] })).status).toBe(401);
      const refused = await f().request('GET', '/user', { basic: ['erin', PASSWORD] });
      expect([refused.status, refused.body.message]).toEqual([429, 'too many failed sign-in attempts, try again later']);
      const wait = Number(refused.headers.get('retry-after'));
      expect(wait).toBeGreaterThan(500);
      expect(wait).toBeLessThanOrEqual(600);

      const refs = await fetch(`${f().url}/erin/notes.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic('erin', PASSWORD) } });
      expect([refs.status, refs.headers.get('retry-after') !== null]).toEqual([429, true]);
      const page = await web('/user/settings/security', 'erin', PASSWORD);
      expect([page.status, page.html.includes('Too many sign-in attempts')]).toEqual([429, true]);

      expect((await f().request('GET', '/user', { token })).body.login).toBe('erin');
      expect((await f().request('GET', '/user', { basic: ['frank', PASSWORD] })).body.login).toBe('frank');
      // An unknown account is throttled alike (the answer does not tell accounts apart).
      for (let i = 0; i < 4; i++) await f().request('GET', '/user', { basic: ['nobody', 'x'] });
      expect((await f().request('GET', '/user', { basic: ['nobody', 'x'] })).status).toBe(429);
    });

    test('enforced two-factor: no repository on the API without it (token or password), git HTTP and public reads unaffected', async () => {
      const token = await f().token('frank', ['all']);
      expect((await f().request('GET', '/user', { basic: ['frank', PASSWORD] })).status).toBe(200);
      for (const auth of [{ basic: ['frank', PASSWORD] as [string, string] }, { token }]) {
        const repo = await f().request('GET', '/repos/gina/site', auth);
        expect([repo.status, repo.body.message]).toEqual([404, 'not found']);
        expect((await f().request('POST', '/repos/gina/site/issues', { ...auth, body: { title: 'x' } })).status).toBe(404);
      }
      expect((await f().request('GET', '/repos/gina/site')).status).toBe(200);
      expect((await f().request('GET', '/users/gina/repos', { token })).body.map((r: { name: string }) => r.name)).toEqual(['site']);
      const lsRemote = await git(f().dataDir, 'ls-remote', `${f().url.replace('://', `://frank:${token}@`)}/gina/site.git`);
      expect([lsRemote.exitCode, lsRemote.stdout]).toEqual([0, expect.stringContaining('refs/heads/main')]);

      // The security page says why; the OAuth2 sign-in refuses as Gitea does.
      expect((await web('/user/settings/security', 'frank', PASSWORD)).html).toContain('You must set up two-factor authentication to get access to repositories');
      const config = await oidc.discovery(new URL(f().url), TEA, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:7000/', state: 's', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
      const go = await signedInBrowser(f().url, ['frank', PASSWORD]);
      const start = await go(url.href);
      const interaction = await go(start.headers.get('location') as string);
      const html = await interaction.text();
      expect(interaction.status).toBe(400);
      expect(html).toContain('two-factor authentication is required');
      expect(html).toContain('href="/user/settings/security/two_factor/enroll"');
    });

    test('once enrolled, repositories open again; wrong passcodes count as failed sign-ins', async () => {
      const offer = await web('/user/settings/security/two_factor/enroll', 'gina', PASSWORD);
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(offer.html)?.[1] ?? '';
      const secret = field('secret');
      expect((await web('/user/settings/security/two_factor/enroll', 'gina', PASSWORD, { secret, proof: field('proof'), passcode: totpCode(secret) })).status).toBe(200);
      const otp = { 'x-gitea-otp': totpCode(secret) };
      expect((await f().request('GET', '/repos/gina/site', { basic: ['gina', PASSWORD], headers: otp })).body.full_name).toBe('gina/site');
      const token = await f().request('POST', '/users/gina/tokens', { basic: ['gina', PASSWORD], headers: otp, body: { name: 'ci', scopes: ['read:repository'] } });
      expect((await f().request('GET', '/repos/gina/site', { token: token.body.sha1 })).status).toBe(200);

      const stale = { 'x-gitea-otp': totpCode(secret, Math.floor(Date.now() / 1000) - 3600) };
      for (let i = 0; i < 3; i++) expect((await f().request('GET', '/user', { basic: ['gina', PASSWORD], headers: stale })).status).toBe(401);
      expect((await f().request('GET', '/user', { basic: ['gina', PASSWORD], headers: otp })).status).toBe(429);
    });
  },
  { signInMaxFailures: 3, twoFactorAuthEnforced: true },
);
