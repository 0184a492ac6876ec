/**
 * TLS, TCP and UDP listeners -> nginx's stream context (whole connections, no HTTP).
 *
 * - A port whose TLS listeners are all Passthrough is one stream server that reads the
 *   client's TLS server name without terminating (`ssl_preread`) and proxies to what a
 *   `map ... { hostnames; }` of that name gives, the route's backends. Exact names come before
 *   wildcards, the longest wildcard first, as listener and route hostnames do; an unknown name
 *   or none gets "" and nginx closes the connection.
 * - A port whose TLS listeners are all Terminate has one stream server per route hostname
 *   (`server_name`, chosen by the SNI during the handshake, nginx >= 1.25.5) with its
 *   listener's certificates, proxying the plaintext; a default server refuses the handshake
 *   for other names.
 * - Both modes on one port (Mixed): the preread server's map sends a terminated name to an
 *   internal server on a unix socket in the run directory that terminates TLS and proxies. The
 *   workers must be able to reach that directory (they run as nginx's user).
 * - A TCP or UDP listener is a server on its port proxying to its oldest route's backends
 *   (a port carries one route of whole connections: nothing tells two apart).
 * - Several weighted backends: a `split_clients` per connection; a share whose backend is
 *   invalid or has no ready endpoint is "" (the connection is closed).
 *
 * - IPAccessPolicy on a TLS port: nginx checks the address before it reads the TLS server name,
 *   so the port has one set of lists. When several Gateways share the port (standalone) it is the
 *   first of them (by namespace/name) that has lists, PROXY protocol is expected on the whole
 *   port as soon as one of them asks for it (nginx's listen option is per port), and the client
 *   address is read as the first of them that sets `clientAddress` says, as on a shared HTTP server.
 *
 * Upstreams, maps, splits and sockets are named by a hash of their content, so a name stands
 * for one content in every build and unchanged parts render the same text.
 */
import { createHash } from 'crypto';
import { isIP } from 'net';
import { isStreamProtocol } from '../graph/gateways';
import type { ListenerCertificate } from '../graph/tls';
import type { AttachedRoute, BackendRef, GatewayNode, ListenerNode } from '../graph/types';
import { accessLines, gatewayKey, locationPolicies, type AccessLines, type EffectivePolicies } from '../policies';
import type { SplitClients } from './types';
import { splitBuckets } from './upstreams';

export interface StreamUpstream {
  name: string;
  servers: { address: string; port: number }[];
}

export interface StreamMap {
  /** Starts with "$". */
  variable: string;
  /**
   * TLS server name (exact or `*.` wildcard) -> proxy_pass value: `value` (an upstream, a
   * variable, or ""), or `socket`, an internal server's socket in the run directory.
   */
  entries: { name: string; value?: string; socket?: string }[];
}

export interface StreamServer {
  /** What the server is for (a comment in the config). */
  comment: string;
  /** A listener's port, or (internal TLS-terminating servers) the name of a socket in the run dir. */
  port?: number;
  socket?: string;
  udp?: boolean;
  /** Read the TLS server name of the connection before choosing where it goes. */
  preread?: boolean;
  /** `listen ... ssl`: the port terminates TLS (with `certificates`, or refusing the handshake). */
  ssl?: boolean;
  /** Virtual server names (TLS server names) of a terminating port; none: its default server. */
  serverNames?: string[];
  /** The default server of a terminating port: no certificate, the handshake is refused. */
  rejectHandshake?: boolean;
  /** Terminate TLS with these certificate files (relative to the config directory). */
  certificates?: string[];
  /** proxy_pass value: an upstream name or a variable; "" when nothing can take the connection. */
  target: string;
  /**
   * `proxy_half_close on`: a side that stops sending (FIN) only closes that direction, and the
   * other keeps flowing until it closes too, as with the backend direct. Plain byte streams only
   * (TCP, TLS passthrough); a terminated TLS side would need close_notify, not a bare FIN.
   */
  halfClose?: boolean;
  /** IPAccessPolicy: allow/deny lines; a refused client's connection is closed (UDP: its datagrams dropped). */
  access?: AccessLines;
  /**
   * IPAccessPolicy clientAddress ProxyProtocol of the server's Gateway (TCP ports): `listen ...
   * proxy_protocol`, and the header's address is the client's when the peer is in `trusted`.
   */
  proxyProtocol?: { trusted: string[] };
}

export interface StreamModel {
  upstreams: StreamUpstream[];
  splitClients: SplitClients[];
  maps: StreamMap[];
  servers: StreamServer[];
  /** Certificate files the internal TLS servers read (path -> PEM). */
  secretFiles: Record<string, string>;
}

/** nginx closes a connection whose proxy_pass evaluates to "" ("no host in upstream"). */
export const STREAM_REJECT = '';
/** A variable that is always "" (proxy_pass needs a variable to evaluate to nothing). */
export const STREAM_REJECT_VARIABLE = '$pcs_reject';

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/** Where a listener certificate is written, relative to the config directory (HTTPS and TLS listeners). */
export function certificateFile(c: ListenerCertificate): string {
  return `secrets/${c.id}.pem`;
}

