/**
 * npm run bench:l4 — whole connections through the gateway (TCPRoute, UDPRoute and TLSRoute
 * Passthrough: nginx's stream module) against the same backends reached directly, side by side
 * with the gateway/direct ratio:
 *   - TCP throughput: BENCH_L4_STREAMS connections each writing 64 KiB chunks for the run's
 *     time to a backend that counts and discards them; MB/s = bytes the backend counted / time
 *     until its count came back (asked for by a last marker byte).
 *   - TCP round trip: one connection, one 64-byte message in flight at a time, echoed: round
 *     trips/s and the latency's p50 / p99.
 *   - TCP connections/s: BENCH_L4_CONCURRENCY clients each connecting, sending 1 byte, reading
 *     the echo and closing, over and over.
 *   - UDP round trip: one socket, one 64-byte datagram in flight at a time: p50 / p99 and
 *     round trips/s. UDP throughput: BENCH_L4_WINDOW 1 KiB datagrams in flight, each answer
 *     sends the next (a datagram lost is replaced after 100 ms): datagrams/s answered.
 *   - TLS passthrough handshakes/s: BENCH_L4_CONCURRENCY clients each doing a full TLS 1.3
 *     handshake (RSA 2048, no resumption) with the backend, by SNI through the gateway.
 *   - change -> served with BENCH_L4_ROUTES L4 routes (default 1,000) through the standalone
 *     controller: scripts/bench-l4-changes.ts says how (BENCH_L4_CHANGES, default 12; 0 skips it;
 *     BENCH_L4_RATES=0 skips the pairs above).
 *
 * The gateway's config comes from manifests through the real pipeline (parse -> graph -> model
 * -> render) and runs in the project's nginx with one worker. The backends run in a Node child
 * process of their own, the clients in this one. Each figure is measured in pairs, direct and
 * gateway back to back, the first of a pair alternating (ABBA), so a drift of the machine's load
 * moves both sides alike; the table gives the median over the pairs and the median of the pairs'
 * ratios. The nginx worker's CPU per operation (/proc) is printed for the gateway: under other
 * load the rates swing, the CPU per operation much less.
 *
 * Env: BENCH_PAIRS (default 4), BENCH_PAIR_SECONDS (per run, default 2), BENCH_L4_STREAMS
 *      (default 4), BENCH_L4_CONCURRENCY (default 16), BENCH_L4_WINDOW (default 32),
 *      PORTCULLIS_NGINX (controller/src/apply/nginx-binary.ts).
 * --write-docs: also write the tables (l4, l4-changes) into docs/benchmarks-gateway.md.
 */
import * as dgram from 'dgram';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import * as tls from 'tls';
import execa from 'execa';
import { NginxProcess } from '../controller/src/apply/nginx';
import { defaultNginxBinary } from '../controller/src/apply/nginx-binary';
import { childPids } from '../controller/src/apply/procs';
import { buildGraph } from '../controller/src/graph';
import { silentLogger } from '../controller/src/log';
import { buildModel } from '../controller/src/model';
import { renderConfig } from '../controller/src/render';
import { parseManifests } from '../controller/src/resources/parse';
import { freePort } from '../e2e/support/ports';
import { benchCommand, docsTable } from './support/bench-docs';
import { measureL4Changes } from './bench-l4-changes';
import { cpuMs } from './support/proc-cpu';
import { localService } from './support/l4-manifests';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 4);
const SECONDS = Number(process.env.BENCH_PAIR_SECONDS ?? 2);
const STREAMS = Number(process.env.BENCH_L4_STREAMS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_L4_CONCURRENCY ?? 16);
const WINDOW = Number(process.env.BENCH_L4_WINDOW ?? 32);
/** BENCH_L4_RATES=0: only the change -> served part. */
const RATES = process.env.BENCH_L4_RATES !== '0';
const L4_ROUTES = Number(process.env.BENCH_L4_ROUTES ?? 1000);
/** BENCH_L4_CHANGES=0: only the rates. */
const L4_CHANGES = Number(process.env.BENCH_L4_CHANGES ?? 12);
const SNI = 'bench.pass.example';


interface BackendPorts {
  echo: number;
  sink: number;
  udp: number;
  tls: number;
}

