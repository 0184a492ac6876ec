/**
 * ListenerSets (GEP-1713): listeners added to a Gateway by another object, possibly of another
 * namespace. The Gateway decides who may (spec.allowedListeners; absent or None: no one). An
 * allowed ListenerSet's listeners are validated as the Gateway's own are and then merged into
 * the Gateway's listener list, so the model serves them like any other listener; each keeps a
 * reference to its ListenerSet, which reports their status.
 *
 * Conflicts are settled by precedence: the Gateway's own listeners first, then ListenerSets from
 * the oldest (creationTimestamp, then namespace/name), and inside a ListenerSet its list order. A listener that shares a port with an
 * earlier one and clashes in protocol, or has the same protocol and hostname, is Conflicted and
 * not served; a ListenerSet left without a valid listener is not accepted.
 */
import { GATEWAY_API_GROUP, type Gateway, type ListenerSet } from '../resources/types';
import { listenerConditions, listenerSetConditions, mergeConditions } from '../conditions';
import { buildListener, protocolsClash } from './gateways';
import { selectorMatches } from './selectors';
import type { CertificateIndex } from './tls';
import type { CAIndex } from './ca-certificates';
import type { GatewayNode, GraphCondition, ListenerNode, ListenerSetNode, UnavailablePort } from './types';

const NO_CONFLICTS = new Map<string, GraphCondition[]>();

export interface ListenerSetParent {
  gateway: Gateway;
  node: GatewayNode;
}

