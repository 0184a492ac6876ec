/**
 * Statuses as data: one StatusReport per resource we own, shaped as the Gateway API status
 * of that kind. observedGeneration is set on every condition; lastTransitionTime is left to
 * carryTransitionTimes (transitions.ts), which knows the previous statuses.
 */
import { isIP } from 'node:net';
import { GATEWAY_API_GROUP, type InvalidResource, type ParsedResources } from '../resources/types';
import { gatewayClassConditions, gatewayConditions, listenerConditions, listenerSetConditions } from '../conditions';
import type { DataplaneResult, GatewayClassNode, GatewayNode, ListenerSetNode, ParametersVerdict, Graph, GraphCondition, HTTPRouteNode, ListenerNode, StatusCondition, StatusReport } from '../graph/types';
import { DEFAULT_CONTROLLER_NAME } from '../graph/types';
import { inferencePoolStatuses } from './inferencepools';

const API_VERSION = `${GATEWAY_API_GROUP}/v1`;

/** Features this controller implements (GatewayClass status.supportedFeatures, sorted by name). */
export const SUPPORTED_FEATURES = [
  'BackendTLSPolicy',
  'BackendTLSPolicySANValidation',
  'GRPCRoute',
  'GRPCRouteNamedRouteRule',
  'Gateway',
  'GatewayAddressEmpty',
  'GatewayBackendClientCertificate',
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  'GatewayHTTPListenerIsolation',
  'GatewayHTTPSListenerDetectMisdirectedRequests',
  'GatewayInfrastructure',
  'GatewayPort8080',
  'GatewayStaticAddresses',
  'HTTPRoute',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteBackendProtocolH2C',
  'HTTPRouteBackendProtocolWebSocket',
  'HTTPRouteBackendRequestHeaderModification',
  'HTTPRouteBackendTimeout',
  'HTTPRouteCORS',
  'HTTPRouteDestinationPortMatching',
  'HTTPRouteHostRewrite',
  'HTTPRouteMethodMatching',
  'HTTPRouteNamedRouteRule',
  'HTTPRouteParentRefPort',
  'HTTPRoutePathRedirect',
  'HTTPRoutePathRewrite',
  'HTTPRoutePortRedirect',
  'HTTPRouteQueryParamMatching',
  'HTTPRouteRequestMirror',
  'HTTPRouteRequestMultipleMirrors',
  'HTTPRouteRequestPercentageMirror',
  'HTTPRouteRequestTimeout',
  'HTTPRouteResponseHeaderModification',
  'HTTPRouteRetry',
  'HTTPRouteRetryBackendTimeout',
  'HTTPRouteRetryConnectionError',
  'HTTPRouteSchemeRedirect',
  'ListenerSet',
  'ReferenceGrant',
  'TCPRoute',
  'TLSRoute',
  'TLSRouteModeMixed',
  'TLSRouteModeTerminate',
  'UDPRoute',
];

export interface StatusOptions {
  /** Defaults to gateway.portcullis.dev/controller. */
  controllerName?: string;
  /** The data plane's verdict on a GatewayClass's parametersRef (Kubernetes with agents). */
  classParameters?: (className: string) => ParametersVerdict | undefined;
}

/** The class's Accepted condition once the data plane has read its parametersRef. */
function classConditions(gc: GatewayClassNode, verdict: ParametersVerdict | undefined): GraphCondition[] {
  if (!verdict || !gc.accepted) return gc.conditions;
  const accepted = verdict.valid ? gatewayClassConditions.accepted() : gatewayClassConditions.invalidParameters(verdict.message);
  return gc.conditions.map((c) => (c.type === 'Accepted' ? accepted : c));
}

function withGeneration(conditions: GraphCondition[], generation: number): StatusCondition[] {
  return conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, observedGeneration: generation }));
}

function addressesOf(dataplane: DataplaneResult): { type: string; value: string }[] {
  return dataplane.addresses.map((value) => ({ type: isIP(value) ? 'IPAddress' : 'Hostname', value }));
}

function listenerStatus(l: ListenerNode, generation: number, dataplane: DataplaneResult, gatewayAccepted: boolean) {
  let conditions = l.conditions;
  if (!conditions.some((c) => c.type === 'Programmed')) {
    const programmed = !gatewayAccepted
      ? listenerConditions.notProgrammed('The Gateway is not accepted')
      : dataplane.programmed
        ? listenerConditions.programmed()
        : dataplane.reason === 'Pending'
          ? { type: 'Programmed', status: 'False' as const, reason: 'Pending', message: dataplane.message ?? 'Waiting for the data plane' }
          : listenerConditions.notProgrammed(`The Listener is not programmed due to a failure to reload nginx with the configuration: ${dataplane.message ?? 'unknown error'}`);
    conditions = [...conditions, programmed];
  }
  return { name: l.name, supportedKinds: l.supportedKinds, attachedRoutes: l.attachedRoutes, conditions: withGeneration(conditions, generation) };
}

