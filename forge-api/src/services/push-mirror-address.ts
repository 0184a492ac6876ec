/**
 * The remote address of a push mirror, read as Gitea reads it (ParseRemoteAddr, then the
 * scheme part of IsMigrateURLAllowed). Pure: the host's allow/block check comes after, from
 * MigrationService.hostAllowed. The outcome names the kind of refusal, since Gitea answers
 * each kind with its own status and words:
 * - 'url': not a URL Go can parse (400 "Invalid Url ");
 * - 'protocol': a scheme other than http, https or git (400 "Invalid mirror protocol");
 * - 'local': a local path or file: URL, which only an admin may use where local imports are
 *   enabled; this forge never enables them (401 "Permission denied").
 */
export type RemoteAddress =
  | { ok: true; /** what git gets: the address with the credentials */ url: string; /** what the API shows: no user information */ display: string; host: string }
  | { ok: false; problem: 'url' | 'protocol' | 'local' };

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;
/** scheme://userinfo@ at the start of an address. */
const USERINFO = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#@]*@/;

/** The address without user information (Gitea's SanitizeURL), otherwise as given. */
export function withoutUserInfo(address: string): string {
  return address.replace(USERINFO, '$1');
}

function hasBadEscape(s: string): boolean {
  return /%(?![0-9a-fA-F]{2})/.test(s);
}

export function parseRemoteAddress(raw: string, username = '', password = ''): RemoteAddress {
  const address = raw.trim();
  const scheme = SCHEME.exec(address);
  if (!scheme) {
    // Go reads "host:path" (scp-like) as a path whose first segment holds a colon: a parse error.
    const firstSegment = address.split('/')[0];
    if (firstSegment.includes(':') || hasBadEscape(address) || /[\x00-\x1f\x7f]/.test(address)) return { ok: false, problem: 'url' };
    return { ok: false, problem: 'local' };
  }
  const name = scheme[1].toLowerCase();
  if (/[\x00-\x1f\x7f ]/.test(address) || hasBadEscape(address)) return { ok: false, problem: 'url' };
  if (name === 'file') return { ok: false, problem: 'local' };
  if (name !== 'http' && name !== 'https' && name !== 'git') return { ok: false, problem: 'protocol' };
  // "http:host/x" is an opaque URL to Go: not something git can push to.
  if (!address.slice(scheme[0].length).startsWith('//')) return { ok: false, problem: 'protocol' };
  let parsed: URL;
  try {
    parsed = new URL(address);
  } catch {
    return { ok: false, problem: 'url' };
  }
  if (!parsed.hostname) return { ok: false, problem: 'url' };
  if (name === 'git' && parsed.port && /%0[ad]/i.test(address)) return { ok: false, problem: 'url' };
  let url = address;
  if (username || password) {
    const rest = address.replace(USERINFO, '$1').slice(`${name}://`.length);
    url = `${address.slice(0, name.length)}://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${rest}`;
  }
  return { ok: true, url, display: withoutUserInfo(address), host: parsed.hostname };
}
