/**
 * Route filters -> what the location that serves the rule does (plain data; proxy.hbs writes it).
 *
 * - Request headers: proxy_set_header. A location that sets any loses every proxy_set_header
 *   of the http level, so it gets the whole list: the defaults with the filter's changes.
 *   `add` appends to what the client sent ("a,b"), through an http-level map (HeaderAppendMap).
 * - Response headers: proxy_hide_header + add_header ... always (set), add_header (add),
 *   proxy_hide_header (remove).
 * - URLRewrite: rewrite ... break on nginx's decoded URI (nginx re-encodes it towards the
 *   backend); the hostname replaces the Host header.
 * - RequestRedirect: return <code> with the Location built from the filter, the listener's
 *   scheme and port, and the request (Gateway API port rules: a scheme given means its
 *   well-known port; none means the listener's; 80 for http and 443 for https are not written).
 * - RequestMirror: `mirror` to an internal location per mirror that proxies to the mirror's
 *   backend; a share below 100 % is drawn per request by split_clients.
 * - CORS: the origin is checked by a regex; preflight requests are answered here with 204.
 * - ExternalAuth (HTTP): auth_request to an internal location per rule that proxies the
 *   request's method, Host, path (after http.path) and Authorization, and only the allowed
 *   headers, without the body, to the authorization server; the allowed response headers go on
 *   to the backend (auth_request_set). A 2xx answer lets the request through; 401 and 403 are
 *   the client's answer; anything else, and a server that cannot be reached, is a 500.
 * Values from manifests are ValueParts: literal text that the renderer escapes (a `$` can never
 * start a variable), never spliced into config text here.
 */
import { createHash } from 'crypto';
import type { ExternalAuthFilter, HeaderChanges, PathChange, RedirectFilter, RuleFilters } from '../graph/filters';
import type { HTTPCORSFilter } from '../resources/types';
import { escapeRegex } from '../graph/pcre-fragments';
import type { ProxyTarget, TargetTLS } from './types';

/** Literal text, or `{ v: name }` for the nginx variable $name. */
export type ValuePart = string | { v: string };

export interface ScriptStep {
  /** `if (<variable> <op> "<operand>")` around the step; absent: unconditional. */
  test?: { variable: string; op: '=' | '!=' | '~' | '~*'; operand: string };
  sets: { variable: string; value: ValuePart[] }[];
  rewrite?: { regex: string; replacement: ValuePart[] };
  return?: { code: number; text?: ValuePart[] };
}

export interface AuthLocation {
  /** Exact internal location auth_request names. */
  uri: string;
  /** proxy_pass's argument: the server's upstream, http.path, the request's own URI; absent: no usable backend, every request is refused (500). */
  pass?: ValuePart[];
  /** The authorization server's BackendTLSPolicy: TLS to it, checked as the policy says. */
  tls?: TargetTLS;
  /** Client request headers sent besides Host and Authorization. */
  requestHeaders: { name: string; variable: string }[];
  /** Authorization response headers copied into the request to the backend. */
  responseHeaders: { name: string; variable: string; source: string }[];
}

export interface MirrorLocation {
  /** Exact internal location the `mirror` directive names. */
  uri: string;
  /** Where the copy goes; a status target (no usable backend) answers the copy at once. */
  target: ProxyTarget;
  /** split_clients variable that is "1" for the sampled share; absent: every request. */
  sampleVariable?: string;
  /** The copy goes over h2c (grpc_pass). */
  grpc?: boolean;
}

/**
 * A RequestHeaderModifier `add`: a map at http level that is the value to send, the client's
 * value followed by ",<value>", or <value> alone when the client sent none. nginx evaluates a
 * map only when a directive reads it, so this costs nothing in the rewrite phase (a `set` plus
 * an `if` per request did). The variable is named after the header and the value, so equal
 * appends share one map wherever they are.
 */
export interface HeaderAppendMap {
  /** The map's variable, without "$". */
  variable: string;
  /** The request header's variable ($http_<name>), without "$". */
  source: string;
  /** The header's value when the client sent none (the literal value). */
  alone: ValuePart[];
  /** Its value otherwise: the client's, then "," and the literal value. */
  appended: ValuePart[];
}

