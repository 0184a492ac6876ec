/**
 * Random route sets and requests, and the Gateway API's answer computed directly from the routes
 * (for the differential tests against the model and against real nginx). Paths come from a tiny
 * alphabet ("a", "ab", "b") so that string prefixes that are not segment prefixes (/a vs /ab),
 * nested prefixes, exact paths under prefixes and folded locations all occur often.
 */
import type { HTTPRouteNode, RouteMatch } from '../src/graph/types';
import * as f from './model-fixtures';

/** Deterministic PRNG (mulberry32), so a failure names a seed that reproduces it. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEGMENTS = ['a', 'ab', 'b'];
const METHODS = ['GET', 'POST'] as const;

export interface Request {
  path: string;
  method: string;
  headers: Record<string, string>;
  query: [string, string][];
}

function randomPath(r: () => number, maxDepth = 3): string {
  const depth = Math.floor(r() * (maxDepth + 1));
  let p = '';
  for (let i = 0; i < depth; i++) p += '/' + SEGMENTS[Math.floor(r() * SEGMENTS.length)];
  return p || '/';
}

/** RE2 patterns that read the same in PCRE and JavaScript (the reference below uses RegExp). */
const REGEXES = ['/a[b]?', '/b/.*a', '/ab?/a', '/[ab]+/b'];

function randomMatch(r: () => number): RouteMatch {
  const kind = r();
  let path = randomPath(r);
  if (kind < 0.6 && r() < 0.2 && path !== '/') path += '/'; // trailing slash on a prefix: ignored
  const m = kind < 0.6 ? f.prefix(path) : kind < 0.9 ? f.exact(path) : f.regex(REGEXES[Math.floor(r() * REGEXES.length)]);
  if (r() < 0.35) m.method = METHODS[Math.floor(r() * METHODS.length)];
  if (r() < 0.35) m.headers = [{ name: 'X-T', type: 'Exact', value: r() < 0.5 ? '1' : '2' }];
  if (r() < 0.25) m.queryParams = [{ name: 'q', type: 'Exact', value: r() < 0.5 ? '1' : '2' }];
  return m;
}

export function randomRequest(r: () => number): Request {
  let path = randomPath(r, 4);
  if (r() < 0.15) path += '/';
  const headers: Record<string, string> = {};
  if (r() < 0.5) headers['X-T'] = r() < 0.5 ? '1' : '2';
  const query: [string, string][] = [];
  const nq = Math.floor(r() * 3);
  for (let i = 0; i < nq; i++) query.push([r() < 0.7 ? 'q' : 'z', r() < 0.5 ? '1' : '2']);
  return { path: path.replace(/\/\/+/g, '/'), method: METHODS[Math.floor(r() * METHODS.length)], headers, query };
}

/** The Gateway API's answer: every match element that holds, the best by precedence. */
export function expected(routes: HTTPRouteNode[], req: Request): string | number {
  const firstQuery = (name: string) => req.query.find(([n]) => n === name)?.[1];
  let best: { keys: number[]; created: string; ref: string; rule: number; label: string } | undefined;
  for (const route of routes) {
    for (const rule of route.rules) {
      for (const m of rule.matches) {
        const v = m.path.value;
        if (m.path.type === 'Exact' && req.path !== v) continue;
        if (m.path.type === 'RegularExpression' && !new RegExp(`^(?:${v})`).test(req.path)) continue;
        if (m.path.type === 'PathPrefix') {
          const p = v.replace(/\/+$/, '') || '/';
          if (!(p === '/' || req.path === p || req.path.startsWith(p + '/'))) continue;
        }
        if (m.method && m.method !== req.method) continue;
        if (!m.headers.every((h) => req.headers[h.name] === h.value)) continue;
        if (!m.queryParams.every((q) => firstQuery(q.name) === q.value)) continue;
        const len = m.path.type === 'PathPrefix' ? (v.replace(/\/+$/, '') || '/').length : 0;
        // Exact > RegularExpression > PathPrefix (then the longest prefix), method, headers, query.
        const rank = { Exact: 3, RegularExpression: 2, PathPrefix: 1 }[m.path.type];
        const keys = [rank, len, m.method ? 1 : 0, m.headers.length, m.queryParams.length];
        const cand = { keys, created: route.creationTimestamp, ref: `${route.namespace}/${route.name}`, rule: rule.index, label: `${route.namespace}/${route.name}#${rule.index}` };
        if (!best || better(cand, best)) best = cand;
      }
    }
  }
  return best ? best.label : 404;
}

function better(a: { keys: number[]; created: string; ref: string; rule: number }, b: { keys: number[]; created: string; ref: string; rule: number }): boolean {
  for (let i = 0; i < a.keys.length; i++) if (a.keys[i] !== b.keys[i]) return a.keys[i] > b.keys[i];
  if (a.created !== b.created) return a.created < b.created;
  if (a.ref !== b.ref) return a.ref < b.ref;
  return a.rule < b.rule;
}

/** A route set for `seed`'s generator: up to 4 routes of up to 4 rules, backend "s<route>-<rule>". */
export function randomRoutes(r: () => number, backendPort: (name: string) => number = () => 9000): HTTPRouteNode[] {
  const routes: HTTPRouteNode[] = [];
  const nRoutes = 1 + Math.floor(r() * 4);
  for (let i = 0; i < nRoutes; i++) {
    const nRules = 1 + Math.floor(r() * 4);
    const rules = Array.from({ length: nRules }, (_, k) =>
      // A backend per rule, so the answer names the rule.
      f.rule(k, Array.from({ length: 1 + Math.floor(r() * 3) }, () => randomMatch(r)), [f.backend(`s${i}-${k}`, backendPort(`s${i}-${k}`))]),
    );
    routes.push(f.route(`r${i}`, rules));
  }
  return routes;
}

export function requestPath(req: Request): string {
  const qs = req.query.map(([n, v]) => `${n}=${v}`).join('&');
  return req.path + (qs ? `?${qs}` : '');
}
