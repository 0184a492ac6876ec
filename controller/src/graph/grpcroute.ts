/**
 * GRPCRoute rules as the graph's RouteRules. A gRPC call is an HTTP/2 POST to
 * `/<package.Service>/<Method>`, so each method match becomes a path match:
 *
 *   service + method, Exact   -> Exact path `/S/M`
 *   service only, Exact       -> PathPrefix `/S` (every method of S)
 *   method only, Exact        -> RegularExpression `/[^/]+/M$`
 *   RegularExpression         -> RegularExpression `/(?:S)/(?:M)$` (a missing side: `[^/]+`)
 *   no method match           -> PathPrefix `/`
 *
 * and carries `grpc` (service and method characters) so that the model orders candidates the
 * way the GRPCRoute spec does: hostname, service characters, method characters, header
 * matches, then oldest route, namespace/name, rule order. Header matches are HTTP header
 * matches (gRPC metadata are HTTP/2 headers).
 */
import { buildFilters, FilterProblem, ruleAndBackendFilters, type RuleAndBackendFilters } from './filters';
import type { GRPCRoute, GRPCRouteMatch, GRPCRouteRule } from '../resources/grpcroute';
import { type BackendIndex, resolveBackend } from './backends';
import { fitsNginx, headerMatches, memoizedRules, regexValue, RuleProblem } from './rules';
import { buildSession } from './session';
import type { RouteMatch, RouteRule } from './types';

// GRPCRoute method and header regexes follow the same PCRE translation as HTTPRoute's.
const pcre = regexValue;

const escapeRe2 = (s: string) => s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');

/** The RouteMatch a GRPCRoute match stands for. */
export function grpcMatch(m: GRPCRouteMatch, field: string): RouteMatch {
  const headers = headerMatches(m.headers, field);
  const method = m.method;
  const grpc = { serviceChars: method?.service?.length ?? 0, methodChars: method?.method?.length ?? 0 };
  let path: RouteMatch['path'];
  if (!method) path = { type: 'PathPrefix', value: '/' };
  else if (method.type === 'Exact') {
    if (method.service !== undefined && method.method !== undefined) path = { type: 'Exact', value: `/${method.service}/${method.method}` };
    else if (method.service !== undefined) path = { type: 'PathPrefix', value: `/${method.service}` };
    else path = { type: 'RegularExpression', value: pcre(`/[^/]+/${escapeRe2(method.method!)}$`, `${field}.method.method`) };
  } else {
    // Each side is checked alone first, so an error names the field that holds it.
    const service = method.service === undefined ? '[^/]+' : `(?:${method.service})`;
    const name = method.method === undefined ? '[^/]+' : `(?:${method.method})`;
    if (method.service !== undefined) pcre(method.service, `${field}.method.service`);
    if (method.method !== undefined) pcre(method.method, `${field}.method.method`);
    path = { type: 'RegularExpression', value: pcre(`/${service}/${name}$`, `${field}.method`) };
  }
  return fitsNginx({ path, headers, queryParams: [], grpc }, field);
}

/**
 * The route's rules, validated; reused while route and backends are unchanged (as rules.ts).
 * A GRPCRoute without rules routes nothing; the spec's default is an empty list.
 */
export const buildGrpcRules = memoizedRules<GRPCRoute, GRPCRouteRule>(buildGrpcRule);

/** A GRPCRoute rule's filters (header modifiers, mirrors), validated as an HTTPRoute's are (graph/filters.ts). */
function grpcRuleFilters(rule: GRPCRouteRule, field: string, routeNamespace: string, backends: BackendIndex): RuleAndBackendFilters {
  return ruleAndBackendFilters(rule.filters, rule.backendRefs, field, (filters, at) => buildFilters(filters, [], at, routeNamespace, backends));
}

export function buildGrpcRule(rule: GRPCRouteRule, index: number, routeNamespace: string, backends: BackendIndex): RouteRule {
  const field = `spec.rules[${index}]`;
  const resolved = rule.backendRefs.map((b, i) => resolveBackend(b, routeNamespace, backends, `${field}.backendRefs[${i}]`, 'GRPCRoute'));
  const out: RouteRule = { index, matches: [], backends: resolved, valid: true, ...(rule.name ? { name: rule.name } : {}) };
  if (rule.sessionPersistence) {
    const { session, unsupported } = buildSession(rule.sessionPersistence);
    out.session = session;
    if (unsupported.length > 0) out.unsupportedFields = [...(out.unsupportedFields ?? []), ...unsupported];
  }
  try {
    const filters = grpcRuleFilters(rule, field, routeNamespace, backends);
    if (filters.filters) out.filters = filters.filters;
    if (filters.backendFilters) out.backendFilters = filters.backendFilters;
    out.matches =
      rule.matches.length === 0
        ? [{ path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [], grpc: { serviceChars: 0, methodChars: 0 } }]
        : rule.matches.map((m, i) => grpcMatch(m, `${field}.matches[${i}]`));
  } catch (e) {
    if (!(e instanceof RuleProblem) && !(e instanceof FilterProblem)) throw e;
    out.valid = false;
    out.invalidMessage = e.message;
    if (e instanceof FilterProblem && e.reason !== 'UnsupportedValue') out.invalidReason = e.reason;
  }
  return out;
}
