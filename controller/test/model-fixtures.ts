/** Plain Graph data for model/render/apply tests: small builders with the Graph's defaults. */
import type {
  AttachedRoute,
  BackendRef,
  Graph,
  GatewayNode,
  HTTPRouteNode,
  ListenerNode,
  RouteMatch,
  RouteRule,
} from '../src/graph/types';

export function match(partial: Partial<RouteMatch> = {}): RouteMatch {
  return { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [], ...partial };
}

export function prefix(value: string, more: Partial<RouteMatch> = {}): RouteMatch {
  return match({ path: { type: 'PathPrefix', value }, ...more });
}
export function exact(value: string, more: Partial<RouteMatch> = {}): RouteMatch {
  return match({ path: { type: 'Exact', value }, ...more });
}
export function regex(value: string, more: Partial<RouteMatch> = {}): RouteMatch {
  return match({ path: { type: 'RegularExpression', value }, ...more });
}

export function backend(name: string, port: number | undefined, more: Partial<BackendRef> = {}): BackendRef {
  return {
    namespace: 'default',
    name,
    group: '',
    kind: 'Service',
    port: 80,
    weight: 1,
    valid: true,
    endpoints: port === undefined ? [] : [{ address: '127.0.0.1', port }],
    ...more,
  };
}

export function rule(index: number, matches: RouteMatch[], backends: BackendRef[]): RouteRule {
  return { index, matches, backends, valid: true };
}

let clock = 0;
export function route(name: string, rules: RouteRule[], more: Partial<HTTPRouteNode> = {}): HTTPRouteNode {
  clock += 1;
  return {
    namespace: 'default',
    name,
    generation: 1,
    creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, clock)).toISOString(),
    hostnames: [],
    rules,
    parents: [],
    ...more,
  };
}

export function attach(route: HTTPRouteNode, hostnames: string[] = route.hostnames): AttachedRoute {
  return { route, hostnames };
}

export function listener(port: number, routes: AttachedRoute[], more: Partial<ListenerNode> = {}): ListenerNode {
  return {
    gateway: { namespace: 'default', name: 'gw' },
    name: `http-${port}${more.hostname ? '-' + more.hostname : ''}`,
    port,
    protocol: 'HTTP',
    valid: true,
    routes,
    attachedRoutes: routes.length,
    attachable: true,
    supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }],
    allowedNamespaces: 'Same',
    conditions: [],
    ...more,
  };
}

export function graph(listeners: ListenerNode[], more: Partial<GatewayNode> = {}): Graph {
  const gw: GatewayNode = {
    namespace: 'default',
    name: 'gw',
    generation: 1,
    className: 'portcullis',
    accepted: true,
    listeners,
    requestedAddresses: [],
    conditions: [],
    ...more,
  };
  const routes = new Map<string, HTTPRouteNode>();
  for (const l of listeners) for (const r of l.routes) routes.set(`${r.route.namespace}/${r.route.name}`, r.route);
  return { gatewayClasses: [], gateways: [gw], rejectedGateways: [], routes: [...routes.values()] };
}
