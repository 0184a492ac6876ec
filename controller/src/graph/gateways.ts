import { CertificateIndex, type ListenerCertificate, type ListenerOwner } from './tls';
import { CAIndex } from './ca-certificates';
import { backendClientCertificate, type ClientValidation, frontendValidation, insecureFallbackCondition } from './gateway-tls';
import { GATEWAY_API_GROUP, type Gateway, type Listener } from '../resources/types';
import { gatewayConditions, listenerConditions, mergeConditions } from '../conditions';
import type { GatewayNode, GraphCondition, ListenerNode, SupportedKind, UnavailablePort } from './types';

/** Protocols whose listeners we can program today. */
export const SUPPORTED_PROTOCOLS = ['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP'];
/** Route kinds each supported protocol carries. */
const KINDS_BY_PROTOCOL: Record<string, string[]> = {
  HTTP: ['HTTPRoute', 'GRPCRoute'],
  HTTPS: ['HTTPRoute', 'GRPCRoute'],
  TLS: ['TLSRoute'],
  TCP: ['TCPRoute'],
  UDP: ['UDPRoute'],
};

/** Listeners nginx serves in its stream context (whole connections), not in http. */
export function isStreamProtocol(protocol: string): boolean {
  return protocol === 'TLS' || protocol === 'TCP' || protocol === 'UDP';
}

/** The transport a listener's port is bound with (UDP ports are distinct from TCP ones). */
export function listenerTransport(protocol: string): 'TCP' | 'UDP' {
  return protocol === 'UDP' ? 'UDP' : 'TCP';
}

/** A listener's port is held by another process: the listener is not accepted, the others are. */
function portConditions(gateway: Gateway, listener: Listener, unavailable: readonly UnavailablePort[] | undefined): GraphCondition[] {
  if (!unavailable?.length) return [];
  const transport = listenerTransport(listener.protocol);
  const key = `${gateway.metadata.namespace}/${gateway.metadata.name}`;
  const held = unavailable.find((p) => p.port === listener.port && p.transport === transport && (p.gateway === undefined || p.gateway === key));
  if (!held) return [];
  return listenerConditions.portUnavailable(`Port ${listener.port} (${transport}) is unavailable: ${held.reason}; the listener is served once the port is free`);
}

/**
 * Listeners on one port whose protocols cannot be served together. UDP is a transport of its
 * own, so a UDP listener shares a port number with a TCP-based one (the Gateway API lets it).
 */
export function protocolsClash(a: string, b: string): boolean {
  if (a === b) return false;
  return (a === 'UDP') === (b === 'UDP');
}

function supportedKindsOf(listener: Listener): { kinds: SupportedKind[]; invalid: string[] } {
  const allowed = KINDS_BY_PROTOCOL[listener.protocol] ?? [];
  if (listener.allowedRoutes.kinds.length === 0) {
    return { kinds: allowed.map((kind) => ({ group: GATEWAY_API_GROUP, kind })), invalid: [] };
  }
  const kinds: SupportedKind[] = [];
  const invalid: string[] = [];
  for (const k of listener.allowedRoutes.kinds) {
    if (k.group === GATEWAY_API_GROUP && allowed.includes(k.kind)) kinds.push({ group: k.group, kind: k.kind });
    else invalid.push(`${k.group}/${k.kind}`);
  }
  return { kinds, invalid };
}

/** Conditions a listener gets on its own (protocol, kinds, namespaces). */
function ownConditions(listener: Listener, invalidKinds: string[]): GraphCondition[] {
  if (!SUPPORTED_PROTOCOLS.includes(listener.protocol)) {
    return listenerConditions.unsupportedProtocol(`Protocol "${listener.protocol}" is not supported, use one of: ${SUPPORTED_PROTOCOLS.join(', ')}`);
  }
  if (invalidKinds.length > 0) {
    return listenerConditions.invalidRouteKinds(`allowedRoutes.kinds: unsupported route kind(s) ${invalidKinds.join(', ')}; a ${listener.protocol} listener supports ${(KINDS_BY_PROTOCOL[listener.protocol] ?? []).join(', ')}`);
  }
  return [];
}

/** Protocol and hostname conflicts between listeners of one Gateway sharing a port. */
function conflictConditions(listeners: Listener[]): Map<string, GraphCondition[]> {
  const out = new Map<string, GraphCondition[]>();
  for (const l of listeners) {
    const samePort = listeners.filter((o) => o !== l && o.port === l.port);
    const otherProtocol = samePort.find((o) => protocolsClash(o.protocol, l.protocol));
    if (otherProtocol) {
      out.set(l.name, listenerConditions.protocolConflict(`Multiple listeners for port ${l.port} with different protocols (${l.protocol}, ${otherProtocol.protocol})`));
      continue;
    }
    const sameHost = samePort.find((o) => o.protocol === l.protocol && (o.hostname ?? '') === (l.hostname ?? ''));
    if (sameHost) {
      out.set(l.name, listenerConditions.hostnameConflict(`Listeners ${l.name} and ${sameHost.name} on port ${l.port} have the same hostname "${l.hostname ?? ''}"`));
    }
  }
  return out;
}

