import type { HTTPRoute, HTTPRouteMatch, HTTPRouteRule } from '../resources/types';
import { durationMs } from '../resources/validation';
import { type BackendIndex, resolveBackend } from './backends';
import { checkRegex } from './regex';
import { escapeRegex, queryValueRegex, quotedLength } from './pcre-fragments';
import { buildSession } from './session';
import { buildRetry } from './retry';
import { buildFilters, FilterProblem, ruleAndBackendFilters } from './filters';
import { isInferencePoolRef } from './inferencepools';
import type { RouteMatch, RouteRule } from './types';

const DEFAULT_MATCH: RouteMatch = { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] };

/** A rule the data plane cannot serve as written: the route gets a condition saying why. */
export class RuleProblem extends Error {}

/** Header names nginx can read as $http_<name> and that no other header name aliases. */
const NGINX_HEADER_NAME = /^[A-Za-z0-9-]+$/;

/**
 * nginx reads one configuration parameter of at most 4 KB ("too long parameter" refuses the whole
 * configuration). A user regex is one parameter of its own (a map entry); the values one match
 * compares with sit together, as PCRE fragments, in one alternative of a dispatch map's regex,
 * beside up to 32 header and query conditions' own syntax. Beyond these, the rule is dropped
 * with the reason rather than handed to nginx.
 */
export const MAX_REGEX_BYTES = 3800;
export const MAX_MATCH_VALUE_BYTES = 2400;

/** Regex values are handed to the model already in their PCRE form (see regex.ts). */
export function regexValue(value: string, field: string): string {
  const check = checkRegex(value);
  if (!check.ok) throw new RuleProblem(`${field}: invalid regular expression "${value}": ${check.reason}`);
  const bytes = quotedLength(check.pcre);
  if (bytes > MAX_REGEX_BYTES) {
    throw new RuleProblem(`${field}: the regular expression takes ${bytes} bytes as nginx reads it, more than ${MAX_REGEX_BYTES} (nginx reads a configuration parameter of at most 4 KB)`);
  }
  return check.pcre;
}

/** The bytes a match's non-regex values take in a dispatch regex (see MAX_MATCH_VALUE_BYTES). */
function matchValueBytes(m: RouteMatch): number {
  let n = m.path.type === 'RegularExpression' ? 0 : quotedLength(escapeRegex(m.path.value));
  for (const h of m.headers) if (h.type !== 'RegularExpression') n += quotedLength(escapeRegex(h.value));
  for (const q of m.queryParams) if (q.type !== 'RegularExpression') n += quotedLength(queryValueRegex(q.name)) + quotedLength(queryValueRegex(q.value));
  return n;
}

/**
 * nginx compares locations with the decoded, normalized path ($uri), so Exact and PathPrefix
 * values are handed to the model decoded: `/a%20b` matches a request for `/a%20b`. A value
 * whose decoded form nginx could never see (not UTF-8, a NUL, a dot segment, `//`) drops the rule.
 */
function decodedPath(value: string, field: string): string {
  if (!value.includes('%')) return value;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    throw new RuleProblem(`${field}: "${value}" does not percent-decode to UTF-8, so nginx's decoded path can never equal it`);
  }
  const unreachable = decoded.includes('\0') || /\/\.{0,2}\//.test(decoded) || decoded.endsWith('/.') || decoded.endsWith('/..');
  if (unreachable) {
    throw new RuleProblem(`${field}: "${value}" decodes to ${JSON.stringify(decoded)}, which nginx normalizes away before matching`);
  }
  return decoded;
}

/** Header matches of an HTTPRoute or GRPCRoute match, as nginx can test them. */
export function headerMatches(list: readonly { name: string; type: 'Exact' | 'RegularExpression'; value: string }[], field: string): RouteMatch['headers'] {
  // Header names are case-insensitive: only the first of equivalent names counts (Gateway API).
  const seen = new Set<string>();
  const headers: RouteMatch['headers'] = [];
  list.forEach((h, i) => {
    if (!NGINX_HEADER_NAME.test(h.name)) {
      throw new RuleProblem(
        `${field}.headers[${i}].name: header name "${h.name}" cannot be matched by nginx, which reads request headers through variables (letters, digits and "-" only; it drops headers with "_")`,
      );
    }
    const key = h.name.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    const value = h.type === 'RegularExpression' ? regexValue(h.value, `${field}.headers[${i}].value`) : h.value;
    headers.push({ name: h.name, type: h.type, value });
  });
  return headers;
}

