/**
 * bench:l4's change-to-serving part: the standalone controller (file provider, its own nginx)
 * serving BENCH_L4_ROUTES L4 routes (default 1,000: 80 % TLSRoutes passed through by SNI on one
 * TLS listener, 10 % TCPRoutes and 10 % UDPRoutes, each on a listener of its own, 50 listeners per
 * Gateway), one manifest file per route. A change rewrites one route's file (a temp file renamed
 * into place) pointing it at its other backend; it is served when a client through the gateway
 * reaches that backend (each backend answers its name: TCP and TLS on connect, UDP per datagram).
 * Changes cycle TLS, TCP, UDP (BENCH_L4_CHANGES, default 12). Prints the start (controller
 * spawned -> the last route of each kind served), change -> served p50 / p90 overall and per
 * kind, where the controller's time went, and `uptime` before and after.
 */
import { promises as fs } from 'fs';
import * as dgram from 'dgram';
import * as net from 'net';
import * as path from 'path';
import * as tls from 'tls';
import execa from 'execa';
import { stringify } from 'yaml';
import { startController } from '../e2e/support/controller';
import { freePort, freeUdpPort } from '../e2e/support/ports';
import { makeTempDir, removeDir } from '../e2e/support/tmp';
import { DEFAULT_CONTROLLER_NAME } from '../controller/src/graph/types';
import { localService } from './support/l4-manifests';

type Kind = 'TLS' | 'TCP' | 'UDP';
type Backend = 'a' | 'b';

export interface L4ChangeFigures {
  routes: Record<Kind, number>;
  changes: number;
  startMs: number;
  /** change -> served, ms, per kind (in change order). */
  samples: Record<Kind, number[]>;
  /** The controller's reconciles during the changes, medians: "total N ms = scan .., build .." */
  controller: string;
  uptimeBefore: string;
  uptimeAfter: string;
}

/** Listeners per Gateway (the Gateway API allows 64). */
const LISTENERS_PER_GATEWAY = 50;
const ROUTE_KIND: Record<Kind, string> = { TLS: 'TLSRoute', TCP: 'TCPRoute', UDP: 'UDPRoute' };
const uptime = () => execa.sync('uptime').stdout.trim();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** Servers answering their name: TCP and TLS on connect, UDP per datagram. */
async function startNamedBackends(cert: string, key: string): Promise<{ ports: Record<`${Kind}-${Backend}`, number>; close: () => Promise<void> }> {
  const closers: (() => Promise<void>)[] = [];
  const ports = {} as Record<`${Kind}-${Backend}`, number>;
  const listen = async (server: net.Server) => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => server.close(() => r())));
    return (server.address() as net.AddressInfo).port;
  };
  for (const name of ['a', 'b'] as const) {
    ports[`TCP-${name}`] = await listen(net.createServer((c) => c.on('error', () => undefined).end(name)));
    ports[`TLS-${name}`] = await listen(tls.createServer({ cert, key }, (c) => c.on('error', () => undefined).end(name)));
    const u = dgram.createSocket('udp4');
    u.on('message', (_m, from) => u.send(name, from.port, from.address));
    await new Promise<void>((r) => u.bind(0, '127.0.0.1', r));
    ports[`UDP-${name}`] = u.address().port;
    closers.push(() => new Promise((r) => u.close(() => r())));
  }
  return { ports, close: async () => void (await Promise.all(closers.map((c) => c()))) };
}

/** Reads what the backend behind `port` answers, or '' when nothing answers within `timeoutMs`. */
function probe(kind: Kind, port: number, index: number, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    let settled = false;
    const done = (value: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      cleanup();
      done(answer);
    }, timeoutMs);
    let cleanup = () => undefined as void;
    if (kind === 'UDP') {
      const s = dgram.createSocket('udp4');
      cleanup = () => s.close();
      s.on('message', (m) => {
        cleanup();
        done(m.toString());
      });
      s.on('error', () => {
        cleanup();
        done('');
      });
      s.send('?', port, '127.0.0.1');
      return;
    }
    const s = kind === 'TLS' ? tls.connect({ host: '127.0.0.1', port, servername: sni(index), rejectUnauthorized: false }) : net.connect(port, '127.0.0.1');
    cleanup = () => s.destroy();
    s.on('data', (d) => (answer += d.toString()));
    s.on('end', () => {
      cleanup();
      done(answer);
    });
    s.on('error', () => {
      cleanup();
      done('');
    });
  });
}