function precedence(a: ListenerSet, b: ListenerSet): number {
  if (a.metadata.creationTimestamp !== b.metadata.creationTimestamp) return a.metadata.creationTimestamp < b.metadata.creationTimestamp ? -1 : 1;
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Why the Gateway refuses the ListenerSet, or undefined when it allows it. */
function refusal(gateway: Gateway, ls: ListenerSet, namespaceLabels: Map<string, Record<string, string>>): string | undefined {
  const gwName = `${gateway.metadata.namespace}/${gateway.metadata.name}`;
  const allowed = gateway.spec.allowedListeners?.namespaces ?? { from: 'None' as const };
  const ns = ls.metadata.namespace;
  switch (allowed.from) {
    case 'All':
      return undefined;
    case 'Same':
      return ns === gateway.metadata.namespace ? undefined : `Gateway ${gwName} allows ListenerSets from its own namespace only (spec.allowedListeners)`;
    case 'Selector': {
      const labels = { ...namespaceLabels.get(ns), 'kubernetes.io/metadata.name': ns };
      return allowed.selector && selectorMatches(allowed.selector, labels) ? undefined : `Gateway ${gwName} allows ListenerSets from namespaces matching its spec.allowedListeners selector only`;
    }
    default:
      return `Gateway ${gwName} does not allow ListenerSets (spec.allowedListeners)`;
  }
}

/** The conflict an earlier listener of the Gateway (its own or an older ListenerSet's) causes `l`. */
function conflictWithEarlier(l: ListenerNode, earlier: ListenerNode[]): GraphCondition[] | undefined {
  const samePort = earlier.filter((o) => o.port === l.port);
  const protocol = samePort.find((o) => protocolsClash(o.protocol, l.protocol));
  if (protocol) return listenerConditions.protocolConflict(`Port ${l.port} is served with protocol ${protocol.protocol} by ${describe(protocol)}, which takes precedence`);
  const host = samePort.find((o) => o.protocol === l.protocol && (o.hostname ?? '') === (l.hostname ?? ''));
  if (host) return listenerConditions.hostnameConflict(`Port ${l.port} and hostname "${l.hostname ?? ''}" are served by ${describe(host)}, which takes precedence`);
  return undefined;
}

function describe(l: ListenerNode): string {
  return l.listenerSet ? `listener ${l.name} of ListenerSet ${l.listenerSet.namespace}/${l.listenerSet.name}` : `listener ${l.name} of the Gateway`;
}

/**
 * Decides every ListenerSet whose parentRef names one of `parents` ("ns/name" -> Gateway), and
 * appends the listeners of the accepted ones to their Gateway node (in place). ListenerSets
 * naming another controller's Gateway, or one that does not exist, are not ours to report on.
 */
export function attachListenerSets(
  listenerSets: ListenerSet[],
  parents: Map<string, ListenerSetParent>,
  namespaceLabels: Map<string, Record<string, string>>,
  certificates?: CertificateIndex,
  ca?: CAIndex,
  unavailablePorts?: readonly UnavailablePort[],
): ListenerSetNode[] {
  const out: ListenerSetNode[] = [];
  const earlierByGateway = new Map<GatewayNode, ListenerNode[]>();
  for (const ls of [...listenerSets].sort(precedence)) {
    const ref = ls.spec.parentRef;
    if (ref.group !== GATEWAY_API_GROUP || ref.kind !== 'Gateway') continue;
    const parent = parents.get(`${ref.namespace ?? ls.metadata.namespace}/${ref.name}`);
    if (!parent) continue;
    const { gateway, node: gw } = parent;
    const lsRef = { namespace: ls.metadata.namespace, name: ls.metadata.name };
    const node: ListenerSetNode = { ...lsRef, generation: ls.metadata.generation, gateway: { namespace: gw.namespace, name: gw.name }, accepted: false, listeners: [], conditions: [] };
    out.push(node);
    gw.attachedListenerSets ??= 0;
    const refused = refusal(gateway, ls, namespaceLabels);
    if (refused) {
      node.conditions = listenerSetConditions.notAllowed(refused);
      continue;
    }
    // Conflicts are settled below by precedence, so no listener is built as conflicted here.
    node.listeners = ls.spec.listeners.map((l) => buildListener(gateway, l, NO_CONFLICTS, certificates, ca, lsRef, unavailablePorts));
    if (!gw.accepted) {
      node.conditions = listenerSetConditions.parentNotAccepted(`Gateway ${gw.namespace}/${gw.name} is not accepted`);
      continue;
    }
    let earlier = earlierByGateway.get(gw);
    if (!earlier) earlierByGateway.set(gw, (earlier = [...gw.listeners]));
    const claimed = [...earlier];
    for (const l of node.listeners) {
      const problem = conflictWithEarlier(l, claimed);
      if (!problem) {
        // Within the ListenerSet, a listener earlier in the list takes precedence.
        if (l.valid) claimed.push(l);
        continue;
      }
      // An invalid listener is still told about the conflict, as a Gateway's own is.
      l.conditions = mergeConditions(l.conditions, l.valid ? problem : problem.filter((c) => c.type === 'Conflicted'));
      l.valid = false;
    }
    if (!decide(node, gw)) continue;
    gw.listeners.push(...node.listeners);
    earlier.push(...node.listeners.filter((l) => l.valid));
    gw.attachedListenerSets++;
  }
  return out;
}

/**
 * The one rule for an allowed ListenerSet's Accepted condition: its Gateway is accepted and at
 * least one of its listeners is valid. Sets `node.accepted` and its conditions.
 */
function decide(node: ListenerSetNode, gw: GatewayNode): boolean {
  if (!gw.accepted) node.conditions = listenerSetConditions.parentNotAccepted(`Gateway ${gw.namespace}/${gw.name} is not accepted`);
  else if (node.listeners.every((l) => !l.valid)) node.conditions = listenerSetConditions.noValidListeners();
  else node.conditions = [node.listeners.some((l) => !l.valid) ? listenerSetConditions.acceptedSomeListenersInvalid() : listenerSetConditions.accepted()];
  node.accepted = gw.accepted && node.listeners.some((l) => l.valid);
  return node.accepted;
}

/**
 * Decides accepted ListenerSets again after their listeners or their Gateway lost conflicts to
 * other Gateways on the same address (standalone mode, gateway-conflicts.ts). One no longer
 * accepted stops counting in its Gateway's attachedListenerSets; its listeners, all invalid or
 * on a Gateway that is not served, are not served.
 */
export function resettleListenerSets(nodes: ListenerSetNode[], gateways: Map<string, GatewayNode>): void {
  for (const node of nodes) {
    if (!node.accepted) continue;
    const gw = gateways.get(`${node.gateway.namespace}/${node.gateway.name}`);
    if (!gw || decide(node, gw)) continue;
    gw.attachedListenerSets = Math.max(0, (gw.attachedListenerSets ?? 1) - 1);
  }
}