/**
 * One listener, validated. `listenerSet` is set for a listener a ListenerSet adds to `gateway`:
 * its certificate references start from the ListenerSet's namespace; the Gateway's frontend
 * TLS validation of the port still applies (it is the Gateway's port).
 */
export function buildListener(
  gateway: Gateway,
  listener: Listener,
  conflicts: Map<string, GraphCondition[]>,
  certificates?: CertificateIndex,
  ca?: CAIndex,
  listenerSet?: { namespace: string; name: string },
  unavailablePorts?: readonly UnavailablePort[],
): ListenerNode {
  const owner: ListenerOwner = listenerSet ? { kind: 'ListenerSet', namespace: listenerSet.namespace } : { kind: 'Gateway', namespace: gateway.metadata.namespace };
  const { kinds, invalid } = supportedKindsOf(listener);
  let own = ownConditions(listener, invalid);
  let tls: ListenerCertificate[] | undefined;
  let clientValidation: ClientValidation | undefined;
  let partial: GraphCondition[] = [];
  if (own.length === 0 && (listener.protocol === 'HTTPS' || (listener.protocol === 'TLS' && listener.tls?.mode !== 'Passthrough'))) {
    const resolved = (certificates ?? new CertificateIndex({ referenceGrants: [] })).resolve(owner, listener);
    if ('problem' in resolved) own = resolved.problem;
    else tls = resolved.certificates;
  }
  if (own.length === 0 && gateway.spec.tls?.frontend) {
    const v = frontendValidation(gateway, listener, ca ?? new CAIndex({ referenceGrants: [] }));
    if (v.validation) clientValidation = v.validation;
    if (v.problem && !v.validation) own = v.problem;
    else if (v.problem) partial = v.problem;
  }
  // Last: what the listener itself gets wrong is what its user can fix.
  if (own.length === 0) own = portConditions(gateway, listener, unavailablePorts);
  const conflict = conflicts.get(listener.name) ?? [];
  const problems = own.length > 0 ? own : conflict;
  const conditions = mergeConditions(
    [listenerConditions.accepted(), listenerConditions.resolvedRefs(), listenerConditions.noConflicts()],
    // conflicts are reported even when the listener has an own problem, so users see both
    own.length > 0 && conflict.length > 0 ? [...own, ...conflict.filter((c) => c.type === 'Conflicted')] : [...problems, ...partial],
  );
  return {
    gateway: { namespace: gateway.metadata.namespace, name: gateway.metadata.name },
    ...(listenerSet ? { listenerSet: { namespace: listenerSet.namespace, name: listenerSet.name } } : {}),
    name: listener.name,
    port: listener.port,
    protocol: listener.protocol,
    hostname: listener.hostname,
    valid: problems.length === 0,
    routes: [],
    attachedRoutes: 0,
    supportedKinds: kinds,
    allowedNamespaces: listener.allowedRoutes.namespaces.from,
    ...(listener.allowedRoutes.namespaces.selector ? { namespaceSelector: listener.allowedRoutes.namespaces.selector } : {}),
    attachable: SUPPORTED_PROTOCOLS.includes(listener.protocol) && kinds.length > 0,
    conditions,
    ...(tls ? { certificates: tls } : {}),
    ...(clientValidation ? { clientValidation } : {}),
    ...(listener.protocol === 'TLS' ? { tlsMode: listener.tls?.mode ?? 'Terminate' } : {}),
  };
}

/** A Gateway of one of our classes, with its listeners validated. */
export function buildGateway(gateway: Gateway, certificates?: CertificateIndex, ca?: CAIndex, unavailablePorts?: readonly UnavailablePort[]): GatewayNode {
  const conflicts = conflictConditions(gateway.spec.listeners);
  const listeners = gateway.spec.listeners.map((l) => buildListener(gateway, l, conflicts, certificates, ca, undefined, unavailablePorts));
  const node: GatewayNode = {
    namespace: gateway.metadata.namespace,
    name: gateway.metadata.name,
    generation: gateway.metadata.generation,
    className: gateway.spec.gatewayClassName,
    accepted: true,
    listeners,
    requestedAddresses: gateway.spec.addresses.map((a) => a.value),
    conditions: [gatewayConditions.accepted()],
  };
  const badAddress = gateway.spec.addresses.find((a) => a.type !== 'IPAddress');
  if (badAddress) {
    node.accepted = false;
    node.conditions = gatewayConditions.unsupportedAddress(`spec.addresses: address type "${badAddress.type}" is not supported, only IPAddress`);
  } else if (listeners.every((l) => !l.valid)) {
    node.accepted = false;
    node.conditions = gatewayConditions.noValidListeners();
  } else if (listeners.some((l) => !l.valid)) {
    node.conditions = [gatewayConditions.acceptedSomeListenersInvalid()];
  }
  if (gateway.spec.tls) {
    const client = backendClientCertificate(gateway, certificates ?? new CertificateIndex({ referenceGrants: [] }));
    if (client.certificate) node.backendClientCertificate = client.certificate;
    node.conditions = [...node.conditions, ...client.conditions, ...insecureFallbackCondition(gateway)];
  }
  return node;
}
