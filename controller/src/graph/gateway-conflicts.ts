/**
 * Listeners of different Gateways on one port, when the Gateways share one nginx and one
 * address (standalone mode). The Gateway API lets an implementation serve compatible listeners
 * of several Gateways together (same protocol, distinct hostnames) and says a listener it cannot
 * serve that way is Conflicted ("its network port should not be configured"). So, port by port,
 * the older Gateway (creationTimestamp, then namespace/name) keeps its listener; a newer
 * Gateway's listener with another protocol (ProtocolConflict) or the same hostname
 * (HostnameConflict, an absent hostname included) is Conflicted, not Accepted, not served. The
 * message names the listener it lost to. Compatible listeners keep being served together, with
 * the most specific hostname winning as inside one Gateway.
 */
import { gatewayConditions, listenerConditions, mergeConditions } from '../conditions';
import { protocolsClash } from './gateways';
import type { GatewayNode, ListenerNode } from './types';

export interface DatedGateway {
  node: GatewayNode;
  creationTimestamp: string;
}

function older(a: DatedGateway, b: DatedGateway): number {
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp < b.creationTimestamp ? -1 : 1;
  const ka = `${a.node.namespace}/${a.node.name}`;
  const kb = `${b.node.namespace}/${b.node.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Marks the losing listeners (in place) and re-decides their Gateways' Accepted condition. */
export function resolveGatewayConflicts(gateways: DatedGateway[]): void {
  if (gateways.length < 2) return;
  const claimed = new Map<number, { listener: ListenerNode; gateway: GatewayNode }[]>();
  for (const { node } of [...gateways].sort(older)) {
    let changed = false;
    for (const l of node.listeners) {
      // An invalid listener is still told about a conflict (users see both); only valid ones claim a port.
      const earlier = claimed.get(l.port) ?? [];
      const protocol = earlier.find((o) => protocolsClash(o.listener.protocol, l.protocol));
      const host = earlier.find((o) => o.listener.protocol === l.protocol && (o.listener.hostname ?? '') === (l.hostname ?? ''));
      const other = protocol ?? host;
      if (other) {
        const who = `listener ${other.listener.name} of Gateway ${other.gateway.namespace}/${other.gateway.name}`;
        const problem = protocol
          ? listenerConditions.protocolConflict(`Port ${l.port} is served with protocol ${other.listener.protocol} by ${who}, an older Gateway on the same address`)
          : listenerConditions.hostnameConflict(`Port ${l.port} and hostname "${l.hostname ?? ''}" are served by ${who}, an older Gateway on the same address`);
        l.conditions = mergeConditions(l.conditions, l.valid ? problem : problem.filter((c) => c.type === 'Conflicted'));
        changed ||= l.valid;
        l.valid = false;
        continue;
      }
      if (!l.valid || !node.accepted) continue;
      earlier.push({ listener: l, gateway: node });
      claimed.set(l.port, earlier);
    }
    if (!changed || !node.accepted) continue;
    // A ListenerSet's listeners do not decide whether the Gateway itself is accepted.
    if (node.listeners.every((l) => !l.valid || l.listenerSet)) {
      node.accepted = false;
      node.conditions = gatewayConditions.noValidListeners();
    } else node.conditions = mergeConditions(node.conditions, [gatewayConditions.acceptedSomeListenersInvalid()]);
  }
}