function gatewayStatus(gw: GatewayNode, dataplane: DataplaneResult): StatusReport {
  let conditions = gw.conditions;
  if (dataplane.invalidParameters !== undefined && gw.accepted) {
    const invalid = gatewayConditions.invalidParameters(dataplane.invalidParameters);
    conditions = conditions.map((c) => (c.type === 'Accepted' ? invalid : c));
  }
  if (!conditions.some((c) => c.type === 'Programmed')) {
    const unusable = gw.requestedAddresses.filter((a) => !dataplane.addresses.includes(a));
    const programmed =
      unusable.length > 0
        ? gatewayConditions.addressNotUsable(`spec.addresses: ${unusable.join(', ')} cannot be used; this controller serves on ${dataplane.addresses.join(', ') || 'no address'}`)
        : dataplane.programmed
          ? gatewayConditions.programmed()
          : dataplane.reason === 'Pending'
            ? { type: 'Programmed', status: 'False' as const, reason: 'Pending', message: dataplane.message ?? 'Waiting for the data plane' }
            : gatewayConditions.notProgrammed(dataplane.message ?? 'unknown error');
    conditions = [...conditions, programmed];
  }
  return {
    apiVersion: API_VERSION,
    kind: 'Gateway',
    namespace: gw.namespace,
    name: gw.name,
    generation: gw.generation,
    status: {
      addresses: gw.accepted ? addressesOf(dataplane) : [],
      conditions: withGeneration(conditions, gw.generation),
      // A ListenerSet's listeners are reported in the ListenerSet's status, not here.
      listeners: gw.listeners.filter((l) => !l.listenerSet).map((l) => listenerStatus(l, gw.generation, dataplane, gw.accepted)),
      ...(gw.attachedListenerSets !== undefined ? { attachedListenerSets: gw.attachedListenerSets } : {}),
    },
  };
}

/** A ListenerSet is programmed when its Gateway's data plane is; its listeners as a Gateway's are. */
function listenerSetStatus(ls: ListenerSetNode, dataplane: DataplaneResult): StatusReport {
  let conditions = ls.conditions;
  if (!conditions.some((c) => c.type === 'Programmed')) {
    const programmed = dataplane.programmed
      ? listenerSetConditions.programmed()
      : dataplane.reason === 'Pending'
        ? { type: 'Programmed', status: 'False' as const, reason: 'Pending', message: dataplane.message ?? 'Waiting for the data plane' }
        : listenerSetConditions.notProgrammed(`The ListenerSet is not programmed due to a failure to reload nginx with the configuration: ${dataplane.message ?? 'unknown error'}`);
    conditions = [...conditions, programmed];
  }
  return {
    apiVersion: API_VERSION,
    kind: 'ListenerSet',
    namespace: ls.namespace,
    name: ls.name,
    generation: ls.generation,
    status: {
      conditions: withGeneration(conditions, ls.generation),
      listeners: ls.listeners.map((l) => listenerStatus(l, ls.generation, dataplane, ls.accepted)),
    },
  };
}

/**
 * A route's report depends on its graph node alone (and the controller name): a reconcile on the
 * same graph (an agent's report, a Service's new address) hands out the very report objects of
 * the last one, so carryTransitionTimes and the status writers see them unchanged by identity,
 * without comparing 1,000 routes' statuses field by field.
 */
const routeReports = new WeakMap<HTTPRouteNode, { controllerName: string; report: StatusReport }>();

function routeStatus(route: HTTPRouteNode, controllerName: string): StatusReport {
  const hit = routeReports.get(route);
  if (hit && hit.controllerName === controllerName) return hit.report;
  const report = freshRouteStatus(route, controllerName);
  routeReports.set(route, { controllerName, report });
  return report;
}

function freshRouteStatus(route: HTTPRouteNode, controllerName: string): StatusReport {
  return {
    apiVersion: API_VERSION,
    kind: route.kind ?? 'HTTPRoute',
    namespace: route.namespace,
    name: route.name,
    generation: route.generation,
    status: {
      parents: route.parents.map((p) => ({
        parentRef: p.ref,
        controllerName,
        conditions: withGeneration(p.conditions, route.generation),
      })),
    },
  };
}