/** TCP echo, TCP sink (answers the byte count when the client ends), UDP echo and TLS echo, in a child Node process. */
async function startBackends(certFile: string, keyFile: string): Promise<{ ports: BackendPorts; stop: () => Promise<void> }> {
  const code = `
    const net = require('net'), dgram = require('dgram'), tls = require('tls'), fs = require('fs');
    const listen = (s) => new Promise((r) => s.listen(0, '127.0.0.1', () => r(s.address().port)));
    (async () => {
      const echo = await listen(net.createServer((c) => { c.on('data', (d) => c.write(d)); c.on('error', () => {}); }));
      const sink = await listen(net.createServer((c) => {
        let n = 0;
        // The client's last byte is 'E' (every other byte is 1): then the count goes back. The
        // gateway closes both sides when one closes (no proxy_half_close), so no FIN can ask.
        c.on('data', (d) => { n += d.length; if (d[d.length - 1] === 69) c.end(String(n - 1)); });
        c.on('error', () => {});
      }));
      const tlsPort = await listen(tls.createServer({ cert: fs.readFileSync(${JSON.stringify(certFile)}), key: fs.readFileSync(${JSON.stringify(keyFile)}) }, (c) => {
        c.on('data', (d) => c.write(d)); c.on('error', () => {});
      }));
      const u = dgram.createSocket('udp4');
      u.on('message', (m, from) => u.send(m, from.port, from.address));
      await new Promise((r) => u.bind(0, '127.0.0.1', r));
      console.log(JSON.stringify({ echo, sink, udp: u.address().port, tls: tlsPort }));
    })();
  `;
  const child = execa(process.execPath, ['-e', code], { reject: false, buffer: false, stdio: ['ignore', 'pipe', 'inherit'] });
  const ports = await new Promise<BackendPorts>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) resolve(JSON.parse(text.split('\n')[0]));
    });
    child.on('exit', () => reject(new Error('the L4 bench backends exited')));
  });
  return {
    ports,
    stop: async () => {
      child.kill('SIGTERM');
      await child.catch(() => undefined);
    },
  };
}

/** Manifests of a Gateway with a TCP listener per TCP backend, a UDP listener and a passthrough listener. */
function manifests(ports: { echo: number; sink: number; udp: number; tls: number }, backends: BackendPorts): object[] {
  const meta = (name: string) => ({ name, namespace: 'bench', creationTimestamp: '2026-01-01T00:00:00Z' });
  const svc = (name: string, port: number, protocol: 'TCP' | 'UDP' = 'TCP') => localService(name, 'bench', port, protocol);
  const route = (kind: string, name: string, section: string, backend: string, hostnames?: string[]) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind,
    metadata: meta(name),
    spec: { parentRefs: [{ name: 'gw', sectionName: section }], ...(hostnames ? { hostnames } : {}), rules: [{ backendRefs: [{ name: backend, port: 80 }] }] },
  });
  return [
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'portcullis' }, spec: { controllerName: 'gateway.portcullis.dev/controller' } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: meta('gw'),
      spec: {
        gatewayClassName: 'portcullis',
        listeners: [
          { name: 'echo', port: ports.echo, protocol: 'TCP' },
          { name: 'sink', port: ports.sink, protocol: 'TCP' },
          { name: 'udp', port: ports.udp, protocol: 'UDP' },
          { name: 'tls', port: ports.tls, protocol: 'TLS', tls: { mode: 'Passthrough' } },
        ],
      },
    },
    ...svc('echo', backends.echo),
    ...svc('sink', backends.sink),
    ...svc('udp', backends.udp, 'UDP'),
    ...svc('tls', backends.tls),
    route('TCPRoute', 'echo', 'echo', 'echo'),
    route('TCPRoute', 'sink', 'sink', 'sink'),
    route('UDPRoute', 'udp', 'udp', 'udp'),
    route('TLSRoute', 'tls', 'tls', 'tls', [SNI]),
  ];
}

/** What one run measured: operations (or bytes) per second, and latencies in µs when it has them. */
interface Run {
  ops: number;
  seconds: number;
  latenciesUs?: number[];
}

const now = () => Number(process.hrtime.bigint()) / 1e3;