export interface LocationFilters {
  /** A GRPCRoute rule's proxySetHeaders / hideHeaders, for grpc_set_header / grpc_hide_header. */
  grpcSetHeaders?: { name: string; value: ValuePart[] }[];
  grpcHideHeaders?: string[];
  /** Rewrite-module steps in order (they run before access checks and proxying). */
  script: ScriptStep[];
  /** Complete proxy_set_header list for the location, or undefined to inherit the defaults. */
  proxySetHeaders?: { name: string; value: ValuePart[] }[];
  hideHeaders: string[];
  /** add_header <name> <value> always (an empty value adds nothing). */
  addHeaders: { name: string; value: ValuePart[] }[];
  mirrors: MirrorLocation[];
  externalAuth?: AuthLocation;
  /** Maps the location's header appends read (collected at http level by finalizeModel). */
  appendMaps?: HeaderAppendMap[];
  /** The URLRewrite ReplacePrefixMatch the script's last steps make (see inlinePrefixRewrite). */
  prefixRewrite?: { prefix: string; value: string; steps: number };
  /**
   * Set on a path location that proxies inline (model/locations.ts): the URI part of its
   * proxy_pass, which makes nginx replace the location's prefix itself, instead of the rewrite.
   */
  proxyPassUri?: string;
}

/** Characters a proxy_pass URI part may hold as written (unreserved: decoded = encoded). */
const PLAIN_URI = /^[A-Za-z0-9/._~-]*$/;

/**
 * A URLRewrite ReplacePrefixMatch done by nginx's proxy_pass instead of a regex rewrite, for a
 * location that proxies inline to one upstream: `location /x/ { proxy_pass http://u/y/; }`
 * sends /x/rest as /y/rest (and `location = /x` with http://u/y sends /y), with no regex run
 * per request (a rewrite without PCRE JIT was the costliest filter: bench:dataplane). Only when
 * the location is exactly the match's prefix, the rewrite is the script's only step (no `if`
 * may change the location's configuration before proxying) and the value needs no escaping.
 * Returns the location's filters to use, or undefined to keep the rewrite.
 */
export function inlinePrefixRewrite(filters: LocationFilters, location: { match: 'exact' | 'prefix'; path: string }): LocationFilters | undefined {
  const r = filters.prefixRewrite;
  if (!r || filters.script.length !== r.steps || !PLAIN_URI.test(r.value)) return undefined;
  const fits = location.match === 'prefix' ? location.path === `${r.prefix}/` : location.path === r.prefix && r.prefix !== '';
  if (!fits) return undefined;
  const { prefixRewrite: _r, ...rest } = filters;
  return { ...rest, script: [], proxyPassUri: location.match === 'prefix' ? `${r.value}/` : r.value || '/' };
}

/** The http-level proxy_set_header list (nginx.conf): also the base of a filtered location's list. */
export const DEFAULT_PROXY_HEADERS: { name: string; value: ValuePart[] }[] = [
  { name: 'Host', value: [{ v: 'portcullis_host' }] },
  { name: 'Connection', value: [{ v: 'portcullis_connection' }] },
  { name: 'Upgrade', value: [{ v: 'http_upgrade' }] },
  { name: 'X-Real-IP', value: [{ v: 'remote_addr' }] },
  { name: 'X-Forwarded-For', value: [{ v: 'proxy_add_x_forwarded_for' }] },
  { name: 'X-Forwarded-Proto', value: [{ v: 'scheme' }] },
  { name: 'X-Forwarded-Host', value: [{ v: 'host' }] },
  { name: 'X-Forwarded-Port', value: [{ v: 'server_port' }] },
];

/** The listener side of a server: redirects default to its scheme and port. */
export interface ServerInfo {
  port: number;
  https: boolean;
  /** The server name; undefined: the port's catch-all server. */
  name?: string;
  /** The client certificate file its Gateway presents to TLS backends (model TargetTLS.certificate). */
  backendCertificate?: string;
}

/**
 * A server's ServerInfo and nothing more: what buildLocations may read of the server, and so
 * what model/memo.ts keys a server's kept locations by. Every field is spelled out (a field
 * added to ServerInfo is a compile error here until it is), so the key cannot miss one.
 */
