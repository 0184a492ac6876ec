/**
 * The browser side of an OAuth2 login at the forge, played by fetch with a cookie jar (sign-in is
 * HTTP basic, consent a form), and discovery for openid-client: shared by the provider's suite
 * and the end-to-end logins through the gateway.
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

/**
 * Walks the browser part at the forge `base`: authorize -> sign-in (401 challenge, then basic)
 * -> consent (when asked) -> back to the client's redirect URI. Returns that final URL.
 */
export async function authorizeAt(base: string, authorizeUrl: URL, opts: { consent?: 'grant' | 'deny'; expectConsent?: boolean; as?: [string, string] } = {}) {
  const account = opts.as;
  if (!account) throw new Error('authorizeAt: no account to sign in as');
  const go = browser(base);
  let res = await go(authorizeUrl.href);
  expect(res.status).toBe(303);
  const interaction = res.headers.get('location') as string;
  expect(interaction).toMatch(/\/login\/oauth\/interaction\/[\w-]+$/);
  res = await go(interaction);
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Basic realm="Gitea"');
  res = await go(interaction, { basic: account });
  if (res.status === 200) {
    if (opts.expectConsent === false) throw new Error('consent was asked for');
    const html = await res.text();
    expect(html).toContain('Authorize Application');
    res = await go(interaction, { method: 'POST', basic: account, body: `granted=${opts.consent === 'deny' ? 'false' : 'true'}` });
  } else if (opts.expectConsent) {
    throw new Error(`no consent page: ${res.status}`);
  }
  // Back through the provider's resume endpoint to the client.
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
