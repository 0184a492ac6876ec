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

/** Which rule answers (as "namespace/name#rule"), or the status nginx returns. */
/** PCRE's `\z` (end of subject) is JS's `$` without the m flag. */
function jsRegex(pcre: string): RegExp {
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
    // set $pc_k "<key>"; if ($pc_k ~ "^(?|A|B...)") -> $1; else the fallback. JavaScript has no
    // branch reset "(?|": each alternative has its own group, and only the matching one is set.
    const key = expand(act.key);
    let target = act.fallback;
    for (const regex of act.regexes) {
      if (!regex.startsWith('^(?|')) throw new Error(`unexpected dispatch regex ${regex}`);
      const m = new RegExp('^(?:' + regex.slice(4)).exec(key);
      if (m) {
        target = m.slice(1).find((g) => g !== undefined)!;
        break;
      }
    }
    const rl = server.ruleLocations.find((r) => r.name === target);
    if (!rl) return target === '@portcullis_404' ? 404 : `unknown ${target}`;
    source = rl.source;
  }
  return `${source.namespace}/${source.name}#${source.ruleIndex}`;
}