export function serverInfo(s: ServerInfo): ServerInfo {
  const out: { [K in keyof Required<ServerInfo>]: ServerInfo[K] } = { port: s.port, https: s.https, name: s.name, backendCertificate: s.backendCertificate };
  return out;
}

export interface FilterContext {
  /** A rule's backends -> where they go (upstreams registry). */
  target: (backend: import('../graph/types').BackendRef) => ProxyTarget;
  /** The authorization server's upstream (always HTTP/1.1: auth_request proxies with proxy_pass). */
  authTarget: (backend: import('../graph/types').BackendRef) => ProxyTarget;
  /** "pc_sample_<hundredths>": a split_clients variable that is "1" for that share. */
  sample: (percent: number) => string;
}

/** The $http_<name> variable nginx gives a request header. */
function requestHeaderVariable(name: string): string {
  return 'http_' + name.toLowerCase().replace(/-/g, '_');
}

/** The http-level grpc_set_header list (nginx.conf). */
export const DEFAULT_GRPC_HEADERS: { name: string; value: ValuePart[] }[] = [{ name: 'Host', value: [{ v: 'portcullis_host' }] }];

/** The map variable for appending `value` to request header `name` (same inputs, same name). */
export function headerAppendMap(name: string, value: string): HeaderAppendMap {
  const source = requestHeaderVariable(name);
  const digest = createHash('sha256').update(`${name.toLowerCase()}\n${value}`).digest('hex').slice(0, 16);
  return { variable: `pc_hadd_${digest}`, source, alone: [value], appended: [{ v: source }, ',', value] };
}

function requestHeaders(changes: HeaderChanges | undefined, hostname: string | undefined, out: LocationFilters, grpc: boolean): LocationFilters['proxySetHeaders'] {
  const fromAuth = out.externalAuth?.responseHeaders ?? [];
  if (!changes && hostname === undefined && fromAuth.length === 0) return undefined;
  const list = (grpc ? DEFAULT_GRPC_HEADERS : DEFAULT_PROXY_HEADERS).map((h) => ({ name: h.name, value: [...h.value] }));
  const put = (name: string, value: ValuePart[]) => {
    const i = list.findIndex((h) => h.name.toLowerCase() === name.toLowerCase());
    if (i >= 0) list[i] = { name, value };
    else list.push({ name, value });
  };
  if (hostname !== undefined) put('Host', [hostname]);
  if (changes) {
    for (const h of changes.set) put(h.name, [h.value]);
    for (const h of changes.add) {
      const map = headerAppendMap(h.name, h.value);
      (out.appendMaps ??= []).push(map);
      put(h.name, [{ v: map.variable }]);
    }
    // An empty value: nginx does not pass the header at all.
    for (const name of changes.remove) put(name, []);
  }
  // The authorization server's word wins over the route's own header changes.
  for (const h of fromAuth) put(h.name, [{ v: h.variable }]);
  return list;
}

function responseHeaders(changes: HeaderChanges | undefined, out: LocationFilters): void {
  if (!changes) return;
  for (const h of changes.set) {
    out.hideHeaders.push(h.name);
    out.addHeaders.push({ name: h.name, value: [h.value] });
  }
  for (const h of changes.add) out.addHeaders.push({ name: h.name, value: [h.value] });
  for (const name of changes.remove) out.hideHeaders.push(name);
}

/** ^<prefix>(/.*)$ and ^<prefix>$ on nginx's $uri (prefix "" is the root: every path). */
function prefixRegexes(prefix: string): { rest: string; exact: string } {
  const p = escapeRegex(prefix);
  return { rest: `^${p}(/.*)$`, exact: `^${p}$` };
}

function rewriteSteps(path: PathChange): ScriptStep[] {
  if (path.type === 'ReplaceFullPath') return [{ sets: [], rewrite: { regex: '^', replacement: [path.value] } }];
  const { rest, exact } = prefixRegexes(path.prefix);
  return [
    { sets: [], rewrite: { regex: rest, replacement: [path.value, { v: '1' }] } },
    { sets: [], rewrite: { regex: exact, replacement: [path.value || '/'] } },
  ];
}