function normalizeMatch(m: HTTPRouteMatch, field: string): RouteMatch {
  const path =
    m.path.type === 'RegularExpression'
      ? { type: m.path.type, value: regexValue(m.path.value, `${field}.path.value`) }
      : { type: m.path.type, value: decodedPath(m.path.value, `${field}.path.value`) };
  const headers = headerMatches(m.headers, field);
  const queryParams = m.queryParams.map((q, i) => ({
    name: q.name,
    type: q.type,
    value: q.type === 'RegularExpression' ? regexValue(q.value, `${field}.queryParams[${i}].value`) : q.value,
  }));
  return fitsNginx({ path, headers, queryParams, ...(m.method ? { method: m.method } : {}) }, field);
}

/** The match, when its values fit one alternative of a dispatch regex (MAX_MATCH_VALUE_BYTES). */
export function fitsNginx(match: RouteMatch, field: string): RouteMatch {
  const bytes = matchValueBytes(match);
  if (bytes > MAX_MATCH_VALUE_BYTES) {
    throw new RuleProblem(
      `${field}: its path, header and query values take ${bytes} bytes as nginx reads them, more than the ${MAX_MATCH_VALUE_BYTES} one match may take (nginx reads a configuration parameter of at most 4 KB)`,
    );
  }
  return match;
}

/**
 * Rules built before, by parsed route object: parsed resources are reused while their
 * documents are unchanged, so on a reconcile after a one-route change nearly every route is the
 * same object as last time and, with the same backends index version, its rules have the same
 * outcome. The RouteRule list is then shared between graphs: later stages must treat it as
 * read-only (they build their own). One entry per route, not per rule: a cold start of 5,000
 * routes pays 5,000 map writes, not 15,000.
 */
export function memoizedRules<Route extends { metadata: { namespace: string }; spec: { rules: readonly Rule[] } }, Rule>(
  buildOne: (rule: Rule, index: number, routeNamespace: string, backends: BackendIndex) => RouteRule,
): (route: Route, backends: BackendIndex) => RouteRule[] {
  const built = new WeakMap<Route, { version: number; rules: RouteRule[] }>();
  return (route, backends) => {
    const hit = built.get(route);
    if (hit && hit.version === backends.version) return hit.rules;
    const ns = route.metadata.namespace;
    const rules = route.spec.rules.map((r, i) => buildOne(r, i, ns, backends));
    built.set(route, { version: backends.version, rules });
    return rules;
  };
}

/** The route's rules validated (see buildRule), reused while route and backends are unchanged. */
export const buildRules = memoizedRules<HTTPRoute, HTTPRouteRule>(buildRule);

/**
 * A rule whose backends speak h2c is proxied with grpc_pass, which an nginx location cannot mix
 * with proxy_pass (HTTP/1.1 backends, mirrors to them) and which has no URI to rewrite a path into.
 */
function h2cProblem(rule: RouteRule, field: string): void {
  const services = rule.backends.filter((b) => b.valid && !b.inference);
  if (!services.some((b) => b.h2c)) {
    const mirror = [rule.filters, ...(rule.backendFilters ?? [])].flatMap((f) => f?.mirrors ?? []).find((m) => m.backend.h2c);
    if (mirror) throw new RuleProblem(`${field}: a request mirror to ${mirror.backend.namespace}/${mirror.backend.name} (appProtocol kubernetes.io/h2c) from a rule whose backends speak HTTP/1.1 is not supported`);
    return;
  }
  if (!services.every((b) => b.h2c)) throw new RuleProblem(`${field}.backendRefs: backends with appProtocol kubernetes.io/h2c and HTTP/1.1 backends in one rule are not supported`);
  const filters = [rule.filters, ...(rule.backendFilters ?? [])];
  if (filters.some((f) => f?.rewrite?.path)) throw new RuleProblem(`${field}.filters: a URLRewrite path to backends with appProtocol kubernetes.io/h2c is not supported`);
  const mirror = filters.flatMap((f) => f?.mirrors ?? []).find((m) => !m.backend.h2c);
  if (mirror) throw new RuleProblem(`${field}: a request mirror to ${mirror.backend.namespace}/${mirror.backend.name} (HTTP/1.1) from a rule whose backends speak h2c is not supported`);
}

