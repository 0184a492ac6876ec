/**
 * The sign-in, consent and two-factor pages in a real browser: headless Chromium (Debian's
 * chromium package) driven by playwright-core, with a confidential OAuth2 client (openid-client)
 * doing what Woodpecker does: authorization code with PKCE, the secret in the basic header, the
 * token on the API. The pages are used by keyboard only (Tab to the control, type, Enter); their
 * controls are checked for accessible names and their text for contrast.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { chromium, type Browser, type Page } from 'playwright-core';
import { totpCode } from '../src/services/totp';
import { describeForge, PASSWORD, type Forge } from './support/forge';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));

/** WCAG contrast ratio of two CSS rgb() colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/[\d.]+/g) ?? ['0', '0', '0']).slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/** Whether the element has the keyboard focus (run in the page). */
const focused = (el: unknown) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement;

/** Presses Tab until the element `selector` names has the focus (keyboard only), at most 10 times. */
async function tabTo(page: Page, selector: string) {
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Tab');
    if (await page.locator(selector).evaluate(focused)) return;
  }
  throw new Error(`${selector} never got the focus`);
}

/**
 * The page's controls as assistive technology sees them (the accessibility tree's roles and
 * names), and every text's contrast against its background (WCAG AA, 4.5:1).
 */
async function checkAccessible(page: Page, controls: string[]) {
  const tree = await page.locator('main').ariaSnapshot();
  for (const c of controls) expect(tree).toContain(c);
  const colours = (await page.evaluate(`[...document.querySelectorAll('h1, p, li, label, button')].map((el) => {
    const clear = (c) => /rgba\\(0, 0, 0, 0\\)|transparent/.test(c);
    let bg = 'rgba(0, 0, 0, 0)';
    for (let e = el; e && clear(bg); e = e.parentElement) bg = getComputedStyle(e).backgroundColor;
    return [getComputedStyle(el).color, clear(bg) ? 'rgb(255, 255, 255)' : bg];
  })`)) as Array<[string, string]>;
  expect(colours.length).toBeGreaterThan(0);
  for (const [fg, bg] of colours) expect(contrast(fg, bg)).toBeGreaterThanOrEqual(4.5);
}

describe('OAuth2 pages in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    // scripts/install.sh installs Debian's chromium; a machine without it fails here, saying so,
    // rather than passing with the pages untested.
    if (!CHROMIUM) throw new Error('chromium is not installed (/usr/bin/chromium): run scripts/install.sh');
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  });
  afterAll(async () => browser?.close());

  describeForge('sign-in, consent and two-factor pages', (f) => {
    let callbacks: string[];
    let receiver: http.Server;
    let redirectUri: string;
    beforeAll(async () => {
      // The CI system's callback: records where the browser was sent back to.
      callbacks = [];
      receiver = http.createServer((req, res) => {
        // (the browser also asks for /favicon.ico)
        if (req.url?.startsWith('/authorize')) callbacks.push(req.url);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in');
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      redirectUri = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/authorize`;
      await f().user('erin');
    });
    afterAll(async () => new Promise<void>((r) => receiver.close(() => r())));

    /** Woodpecker's login: authorization URL with PKCE, the browser part, the code exchange. */
    async function woodpeckerLogin(forge: Forge, client: { id: string; secret: string }, browse: (page: Page) => Promise<void>) {
      const config = await oidc.discovery(new URL(forge.url), client.id, client.secret, oidc.ClientSecretBasic(client.secret), { execute: [oidc.allowInsecureRequests] });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid profile read:user', state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      // The browser signs in with its own basic-authentication dialog, answered here.
      const context = await browser.newContext({ httpCredentials: { username: 'erin', password: PASSWORD } });
      const page = await context.newPage();
      try {
        await page.goto(url.href);
        const before = callbacks.length;
        await browse(page);
        await page.waitForURL((u) => u.href.startsWith(redirectUri));
        expect(callbacks.length).toBe(before + 1);
        return await oidc.authorizationCodeGrant(config, new URL(callbacks[before], redirectUri), { pkceCodeVerifier: verifier, expectedState: state });
      } finally {
        await context.close();
      }
    }

    test('Woodpecker login: sign in with the browser, grant by keyboard, token on the API', async () => {
      const created = await f().request('POST', '/user/applications/oauth2', { basic: ['erin', PASSWORD], body: { name: 'woodpecker', redirect_uris: [redirectUri], confidential_client: true } });
      const client = { id: created.body.client_id, secret: created.body.client_secret };
      const tokens = await woodpeckerLogin(f(), client, async (page) => {
        expect(await page.locator('h1').textContent()).toBe('Authorize application');
        expect(await page.locator('main').textContent()).toContain('woodpecker');
        await checkAccessible(page, ['button "Authorize Application"', 'button "Cancel"', 'listitem: openid', 'listitem: read:user']);
        await tabTo(page, 'button[value="true"]');
        await page.keyboard.press('Enter');
      });
      expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('erin');
      expect(tokens.claims()?.preferred_username).toBe('erin');
    });

    test('two-factor: enrol on the settings page by keyboard, then the login asks for the passcode', async () => {
      const context = await browser.newContext({ httpCredentials: { username: 'erin', password: PASSWORD } });
      const page = await context.newPage();
      let secret = '';
      try {
        await page.goto(`${f().url}/user/settings/security/two_factor/enroll`);
        secret = (await page.locator('#secret').textContent()) ?? '';
        await checkAccessible(page, ['textbox "Passcode from your authenticator app"', 'button "Verify"']);
        // The passcode field has the focus when the page opens.
        expect(await page.locator('#passcode').evaluate(focused)).toBe(true);
        await page.keyboard.type(totpCode(secret));
        await page.keyboard.press('Enter');
        expect(await page.locator('#scratch-token').textContent()).toMatch(/^[A-Z2-9]{10}$/);
      } finally {
        await context.close();
      }

      const created = await f().request('POST', '/user/applications/oauth2', {
        basic: ['erin', PASSWORD],
        headers: { 'x-gitea-otp': totpCode(secret) },
        body: { name: 'ci-2fa', redirect_uris: [redirectUri], confidential_client: true, skip_secondary_authorization: true },
      });
      const tokens = await woodpeckerLogin(f(), { id: created.body.client_id, secret: created.body.client_secret }, async (page) => {
        // The first authorization asks for consent and the passcode on one page.
        expect(await page.locator('h1').textContent()).toBe('Authorize application');
        await checkAccessible(page, ['textbox "Passcode from your authenticator app (or your scratch token)"', 'button "Authorize Application"']);
        await page.keyboard.type('000000');
        await page.keyboard.press('Enter');
        expect(await page.getByRole('alert').textContent()).toContain('The passcode is not correct.');
        await page.keyboard.type(totpCode(secret));
        await page.keyboard.press('Enter');
      });
      expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('erin');
    });
  });
});