function redirectSteps(r: RedirectFilter, server: ServerInfo): ScriptStep[] {
  const scheme = r.scheme ?? (server.https ? 'https' : 'http');
  const port = r.port ?? (r.scheme ? (r.scheme === 'https' ? 443 : 80) : server.port);
  const wellKnown = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443);
  const origin: ValuePart[] = [`${scheme}://`, r.hostname ?? { v: 'host' }, ...(wellKnown ? [] : [`:${port}`])];
  const args: ValuePart[] = [{ v: 'is_args' }, { v: 'args' }];
  if (!r.path) return [{ sets: [], return: { code: r.statusCode, text: [...origin, { v: 'request_uri' }] } }];
  if (r.path.type === 'ReplaceFullPath') return [{ sets: [], return: { code: r.statusCode, text: [...origin, r.path.value, ...args] } }];
  const { rest } = prefixRegexes(r.path.prefix);
  return [
    { test: { variable: '$uri', op: '~', operand: rest }, sets: [], return: { code: r.statusCode, text: [...origin, r.path.value, { v: '1' }, ...args] } },
    { sets: [], return: { code: r.statusCode, text: [...origin, r.path.value || '/', ...args] } },
  ];
}

/** A CORS origin (`*`, `https://a.com`, `https://*.a.com:8443`) as a regex on the Origin header. */
export function originRegex(origin: string): string {
  if (origin === '*') return '.+';
  const m = /^(https?):\/\/(.+?)(?::(\d+))?$/.exec(origin)!;
  const [, scheme, host, port] = m;
  const defaultPort = scheme === 'https' ? '443' : '80';
  // `*` matches any number of labels to its left; a bare `*` host matches any host.
  const hostRe = host === '*' ? '[^/:]+' : host.startsWith('*.') ? `[^/:]+${escapeRegex(host.slice(1))}` : escapeRegex(host);
  const portRe = port === undefined || port === defaultPort ? `(:${defaultPort})?` : `:${port}`;
  return `${escapeRegex(scheme)}://${hostRe}${portRe}`;
}

function corsSteps(c: HTTPCORSFilter, out: LocationFilters): void {
  const credentials = c.allowCredentials === true;
  const wildcard = (list: string[]) => list.length === 1 && list[0] === '*';
  const names = ['pc_cors_origin', 'pc_cors_credentials', 'pc_cors_expose', 'pc_cors_methods', 'pc_cors_headers', 'pc_cors_max_age'];
  out.script.push({ sets: names.map((variable) => ({ variable, value: [] })) });
  // An allowed Origin is echoed (with credentials the Gateway API forbids "*").
  const allowed: ScriptStep['sets'] = [{ variable: 'pc_cors_origin', value: [{ v: 'http_origin' }] }];
  if (credentials) allowed.push({ variable: 'pc_cors_credentials', value: ['true'] });
  if (c.exposeHeaders.length > 0 && !(wildcard(c.exposeHeaders) && credentials)) allowed.push({ variable: 'pc_cors_expose', value: [c.exposeHeaders.join(', ')] });
  if (c.allowOrigins.length > 0) out.script.push({ test: { variable: '$http_origin', op: '~*', operand: `^(${c.allowOrigins.map(originRegex).join('|')})$` }, sets: allowed });
  // A preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered here: from an
  // allowed origin with the preflight headers, from any other without CORS headers.
  const preflight = '^OPTIONS\n.+\n.+$';
  const key = (origin: string): ValuePart[] => [{ v: 'request_method' }, '\n', { v: origin }, '\n', { v: 'http_access_control_request_method' }];
  const answers: ScriptStep['sets'] = [];
  if (c.allowMethods.length > 0) {
    answers.push({ variable: 'pc_cors_methods', value: wildcard(c.allowMethods) ? (credentials ? [{ v: 'http_access_control_request_method' }] : ['*']) : [c.allowMethods.join(', ')] });
  }
  if (c.allowHeaders.length > 0) {
    answers.push({ variable: 'pc_cors_headers', value: wildcard(c.allowHeaders) ? (credentials ? [{ v: 'http_access_control_request_headers' }] : ['*']) : [c.allowHeaders.join(', ')] });
  }
  answers.push({ variable: 'pc_cors_max_age', value: [String(c.maxAge)] });
  out.script.push({ sets: [{ variable: 'pc_cors_preflight', value: key('pc_cors_origin') }] });
  out.script.push({ test: { variable: '$pc_cors_preflight', op: '~', operand: preflight }, sets: answers, return: { code: 204 } });
  out.script.push({ sets: [{ variable: 'pc_cors_preflight', value: key('http_origin') }] });
  out.script.push({ test: { variable: '$pc_cors_preflight', op: '~', operand: preflight }, sets: [], return: { code: 204 } });
  for (const [name, variable] of [
    ['Access-Control-Allow-Origin', 'pc_cors_origin'],
    ['Access-Control-Allow-Credentials', 'pc_cors_credentials'],
    ['Access-Control-Expose-Headers', 'pc_cors_expose'],
    ['Access-Control-Allow-Methods', 'pc_cors_methods'],
    ['Access-Control-Allow-Headers', 'pc_cors_headers'],
    ['Access-Control-Max-Age', 'pc_cors_max_age'],
  ]) {
    out.addHeaders.push({ name, value: [{ v: variable }] });
  }
  out.addHeaders.push({ name: 'Vary', value: ['Origin'] });
}