async function tcpThroughput(port: number, seconds: number): Promise<Run> {
  const chunk = Buffer.alloc(64 * 1024, 1);
  const start = now();
  const counts = await Promise.all(
    Array.from(
      { length: STREAMS },
      () =>
        new Promise<number>((resolve, reject) => {
          const s = net.connect(port, '127.0.0.1');
          const end = Date.now() + seconds * 1000;
          let answer = '';
          const pump = () => {
            while (Date.now() < end) if (!s.write(chunk)) return void s.once('drain', pump);
            s.write('E');
          };
          s.on('connect', pump);
          s.on('data', (d) => (answer += d.toString()));
          s.on('end', () => {
            resolve(Number(answer));
            s.destroy();
          });
          s.on('error', reject);
        }),
    ),
  );
  return { ops: counts.reduce((a, b) => a + b, 0), seconds: (now() - start) / 1e6 };
}

async function tcpRoundTrips(port: number, seconds: number): Promise<Run> {
  const s = net.connect(port, '127.0.0.1');
  s.setNoDelay(true);
  await new Promise<void>((r, j) => s.once('connect', r).once('error', j));
  const message = Buffer.alloc(64, 2);
  const latencies: number[] = [];
  const start = now();
  const end = start + seconds * 1e6;
  await new Promise<void>((resolve, reject) => {
    let got = 0;
    let sent = now();
    s.on('data', (d) => {
      got += d.length;
      if (got < message.length) return;
      got -= message.length;
      const t = now();
      latencies.push(t - sent);
      if (t >= end) return resolve();
      sent = now();
      s.write(message);
    });
    s.on('error', reject);
    s.write(message);
  });
  s.destroy();
  return { ops: latencies.length, seconds: (now() - start) / 1e6, latenciesUs: latencies };
}

/**
 * A closed loop: `clients` loops each running `one` (a whole operation: connect, exchange, close)
 * back to back until `seconds` are up; the run counts the operations completed.
 */
async function closedLoop(clients: number, seconds: number, one: () => Promise<void>): Promise<Run> {
  const start = now();
  const end = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < end) {
        await one();
        done++;
      }
    }),
  );
  return { ops: done, seconds: (now() - start) / 1e6 };
}

function tcpConnections(port: number, seconds: number): Promise<Run> {
  return closedLoop(CONCURRENCY, seconds, () =>
    new Promise<void>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => s.write('x'));
      s.once('data', () => {
        s.destroy();
        resolve();
      });
      s.on('error', reject);
    }),
  );
}

async function udpRoundTrips(port: number, seconds: number): Promise<Run> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const message = Buffer.alloc(64, 3);
  const latencies: number[] = [];
  const start = now();
  const end = start + seconds * 1e6;
  await new Promise<void>((resolve) => {
    let sent = now();
    let timer: NodeJS.Timeout;
    const send = () => {
      sent = now();
      socket.send(message, port, '127.0.0.1');
      clearTimeout(timer);
      // A lost datagram is sent again (and its wait not counted).
      timer = setTimeout(send, 100);
    };
    socket.on('message', () => {
      const t = now();
      latencies.push(t - sent);
      if (t >= end) {
        clearTimeout(timer);
        return resolve();
      }
      send();
    });
    send();
  });
  socket.close();
  return { ops: latencies.length, seconds: (now() - start) / 1e6, latenciesUs: latencies };
}

async function udpThroughput(port: number, seconds: number): Promise<Run> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const message = Buffer.alloc(1024, 4);
  let answered = 0;
  let last = Date.now();
  const start = now();
  const end = Date.now() + seconds * 1000;
  await new Promise<void>((resolve) => {
    const refill = setInterval(() => {
      // Datagrams lost in a kernel buffer: put the window back in flight.
      if (Date.now() - last >= 100) for (let i = 0; i < WINDOW; i++) socket.send(message, port, '127.0.0.1');
    }, 100);
    socket.on('message', () => {
      answered++;
      last = Date.now();
      if (last >= end) {
        clearInterval(refill);
        return resolve();
      }
      socket.send(message, port, '127.0.0.1');
    });
    for (let i = 0; i < WINDOW; i++) socket.send(message, port, '127.0.0.1');
  });
  socket.close();
  return { ops: answered, seconds: (now() - start) / 1e6 };
}

