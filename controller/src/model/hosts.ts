/**
 * Which routes serve which (port, hostname) server.
 *
 * nginx picks a server by name the way the Gateway API picks a listener and a route hostname:
 * exact name first, then the longest leading wildcard (`*.example.com` matches one or more
 * labels and not `example.com` itself, as in the Gateway API), then the default server; the
 * port in a Host header is ignored. So there is one server per hostname any listener or route
 * names on a port, plus a catch-all default server. A server takes its routes from the most
 * specific listener(s) matching its name, and from those, every route whose effective
 * hostnames cover the name (the hostname's specificity is the first precedence key).
 */
import { isStreamProtocol } from '../graph/gateways';
import type { AttachedRoute, GatewayNode, ListenerNode } from '../graph/types';
import type { ObjectKey } from './types';
import type { ListenerCertificate } from '../graph/tls';
import type { ClientValidation } from '../graph/gateway-tls';

/** Does hostname pattern `h` (exact or `*.` wildcard) cover server name `n` (exact or wildcard)? */
export function covers(h: string, n: string): boolean {
  if (h === n) return true;
  if (!h.startsWith('*.')) return false;
  const suffix = h.slice(1); // ".example.com"
  return n.endsWith(suffix) && n.length > suffix.length;
}

/** The hostname patterns that can cover server name `n`: itself and its `*.` suffixes. */
export function coveringPatterns(n: string): string[] {
  const out = [n];
  const labels = n.split('.');
  for (let i = 1; i < labels.length; i++) out.push('*.' + labels.slice(i).join('.'));
  return out;
}

/** Precedence of a matching hostname: non-wildcard characters, then characters. */
export type HostKey = [number, number];

export function hostKey(h: string | undefined): HostKey {
  if (!h) return [0, 0];
  return [h.startsWith('*.') ? 0 : h.length, h.length];
}

export interface HostRoute {
  attached: AttachedRoute;
  hostKey: HostKey;
}

export interface ServerPlan {
  port: number;
  /** The port's listeners are HTTPS (listeners of one port share a protocol, or conflict). */
  https: boolean;
  /** HTTPS: the certificates of the listener that serves this name (none: no such listener). */
  certificates?: ListenerCertificate[];
  /** HTTPS: client certificate validation of the listener that serves this name. */
  clientValidation?: ClientValidation;
  /** HTTPS: the listener(s) serving this name, as the port's SNI map names them (421 on mismatch). */
  listenerKey?: string;
  /** undefined: the catch-all default server. */
  name?: string;
  /** Set by buildModel: the client certificate file its Gateway presents to TLS backends. */
  backendCertificate?: string;
  gateways: ObjectKey[];
  routes: HostRoute[];
}

/** The best listener group for a server name: exact > longest wildcard > no hostname. */
function bestListeners(listeners: ListenerNode[], name: string | undefined): ListenerNode[] {
  const matching = listeners.filter((l) => (name === undefined ? !l.hostname : !l.hostname || covers(l.hostname, name)));
  let best: ListenerNode[] = [];
  let bestKey: HostKey = [-1, -1];
  for (const l of matching) {
    const k = hostKey(l.hostname);
    const cmp = k[0] - bestKey[0] || k[1] - bestKey[1];
    if (cmp > 0) {
      best = [l];
      bestKey = k;
    } else if (cmp === 0) best.push(l);
  }
  return best;
}

function routeFor(attached: AttachedRoute, name: string | undefined): HostRoute | undefined {
  if (attached.hostnames.length === 0) return { attached, hostKey: [0, 0] };
  if (name === undefined) return undefined;
  let best: HostKey | undefined;
  for (const h of attached.hostnames) {
    if (!covers(h, name)) continue;
    const k = hostKey(h);
    if (!best || k[0] > best[0] || (k[0] === best[0] && k[1] > best[1])) best = k;
  }
  return best && { attached, hostKey: best };
}

function uniqueGateways(listeners: ListenerNode[]): ObjectKey[] {
  const seen = new Map<string, ObjectKey>();
  for (const l of listeners) seen.set(`${l.gateway.namespace}/${l.gateway.name}`, { ...l.gateway });
  return [...seen.values()];
}