function invalidStatus(r: InvalidResource, controllerName: string): StatusReport {
  const base = { apiVersion: r.apiVersion, kind: r.kind, ...(r.namespace !== undefined ? { namespace: r.namespace } : {}), name: r.name, generation: r.generation };
  const invalid: GraphCondition = { type: 'Accepted', status: 'False', reason: 'Invalid', message: r.message };
  if (r.kind === 'HTTPRoute' || r.kind === 'GRPCRoute' || r.kind === 'TLSRoute' || r.kind === 'TCPRoute' || r.kind === 'UDPRoute') {
    const conditions = withGeneration(
      [
        { type: 'Accepted', status: 'False', reason: 'UnsupportedValue', message: r.message },
        { type: 'ResolvedRefs', status: 'False', reason: 'UnsupportedValue', message: 'The Route is invalid; its references were not resolved' },
      ],
      r.generation,
    );
    const parents = (r.parentRefs ?? []).map((ref) => ({
      parentRef: {
        group: ref.group ?? GATEWAY_API_GROUP,
        kind: ref.kind ?? 'Gateway',
        namespace: ref.namespace ?? r.namespace ?? 'default',
        name: ref.name,
        ...(ref.sectionName !== undefined ? { sectionName: ref.sectionName } : {}),
        ...(ref.port !== undefined ? { port: ref.port } : {}),
      },
      controllerName,
      conditions,
    }));
    // With no readable parentRef there is no parent to hang the error on: say it at the top.
    return { ...base, status: parents.length > 0 ? { parents } : { parents, conditions: conditions.slice(0, 1) } };
  }
  if (r.kind === 'Gateway') {
    return { ...base, status: { conditions: withGeneration(gatewayConditions.invalid(r.message), r.generation) } };
  }
  // Accepted and Programmed are on every ListenerSet (its CRD defaults both), an invalid one too.
  if (r.kind === 'ListenerSet') {
    return { ...base, status: { conditions: withGeneration(listenerSetConditions.invalid(r.message), r.generation) } };
  }
  return { ...base, status: { conditions: withGeneration([invalid], r.generation) } };
}

/**
 * An invalid ListenerSet whose parentRef can be read and names no Gateway of ours is another
 * controller's to report on (as a valid one is); one whose parentRef cannot be read is reported.
 */
function foreignListenerSet(r: InvalidResource, graph: Graph): boolean {
  if (r.kind !== 'ListenerSet') return false;
  const ref = r.parentRefs?.[0];
  if (!ref) return false;
  if ((ref.group ?? GATEWAY_API_GROUP) !== GATEWAY_API_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') return true;
  const ns = ref.namespace ?? r.namespace;
  return ![...graph.gateways, ...graph.rejectedGateways].some((g) => g.namespace === ns && g.name === ref.name);
}

/** Every status this controller reports, from the graph, the invalid documents and the dataplane outcome. */
export function computeStatuses(
  graph: Graph,
  parsed: ParsedResources,
  dataplane: DataplaneResult | ((gateway: GatewayNode) => DataplaneResult),
  options: StatusOptions = {},
): StatusReport[] {
  const controllerName = options.controllerName ?? graph.gatewayClasses[0]?.controllerName ?? DEFAULT_CONTROLLER_NAME;
  const reports: StatusReport[] = [];
  for (const gc of graph.gatewayClasses) {
    reports.push({
      apiVersion: API_VERSION,
      kind: 'GatewayClass',
      name: gc.name,
      generation: gc.generation,
      status: {
        conditions: withGeneration(classConditions(gc, options.classParameters?.(gc.name)), gc.generation),
        ...(gc.accepted ? { supportedFeatures: SUPPORTED_FEATURES.map((name) => ({ name })) } : {}),
      },
    });
  }
  // One data plane for all Gateways (standalone), or one per Gateway (Kubernetes with agents).
  for (const gw of [...graph.gateways, ...graph.rejectedGateways]) reports.push(gatewayStatus(gw, typeof dataplane === 'function' ? dataplane(gw) : dataplane));
  if (graph.listenerSets) {
    const byKey = new Map([...graph.gateways, ...graph.rejectedGateways].map((g) => [`${g.namespace}/${g.name}`, g]));
    for (const ls of graph.listenerSets) {
      const gw = byKey.get(`${ls.gateway.namespace}/${ls.gateway.name}`)!;
      reports.push(listenerSetStatus(ls, typeof dataplane === 'function' ? dataplane(gw) : dataplane));
    }
  }
  for (const route of graph.routes) reports.push(routeStatus(route, controllerName));
  // A Pod is read, never owned: its problems are logged, not written to its status.
  for (const r of parsed.invalid) if (r.kind !== 'Pod' && !r.standIn && !foreignListenerSet(r, graph)) reports.push(invalidStatus(r, controllerName));
  reports.push(...inferencePoolStatuses(graph, controllerName));
  for (const p of graph.backendTLSPolicies ?? []) {
    reports.push({
      apiVersion: API_VERSION,
      kind: 'BackendTLSPolicy',
      namespace: p.namespace,
      name: p.name,
      generation: p.generation,
      status: {
        // Gateway API caps status.ancestors at 16.
        ancestors: p.ancestors.slice(0, 16).map((gw) => ({
          ancestorRef: { group: GATEWAY_API_GROUP, kind: 'Gateway', namespace: gw.namespace, name: gw.name },
          controllerName,
          conditions: withGeneration(p.conditions, p.generation),
        })),
      },
    });
  }
  return reports;
}