function authLocation(a: ExternalAuthFilter, ruleName: string, ctx: FilterContext): AuthLocation {
  const rule = ruleName.replace(/^@/, '');
  const header = (name: string) => name.toLowerCase().replace(/-/g, '_');
  const target: ProxyTarget = a.backend.valid ? ctx.authTarget(a.backend) : { kind: 'status', code: 500 };
  return {
    uri: `/_portcullis_auth/${rule}`,
    ...(target.kind === 'upstream' ? { pass: [`${target.tls ? 'https' : 'http'}://${target.upstream}${a.path}`, { v: 'request_uri' }], ...(target.tls ? { tls: target.tls } : {}) } : {}),
    requestHeaders: a.allowedHeaders.map((name) => ({ name, variable: `http_${header(name)}` })),
    responseHeaders: a.allowedResponseHeaders.map((name) => ({ name, variable: `pc_auth_${header(name)}`, source: `upstream_http_${header(name)}` })),
  };
}

/** Hundredths of a percent nginx's split_clients can express (0.01 % steps). */
export function sampleHundredths(percent: number): number {
  return Math.max(0, Math.min(10000, Math.round(percent * 100)));
}

export function locationFilters(filters: RuleFilters | undefined, server: ServerInfo, ruleName: string, ctx: FilterContext, grpc = false): LocationFilters | undefined {
  if (!filters) return undefined;
  const out: LocationFilters = { script: [], hideHeaders: [], addHeaders: [], mirrors: [] };
  if (filters.externalAuth) out.externalAuth = authLocation(filters.externalAuth, ruleName, ctx);
  if (filters.cors) corsSteps(filters.cors, out);
  if (filters.redirect) out.script.push(...redirectSteps(filters.redirect, server));
  out.proxySetHeaders = requestHeaders(filters.requestHeaders, filters.rewrite?.hostname, out, grpc);
  if (filters.rewrite?.path) {
    const steps = rewriteSteps(filters.rewrite.path);
    out.script.push(...steps);
    const p = filters.rewrite.path;
    if (p.type === 'ReplacePrefixMatch' && !grpc) out.prefixRewrite = { prefix: p.prefix, value: p.value, steps: steps.length };
  }
  responseHeaders(filters.responseHeaders, out);
  filters.mirrors.forEach((m, i) => {
    const hundredths = sampleHundredths(m.percent);
    if (hundredths === 0) return;
    out.mirrors.push({
      uri: `/_portcullis_mirror/${ruleName.replace(/^@/, '')}/${i}`,
      target: m.backend.valid ? ctx.target(m.backend) : { kind: 'status', code: 204 },
      ...(grpc ? { grpc: true } : {}),
      ...(hundredths < 10000 ? { sampleVariable: ctx.sample(m.percent) } : {}),
    });
  });
  if (grpc) {
    // grpc_* directives: nginx keeps the proxy_* and grpc_* lists apart.
    if (out.proxySetHeaders) out.grpcSetHeaders = out.proxySetHeaders;
    if (out.hideHeaders.length) out.grpcHideHeaders = out.hideHeaders;
    delete out.proxySetHeaders;
    out.hideHeaders = [];
  }
  return out;
}
