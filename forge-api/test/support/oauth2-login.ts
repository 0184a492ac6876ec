/**
 * The browser side of an OAuth2 login at the forge, played by fetch with a cookie jar (the
 * sign-in form, then the consent form), and discovery for openid-client: shared by the provider's
 * suite and the end-to-end logins through the gateway.
 */
import * as oidc from 'openid-client';

/** A browser: keeps cookies, follows nothing by itself. */
export function browser(base: string) {
  const jar = new Map<string, string>();
  return async function go(url: string, opts: { method?: string; body?: string; basic?: [string, string] } = {}) {
    const headers: Record<string, string> = {};
    if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (opts.basic) headers.authorization = `Basic ${Buffer.from(opts.basic.join(':')).toString('base64')}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(new URL(url, base), { method: opts.method ?? 'GET', headers, body: opts.body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  };
}

type Go = ReturnType<typeof browser>;

/** A form's hidden CSRF token in a page of the forge. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no CSRF token in the page: ${html.slice(0, 300)}`);
  return m[1];
}

/**
 * Fills in the sign-in form the browser was sent to (`signInUrl`, /user/login?redirect_to=...)
 * and returns the answer to the POST (303 back to redirect_to when the password was right).
 */
export async function submitSignIn(go: Go, signInUrl: string, account: [string, string]) {
  const res = await go(signInUrl);
  expect(res.status).toBe(200);
  const html = await res.text();
  const redirectTo = /name="redirect_to" value="([^"]*)"/.exec(html)?.[1] ?? '/';
  const body = new URLSearchParams({ _csrf: csrfOf(html), redirect_to: redirectTo.replace(/&amp;/g, '&'), user_name: account[0], password: account[1] });
  return go('/user/login', { method: 'POST', body: body.toString() });
}

/** A browser signed in to the forge with the sign-in form. */
export async function signedInBrowser(base: string, account: [string, string]): Promise<Go> {
  const go = browser(base);
  const res = await submitSignIn(go, '/user/login', account);
  expect([res.status, res.headers.get('location')]).toEqual([303, '/']);
  return go;
}

/**
 * Walks the browser part at the forge `base`: authorize -> sign-in form -> authorize again ->
 * consent (when asked) -> back to the client's redirect URI. Returns that final URL.
 */
export async function authorizeAt(base: string, authorizeUrl: URL, opts: { consent?: 'grant' | 'deny'; expectConsent?: boolean; as?: [string, string] } = {}) {
  const account = opts.as;
  if (!account) throw new Error('authorizeAt: no account to sign in as');
  const go = browser(base);
  let res = await go(authorizeUrl.href);
  // Gitea's order: an anonymous browser signs in first, then the request is looked at.
  expect(res.status).toBe(303);
  const signIn = res.headers.get('location') as string;
  expect(signIn).toBe(`/user/login?${new URLSearchParams({ redirect_to: `${authorizeUrl.pathname}${authorizeUrl.search}` })}`);
  res = await submitSignIn(go, signIn, account);
  expect([res.status, res.headers.get('location')]).toEqual([303, `${authorizeUrl.pathname}${authorizeUrl.search}`]);
  return consentAndReturn(go, base, res.headers.get('location') as string, opts);
}

/**
 * From the authorization request of a signed-in browser (`authorizePath`): the consent page
 * (when asked), then through the provider's resume endpoint back to the client. Returns the URL
 * the client was sent.
 */
export async function consentAndReturn(go: Go, base: string, authorizePath: string, opts: { consent?: 'grant' | 'deny'; expectConsent?: boolean } = {}) {
  let res = await go(authorizePath);
  expect(res.status).toBe(303);
  const interaction = res.headers.get('location') as string;
  expect(interaction).toMatch(/\/login\/oauth\/interaction\/[\w-]+$/);
  res = await go(interaction);
  if (res.status === 200) {
    if (opts.expectConsent === false) throw new Error('consent was asked for');
    const html = await res.text();
    expect(html).toContain('Authorize Application');
    res = await go(interaction, { method: 'POST', body: `_csrf=${encodeURIComponent(csrfOf(html))}&granted=${opts.consent === 'deny' ? 'false' : 'true'}` });
  } else if (opts.expectConsent) {
    throw new Error(`no consent page: ${res.status}`);
  }
  while (res.status === 303 || res.status === 302) {
    const location = new URL(res.headers.get('location') as string, base).href;
    if (!location.startsWith(base)) return new URL(location);
    res = await go(location);
  }
  throw new Error(`authorization did not return to the client: ${res.status} ${await res.text()}`);
}

/** openid-client's configuration from the forge's discovery document (plain http on loopback). */
export function discoverAt(base: string, clientId: string, auth: oidc.ClientAuth, secret?: string) {
  return oidc.discovery(new URL(base), clientId, secret, auth, { execute: [oidc.allowInsecureRequests] });
}
