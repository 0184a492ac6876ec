/**
 * Reads an NginxModel the way nginx would for one request (server by name, location by exact
 * then longest prefix, maps evaluated lazily, a dispatching location's `if`s in order), so unit tests can state routing outcomes
 * without starting nginx. The real-nginx tests (apply-routing) check that nginx agrees.
 */
import type { Location, NginxModel, Server } from '../src/model/types';

export interface SimRequest {
  host?: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
}

function pickServer(model: NginxModel, port: number, host = ''): Server | undefined {
  const servers = model.servers.filter((s) => s.port === port);
  const h = host.toLowerCase().replace(/:\d+$/, '');
  const exact = servers.find((s) => s.serverNames.includes(h));
  if (exact) return exact;
  const wild = servers
    .flatMap((s) => s.serverNames.filter((n) => n.startsWith('*.') && h.endsWith(n.slice(1))).map((n) => ({ s, n })))
    .sort((a, b) => b.n.length - a.n.length)[0];
  return wild?.s ?? servers.find((s) => s.defaultServer);
}

function pickLocation(server: Server, uri: string): Location | undefined {
  const exact = server.locations.find((l) => l.match === 'exact' && l.path === uri);
  if (exact) return exact;
  return server.locations
    .filter((l) => l.match === 'prefix' && uri.startsWith(l.path))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

/** The alternatives of an alternation, split at its top-level "|" (escapes and classes skipped). */
export function topLevelAlternatives(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') i++;
    else if (c === '[') {
      for (i++; i < body.length && body[i] !== ']'; i++) if (body[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) {
      out.push(body.slice(start, i));
      start = i + 1;
    }
  }
  out.push(body.slice(start));
  return out;
}

/** Which rule answers (as "namespace/name#rule"), or the status nginx returns. */
/** PCRE's `\z` (end of subject) is JS's `$` without the m flag. */
/** A PCRE pattern as JavaScript reads it: \z (the subject's very end) is JavaScript's $ without the m flag. */
export function jsRegex(pcre: string): RegExp {
  return new RegExp(pcre.replace(/(^|[^\\])\\z/g, '$1$'));
}

export function simulate(model: NginxModel, port: number, req: SimRequest): string | number {
  const server = pickServer(model, port, req.host);
  if (!server) return 'no server';
  const [uri, args = ''] = req.path.split('?');
  const headers = Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const vars: Record<string, string> = { $uri: uri, $args: args, $request_method: req.method ?? 'GET' };
  const value = (name: string): string => {
    if (name in vars) return vars[name];
    if (name.startsWith('$http_')) return headers[name.slice(6).replace(/_/g, '-')] ?? '';
    const map = model.maps.find((m) => m.variable === name);
    if (!map) throw new Error(`unknown variable ${name}`);
    const src = expand(map.source);
    // nginx tries a map's regexes only on a non-empty value.
    for (const e of src === '' ? [] : map.entries) {
      const m = jsRegex(e.regex).exec(src);
      if (m) return expand(e.value.replace(/\$(\d)/g, (_, d) => m[Number(d)] ?? ''));
    }
    return expand(map.default);
  };
  const expand = (text: string): string => text.replace(/\$[a-z_0-9]+/g, (v) => value(v));
  const location = pickLocation(server, uri);
  if (!location) return 404;
  const act = location.action;
  let source;
  if (act.kind === 'status') return act.code;
  if (act.kind === 'proxy') source = act.source;
  else {
    // set $pc_k "<key>"; error_page 418 = <map of $pc_k>: its regexes "^(?|A|B...)" in order,
    // the first that matches naming the location as $1, else the map's default. JavaScript has
    // no branch reset "(?|": each alternative is tried as a regex of its own, in order (what
    // PCRE does for an anchored alternation), so its groups are numbered from 1 as in PCRE.
    const key = expand(act.key);
    let target = '@portcullis_404';
    const map = model.dispatchMaps?.find((m) => m.variable === act.variable);
    if (!map || JSON.stringify(map.regexes) !== JSON.stringify(act.regexes)) throw new Error(`no dispatch map ${act.variable} for its location`);
    found: for (const regex of act.regexes) {
      if (!regex.startsWith('^(?|') || !regex.endsWith(')')) throw new Error(`unexpected dispatch regex ${regex}`);
      for (const alternative of topLevelAlternatives(regex.slice(4, -1))) {
        const m = jsRegex('^' + alternative.replace(/\\g\{(\d+)\}/g, '\\$1')).exec(key);
        if (m) {
          target = m[1];
          break found;
        }
      }
    }
    const rl = server.ruleLocations.find((r) => r.name === target);
    if (!rl) return target === '@portcullis_404' ? 404 : `unknown ${target}`;
    source = rl.source;
  }
  return `${source.namespace}/${source.name}#${source.ruleIndex}`;
}
