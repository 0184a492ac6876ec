/**
 * Rules of TLSRoute, TCPRoute and UDPRoute: no matches, a connection goes to one of the
 * backendRefs by weight. The CRDs allow one rule (v1); an older v1alpha2 route with several
 * has them all served as one set of weighted backends, in order.
 */
import type { L4Route } from '../resources/types';
import { type BackendIndex, resolveBackend } from './backends';
import type { RouteRule } from './types';

export function buildL4Rules(route: L4Route, backends: BackendIndex): RouteRule[] {
  return route.spec.rules.map((rule, index) => ({
    index,
    ...(rule.name !== undefined ? { name: rule.name } : {}),
    matches: [],
    backends: rule.backendRefs.map((ref, i) => resolveBackend(ref, route.metadata.namespace, backends, `spec.rules[${index}].backendRefs[${i}]`, route.kind)),
    valid: true,
  }));
}
