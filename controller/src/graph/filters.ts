/**
 * Route filters validated for nginx: what the CRD accepts but nginx cannot do, or could only do
 * by letting a value break its config or a header, drops the rule with a message naming the
 * field (Gateway API "PartiallyInvalid": Dropped Rule(s)); when every rule is dropped the route
 * is not Accepted, with reason UnsupportedValue or IncompatibleFilters.
 */
import type { HTTPBackendRef, HTTPCORSFilter, HTTPExternalAuthFilter, HTTPHeaderFilter, HTTPPathModifier, HTTPRouteFilter } from '../resources/types';
import { pathValueProblem } from '../resources/validation';
import { type BackendIndex, resolveBackend } from './backends';
import type { BackendRef, RouteMatch } from './types';

type RouteMatchLike = Pick<RouteMatch, 'path'>;

export interface HeaderChange {
  name: string;
  value: string;
}

/** set/add/remove of one header list, names as written (nginx compares them case-insensitively). */
export interface HeaderChanges {
  set: HeaderChange[];
  add: HeaderChange[];
  remove: string[];
}

/**
 * A path change. `prefix` (ReplacePrefixMatch) is the rule's one PathPrefix, decoded and without
 * a trailing "/" ("" for "/"); `value` is decoded too, as nginx's rewrite works on the decoded URI.
 */
export type PathChange = { type: 'ReplaceFullPath'; value: string } | { type: 'ReplacePrefixMatch'; value: string; prefix: string };

export interface RedirectFilter {
  scheme?: 'http' | 'https';
  hostname?: string;
  port?: number;
  /** As written (the Location header carries the path percent-encoded). */
  path?: PathChange;
  statusCode: number;
}

export interface RewriteFilter {
  hostname?: string;
  path?: PathChange;
}

/**
 * ExternalAuth (protocol HTTP): each request is first sent to `backend` (nginx auth_request):
 * 2xx lets it through, 401 and 403 are answered to the client, anything else is a 500.
 */
export interface ExternalAuthFilter {
  backend: BackendRef;
  /** http.path: prepended to the request's path towards the authorization server. */
  path: string;
  /** Client request headers sent besides Host, Authorization and the method and path. */
  allowedHeaders: string[];
  /** Authorization response headers copied into the request to the backend. */
  allowedResponseHeaders: string[];
}

export interface MirrorFilter {
  backend: BackendRef;
  /** Share of requests mirrored, 0..100 (percent, or fraction * 100). */
  percent: number;
}

/** What a rule (or one of its backendRefs) does besides choosing a backend. */
export interface RuleFilters {
  requestHeaders?: HeaderChanges;
  responseHeaders?: HeaderChanges;
  redirect?: RedirectFilter;
  rewrite?: RewriteFilter;
  mirrors: MirrorFilter[];
  cors?: HTTPCORSFilter;
  externalAuth?: ExternalAuthFilter;
}

export class FilterProblem extends Error {
  constructor(
    message: string,
    readonly reason: 'UnsupportedValue' | 'IncompatibleFilters' = 'UnsupportedValue',
  ) {
    super(message);
  }
}

/** Header names nginx exposes as $http_<name> (needed to append to a request header). */
const VARIABLE_HEADER_NAME = /^[A-Za-z0-9-]+$/;
/** CR, LF, NUL and other controls would end or split a header line (HTAB is allowed). */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

function headerChanges(f: HTTPHeaderFilter, field: string, request: boolean): HeaderChanges {
  const seen = new Map<string, string>();
  const claim = (name: string, where: string) => {
    const key = name.toLowerCase();
    const before = seen.get(key);
    if (before !== undefined) throw new FilterProblem(`${where}: header "${name}" is also named by ${before} (header names are case-insensitive)`);
    seen.set(key, where);
  };
  f.set.forEach((h, i) => claim(h.name, `${field}.set[${i}]`));
  f.add.forEach((h, i) => claim(h.name, `${field}.add[${i}]`));
  f.remove.forEach((n, i) => claim(n, `${field}.remove[${i}]`));
  for (const [list, kind] of [
    [f.set, 'set'],
    [f.add, 'add'],
  ] as const) {
    list.forEach((h, i) => {
      if (CONTROL.test(h.value)) throw new FilterProblem(`${field}.${kind}[${i}].value: header values must not contain control characters (CR, LF, NUL...)`);
      if (kind === 'add' && request && !VARIABLE_HEADER_NAME.test(h.name)) {
        throw new FilterProblem(`${field}.add[${i}].name: nginx can append to request header "${h.name}" only when its name holds letters, digits and "-"`);
      }
    });
  }
  return { set: f.set.map((h) => ({ ...h })), add: f.add.map((h) => ({ ...h })), remove: [...f.remove] };
}

/** A replacement path nginx can use: an absolute path of the characters a path match allows. */
function replacementPath(value: string, field: string, allowEmpty: boolean): string {
  if (value === '' && allowEmpty) return '';
  const problem = pathValueProblem(value);
  if (problem) throw new FilterProblem(`${field}: "${value}" ${problem.replace(" when type one of ['Exact', 'PathPrefix']", '')}`);
  return value;
}