const sni = (i: number) => `r${i}.pass.example`;

interface Layout {
  count: Record<Kind, number>;
  tlsPort: number;
  /** Listener port of TCP / UDP route i. */
  ports: Record<'TCP' | 'UDP', number[]>;
}

const meta = (name: string) => ({ name, namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' });

function baseDocs(layout: Layout, backends: Record<`${Kind}-${Backend}`, number>): object[] {
  const docs: object[] = [
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'portcullis' }, spec: { controllerName: DEFAULT_CONTROLLER_NAME } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: meta('tls'),
      spec: { gatewayClassName: 'portcullis', listeners: [{ name: 'tls', port: layout.tlsPort, protocol: 'TLS', tls: { mode: 'Passthrough' } }] },
    },
  ];
  for (const kind of ['TCP', 'UDP'] as const) {
    const ports = layout.ports[kind];
    for (let g = 0; g * LISTENERS_PER_GATEWAY < ports.length; g++) {
      const listeners = ports.slice(g * LISTENERS_PER_GATEWAY, (g + 1) * LISTENERS_PER_GATEWAY).map((port, j) => ({ name: `l${j}`, port, protocol: kind }));
      docs.push({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: meta(`${kind.toLowerCase()}-${g}`), spec: { gatewayClassName: 'portcullis', listeners } });
    }
  }
  for (const [key, port] of Object.entries(backends)) {
    const name = key.toLowerCase();
    docs.push(...localService(name, 'default', port, key.startsWith('UDP') ? 'UDP' : 'TCP'));
  }
  return docs;
}

function routeDoc(kind: Kind, i: number, backend: Backend): object {
  const parentRef =
    kind === 'TLS' ? { name: 'tls', sectionName: 'tls' } : { name: `${kind.toLowerCase()}-${Math.floor(i / LISTENERS_PER_GATEWAY)}`, sectionName: `l${i % LISTENERS_PER_GATEWAY}` };
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: ROUTE_KIND[kind],
    metadata: meta(`${kind.toLowerCase()}-${i}`),
    spec: { parentRefs: [parentRef], ...(kind === 'TLS' ? { hostnames: [sni(i)] } : {}), rules: [{ backendRefs: [{ name: `${kind.toLowerCase()}-${backend}`, port: 80 }] }] },
  };
}

async function writeFile(dir: string, file: string, docs: object[]): Promise<void> {
  const tmp = path.join(dir, `.${file}.tmp`);
  await fs.writeFile(tmp, docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join(''));
  await fs.rename(tmp, path.join(dir, file));
}