class StreamBuilder {
  readonly upstreams = new Map<string, StreamUpstream>();
  readonly splits = new Map<string, SplitClients>();
  readonly maps: StreamMap[] = [];
  readonly servers: StreamServer[] = [];
  readonly internal = new Map<string, StreamServer>();
  readonly secretFiles: Record<string, string> = {};

  private backendValue(b: BackendRef): string {
    if (!b.valid) return STREAM_REJECT;
    const seen = new Set<string>();
    const servers: StreamUpstream['servers'] = [];
    for (const e of b.endpoints) {
      if (isIP(e.address) === 0 || !Number.isInteger(e.port) || e.port < 1 || e.port > 65535) continue;
      const key = `${e.address}:${e.port}`;
      if (seen.has(key)) continue;
      seen.add(key);
      servers.push({ address: e.address, port: e.port });
    }
    if (servers.length === 0) return STREAM_REJECT;
    servers.sort((x, y) => (x.address === y.address ? x.port - y.port : x.address < y.address ? -1 : 1));
    const name = `pcs_u_${digest(servers)}`;
    if (!this.upstreams.has(name)) this.upstreams.set(name, { name, servers });
    return name;
  }

  /** Where a route's connections go: an upstream, a split variable, or "" (closed). */
  routeTarget(route: AttachedRoute['route']): string {
    const shares: { weight: number; value: string }[] = [];
    for (const rule of route.rules) {
      if (!rule.valid) continue;
      for (const b of rule.backends) if (b.weight > 0) shares.push({ weight: b.weight, value: this.backendValue(b) });
    }
    if (shares.length === 0) return STREAM_REJECT;
    if (shares.every((s) => s.value === shares[0].value)) return shares[0].value;
    const buckets = splitBuckets(shares);
    const variable = `$pcs_s_${digest(buckets)}`;
    // Hashed per connection: the client's address and port, and the time, so that connections
    // from one client (a new source port each, or UDP datagrams of one socket over time) spread.
    if (!this.splits.has(variable)) this.splits.set(variable, { key: '$remote_addr$remote_port$msec', variable, buckets });
    return variable;
  }

  /** The unix socket (in the run directory) of the server that terminates TLS with these certificates for this target. */
  terminator(certificates: ListenerCertificate[], target: string, comment: string): string {
    const files = certificates.map(certificateFile);
    for (const c of certificates) this.secretFiles[certificateFile(c)] = c.pem;
    // Short: a unix socket path has at most 107 bytes, and the prefix comes before it.
    const socket = `pcs-${digest({ files, target }).slice(0, 12)}.sock`;
    if (!this.internal.has(socket)) this.internal.set(socket, { comment, socket, certificates: files, target });
    return socket;
  }
}

function streamListeners(gateways: GatewayNode[]): Map<string, ListenerNode[]> {
  const byPort = new Map<string, ListenerNode[]>();
  for (const g of gateways) {
    if (!g.accepted) continue;
    for (const l of g.listeners) {
      if (!l.valid || !isStreamProtocol(l.protocol)) continue;
      const key = `${l.protocol === 'UDP' ? 'udp' : 'tcp'}/${l.port}`;
      const list = byPort.get(key);
      if (list) list.push(l);
      else byPort.set(key, [l]);
    }
  }
  return byPort;
}

const routeName = (r: AttachedRoute) => `${r.route.kind} ${r.route.namespace}/${r.route.name}`;
const listenerName = (l: ListenerNode) => `${l.gateway.namespace}/${l.gateway.name}/${l.listenerSet ? `${l.listenerSet.namespace}/${l.listenerSet.name}/` : ''}${l.name}`;

/**
 * IPAccessPolicy on the server of a TCP or UDP port (one route per port): the route's lists on
 * its Gateway (its Gateway's when the route has none), and the Gateway's PROXY protocol.
 */
function streamPolicies(policies: EffectivePolicies | undefined, gateway: { namespace: string; name: string }, route: AttachedRoute, o: { udp?: boolean } = {}): Pick<StreamServer, 'access' | 'proxyProtocol'> {
  if (!policies) return {};
  const own = policies.gateways[gatewayKey(gateway.namespace, gateway.name)];
  const settings = locationPolicies(policies, gateway, { kind: route.route.kind ?? 'HTTPRoute', namespace: route.route.namespace, name: route.route.name });
  const out: Pick<StreamServer, 'access' | 'proxyProtocol'> = {};
  if (settings?.ipAccess) out.access = accessLines(settings.ipAccess);
  // A UDP datagram carries no PROXY protocol header.
  if (!o.udp && own?.clientAddress?.source === 'ProxyProtocol') out.proxyProtocol = { trusted: own.clientAddress.trustedCIDRs ?? [] };
  return out;
}

