/**
 * HTTPRoutes and GRPCRoutes on one listener are never merged (GRPCRoute spec): when a route of
 * one kind and a route of the other attach to the same listener with intersecting hostnames,
 * exactly one is accepted there, the oldest (then the first by namespace/name); the other gets
 * Accepted False on that parent unless another listener of it still accepts it.
 *
 * And what an older nginx cannot do: before 1.25.1 a plaintext port is HTTP/1.1 or h2c, not
 * both, so GRPCRoutes are served only on ports that carry no HTTPRoute; elsewhere the listener
 * says so (Programmed False) instead of answering HTTP/1.1 clients with HTTP/2 frames.
 */
import { cond } from '../conditions';
import { hostnamesIntersect } from './hostnames';
import { routeOrder } from './isolation';
import type { Attachment } from './routes';
import type { GatewayNode, HTTPRouteNode, NginxCapabilities } from './types';

const kindOf = (r: HTTPRouteNode) => r.kind ?? 'HTTPRoute';

function overlap(a: string[], b: string[]): boolean {
  if (a.length === 0 || b.length === 0) return true;
  return a.some((x) => b.some((y) => hostnamesIntersect(x, y) || hostnamesIntersect(y, x)));
}

/** The attachments that survive; losing routes' parents are updated in place. */
export function separateRouteKinds(attachments: Attachment[]): Attachment[] {
  const byListener = new Map<Attachment['listener'], Attachment[]>();
  for (const a of attachments) {
    const list = byListener.get(a.listener);
    if (list) list.push(a);
    else byListener.set(a.listener, [a]);
  }
  const lost = new Set<Attachment>();
  for (const list of byListener.values()) {
    if (!list.some((a) => kindOf(a.route) === 'GRPCRoute') || !list.some((a) => kindOf(a.route) === 'HTTPRoute')) continue;
    const ordered = [...list].sort((x, y) => routeOrder(x.route, y.route));
    const kept: Attachment[] = [];
    for (const a of ordered) {
      const winner = kept.find((k) => kindOf(k.route) !== kindOf(a.route) && overlap(k.hostnames, a.hostnames));
      if (winner) {
        lost.add(a);
        a.conflict = `${kindOf(winner.route)} ${winner.route.namespace}/${winner.route.name} (older, or first by name) already serves an intersecting hostname on listener ${a.listener.name}; HTTPRoutes and GRPCRoutes are not merged`;
      } else kept.push(a);
    }
  }
  if (lost.size === 0) return attachments;
  const kept = attachments.filter((a) => !lost.has(a));
  for (const a of lost) {
    const gw = a.listener.gateway;
    const set = a.listener.listenerSet;
    for (const parent of a.route.parents) {
      if (!parent.accepted || parent.gateway?.namespace !== gw.namespace || parent.gateway.name !== gw.name) continue;
      // Listener names are unique within a Gateway's own list and within each ListenerSet, not
      // across them: only the parentRef that reached this very listener loses it.
      const viaSet = parent.ref.kind === 'ListenerSet';
      if (set ? !viaSet || parent.ref.namespace !== set.namespace || parent.ref.name !== set.name : viaSet) continue;
      parent.listeners = parent.listeners.filter((n) => n !== a.listener.name || kept.some((k) => k.route === a.route && k.listener === a.listener));
      if (parent.listeners.length > 0) continue;
      parent.accepted = false;
      parent.conditions = parent.conditions.map((c) => (c.type === 'Accepted' ? cond('Accepted', 'False', 'HostnameConflict', a.conflict!) : c));
    }
  }
  return kept;
}

/** Old nginx: keep GRPCRoutes off ports that also carry HTTPRoutes, and say so. */
export function planH2cPorts(gateways: GatewayNode[], nginx: { http2On: boolean; version?: string }): NginxCapabilities {
  if (nginx.http2On) return { http2On: true, ...(nginx.version ? { version: nginx.version } : {}), h2cPorts: [] };
  const kinds = new Map<number, Set<string>>();
  for (const gw of gateways) {
    for (const l of gw.listeners) {
      if (!l.valid) continue;
      let set = kinds.get(l.port);
      if (!set) kinds.set(l.port, (set = new Set()));
      for (const r of l.routes) set.add(kindOf(r.route));
    }
  }
  const h2cPorts: number[] = [];
  for (const [port, set] of kinds) if (set.has('GRPCRoute') && !set.has('HTTPRoute')) h2cPorts.push(port);
  for (const gw of gateways) {
    for (const l of gw.listeners) {
      if (!l.valid || !kinds.get(l.port)?.has('HTTPRoute')) continue;
      const grpc = l.routes.filter((r) => kindOf(r.route) === 'GRPCRoute');
      if (grpc.length === 0) continue;
      l.routes = l.routes.filter((r) => kindOf(r.route) !== 'GRPCRoute');
      l.conditions = [
        ...l.conditions.filter((c) => c.type !== 'Programmed'),
        cond(
          'Programmed',
          'False',
          'Invalid',
          `nginx ${nginx.version ?? '(older than 1.25.1)'} cannot serve HTTP/1.1 and gRPC (h2c) on one plaintext port: the GRPCRoutes of this listener (${grpc.map((r) => `${r.route.namespace}/${r.route.name}`).join(', ')}) are not served on port ${l.port}, its HTTPRoutes are; nginx >= 1.25.1 serves both`,
        ),
      ];
    }
  }
  return { http2On: false, ...(nginx.version ? { version: nginx.version } : {}), h2cPorts: h2cPorts.sort((a, b) => a - b) };
}