function tlsHandshakes(port: number, seconds: number, ca: string): Promise<Run> {
  return closedLoop(CONCURRENCY, seconds, () =>
    new Promise<void>((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, servername: SNI, ca, session: undefined }, () => {
        s.destroy();
        resolve();
      });
      s.on('error', reject);
    }),
  );
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

interface Figure {
  name: string;
  unit: string;
  /** Per target: the run's value. */
  measure: (target: 'direct' | 'gateway') => Promise<{ value: number; ops: number; p50?: number; p99?: number }>;
}

/** The gateway/direct pairs, written as the `l4` table. */
async function measureRates(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-l4-'));
  execa.sync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', `/CN=${SNI}`, '-addext', `subjectAltName=DNS:${SNI}`], { cwd: dir, stdio: 'ignore' });
  const ca = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  const backends = await startBackends(path.join(dir, 'cert.pem'), path.join(dir, 'key.pem'));
  const gwPorts = { echo: await freePort(), sink: await freePort(), udp: await freePort(), tls: await freePort() };
  const prefix = path.join(dir, 'gw');
  const nginx = new NginxProcess({ prefix, binary: defaultNginxBinary(), log: silentLogger });
  try {
    const parsed = parseManifests(manifests(gwPorts, backends.ports).map((doc, i) => ({ source: `bench-${i}.yaml`, doc })));
    if (parsed.invalid.length > 0 || parsed.errors.length > 0) throw new Error(`bench manifests: ${JSON.stringify([...parsed.invalid, ...parsed.errors])}`);
    const graph = buildGraph(parsed.set, { controllerName: 'gateway.portcullis.dev/controller' });
    const config = renderConfig(buildModel(graph), { listenAddress: '127.0.0.1', prefix, workerProcesses: 1 });
    const started = await nginx.start(config);
    if (!started.ok) throw new Error(started.message);
    const worker = () => childPids(nginx.pid!).reduce((sum, pid) => sum + cpuMs(pid), 0);
    const port = (kind: keyof BackendPorts, target: 'direct' | 'gateway') => (target === 'direct' ? backends.ports[kind] : gwPorts[kind]);
    const rate = (r: Run, scale = 1) => ({ value: r.ops / r.seconds / scale, ops: r.ops });
    const latency = (r: Run) => ({ value: r.ops / r.seconds, ops: r.ops, p50: percentile(r.latenciesUs!, 50), p99: percentile(r.latenciesUs!, 99) });
    const figures: Figure[] = [
      { name: `TCP throughput (${STREAMS} connections)`, unit: 'MB/s', measure: async (t) => rate(await tcpThroughput(port('sink', t), SECONDS), 1e6) },
      { name: 'TCP round trips (1 connection, 64 B)', unit: '/s', measure: async (t) => latency(await tcpRoundTrips(port('echo', t), SECONDS)) },
      { name: `TCP connections (${CONCURRENCY} clients, 1 B echoed)`, unit: '/s', measure: async (t) => rate(await tcpConnections(port('echo', t), SECONDS)) },
      { name: 'UDP round trips (1 socket, 64 B)', unit: '/s', measure: async (t) => latency(await udpRoundTrips(port('udp', t), SECONDS)) },
      { name: `UDP datagrams (${WINDOW} x 1 KiB in flight)`, unit: '/s', measure: async (t) => rate(await udpThroughput(port('udp', t), SECONDS)) },
      { name: `TLS passthrough handshakes (${CONCURRENCY} clients)`, unit: '/s', measure: async (t) => rate(await tlsHandshakes(port('tls', t), SECONDS, ca)) },
    ];
    console.log(`L4 through the gateway vs direct: ${PAIRS} pairs x ${SECONDS} s per figure (ABBA order), 1 nginx worker, backends in a Node child process; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')}`);
    const rows: Record<string, string>[] = [];
    for (const f of figures) {
      const runs = { direct: [] as Awaited<ReturnType<Figure['measure']>>[], gateway: [] as Awaited<ReturnType<Figure['measure']>>[] };
      const ratios: number[] = [];
      const nginxUs: number[] = [];
      await f.measure('gateway'); // warm-up: JIT, nginx's first connections
      for (let pair = 0; pair < PAIRS; pair++) {
        const order = pair % 4 === 0 || pair % 4 === 3 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const);
        const got: Partial<Record<'direct' | 'gateway', number>> = {};
        for (const target of order) {
          const before = worker();
          const r = await f.measure(target);
          if (target === 'gateway') nginxUs.push(((worker() - before) * 1000) / Math.max(1, r.ops));
          runs[target].push(r);
          got[target] = r.value;
        }
        ratios.push(got.gateway! / got.direct!);
        console.log(`  ${f.name}: pair ${pair + 1} direct ${got.direct!.toFixed(1)} ${f.unit}, gateway ${got.gateway!.toFixed(1)} ${f.unit}`);
      }
      const m = (t: 'direct' | 'gateway', k: 'value' | 'p50' | 'p99') => median(runs[t].map((r) => r[k] ?? 0));
      const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
      const row: Record<string, string> = {
        figure: f.name,
        direct: `${fmt(m('direct', 'value'))} ${f.unit}`,
        gateway: `${fmt(m('gateway', 'value'))} ${f.unit}`,
        'gateway/direct': median(ratios).toFixed(2),
        'latency p50 / p99 direct': runs.direct[0].p50 !== undefined ? `${fmt(m('direct', 'p50'))} / ${fmt(m('direct', 'p99'))} µs` : '',
        'latency p50 / p99 gateway': runs.gateway[0].p50 !== undefined ? `${fmt(m('gateway', 'p50'))} / ${fmt(m('gateway', 'p99'))} µs` : '',
        'nginx CPU per op': f.unit === 'MB/s' ? `${fmt(median(nginxUs) * 1e6)} µs/MB` : `${fmt(median(nginxUs))} µs`,
      };
      rows.push(row);
    }
    console.table(rows);
    console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')}`);
    const columns = Object.keys(rows[0]);
    docsTable({
      doc: 'gateway',
      id: 'l4',
      command: benchCommand('bench:l4'),
      columns,
      rows: rows.map((r) => columns.map((c) => r[c])),
      note:
        'Medians over the pairs; gateway/direct is the median of the pairs\' ratios (throughput: higher is better). Client, backends and nginx share the machine, so the gateway\'s extra process and copies cost the direct path\'s client and backend CPU too; nginx CPU per op is the gateway worker\'s own cost, the figure other load moves least.',
    });
  } finally {
    await nginx.stop().catch(() => undefined);
    await backends.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** change -> served with BENCH_L4_ROUTES L4 routes (bench-l4-changes.ts), written as the `l4-changes` table. */
async function measureChanges(): Promise<void> {
  console.log(`L4 change -> served: ${L4_ROUTES} routes, ${L4_CHANGES} changes, the standalone controller and its nginx`);
  const f = await measureL4Changes(L4_ROUTES, L4_CHANGES, (line) => console.log(line));
  const all = Object.values(f.samples).flat();
  const p = (xs: number[]) => (xs.length ? `${percentile(xs, 50)} / ${percentile(xs, 90)} ms` : '');
  docsTable({
    doc: 'gateway',
    id: 'l4-changes',
    command: benchCommand('bench:l4'),
    columns: ['figure', 'Portcullis'],
    rows: [
      [`start (controller spawned) -> last route of each kind served (${f.routes.TLS} TLSRoute passthrough, ${f.routes.TCP} TCPRoute, ${f.routes.UDP} UDPRoute)`, `${(f.startMs / 1000).toFixed(1)} s`],
      [`one route's file rewritten: change -> served p50 / p90 (${f.changes} changes)`, p(all)],
      ['TLSRoute (passthrough) changes p50 / p90', p(f.samples.TLS)],
      ['TCPRoute changes p50 / p90', p(f.samples.TCP)],
      ['UDPRoute changes p50 / p90', p(f.samples.UDP)],
      ['the controller\'s reconcile per change, medians', f.controller],
    ],
    note: `A change points one route at its other backend; served = a client through the gateway reaches that backend. \`uptime\` before: ${f.uptimeBefore}; after: ${f.uptimeAfter}.`,
  });
}

async function main(): Promise<void> {
  if (RATES) await measureRates();
  if (L4_CHANGES > 0) await measureChanges();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
