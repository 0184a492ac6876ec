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
