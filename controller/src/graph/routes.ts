import { GATEWAY_API_GROUP, type GRPCRoute, type HTTPRoute, type L4Route } from '../resources/types';
import { buildL4Rules } from './l4rules';
import { buildGrpcRules } from './grpcroute';
import type { BackendIndex } from './backends';
import { routeConditions } from '../conditions';
import { acceptedHostnames } from './hostnames';
import { selectorMatches } from './selectors';
import { buildRules } from './rules';
import type { GatewayNode, GraphCondition, HTTPRouteNode, ListenerNode, ListenerSetNode, RouteParentNode, RouteRule } from './types';

export interface GatewayLookup {
  /** Gateways of our classes (accepted or not), by "ns/name". */
  ours: Map<string, GatewayNode>;
  /** Every Gateway in the input, whatever its class, by "ns/name". */
  all: Set<string>;
  /** ListenerSets whose parent is a Gateway of ours, by "ns/name". */
  listenerSets: Map<string, ListenerSetNode>;
  /** Labels of the Namespace resources given, by name (for listener namespace selectors). */
  namespaceLabels: Map<string, Record<string, string>>;
}

/** A route's claim on a listener, applied to the listener once the route is known to be accepted. */
export interface Attachment {
  listener: ListenerNode;
  route: HTTPRouteNode;
  hostnames: string[];
  /** Set when a route of the other kind took the listener's hostnames (routekinds.ts). */
  conflict?: string;
}

function resolvedRefsCondition(rules: RouteRule[]): GraphCondition {
  // Loops first: nearly every route resolves, and this runs for every route of every build.
  let allValid = true;
  for (const r of rules) {
    if (!r.valid) continue;
    for (const b of r.backends) allValid &&= b.valid;
    for (const m of r.filters?.mirrors ?? []) allValid &&= m.backend.valid;
  }
  if (allValid) return routeConditions.resolvedRefs();
  const bad = rules.filter((r) => r.valid).flatMap((r) => [...r.backends, ...(r.filters?.mirrors.map((m) => m.backend) ?? [])].filter((b) => !b.valid));
  return routeConditions.unresolvedRefs(bad[0].invalidReason ?? 'BackendNotFound', bad.map((b) => b.invalidMessage).join('; '));
}

/**
 * Which listeners of `gateway` accept the route through this parentRef, or why none do. A
 * parentRef of kind Gateway reaches the Gateway's own listeners only, one of kind ListenerSet
 * the listeners of that ListenerSet only (GEP-1713).
 */
function attachToGateway(
  route: HTTPRoute | GRPCRoute | L4Route,
  ref: RouteParentNode['ref'],
  gateway: GatewayNode,
  namespaceLabels: GatewayLookup['namespaceLabels'],
): { attachments: { listener: ListenerNode; hostnames: string[] }[]; failure?: GraphCondition } {
  const viaSet = ref.kind === 'ListenerSet';
  const gwName = viaSet ? `ListenerSet ${ref.namespace}/${ref.name}` : `Gateway ${gateway.namespace}/${gateway.name}`;
  const candidates = gateway.listeners.filter(
    (l) =>
      (viaSet ? l.listenerSet?.namespace === ref.namespace && l.listenerSet.name === ref.name : !l.listenerSet) &&
      (ref.sectionName === undefined || l.name === ref.sectionName) &&
      (ref.port === undefined || l.port === ref.port),
  );
  if (candidates.length === 0) {
    const what = [ref.sectionName !== undefined ? `named "${ref.sectionName}"` : '', ref.port !== undefined ? `on port ${ref.port}` : ''].filter(Boolean).join(' ');
    return { attachments: [], failure: routeConditions.noMatchingParent(`${gwName} has no listener ${what}`.trim()) };
  }
  const attachments: { listener: ListenerNode; hostnames: string[] }[] = [];
  const refusals: string[] = [];
  let allowedSomewhere = false;
  for (const l of candidates) {
    if (!l.attachable) {
      refusals.push(`listener ${l.name} is invalid`);
      continue;
    }
    // Same: the namespace of the object the listener is written in (a ListenerSet's own).
    const home = l.listenerSet?.namespace ?? gateway.namespace;
    if (l.allowedNamespaces === 'Same' && route.metadata.namespace !== home) {
      refusals.push(`listener ${l.name} allows routes from namespace ${home} only`);
      continue;
    }
    if (l.allowedNamespaces === 'Selector') {
      // Without an API server every namespace exists; it carries the label Kubernetes gives
      // every namespace, plus the labels of a Namespace document if one is given.
      const labels = { ...namespaceLabels.get(route.metadata.namespace), 'kubernetes.io/metadata.name': route.metadata.namespace };
      if (!l.namespaceSelector || !selectorMatches(l.namespaceSelector, labels)) {
        refusals.push(`listener ${l.name} allows routes from namespaces matching its selector only`);
        continue;
      }
    }
    if (!l.supportedKinds.some((k) => k.group === GATEWAY_API_GROUP && k.kind === route.kind)) {
      refusals.push(`listener ${l.name} does not allow ${route.kind}`);
      continue;
    }
    allowedSomewhere = true;
    const hostnames = acceptedHostnames(l.hostname, route.spec.hostnames);
    if (hostnames) attachments.push({ listener: l, hostnames });
  }
  if (attachments.length > 0) return { attachments };
  if (!allowedSomewhere) return { attachments, failure: routeConditions.notAllowedByListeners(`The Route is not allowed by any listener of ${gwName}: ${refusals.join('; ')}`) };
  return {
    attachments,
    failure: routeConditions.noMatchingListenerHostname(
      `None of the route hostnames (${route.spec.hostnames.join(', ')}) match a listener hostname of ${gwName}`,
    ),
  };
}