/** Validate one rule: matches defaulted and checked, filters refused, backends resolved. */
export function buildRule(rule: HTTPRouteRule, index: number, routeNamespace: string, backends: BackendIndex): RouteRule {
  const field = `spec.rules[${index}]`;
  const resolved = rule.backendRefs.map((b, i) => resolveBackend(b, routeNamespace, backends, `${field}.backendRefs[${i}]`));
  const out: RouteRule = { index, matches: [], backends: resolved, valid: true, ...(rule.name ? { name: rule.name } : {}) };
  // The inference hop, not nginx, picks an InferencePool's endpoint.
  if (rule.sessionPersistence && rule.backendRefs.some((b) => isInferencePoolRef(b.group, b.kind))) out.unsupportedFields = ['sessionPersistence'];
  else if (rule.sessionPersistence) {
    const { session, unsupported } = buildSession(rule.sessionPersistence);
    out.session = session;
    if (unsupported.length > 0) out.unsupportedFields = [...(out.unsupportedFields ?? []), ...unsupported];
  }
  if (rule.retry) {
    const { retry, unsupported } = buildRetry(rule.retry, rule.backendRefs.some((b) => isInferencePoolRef(b.group, b.kind)));
    if (retry) out.retry = retry;
    if (unsupported.length > 0) out.unsupportedFields = [...(out.unsupportedFields ?? []), ...unsupported];
  }
  // nginx copies the response headers it is told by name; "all of them" it cannot enumerate.
  rule.filters.forEach((f, i) => {
    if (f.type === 'ExternalAuth' && f.externalAuth?.protocol === 'HTTP' && (f.externalAuth.http?.allowedResponseHeaders.length ?? 0) === 0) {
      out.unsupportedFields = [...(out.unsupportedFields ?? []), `filters[${i}].externalAuth.http.allowedResponseHeaders (empty: none are copied)`];
    }
  });
  if (rule.timeouts && (rule.timeouts.request !== undefined || rule.timeouts.backendRequest !== undefined)) {
    out.timeouts = {
      ...(rule.timeouts.request !== undefined ? { requestMs: durationMs(rule.timeouts.request) } : {}),
      ...(rule.timeouts.backendRequest !== undefined ? { backendRequestMs: durationMs(rule.timeouts.backendRequest) } : {}),
    };
  }
  try {
    if (new Set(rule.backendRefs.map((b) => isInferencePoolRef(b.group, b.kind))).size > 1) {
      throw new RuleProblem(`${field}.backendRefs: a rule cannot mix InferencePool and Service backends (the picker chooses among one kind of endpoint)`);
    }
    out.matches = rule.matches.length === 0 ? [structuredClone(DEFAULT_MATCH)] : rule.matches.map((m, i) => normalizeMatch(m, `${field}.matches[${i}]`));
    const built = ruleAndBackendFilters(rule.filters, rule.backendRefs, field, (filters, at) => buildFilters(filters, out.matches, at, routeNamespace, backends));
    if (built.backendFilters && rule.backendRefs.some((b) => isInferencePoolRef(b.group, b.kind))) {
      const i = rule.backendRefs.findIndex((b) => b.filters.length > 0);
      throw new FilterProblem(`${field}.backendRefs[${i}].filters: filters on an InferencePool backendRef are supported when the rule has only that backendRef`);
    }
    if (built.filters) out.filters = built.filters;
    if (built.backendFilters) out.backendFilters = built.backendFilters;
    h2cProblem(out, field);
  } catch (e) {
    if (!(e instanceof RuleProblem) && !(e instanceof FilterProblem)) throw e;
    out.valid = false;
    out.invalidMessage = e.message;
    if (e instanceof FilterProblem && e.reason !== 'UnsupportedValue') out.invalidReason = e.reason;
  }
  return out;
}