function decoded(value: string, field: string): string {
  if (!value.includes('%')) return value;
  try {
    const d = decodeURIComponent(value);
    if (d.includes('\0') || CONTROL.test(d)) throw new Error('control character');
    return d;
  } catch {
    throw new FilterProblem(`${field}: "${value}" does not percent-decode to a usable path`);
  }
}

/** The rule's one PathPrefix (the CRD makes ReplacePrefixMatch require exactly one), normalised. */
function prefixOf(matches: RouteMatchLike[], field: string): string {
  if (matches.length !== 1 || matches[0].path.type !== 'PathPrefix') {
    throw new FilterProblem(`${field}: ReplacePrefixMatch needs exactly one PathPrefix match in the rule`, 'IncompatibleFilters');
  }
  const p = matches[0].path.value.replace(/\/+$/, '');
  return p;
}

function pathChange(p: HTTPPathModifier, matches: RouteMatchLike[], field: string, decode: boolean): PathChange {
  if (p.type === 'ReplaceFullPath') {
    const value = replacementPath(p.replaceFullPath ?? '', `${field}.replaceFullPath`, false);
    return { type: 'ReplaceFullPath', value: decode ? decoded(value, `${field}.replaceFullPath`) : value };
  }
  const value = replacementPath(p.replacePrefixMatch ?? '', `${field}.replacePrefixMatch`, true);
  // "/xyz/" and "/xyz" replace alike: the rest of the path brings its own "/".
  const trimmed = value.replace(/\/+$/, '');
  return { type: 'ReplacePrefixMatch', value: decode ? decoded(trimmed, `${field}.replacePrefixMatch`) : trimmed, prefix: prefixOf(matches, field) };
}

function mirrorPercent(m: NonNullable<HTTPRouteFilter['requestMirror']>): number {
  if (m.percent !== undefined) return m.percent;
  if (m.fraction) return (100 * m.fraction.numerator) / m.fraction.denominator;
  return 100;
}

/**
 * nginx asks an authorization server with a subrequest (auth_request): it speaks HTTP, and it
 * runs before nginx reads the request body, so neither the ext_authz gRPC protocol nor a
 * forwarded body can be had; a rule asking for them is refused rather than served unchecked.
 * Headers are read and set by name: names of letters, digits and "-" only (as nginx reads them).
 */
function externalAuth(a: HTTPExternalAuthFilter, field: string, routeNamespace: string, backends: BackendIndex): ExternalAuthFilter {
  if (a.protocol === 'GRPC') throw new FilterProblem(`${field}.protocol: GRPC (Envoy's ext_authz protocol) is not supported; use HTTP`);
  if ((a.forwardBody?.maxSize ?? 0) > 0) throw new FilterProblem(`${field}.forwardBody: forwarding the request body to the authorization server is not supported`);
  const http = a.http ?? { allowedHeaders: [], allowedResponseHeaders: [] };
  for (const [list, names] of [['allowedHeaders', http.allowedHeaders], ['allowedResponseHeaders', http.allowedResponseHeaders]] as [string, string[]][]) {
    const bad = names.find((n) => !VARIABLE_HEADER_NAME.test(n));
    if (bad !== undefined) throw new FilterProblem(`${field}.http.${list}: nginx can pass header "${bad}" only when its name holds letters, digits and "-"`);
  }
  const ref: HTTPBackendRef = { ...a.backendRef, weight: 1, filters: [] };
  return {
    backend: resolveBackend(ref, routeNamespace, backends, `${field}.backendRef`),
    path: http.path ?? '',
    allowedHeaders: http.allowedHeaders,
    allowedResponseHeaders: http.allowedResponseHeaders,
  };
}

/**
 * Validate one filter list (a rule's, or a backendRef's) into RuleFilters. `matches` are the
 * rule's matches after normalisation (decoded paths). Throws FilterProblem.
 */