/**
 * IPAccessPolicy of a TLS port, whose address check runs before the server name is known: the
 * lists of the port's first Gateway that has any, PROXY protocol when any Gateway of the port
 * asks for it, with the trusted proxies of the first Gateway that sets `clientAddress` (none when
 * that one reads the connection or X-Forwarded-For, an HTTP header: the peer is the client).
 */
function tlsPortPolicies(policies: EffectivePolicies | undefined, listeners: ListenerNode[]): Pick<StreamServer, 'access' | 'proxyProtocol'> {
  if (!policies) return {};
  const seen = new Set<string>();
  const own: (EffectivePolicies['gateways'][string] | undefined)[] = [];
  for (const l of listeners) {
    const key = gatewayKey(l.gateway.namespace, l.gateway.name);
    if (seen.has(key)) continue;
    seen.add(key);
    own.push(policies.gateways[key]);
  }
  const out: Pick<StreamServer, 'access' | 'proxyProtocol'> = {};
  const lists = own.find((s) => s?.ipAccess)?.ipAccess;
  if (lists) out.access = accessLines(lists);
  if (own.some((s) => s?.clientAddress?.source === 'ProxyProtocol')) {
    const reader = own.find((s) => s?.clientAddress)?.clientAddress;
    out.proxyProtocol = { trusted: reader?.source === 'ProxyProtocol' ? (reader.trustedCIDRs ?? []) : [] };
  }
  return out;
}

/** The stream context for the graph's TLS, TCP and UDP listeners; undefined when there are none. */
export function buildStreams(gateways: GatewayNode[], policies?: EffectivePolicies): StreamModel | undefined {
  const byPort = streamListeners(gateways);
  if (byPort.size === 0) return undefined;
  const b = new StreamBuilder();
  const keys = [...byPort.keys()].sort((x, y) => Number(x.slice(4)) - Number(y.slice(4)) || (x < y ? -1 : 1));
  for (const key of keys) {
    const listeners = byPort.get(key)!;
    const port = Number(key.slice(4));
    if (listeners[0].protocol === 'TLS') {
      const mixed = listeners.some((l) => l.tlsMode === 'Passthrough') && listeners.some((l) => l.tlsMode !== 'Passthrough');
      const comment = `TLS port ${port}: ${listeners.map(listenerName).join(', ')}`;
      const portPolicies = tlsPortPolicies(policies, listeners);
      // The virtual servers of a terminating port: the SNI picks one after the address check ran
      // with the port's default server, which carries the lists.
      const { access: _lists, ...virtualPolicies } = portPolicies;
      const entries: StreamMap['entries'] = [];
      const terminated: StreamServer[] = [];
      const taken = new Set<string>();
      for (const l of listeners) {
        for (const r of l.routes) {
          for (const name of r.hostnames) {
            // The oldest route keeps a name another route of the same port also claims.
            if (taken.has(name)) continue;
            taken.add(name);
            const target = b.routeTarget(r.route);
            if (l.tlsMode === 'Passthrough' || !l.certificates) entries.push({ name, value: l.certificates || l.tlsMode === 'Passthrough' ? target : STREAM_REJECT });
            else if (mixed) entries.push({ name, socket: b.terminator(l.certificates, target, `${routeName(r)} on ${listenerName(l)} (TLS terminated)`) });
            else {
              for (const c of l.certificates) b.secretFiles[certificateFile(c)] = c.pem;
              terminated.push({ comment: `${routeName(r)} on ${listenerName(l)}`, port, ssl: true, serverNames: [name], certificates: l.certificates.map(certificateFile), target, ...virtualPolicies });
            }
          }
        }
      }
      if (terminated.length > 0) {
        b.servers.push({ comment: `${comment} (default: the handshake is refused)`, port, ssl: true, rejectHandshake: true, target: STREAM_REJECT, ...portPolicies }, ...terminated);
        continue;
      }
      if (entries.length === 0) continue;
      const variable = `$pcs_sni_${digest(entries)}`;
      b.maps.push({ variable, entries });
      // The route is chosen after the address check (ssl_preread): the port's lists only.
      b.servers.push({ comment, port, preread: true, target: variable, halfClose: true, ...portPolicies });
      continue;
    }
    // TCP / UDP: one route per port, the oldest of the listener that has any.
    const withRoute = listeners.find((l) => l.routes.length > 0);
    if (!withRoute) continue;
    const route = withRoute.routes[0];
    b.servers.push({
      comment: `${withRoute.protocol} port ${port}: ${routeName(route)} on ${listenerName(withRoute)}`,
      port,
      ...(withRoute.protocol === 'UDP' ? { udp: true } : { halfClose: true }),
      target: b.routeTarget(route.route),
      ...streamPolicies(policies, withRoute.gateway, route, { udp: withRoute.protocol === 'UDP' }),
    });
  }
  if (b.servers.length === 0) return undefined;
  return {
    upstreams: [...b.upstreams.values()],
    splitClients: [...b.splits.values()],
    maps: b.maps,
    servers: [...b.servers, ...b.internal.values()],
    secretFiles: b.secretFiles,
  };
}
