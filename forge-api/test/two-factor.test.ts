/**
 * Two-factor enrolment at Gitea's paths, the way a user does it in a browser without JavaScript
 * (fetch plays the browser: basic sign-in on the settings pages, the sign-in form for OAuth2): enrol with a passcode, keep the scratch
 * token, sign in to an OAuth2 application with a passcode or the scratch token (once), regenerate
 * the scratch token, disable. What an enrolled account may no longer do is checked alongside: the
 * API without the OTP header, git over HTTP with the password.
 */
import * as oidc from 'openid-client';
import { totpCode } from '../src/services/totp';
import { describeForge, PASSWORD } from './support/forge';
import { browser, consentAndReturn, csrfOf, submitSignIn } from './support/oauth2-login';

const DAVE: [string, string] = ['dave', PASSWORD];
const TEA = 'd57cb8c4-630c-4168-8324-ec79935e18d4';
const basic = ([u, p]: [string, string]) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

describeForge('two-factor enrolment', (f) => {
  let scratch = '';
  let secret = '';

  /** A page request as a browser signed in as dave sends it (form body when given). */
  async function web(path: string, form?: Record<string, string>, headers: Record<string, string> = {}) {
    const res = await fetch(new URL(path, f().url), {
      method: form ? 'POST' : 'GET',
      headers: { authorization: basic(DAVE), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      body: form ? new URLSearchParams(form) : undefined,
      redirect: 'manual',
    });
    return { status: res.status, headers: res.headers, html: await res.text() };
  }
  const field = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

  beforeAll(async () => {
    await f().user('dave');
    expect((await f().request('POST', '/user/repos', { basic: DAVE, body: { name: 'code', auto_init: true } })).status).toBe(201);
  });

  test('enrol with a passcode; then the API wants the OTP and git over HTTP refuses the password', async () => {
    // Anonymous: to the sign-in form and back (Gitea's answer); wrong basic credentials: a challenge.
    const anonymous = await fetch(`${f().url}/user/settings/security/two_factor/enroll`, { redirect: 'manual' });
    expect([anonymous.status, anonymous.headers.get('location')]).toEqual([303, '/user/login?redirect_to=%2Fuser%2Fsettings%2Fsecurity%2Ftwo_factor%2Fenroll']);
    const wrongBasic = await fetch(`${f().url}/user/settings/security/two_factor/enroll`, { headers: { authorization: basic(['dave', 'not-it']) } });
    expect([wrongBasic.status, wrongBasic.headers.get('www-authenticate')]).toEqual([401, 'Basic realm="Gitea"']);

    const offer = await web('/user/settings/security/two_factor/enroll');
    expect(offer.status).toBe(200);
    secret = field(offer.html, 'secret');
    const proof = field(offer.html, 'proof');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(offer.html).toContain(`otpauth://totp/Portcullis%20Forge%20(127.0.0.1):dave?secret=${secret}`);
    expect(offer.html).toMatch(/<label for="passcode">/);

    // A wrong passcode shows the same key again; a key other than the one offered is refused.
    const wrong = await web('/user/settings/security/two_factor/enroll', { secret, proof, passcode: totpCode(secret, Math.floor(Date.now() / 1000) - 3600) });
    expect(wrong.status).toBe(400);
    expect(field(wrong.html, 'secret')).toBe(secret);
    expect(wrong.html).toContain('The passcode is not correct.');
    const forged = await web('/user/settings/security/two_factor/enroll', { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', proof, passcode: totpCode('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP') });
    expect(forged.status).toBe(422);
    expect((await f().request('GET', '/user', { basic: DAVE })).status).toBe(200);

    const done = await web('/user/settings/security/two_factor/enroll', { secret, proof, passcode: totpCode(secret) });
    expect(done.status).toBe(200);
    scratch = /id="scratch-token">([A-Z2-9]{10})</.exec(done.html)?.[1] ?? '';
    expect(scratch).toMatch(/^[A-Z2-9]{10}$/);
    expect((await web('/user/settings/security/two_factor/enroll')).status).toBe(409);

    const noOtp = await f().request('GET', '/user', { basic: DAVE });
    expect([noOtp.status, noOtp.body.message]).toEqual([401, 'invalid provided OTP']);
    expect((await f().request('GET', '/user', { basic: DAVE, headers: { 'x-gitea-otp': totpCode(secret) } })).body.login).toBe('dave');
    const refs = await fetch(`${f().url}/dave/code.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic(DAVE) } });
    expect(refs.status).toBe(401);
    expect(await refs.text()).toContain('Users with two-factor authentication enabled cannot perform HTTP/HTTPS operations via plain username and password');
  });

  test('signing in to an OAuth2 application asks for the passcode after the password; the scratch token works once', async () => {
    const config = await oidc.discovery(new URL(f().url), TEA, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    /** The sign-in form, then the two-factor form with `code`: the browser and the answer to the second. */
    const signInWith = async (code: string) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:7000/', state: 'z', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const go = browser(f().url);
      const signIn = await submitSignIn(go, (await go(url.href)).headers.get('location') as string, DAVE);
      // The right password of an enrolled account: no session yet, the passcode step next.
      expect(signIn.headers.getSetCookie().some((c) => c.startsWith('i_like_gitea='))).toBe(false);
      const step = signIn.headers.get('location') as string;
      expect([signIn.status, step]).toEqual([303, `/user/two_factor?${new URLSearchParams({ redirect_to: `${url.pathname}${url.search}` })}`]);
      const html = await (await go(step)).text();
      expect(html).toMatch(/<label for="passcode">/);
      const res = await go('/user/two_factor', { method: 'POST', body: new URLSearchParams({ _csrf: csrfOf(html), redirect_to: `${url.pathname}${url.search}`, passcode: code }).toString() });
      return { go, res, verifier, authorizePath: `${url.pathname}${url.search}` };
    };

    const bad = await signInWith('AAAAAAAAAA');
    expect([bad.res.status, (await bad.res.text()).includes('Your passcode is incorrect.')]).toEqual([200, true]);
    const ok = await signInWith(scratch);
    expect([ok.res.status, ok.res.headers.get('location')]).toEqual([303, ok.authorizePath]);
    const back = await consentAndReturn(ok.go, f().url, ok.authorizePath);
    const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: ok.verifier, expectedState: 'z' });
    expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('dave');

    // The same scratch token again: spent. A passcode of the authenticator still signs in.
    const spent = await signInWith(scratch);
    expect([spent.res.status, (await spent.res.text()).includes('Your passcode is incorrect.')]).toEqual([200, true]);
    const again = await signInWith(totpCode(secret));
    expect(again.res.status).toBe(303);
  });

  test('a new scratch token and disabling both need a passcode', async () => {
    const refused = await web('/user/settings/security/two_factor/regenerate_scratch', { passcode: '' });
    expect(refused.status).toBe(401);
    const fresh = await web('/user/settings/security/two_factor/regenerate_scratch', { passcode: totpCode(secret) });
    expect(fresh.status).toBe(200);
    expect(/id="scratch-token">([A-Z2-9]{10})</.exec(fresh.html)?.[1]).toMatch(/^[A-Z2-9]{10}$/);
    expect((await web('/user/settings/security/two_factor/disable', { passcode: '123' })).status).toBe(401);
    const off = await web('/user/settings/security/two_factor/disable', { passcode: totpCode(secret) });
    expect(off.status).toBe(200);
    expect((await f().request('GET', '/user', { basic: DAVE })).body.login).toBe('dave');
    expect(await f().app.prisma.twoFactorScratch.count()).toBe(0);
    expect((await web('/user/settings/security')).html).toContain('Two-factor authentication is not enrolled.');
  });
});
