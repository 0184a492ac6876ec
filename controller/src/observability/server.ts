/**
 * The controller's HTTP endpoints: /healthz (the process answers: liveness), /readyz (the
 * provider has synced and the first reconcile ran: readiness) and /metrics (Prometheus). The
 * health and metrics addresses may be the same; then one server answers all three.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface EndpointOptions {
  healthAddress?: string; // host:port
  metricsAddress?: string;
  registry: Registry;
  ready: () => boolean;
}

export function parseHostPort(value: string, flag: string): { host: string; port: number } {
  const i = value.lastIndexOf(':');
  const host = i < 0 ? '' : value.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  const port = Number(i < 0 ? value : value.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${flag}: expected HOST:PORT, got "${value}"`);
  return { host: host || '0.0.0.0', port };
}

function handler(o: EndpointOptions, serve: { health: boolean; metrics: boolean }): http.RequestListener {
  return (req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (serve.health && url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
    } else if (serve.health && url === '/readyz') {
      const ok = o.ready();
      res.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain' }).end(ok ? 'ok\n' : 'not ready: resources not synced yet\n');
    } else if (serve.metrics && url === '/metrics') {
      o.registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': o.registry.contentType }).end(text),
        (err: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${err.message}\n`),
      );
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
    }
  };
}

async function listen(server: http.Server, address: string, flag: string): Promise<AddressInfo> {
  const { host, port } = parseHostPort(address, flag);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server.address() as AddressInfo;
}

/** Starts the servers; returns their bound addresses and a close function. */
export async function startEndpoints(o: EndpointOptions): Promise<{ health?: AddressInfo; metrics?: AddressInfo; close: () => Promise<void> }> {
  const servers: http.Server[] = [];
  const out: { health?: AddressInfo; metrics?: AddressInfo } = {};
  if (o.healthAddress && o.healthAddress === o.metricsAddress) {
    const s = http.createServer(handler(o, { health: true, metrics: true }));
    servers.push(s);
    out.health = out.metrics = await listen(s, o.healthAddress, '--health-address');
  } else {
    if (o.healthAddress) {
      const s = http.createServer(handler(o, { health: true, metrics: false }));
      servers.push(s);
      out.health = await listen(s, o.healthAddress, '--health-address');
    }
    if (o.metricsAddress) {
      const s = http.createServer(handler(o, { health: false, metrics: true }));
      servers.push(s);
      out.metrics = await listen(s, o.metricsAddress, '--metrics-address');
    }
  }
  return {
    ...out,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