export function buildFilters(
  filters: HTTPRouteFilter[],
  matches: RouteMatchLike[],
  field: string,
  routeNamespace: string,
  backends: BackendIndex,
): RuleFilters {
  const out: RuleFilters = { mirrors: [] };
  filters.forEach((f, i) => {
    const at = `${field}[${i}]`;
    switch (f.type) {
      case 'RequestHeaderModifier':
        out.requestHeaders = headerChanges(f.requestHeaderModifier!, `${at}.requestHeaderModifier`, true);
        break;
      case 'ResponseHeaderModifier':
        out.responseHeaders = headerChanges(f.responseHeaderModifier!, `${at}.responseHeaderModifier`, false);
        break;
      case 'RequestRedirect': {
        const r = f.requestRedirect!;
        out.redirect = {
          ...(r.scheme ? { scheme: r.scheme } : {}),
          ...(r.hostname ? { hostname: r.hostname } : {}),
          ...(r.port !== undefined ? { port: r.port } : {}),
          ...(r.path ? { path: pathChange(r.path, matches, `${at}.requestRedirect.path`, false) } : {}),
          statusCode: r.statusCode,
        };
        break;
      }
      case 'URLRewrite': {
        const r = f.urlRewrite!;
        out.rewrite = {
          ...(r.hostname ? { hostname: r.hostname } : {}),
          ...(r.path ? { path: pathChange(r.path, matches, `${at}.urlRewrite.path`, true) } : {}),
        };
        break;
      }
      case 'RequestMirror': {
        const m = f.requestMirror!;
        const ref: HTTPBackendRef = { ...m.backendRef, weight: 1, filters: [] };
        out.mirrors.push({ backend: resolveBackend(ref, routeNamespace, backends, `${at}.requestMirror.backendRef`), percent: mirrorPercent(m) });
        break;
      }
      case 'CORS':
        out.cors = structuredClone(f.cors!);
        break;
      case 'ExternalAuth':
        out.externalAuth = externalAuth(f.externalAuth!, `${at}.externalAuth`, routeNamespace, backends);
        break;
      case 'ExtensionRef':
        throw new FilterProblem(`${at}.extensionRef: filter ExtensionRef ${f.extensionRef!.group}/${f.extensionRef!.kind} ${f.extensionRef!.name} is not supported`);
      default:
        throw new FilterProblem(`${at}.type: filter ${f.type} is not supported`);
    }
  });
  if (out.redirect && out.mirrors.length > 0) {
    throw new FilterProblem(`${field}: RequestMirror cannot be combined with RequestRedirect (the redirect answers before any backend is asked)`, 'IncompatibleFilters');
  }
  if (out.redirect && out.cors) {
    throw new FilterProblem(`${field}: CORS cannot be combined with RequestRedirect`, 'IncompatibleFilters');
  }
  return out;
}

export function hasFilters(f: RuleFilters | undefined): boolean {
  return !!f && !!(f.requestHeaders || f.responseHeaders || f.redirect || f.rewrite || f.mirrors.length || f.cors || f.externalAuth);
}

/** What a rule's filters and its backendRefs' filters come to (graph RouteRule fields). */
export interface RuleAndBackendFilters {
  /** The rule's filters, with its only backendRef's merged in when it has one. */
  filters?: RuleFilters;
  /**
   * Several backendRefs, some with filters of their own: per backendRef (same order), the rule's
   * filters merged with that backendRef's, applied only to the requests sent to it.
   */
  backendFilters?: (RuleFilters | undefined)[];
}

/**
 * A rule's filters and its backendRefs' (Gateway API: a backendRef's filters run if and only if
 * the request is forwarded to that backend). `build` validates one list (buildFilters with the
 * rule's matches). Throws FilterProblem.
 */
export function ruleAndBackendFilters(
  ruleFilters: HTTPRouteFilter[],
  backendRefs: { filters: HTTPRouteFilter[] }[],
  field: string,
  build: (filters: HTTPRouteFilter[], field: string) => RuleFilters,
): RuleAndBackendFilters {
  if (ruleFilters.length === 0 && !backendRefs.some((b) => b.filters.length > 0)) return {};
  const rule = build(ruleFilters, `${field}.filters`);
  const own = backendRefs.map((b, i) => (b.filters.length > 0 ? build(b.filters, `${field}.backendRefs[${i}].filters`) : undefined));
  if (backendRefs.length === 1 && own[0]) {
    const merged = mergeFilters(rule, own[0], `${field}.backendRefs[0].filters`);
    return hasFilters(merged) ? { filters: merged } : {};
  }
  if (!own.some((f) => f !== undefined)) return hasFilters(rule) ? { filters: rule } : {};
  const backendFilters = own.map((f, i) => {
    const merged = f ? mergeFilters(rule, f, `${field}.backendRefs[${i}].filters`) : rule;
    return hasFilters(merged) ? merged : undefined;
  });
  return { ...(hasFilters(rule) ? { filters: rule } : {}), backendFilters };
}

/**
 * Rule filters followed by one backendRef's filters. A filter type set at both levels is refused
 * (IncompatibleFilters): which of the two should win is not defined by the Gateway API.
 */
export function mergeFilters(rule: RuleFilters, backend: RuleFilters, field: string): RuleFilters {
  const out: RuleFilters = { ...rule, mirrors: [...rule.mirrors, ...backend.mirrors] };
  for (const key of ['requestHeaders', 'responseHeaders', 'redirect', 'rewrite', 'cors'] as const) {
    if (backend[key] === undefined) continue;
    if (rule[key] !== undefined) throw new FilterProblem(`${field}: the rule and its backendRef both set ${key}`, 'IncompatibleFilters');
    (out as unknown as Record<string, unknown>)[key] = backend[key];
  }
  if (out.redirect && (out.rewrite || out.mirrors.length > 0)) {
    throw new FilterProblem(`${field}: RequestRedirect cannot be combined with URLRewrite or RequestMirror`, 'IncompatibleFilters');
  }
  return out;
}
