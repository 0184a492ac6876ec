import type { ResourceSet } from '../resources/types';
import { BackendIndex } from './backends';
import { buildInferencePools } from './inferencepools';
import { buildGatewayClasses } from './gatewayclasses';
import { buildGateway } from './gateways';
import { CertificateIndex } from './tls';
import { CAIndex } from './ca-certificates';
import { type DatedGateway, resolveGatewayConflicts } from './gateway-conflicts';
import { attachListenerSets, type ListenerSetParent, resettleListenerSets } from './listenersets';
import { applyAttachments } from './isolation';
import { type Attachment, buildRoute, type GatewayLookup } from './routes';
import { planH2cPorts, separateRouteKinds } from './routekinds';
import type { BuildGraphOptions, GatewayNode, Graph, HTTPRouteNode, ObjectRef } from './types';

const byKey = (a: { namespace: string; name: string }, b: typeof a) =>
  a.namespace === b.namespace ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.namespace < b.namespace ? -1 : 1;

/**
 * The Gateways a BackendTLSPolicy matters to: those with an accepted route that sends requests
 * to a Service port the policy targets, applied or Conflicted ("namespace/name" of the policy ->
 * Gateways, in order).
 */
function backendTLSAncestors(routes: HTTPRouteNode[]): Map<string, ObjectRef[]> {
  const out = new Map<string, Map<string, ObjectRef>>();
  for (const route of routes) {
    let policies: Set<string> | undefined;
    for (const rule of route.rules) for (const b of rule.backends) for (const p of b.tlsPolicies ?? []) (policies ??= new Set()).add(p);
    if (!policies) continue;
    for (const parent of route.parents) {
      if (!parent.accepted || !parent.gateway) continue;
      for (const p of policies) {
        let gateways = out.get(p);
        if (!gateways) out.set(p, (gateways = new Map()));
        gateways.set(`${parent.gateway.namespace}/${parent.gateway.name}`, parent.gateway);
      }
    }
  }
  return new Map([...out].map(([p, gws]) => [p, [...gws.values()]]));
}

/** Resources in, Graph out: attachment, validation, backend resolution, every condition decided. Pure. */
export function buildGraph(set: ResourceSet, options: BuildGraphOptions): Graph {
  const gatewayClasses = buildGatewayClasses(set.gatewayClasses, options.controllerName);
  const ourClasses = new Set(gatewayClasses.filter((c) => c.accepted).map((c) => c.name));

  const lookup: GatewayLookup = { ours: new Map(), all: new Set(), listenerSets: new Map(), namespaceLabels: new Map(set.namespaces.map((n) => [n.metadata.name, n.metadata.labels])) };
  const gateways: GatewayNode[] = [];
  const rejectedGateways: GatewayNode[] = [];
  const certificates = new CertificateIndex(set);
  const caCertificates = new CAIndex(set);
  const ours: DatedGateway[] = [];
  const parents = new Map<string, ListenerSetParent>();
  for (const gw of [...set.gateways].sort((a, b) => byKey(a.metadata, b.metadata))) {
    const key = `${gw.metadata.namespace}/${gw.metadata.name}`;
    lookup.all.add(key);
    if (!ourClasses.has(gw.spec.gatewayClassName)) continue;
    const node = buildGateway(gw, certificates, caCertificates, options.unavailablePorts);
    lookup.ours.set(key, node);
    parents.set(key, { gateway: gw, node });
    ours.push({ node, creationTimestamp: gw.metadata.creationTimestamp });
  }
  const listenerSets = set.listenerSets?.length ? attachListenerSets(set.listenerSets, parents, lookup.namespaceLabels, certificates, caCertificates, options.unavailablePorts) : [];
  for (const ls of listenerSets) lookup.listenerSets.set(`${ls.namespace}/${ls.name}`, ls);
  if (!options.dataplanePerGateway && ours.length > 1) {
    resolveGatewayConflicts(ours, new Map((set.listenerSets ?? []).map((ls) => [`${ls.metadata.namespace}/${ls.metadata.name}`, ls.metadata.creationTimestamp])));
    if (listenerSets.length > 0) resettleListenerSets(listenerSets, lookup.ours);
  }
  for (const { node } of ours) (node.accepted ? gateways : rejectedGateways).push(node);

  const backends = new BackendIndex(set, { inferenceExtension: options.inferenceExtension });
  const routes: HTTPRouteNode[] = [];
  const attachments: Attachment[] = [];
  for (const route of [...set.httpRoutes].sort((a, b) => byKey(a.metadata, b.metadata))) {
    const built = buildRoute(route, lookup, backends);
    if (!built) continue;
    routes.push(built.node);
    attachments.push(...built.attachments);
  }
  const grpcRoutes = set.grpcRoutes ?? [];
  for (const route of grpcRoutes.length > 1 ? [...grpcRoutes].sort((a, b) => byKey(a.metadata, b.metadata)) : grpcRoutes) {
    const built = buildRoute(route, lookup, backends);
    if (!built) continue;
    routes.push(built.node);
    attachments.push(...built.attachments);
  }
  for (const list of [set.tlsRoutes, set.tcpRoutes, set.udpRoutes]) {
    if (!list || list.length === 0) continue;
    for (const route of [...list].sort((a, b) => byKey(a.metadata, b.metadata))) {
      const built = buildRoute(route, lookup, backends);
      if (!built) continue;
      routes.push(built.node);
      attachments.push(...built.attachments);
    }
  }
  applyAttachments(grpcRoutes.length > 0 ? separateRouteKinds(attachments) : attachments, gateways);
  const nginx = planH2cPorts(gateways, options.nginx ?? { http2On: true });

  const graph: Graph = { gatewayClasses, gateways, rejectedGateways, routes, nginx };
  if (listenerSets.length > 0) graph.listenerSets = listenerSets;
  if (backends.tls.size > 0) graph.backendTLSPolicies = backends.tls.nodes(backendTLSAncestors(routes));
  if (backends.inference) graph.inferencePools = buildInferencePools(backends, routes);
  return graph;
}