export async function measureL4Changes(routes: number, changes: number, log: (line: string) => void): Promise<L4ChangeFigures> {
  const count: Record<Kind, number> = { TCP: Math.round(routes * 0.1), UDP: Math.round(routes * 0.1), TLS: 0 };
  count.TLS = routes - count.TCP - count.UDP;
  const dir = await makeTempDir('portcullis-bench-l4-changes-');
  const manifestsDir = path.join(dir, 'manifests');
  await fs.mkdir(manifestsDir);
  await execa('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', '/CN=*.pass.example', '-addext', 'subjectAltName=DNS:*.pass.example'], { cwd: dir, stdio: 'ignore' });
  const backends = await startNamedBackends(await fs.readFile(path.join(dir, 'cert.pem'), 'utf8'), await fs.readFile(path.join(dir, 'key.pem'), 'utf8'));
  const layout: Layout = { count, tlsPort: await freePort(), ports: { TCP: [], UDP: [] } };
  // The kernel may hand out a port it just gave (the probe socket is closed): keep them distinct.
  const distinct = async (next: () => Promise<number>, taken: Set<number>) => {
    for (;;) {
      const p = await next();
      if (taken.has(p)) continue;
      taken.add(p);
      return p;
    }
  };
  const tcpTaken = new Set([layout.tlsPort]);
  const udpTaken = new Set<number>();
  for (let i = 0; i < count.TCP; i++) layout.ports.TCP.push(await distinct(freePort, tcpTaken));
  for (let i = 0; i < count.UDP; i++) layout.ports.UDP.push(await distinct(freeUdpPort, udpTaken));
  const portOf = (kind: Kind, i: number) => (kind === 'TLS' ? layout.tlsPort : layout.ports[kind][i]);
  const current = new Map<string, Backend>();
  const file = (kind: Kind, i: number) => `${kind.toLowerCase()}-${String(i).padStart(4, '0')}.yaml`;
  await writeFile(manifestsDir, '00-base.yaml', baseDocs(layout, backends.ports));
  for (const kind of ['TLS', 'TCP', 'UDP'] as const) for (let i = 0; i < count[kind]; i++) await writeFile(manifestsDir, file(kind, i), [routeDoc(kind, i, 'a')]);
  let controller: Awaited<ReturnType<typeof startController>> | undefined;
  const served = async (kind: Kind, i: number, want: Backend, deadlineMs: number) => {
    const t = Date.now();
    while ((await probe(kind, portOf(kind, i), i, 500)) !== want) {
      if (Date.now() - t > deadlineMs) {
        const problems = (controller?.logs ?? []).filter((l) => l.level === 'warn' || l.level === 'error').slice(-5);
        throw new Error(`${kind} route ${i} not served by backend ${want} within ${deadlineMs} ms; the controller's last warnings: ${JSON.stringify(problems)}`);
      }
      await sleep(2);
    }
  };
  const uptimeBefore = uptime();
  log(`uptime before: ${uptimeBefore}`);
  const t0 = Date.now();
  controller = await startController({ manifestsDir, stateDir: path.join(dir, 'state'), logLevel: process.env.BENCH_LOG_LEVEL ?? 'info' }, false);
  try {
    for (const kind of ['TLS', 'TCP', 'UDP'] as const) if (count[kind] > 0) await served(kind, count[kind] - 1, 'a', 120000);
    const startMs = Date.now() - t0;
    log(`start (controller spawned) -> last TLS, TCP and UDP route served: ${startMs} ms (${count.TLS} TLSRoute passthrough, ${count.TCP} TCPRoute, ${count.UDP} UDPRoute)`);
    await sleep(1000);
    const before = controller.reconciles();
    const samples: Record<Kind, number[]> = { TLS: [], TCP: [], UDP: [] };
    const kinds = (['TLS', 'TCP', 'UDP'] as const).filter((k) => count[k] > 0);
    for (let c = 0; c < changes; c++) {
      const kind = kinds[c % kinds.length];
      const i = (c * 37 + 11) % count[kind];
      const next: Backend = current.get(`${kind}/${i}`) === 'b' ? 'a' : 'b';
      current.set(`${kind}/${i}`, next);
      const t = Date.now();
      await writeFile(manifestsDir, file(kind, i), [routeDoc(kind, i, next)]);
      await served(kind, i, next, 30000);
      samples[kind].push(Date.now() - t);
      await sleep(300);
    }
    const all = Object.values(samples).flat();
    log(`${routes} L4 routes, one route's file rewritten and renamed: change -> served p50 ${percentile(all, 50)} ms, p90 ${percentile(all, 90)} ms (${changes} changes)`);
    for (const k of kinds) log(`  ${ROUTE_KIND[k]}: ${samples[k].join(', ')} ms`);
    const reconciles = controller.logs.filter((l) => l.msg === 'reconciled').slice(before) as unknown as { ms: number; phases: Record<string, number> }[];
    const med = (xs: number[]) => percentile(xs, 50);
    const phases = Object.keys(reconciles[0]?.phases ?? {}).map((k) => `${k} ${med(reconciles.map((r) => r.phases[k]))}`);
    const controllerTimes = `total ${med(reconciles.map((r) => r.ms))} ms = ${phases.join(', ')} ms`;
    log(`controller per change (${reconciles.length} reconciles, medians): ${controllerTimes}`);
    const uptimeAfter = uptime();
    log(`uptime after: ${uptimeAfter}`);
    if (controller.reconciles() < before + 1) throw new Error('no reconcile logged for the changes');
    return { routes: count, changes, startMs, samples, controller: controllerTimes, uptimeBefore, uptimeAfter };
  } finally {
    await controller.stop('SIGTERM', undefined, 2000);
    await backends.close();
    await removeDir(dir);
  }
}
