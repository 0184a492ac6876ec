/**
 * Hostname rules of the Gateway API: a `*.` wildcard label matches one or more labels
 * (`*.example.com` matches `a.example.com` and `a.b.example.com`, never `example.com`).
 */

export function isWildcard(hostname: string): boolean {
  return hostname.startsWith('*.');
}

/** Does wildcard `pattern` (`*.x`) cover `hostname` (itself possibly a narrower wildcard)? */
function wildcardCovers(pattern: string, hostname: string): boolean {
  return isWildcard(pattern) && hostname.endsWith(pattern.slice(1)) && hostname.length > pattern.length - 1;
}

/** Listener hostname (undefined = any) and route hostname intersect. */
export function hostnamesIntersect(listener: string | undefined, route: string): boolean {
  if (listener === undefined || listener === route) return true;
  return wildcardCovers(listener, route) || wildcardCovers(route, listener);
}

/** The narrower of two intersecting hostnames (undefined = any host). */
export function moreSpecific(a: string | undefined, b: string): string {
  if (a === undefined || a === b) return b;
  if (!isWildcard(a)) return a;
  if (!isWildcard(b)) return b;
  return a.split('.').length > b.split('.').length ? a : b;
}

/**
 * Effective hostnames of a route on a listener: each route hostname that intersects the
 * listener's, narrowed to the more specific of the two; [] means any host (neither sets one).
 * undefined means the route cannot attach (both set hostnames and none intersect).
 */
export function acceptedHostnames(listener: string | undefined, route: string[]): string[] | undefined {
  if (route.length === 0) return listener === undefined ? [] : [listener];
  const out: string[] = [];
  for (const h of route) {
    if (!hostnamesIntersect(listener, h)) continue;
    const narrowed = moreSpecific(listener, h);
    if (!out.includes(narrowed)) out.push(narrowed);
  }
  return out.length > 0 ? out : undefined;
}

/**
 * How well a listener hostname fits a request host: higher is more specific
 * (exact > longer wildcard > shorter wildcard > none); -1 when it does not match.
 */
export function listenerFit(listener: string | undefined, host: string): number {
  if (listener === undefined) return 0;
  if (listener === host) return 1_000_000;
  if (hostnamesIntersect(listener, host) && moreSpecific(listener, host) === host) return listener.length;
  return -1;
}