/** Names a group of listeners (those serving one name) for the SNI check. */
export function listenerKey(group: ListenerNode[]): string {
  return group.map((l) => `${l.gateway.namespace}/${l.gateway.name}/${l.listenerSet ? `${l.listenerSet.namespace}/${l.listenerSet.name}/` : ''}${l.name}`).sort().join(',');
}

/**
 * HTTPS ports: which listener group a TLS server name (SNI) selects, as an nginx `map ...
 * { hostnames; }` (exact names before the longest wildcard, as listener selection does). A
 * request whose Host selects another group gets 421 Misdirected Request (Gateway API), e.g. a
 * client reusing a connection made for another hostname's certificate.
 */
export function sniListenerMaps(gateways: GatewayNode[]): { port: number; entries: { name: string; key: string }[]; default: string }[] {
  const byPort = new Map<number, ListenerNode[]>();
  for (const g of gateways) {
    if (!g.accepted) continue;
    for (const l of g.listeners) if (l.valid && l.protocol === 'HTTPS') byPort.set(l.port, [...(byPort.get(l.port) ?? []), l]);
  }
  return [...byPort.keys()].sort((a, b) => a - b).map((port) => {
    const listeners = byPort.get(port)!;
    const names = [...new Set(listeners.filter((l) => l.hostname).map((l) => l.hostname!))].sort();
    return { port, entries: names.map((name) => ({ name, key: listenerKey(listeners.filter((l) => l.hostname === name)) })), default: listenerKey(bestListeners(listeners, undefined)) };
  });
}

/** Servers to render, port by port, the default server of each port first. */
export function planServers(gateways: GatewayNode[]): ServerPlan[] {
  const byPort = new Map<number, ListenerNode[]>();
  for (const g of gateways) {
    if (!g.accepted) continue;
    for (const l of g.listeners) {
      // TLS, TCP and UDP listeners are served by the stream context (model/streams.ts).
      if (!l.valid || isStreamProtocol(l.protocol)) continue;
      byPort.set(l.port, [...(byPort.get(l.port) ?? []), l]);
    }
  }
  const plans: ServerPlan[] = [];
  for (const port of [...byPort.keys()].sort((a, b) => a - b)) {
    const listeners = byPort.get(port)!;
    const names = new Set<string>();
    for (const l of listeners) {
      if (l.hostname) names.add(l.hostname);
      for (const r of l.routes) r.hostnames.forEach((h) => names.add(h));
    }
    // Per listener: its routes by hostname, so a server finds the routes covering its name by
    // looking up the name and its wildcard suffixes instead of scanning every route.
    const index = new Map<ListenerNode, Map<string, AttachedRoute[]>>();
    for (const l of listeners) {
      const byHost = new Map<string, AttachedRoute[]>();
      for (const r of l.routes) {
        for (const h of r.hostnames.length ? r.hostnames : ['']) {
          const list = byHost.get(h);
          if (list) list.push(r);
          else byHost.set(h, [r]);
        }
      }
      index.set(l, byHost);
    }
    for (const name of [undefined, ...[...names].sort()]) {
      const group = bestListeners(listeners, name);
      const keys = name === undefined ? [''] : ['', ...coveringPatterns(name)];
      const routes: HostRoute[] = [];
      for (const l of group) {
        const seen = new Set<AttachedRoute>();
        for (const k of keys) {
          for (const r of index.get(l)!.get(k) ?? []) {
            if (seen.has(r)) continue;
            seen.add(r);
            const hr = routeFor(r, name);
            if (hr) routes.push(hr);
          }
        }
      }
      const https = listeners.some((l) => l.protocol === 'HTTPS');
      const served = https ? group.find((l) => l.certificates) : undefined;
      const certificates = served?.certificates;
      const clientValidation = served?.clientValidation;
      plans.push({ port, https, ...(certificates ? { certificates } : {}), ...(clientValidation ? { clientValidation } : {}), ...(https ? { listenerKey: listenerKey(group) } : {}), name, gateways: uniqueGateways(name === undefined ? listeners : group), routes });
    }
  }
  return plans;
}
