/**
 * rules[].sessionPersistence (graph/session.ts kept what nginx can do) -> hashing on a token.
 *
 * Open-source nginx has no sticky upstreams. A session is a token instead: the client's cookie or
 * header of the session's name when it sends one, else this request's $request_id, which the
 * response hands to the client (Set-Cookie, or the header itself). The rule's upstreams pick an
 * endpoint by consistent hashing of the token (`hash ... consistent`), and a weighted split of
 * several backends hashes it too, so a client that sends its token back keeps its backend and
 * endpoint while they exist; when endpoints come or go, consistent hashing moves only the
 * sessions of the endpoints concerned.
 */
import { createHash } from 'crypto';
import type { RouteRule } from '../graph/types';
import type { RuleLocation, RuleSource, TargetSession } from './types';

/** The token's name when the rule gives none (or one nginx cannot use): one per rule. */
export function defaultSessionName(source: RuleSource): string {
  return `pc-session-${createHash('sha256').update(`${source.namespace}/${source.name}/${source.ruleIndex}`).digest('hex').slice(0, 10)}`;
}

const escapeRegex = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/** The rule's session, named after what it is (two rules with the same session share its maps). */
export function ruleSession(rule: RouteRule, source: RuleSource): TargetSession | undefined {
  const s = rule.session;
  if (!s) return undefined;
  const name = s.name ?? defaultSessionName(source);
  const id = createHash('sha256').update(JSON.stringify([s.type, name, s.maxAgeSeconds ?? null])).digest('hex').slice(0, 16);
  const target = { key: `$pc_sk_${id}`, header: s.type === 'Cookie' ? 'Set-Cookie' : name, set: `$pc_ss_${id}` };
  if (s.type === 'Cookie') {
    const attributes = `; Path=/; HttpOnly${s.maxAgeSeconds !== undefined ? `; Max-Age=${s.maxAgeSeconds}` : ''}`;
    return { ...target, source: '$http_cookie', tokenRegex: `(?:^|;) *${escapeRegex(name)}=([^;]+)`, newValue: [`${name}=`, { v: 'request_id' }, attributes] };
  }
  // nginx names a request header's variable in lower case with "_" for "-" (graph/session.ts
  // keeps names to letters, digits and hyphens).
  return { ...target, source: `$http_${name.toLowerCase().replace(/-/g, '_')}`, newValue: [{ v: 'request_id' }] };
}

/** The maps of the sessions the servers' rules use, once each. */
export function sessionMaps(servers: { ruleLocations: RuleLocation[] }[]): { sessionMaps?: TargetSession[] } {
  const byKey = new Map<string, TargetSession>();
  for (const server of servers) {
    for (const rl of server.ruleLocations) {
      const s = rl.target.kind === 'upstream' || rl.target.kind === 'split' ? rl.target.session : undefined;
      if (s && !byKey.has(s.key)) byKey.set(s.key, s);
    }
  }
  return byKey.size > 0 ? { sessionMaps: [...byKey.values()] } : {};
}

export function sessionSignature(s: TargetSession | undefined): string {
  return s ? `${s.key}/${s.header}/${s.set}` : '';
}
