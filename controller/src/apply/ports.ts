/**
 * Ports nginx could not listen on, read from its own error messages, and whether such a port is
 * free again.
 *
 * nginx binds every listening socket of a configuration before it changes anything; when one
 * bind fails it retries for about 2.5 s and then refuses the whole configuration with
 * `bind() to 0.0.0.0:8080 failed (98: Address already in use)` (one line per failing socket and
 * attempt). Only the port is wrong there, not the configuration: the data plane leaves the
 * listeners on it out of the next configuration and serves the others.
 */
import * as dgram from 'dgram';
import * as net from 'net';

export interface PortFailure {
  /** The address nginx tried, as it wrote it (IPv6 without brackets). */
  address: string;
  port: number;
  /** nginx's words for the failure, e.g. "98: Address already in use". */
  error: string;
}

/**
 * The errors that say the port itself cannot be had: another socket holds it (EADDRINUSE), or
 * it is a privileged port this process may not bind (EACCES). Others (an address the host does
 * not have) concern every listener alike and stay a refused configuration.
 */
const PORT_ERRNOS = new Set([98, 13]);

const BIND_FAILED = /bind\(\) to (\[[^\]]+\]|[^\s:]+):(\d+) failed \((\d+): ([^)]*)\)/g;

/** The ports named by the bind failures in an nginx message, each once, in order. */
export function bindFailures(message: string): PortFailure[] {
  const out: PortFailure[] = [];
  for (const m of message.matchAll(BIND_FAILED)) {
    const errno = Number(m[3]);
    if (!PORT_ERRNOS.has(errno)) continue;
    const port = Number(m[2]);
    if (out.some((f) => f.port === port)) continue;
    out.push({ address: m[1].replace(/^\[|\]$/g, ''), port, error: `${errno}: ${m[4]}` });
  }
  return out;
}

/**
 * Whether this process can bind `address:port` now (for TCP, as nginx does, with SO_REUSEADDR,
 * which Node sets): the socket is closed again at once. The port is held for that instant, so
 * a process starting on it at the same moment could fail; callers check rarely.
 */
export function portFree(address: string, port: number, transport: 'TCP' | 'UDP'): Promise<boolean> {
  return new Promise((resolve) => {
    if (transport === 'UDP') {
      const socket = dgram.createSocket(net.isIPv6(address) ? 'udp6' : 'udp4');
      socket.once('error', () => {
        socket.close();
        resolve(false);
      });
      socket.bind(port, address, () => socket.close(() => resolve(true)));
      return;
    }
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: address, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export type Transport = 'TCP' | 'UDP';
const TRANSPORTS: readonly Transport[] = ['TCP', 'UDP'];

/** A port nginx could not listen on, and the transports a bind found held on it. */
export interface HeldPort extends PortFailure {
  transports: Transport[];
}

/**
 * The ports nginx could not listen on, kept where nginx runs (the standalone controller, or an
 * agent beside its data plane's nginx) until a bind finds them free: the listeners on them stay
 * out of the configuration meanwhile (the graph's PortUnavailable), so nginx serves the others.
 * nginx's message does not say which socket failed, so each transport is checked with a bind
 * of its own; a TCP and a UDP listener on one port number are held apart.
 */
export class HeldPorts {
  private held: HeldPort[] = [];

  constructor(private readonly isFree: (address: string, port: number, transport: Transport) => Promise<boolean> = portFree) {}

  list(): readonly HeldPort[] {
    return this.held;
  }

  /**
   * Holds the transports of `failures` that a bind finds taken now (a port that frees in
   * between is tried again, not held); true when any port or transport is new. `wanted`: the
   * transports the configuration listens on per port, when known (an agent knows only files).
   */
  async add(failures: readonly PortFailure[], wanted?: (port: number) => readonly Transport[]): Promise<boolean> {
    let changed = false;
    for (const f of failures) {
      const asked = wanted ? TRANSPORTS.filter((t) => wanted(f.port).includes(t)) : TRANSPORTS;
      const free = await Promise.all(asked.map((t) => this.isFree(f.address, f.port, t)));
      const taken = asked.filter((_, i) => !free[i]);
      const known = this.held.find((h) => h.port === f.port);
      const added = taken.filter((t) => !known?.transports.includes(t));
      if (added.length === 0) continue;
      changed = true;
      const next: HeldPort = { ...f, transports: TRANSPORTS.filter((t) => added.includes(t) || known?.transports.includes(t)) };
      this.held = [...this.held.filter((h) => h !== known), next].sort((a, b) => a.port - b.port);
    }
    return changed;
  }

  /** Checks the held ports again and forgets each transport that binds now; true when any does. */
  async recheck(): Promise<boolean> {
    if (this.held.length === 0) return false;
    let changed = false;
    const next: HeldPort[] = [];
    for (const h of this.held) {
      const free = await Promise.all(h.transports.map((t) => this.isFree(h.address, h.port, t)));
      const transports = h.transports.filter((_, i) => !free[i]);
      if (transports.length !== h.transports.length) changed = true;
      if (transports.length > 0) next.push({ ...h, transports });
    }
    if (changed) this.held = next;
    return changed;
  }
}
