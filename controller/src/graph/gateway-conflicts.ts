/**
 * Listeners of different Gateways on one port, when the Gateways share one nginx and one
 * address (standalone mode). The Gateway API lets an implementation serve compatible listeners
 * of several Gateways together (same protocol, distinct hostnames) and says a listener it cannot
 * serve that way is Conflicted ("its network port should not be configured"). So, port by port,
 * the listener served first keeps its port; a later listener with another protocol
 * (ProtocolConflict) or the same hostname (HostnameConflict, an absent hostname included) is
 * Conflicted, not Accepted, not served. The message names the listener it lost to. Compatible
 * listeners keep being served together, with the most specific hostname winning as inside one
 * Gateway.
 *
 * "Served first" is read from creation times, as the Gateway API settles every conflict: a
 * Gateway's own listeners date from the Gateway, a ListenerSet's from the later of the
 * ListenerSet and its Gateway (when both existed). So a ListenerSet created after another
 * Gateway took a port loses that port, rather than its older Gateway taking the port away from
 * the Gateway already serving it; ties go to the older Gateway, its own listeners before its
 * ListenerSets', then list order. A listener added to an existing Gateway's spec carries its
 * Gateway's date: the API dates objects, not list entries.
 */
import { gatewayConditions, listenerConditions, mergeConditions } from '../conditions';
import { protocolsClash } from './gateways';
import type { GatewayNode, ListenerNode } from './types';

export interface DatedGateway {
  node: GatewayNode;
  creationTimestamp: string;
}

interface DatedListener {
  listener: ListenerNode;
  gateway: DatedGateway;
  since: string;
  /** Position in the Gateway node's listeners: its own first, then its ListenerSets' by precedence. */
  index: number;
}

function older(a: DatedGateway, b: DatedGateway): number {
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp < b.creationTimestamp ? -1 : 1;
  const ka = `${a.node.namespace}/${a.node.name}`;
  const kb = `${b.node.namespace}/${b.node.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

function servedFirst(a: DatedListener, b: DatedListener): number {
  if (a.since !== b.since) return a.since < b.since ? -1 : 1;
  return a.gateway === b.gateway ? a.index - b.index : older(a.gateway, b.gateway);
}

/**
 * Marks the losing listeners (in place) and re-decides their Gateways' Accepted condition.
 * `listenerSetCreated` ("namespace/name" -> creationTimestamp) dates ListenerSet listeners; the
 * caller re-decides the ListenerSets themselves (listenersets.ts, resettleListenerSets).
 */
export function resolveGatewayConflicts(gateways: DatedGateway[], listenerSetCreated: Map<string, string> = new Map()): void {
  if (gateways.length < 2) return;
  const listeners: DatedListener[] = [];
  for (const gateway of gateways) {
    gateway.node.listeners.forEach((listener, index) => {
      const set = listener.listenerSet ? listenerSetCreated.get(`${listener.listenerSet.namespace}/${listener.listenerSet.name}`) : undefined;
      const since = set !== undefined && set > gateway.creationTimestamp ? set : gateway.creationTimestamp;
      listeners.push({ listener, gateway, since, index });
    });
  }
  const claimed = new Map<number, { listener: ListenerNode; gateway: GatewayNode }[]>();
  const lostOwn = new Set<GatewayNode>();
  const settled = new Set<GatewayNode>();
  // A Gateway's acceptance depends on its own listeners only, all of which come before its
  // ListenerSets' in this order: it is settled before a ListenerSet listener of it may claim.
  const settle = (node: GatewayNode) => {
    if (settled.has(node)) return;
    settled.add(node);
    if (!lostOwn.has(node) || !node.accepted) return;
    if (node.listeners.every((l) => !l.valid || l.listenerSet)) {
      node.accepted = false;
      node.conditions = gatewayConditions.noValidListeners();
    } else node.conditions = mergeConditions(node.conditions, [gatewayConditions.acceptedSomeListenersInvalid()]);
  };
  for (const { listener: l, gateway } of listeners.sort(servedFirst)) {
    const node = gateway.node;
    if (l.listenerSet) settle(node);
    // An invalid listener is still told about a conflict (users see both); only valid ones claim a port.
    const earlier = claimed.get(l.port) ?? [];
    const protocol = earlier.find((o) => protocolsClash(o.listener.protocol, l.protocol));
    const host = earlier.find((o) => o.listener.protocol === l.protocol && (o.listener.hostname ?? '') === (l.hostname ?? ''));
    const other = protocol ?? host;
    if (other) {
      const who = other.listener.listenerSet
        ? `listener ${other.listener.name} of ListenerSet ${other.listener.listenerSet.namespace}/${other.listener.listenerSet.name} (Gateway ${other.gateway.namespace}/${other.gateway.name})`
        : `listener ${other.listener.name} of Gateway ${other.gateway.namespace}/${other.gateway.name}`;
      const problem = protocol
        ? listenerConditions.protocolConflict(`Port ${l.port} is served with protocol ${other.listener.protocol} by ${who}, served earlier on the same address`)
        : listenerConditions.hostnameConflict(`Port ${l.port} and hostname "${l.hostname ?? ''}" are served by ${who}, served earlier on the same address`);
      l.conditions = mergeConditions(l.conditions, l.valid ? problem : problem.filter((c) => c.type === 'Conflicted'));
      if (l.valid && !l.listenerSet) lostOwn.add(node);
      l.valid = false;
      continue;
    }
    if (!l.valid || !node.accepted) continue;
    earlier.push({ listener: l, gateway: node });
    claimed.set(l.port, earlier);
  }
  for (const { node } of gateways) settle(node);
}