/**
 * Build the route node and its status.parents entries. Returns undefined when no parentRef
 * concerns us (all point at Gateways of other controllers or at other kinds).
 * Attachments are returned for the caller to apply to listeners.
 */
export function buildRoute(route: HTTPRoute | GRPCRoute | L4Route, gateways: GatewayLookup, backends: BackendIndex): { node: HTTPRouteNode; attachments: Attachment[] } | undefined {
  const ns = route.metadata.namespace;
  const refs = route.spec.parentRefs
    .map((r, index) => ({ index, ref: { group: r.group, kind: r.kind, namespace: r.namespace ?? ns, name: r.name, ...(r.sectionName !== undefined ? { sectionName: r.sectionName } : {}), ...(r.port !== undefined ? { port: r.port } : {}) } }))
    .filter(({ ref }) => ref.group === GATEWAY_API_GROUP && (ref.kind === 'Gateway' || (ref.kind === 'ListenerSet' && gateways.listenerSets.has(`${ref.namespace}/${ref.name}`))))
    // A Gateway that exists but belongs to another controller is not ours to report on.
    .filter(({ ref }) => ref.kind === 'ListenerSet' || gateways.ours.has(`${ref.namespace}/${ref.name}`) || !gateways.all.has(`${ref.namespace}/${ref.name}`));
  if (refs.length === 0) return undefined;

  const rules = route.kind === 'GRPCRoute' ? buildGrpcRules(route, backends) : route.kind === 'HTTPRoute' ? buildRules(route, backends) : buildL4Rules(route, backends);
  const node: HTTPRouteNode = {
    ...(route.kind !== 'HTTPRoute' ? { kind: route.kind } : {}),
    namespace: ns,
    name: route.metadata.name,
    generation: route.metadata.generation,
    creationTimestamp: route.metadata.creationTimestamp,
    hostnames: [...route.spec.hostnames],
    rules,
    parents: [],
  };
  const dropped = rules.filter((r) => !r.valid);
  const allDropped = rules.length > 0 && dropped.length === rules.length;
  const resolvedRefs = resolvedRefsCondition(rules);
  const unsupported = rules.flatMap((r) => (r.valid && r.unsupportedFields ? r.unsupportedFields.map((f) => `spec.rules[${r.index}].${f}`) : []));
  const attachments: Attachment[] = [];

  for (const { index, ref } of refs) {
    const parent: RouteParentNode = { ref, index, accepted: false, listeners: [], conditions: [] };
    const key = `${ref.namespace}/${ref.name}`;
    const listenerSet = ref.kind === 'ListenerSet' ? gateways.listenerSets.get(key) : undefined;
    const gateway = listenerSet ? gateways.ours.get(`${listenerSet.gateway.namespace}/${listenerSet.gateway.name}`) : gateways.ours.get(key);
    let accepted: GraphCondition;
    if (!gateway) accepted = routeConditions.noMatchingParent(`Gateway ${key} not found`);
    else {
      parent.gateway = { namespace: gateway.namespace, name: gateway.name };
      if (listenerSet && !listenerSet.accepted) {
        // Its listeners are not the Gateway's: nothing to attach to or count.
        accepted = routeConditions.noMatchingParent(`ListenerSet ${key} is not accepted`);
      } else if (!gateway.accepted) {
        accepted = routeConditions.noMatchingParent(`Gateway ${gateway.namespace}/${gateway.name} is not accepted`);
        // Still counted in the listeners' attachedRoutes (the Gateway API defines attachment by
        // allowedRoutes and parentRefs alone, so users see which routes a broken listener holds);
        // a Gateway that is not accepted serves nothing, so the route is not served through it.
        for (const a of attachToGateway(route, ref, gateway, gateways.namespaceLabels).attachments) {
          attachments.push({ listener: a.listener, route: node, hostnames: a.hostnames });
        }
      }
      else if (allDropped) {
        const message = `All rules are invalid: ${dropped.map((r) => r.invalidMessage).join('; ')}`;
        accepted = dropped.every((r) => r.invalidReason === 'IncompatibleFilters') ? routeConditions.incompatibleFilters(message) : routeConditions.unsupportedValue(message);
      }
      else {
        const result = attachToGateway(route, ref, gateway, gateways.namespaceLabels);
        if (result.failure) accepted = result.failure;
        else {
          accepted = unsupported.length > 0 ? routeConditions.acceptedUnsupportedField(unsupported.join(', ')) : routeConditions.accepted();
          parent.accepted = true;
          parent.listeners = result.attachments.map((a) => a.listener.name);
          for (const a of result.attachments) attachments.push({ listener: a.listener, route: node, hostnames: a.hostnames });
        }
      }
    }
    parent.conditions = [accepted, resolvedRefs];
    if (dropped.length > 0 && !allDropped) parent.conditions.push(routeConditions.partiallyInvalid(dropped.map((r) => r.invalidMessage).join('; ')));
    node.parents.push(parent);
  }
  return { node, attachments };
}
