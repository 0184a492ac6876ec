/**
 * The sign-in, consent and two-factor pages in a real browser: headless Chromium (Debian's
 * chromium package) driven by playwright-core, with a confidential OAuth2 client (openid-client)
 * doing what Woodpecker does: authorization code with PKCE, the secret in the basic header, the
 * token on the API. The browser signs in on the forge's sign-in form (and its two-factor step),
 * then consents. The pages are used by keyboard only (Tab to the control, type, Enter); their
 * controls are checked for accessible names, their text for contrast, and what they show (the
 * rendered text, and screenshots kept as test artefacts under test-artifacts/oauth2-browser).
 */
import fs from 'node:fs';
import path from 'node:path';
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

const VIEWPORT = { width: 800, height: 600 };
/** Where the screenshots go: test artefacts, never committed (TEST_ARTIFACTS_DIR in CI). */
const ARTIFACTS = path.join(process.env.TEST_ARTIFACTS_DIR ?? path.join(__dirname, '..', '..', 'test-artifacts'), 'oauth2-browser');

/** The lines of text the page shows (rendered text: hidden fields and markup left out). */
async function visibleText(page: Page): Promise<string[]> {
  return (await page.locator('main').innerText())
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/**
 * Keeps a screenshot of the page as a test artefact and checks it shows the page: a PNG of the
 * viewport's size whose pixels are not all one colour. The image's text is what visibleText read
 * (Chromium paints the same DOM it lays out), so the test compares that rather than pixels,
 * which would change with fonts.
 */
async function checkScreenshot(page: Page, name: string) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  const png = await page.screenshot({ path: file });
  expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([VIEWPORT.width, VIEWPORT.height]);
  // The first heading's box is painted with dark text on the light page: both colours in it.
  const box = await page.locator('h1').boundingBox();
  expect(box).not.toBeNull();
  const pixels = (await page.evaluate(`(async () => {
    const img = new Image();
    img.src = 'data:image/png;base64,${png.toString('base64')}';
    await img.decode();
    const c = document.createElement('canvas');
    c.width = ${Math.ceil(box!.width)}; c.height = ${Math.ceil(box!.height)};
    const g = c.getContext('2d');
    g.drawImage(img, -${Math.floor(box!.x)}, -${Math.floor(box!.y)});
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let dark = 0, light = 0;
    for (let i = 0; i < d.length; i += 4) { const l = d[i] + d[i + 1] + d[i + 2]; if (l < 200) dark++; else if (l > 600) light++; }
    return [dark, light];
  })()`)) as [number, number];
  expect(pixels[0]).toBeGreaterThan(20);
  expect(pixels[1]).toBeGreaterThan(20);
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

    /**
     * A code + PKCE login with openid-client, the browser part in Chromium: `browse` signs in and
     * consents on the pages the forge shows. Returns the tokens.
     */
    async function codeLogin(forge: Forge, client: { id: string; secret: string }, browse: (page: Page) => Promise<void>) {
      const config = await oidc.discovery(new URL(forge.url), client.id, client.secret, oidc.ClientSecretBasic(client.secret), { execute: [oidc.allowInsecureRequests] });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid profile read:user', state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const context = await browser.newContext({ viewport: VIEWPORT });
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

    /** Signs in on the sign-in form by keyboard only: the user name field has the focus, Tab to the password, Enter. */
    async function typeSignIn(page: Page, name: string, password: string) {
      expect(await page.locator('#user_name').evaluate(focused)).toBe(true);
      await page.keyboard.type(name);
      await tabTo(page, '#password');
      await page.keyboard.type(password);
      await page.keyboard.press('Enter');
    }

    test('Woodpecker login: the sign-in form (a wrong password first), consent by keyboard, code + PKCE, token on the API; screenshots of both pages show what the user reads', async () => {
      const created = await f().request('POST', '/user/applications/oauth2', { basic: ['erin', PASSWORD], body: { name: 'woodpecker', redirect_uris: [redirectUri], confidential_client: true } });
      const client = { id: created.body.client_id, secret: created.body.client_secret };
      const tokens = await codeLogin(f(), client, async (page) => {
        // The anonymous browser was sent to sign in first.
        expect(new URL(page.url()).pathname).toBe('/user/login');
        expect(await visibleText(page)).toEqual(['Sign In', 'Username or Email Address', 'Password', 'Sign In']);
        await checkAccessible(page, ['textbox "Username or Email Address"', 'textbox "Password"', 'button "Sign In"']);
        await checkScreenshot(page, 'sign-in');
        const answer = page.waitForResponse((r) => r.request().method() === 'POST');
        await typeSignIn(page, 'erin', 'not-the-password');
        expect((await answer).status()).toBe(200);
        expect(await page.getByRole('alert').innerText()).toBe('Username or password is incorrect.');
        expect(await page.locator('#user_name').inputValue()).toBe('erin');
        await checkScreenshot(page, 'sign-in-wrong-password');
        // The user name is kept and the password field has the focus.
        expect(await page.locator('#password').evaluate(focused)).toBe(true);
        await page.keyboard.type(PASSWORD);
        await page.keyboard.press('Enter');
        await page.waitForURL(/\/login\/oauth\/interaction\//);
        expect(await visibleText(page)).toEqual([
          'Authorize application',
          'woodpecker would like to access your account erin.',
          'Scopes asked for:',
          'openid',
          'profile',
          'read:user',
          'If you authorize it, it can access and modify all your account information, including private repositories and organizations, within those scopes.',
          'Authorize Application Cancel',
        ]);
        await checkAccessible(page, ['button "Authorize Application"', 'button "Cancel"', 'listitem: openid', 'listitem: read:user']);
        await checkScreenshot(page, 'consent');
        await tabTo(page, 'button[value="true"]');
        await page.keyboard.press('Enter');
      });
      expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('erin');
      expect(tokens.claims()?.preferred_username).toBe('erin');
    });

    test('two-factor: enrol on the settings page by keyboard, then the sign-in asks for the passcode and refuses a wrong one', async () => {
      const context = await browser.newContext({ viewport: VIEWPORT });
      const page = await context.newPage();
      let secret = '';
      try {
        // The settings page sends the anonymous browser to sign in, then back.
        await page.goto(`${f().url}/user/settings/security/two_factor/enroll`);
        expect(new URL(page.url()).pathname).toBe('/user/login');
        await typeSignIn(page, 'erin', PASSWORD);
        await page.waitForURL(/\/user\/settings\/security\/two_factor\/enroll$/);
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
      const tokens = await codeLogin(f(), { id: created.body.client_id, secret: created.body.client_secret }, async (page) => {
        await typeSignIn(page, 'erin', PASSWORD);
        await page.waitForURL(/\/user\/two_factor\?/);
        expect(await page.locator('h1').innerText()).toBe('Two-Factor Authentication');
        await checkAccessible(page, ['textbox "Passcode (or scratch code)"', 'button "Verify"']);
        expect(await page.locator('#passcode').evaluate(focused)).toBe(true);
        const answer = page.waitForResponse((r) => r.request().method() === 'POST');
        await page.keyboard.type('000000');
        await page.keyboard.press('Enter');
        expect((await answer).status()).toBe(200);
        expect(await page.getByRole('alert').innerText()).toContain('Your passcode is incorrect.');
        await page.keyboard.type(totpCode(secret));
        await page.keyboard.press('Enter');
        // The first authorization of the application asks for consent.
        await page.waitForURL(/\/login\/oauth\/interaction\//);
        expect(await page.locator('h1').innerText()).toBe('Authorize application');
        await tabTo(page, 'button[value="true"]');
        await page.keyboard.press('Enter');
      });
      expect((await f().request('GET', '/user', { bearer: tokens.access_token })).body.login).toBe('erin');
    });
  });
});
