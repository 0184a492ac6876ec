/**
 * The gRPC part of `npm run bench:dataplane`: unary calls/s through the gateway (a GRPCRoute
 * rendered by the real pipeline with the shipped defaults, access log included; nginx with
 * `http2 on`, grpc_pass over h2c) vs straight to the backend, with the same client in the same
 * run, rounds alternating to spread machine noise. Backend: a grpc-js echo in its own Node
 * process. 64-byte messages.
 *
 * Three clients, each against both targets:
 *  - h2load (nghttp2's load generator, C): a gRPC-framed request, POST with content-type
 *    application/grpc; 64 connections with one call in flight each (many clients, each with its
 *    own channel: what a gateway in front of a service usually sees) ...
 *  - ... and 1 connection with 64 calls in flight (one channel). The shipped
 *    `keepalive_requests 10000` closes a client connection after 10,000 calls (a gRPC client
 *    reconnects; h2load does not), so this one runs h2load repeatedly, 9,000 calls each.
 *  - grpc-js, one channel, 64 calls in flight (in this process): the real gRPC client, but also
 *    the costliest process of the three (~150 us of CPU per call), so its ratio mostly says how
 *    the client and nginx share the CPUs.
 * The answers are checked: h2load's 2xx count alone would not see a gRPC error status (nginx
 * answers its own errors with HTTP 200 and grpc-status trailers), so the backend counts the calls
 * it served and every call h2load counts as done must have reached it.
 *
 * For every run the CPU time of the client, the backend and the nginx worker (from /proc) is
 * divided by the calls: the CPU each path costs per call. On a machine where all three share the
 * same cores and CPU is the limit, calls/s can be at best (client + backend) / (client + backend
 * + nginx) of direct through the gateway: printed as "CPU-bound ratio", the figure that other
 * work on the machine moves least. (With the kernel's autogroup scheduling, the default on
 * Debian, the processes a shell starts share one CPU share against every other autogroup's, so
 * on a busy machine that is also where calls/s end up.)
 *
 * Each run also reads the machine's busy time (/proc/stat) minus the three processes': the CPU
 * other work took ("others"); calls/s / (cores - others) per round is the throughput with most
 * of the machine's noise divided out, and its gateway/direct ratio is printed too.
 * Also printed: the bound the same per-call costs give on an otherwise idle machine, where each
 * process (single-threaded: h2load -t1, the grpc-js server, one nginx worker) can use one core
 * and the three together all of them: direct vs gateway calls/s at best.
 *
 * Env: BENCH_SECONDS, BENCH_ROUNDS (shared with the HTTP part), BENCH_GRPC_CLIENTS (comma list
 * of h2load-64c, h2load-1c, grpc-js; default all three; h2load ones are skipped, with a message,
 * where h2load is not installed).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as grpc from '@grpc/grpc-js';
import execa from 'execa';
import { NginxProcess } from '../controller/src/apply/nginx';
import type { BackendRef, Graph, HTTPRouteNode } from '../controller/src/graph/types';
import { silentLogger } from '../controller/src/log';
import { buildModel } from '../controller/src/model';
import { renderConfig } from '../controller/src/render';
import { benchCommand, docsTable } from './support/bench-docs';

const SERVICE = 'bench.Echo';
const METHOD = `/${SERVICE}/Unary`;
const IN_FLIGHT = 64;
const MESSAGE = Buffer.from('x'.repeat(64));
/** Calls per h2load connection in the one-connection runs: under the gateway's keepalive_requests. */
const CALLS_PER_CONNECTION = 9000;

const serialize = (v: Buffer) => v;
const deserialize = (b: Buffer) => b;

type ClientKind = 'h2load-64c' | 'h2load-1c' | 'grpc-js';
const CLIENT_LABELS: Record<ClientKind, string> = {
  'h2load-64c': 'h2load, 64 connections x 1 call in flight',
  'h2load-1c': 'h2load, 1 connection x 64 calls in flight',
  'grpc-js': 'grpc-js, 1 channel x 64 calls in flight',
};

interface Backend {
  port: number;
  pid: number;
  /** Calls served so far. */
  served(): Promise<number>;
  stop(): Promise<void>;
}

/** A grpc-js echo in a child Node process that counts the calls it answers (asked on stdin). */
async function startBackend(): Promise<Backend> {
  const grpcPath = require.resolve('@grpc/grpc-js');
  const code = `
    const grpc = require(${JSON.stringify(grpcPath)});
    const id = (b) => b;
    let served = 0;
    const s = new grpc.Server();
    s.addService({ Unary: { path: ${JSON.stringify(METHOD)}, requestStream: false, responseStream: false,
      requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id } },
      { Unary: (call, cb) => { served++; cb(null, call.request); } });
    s.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => { if (e) throw e; console.log(p); });
    process.stdin.on('data', () => console.log(served));
  `;
  const child = execa(process.execPath, ['-e', code], { reject: false, buffer: false, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: ((line: string) => void)[] = [];
  let pending = '';
  child.stdout!.on('data', (d: Buffer) => {
    pending += d.toString();
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      lines.shift()?.(line);
    }
  });
  const next = () => new Promise<string>((resolve) => lines.push(resolve));
  const port = Number(await Promise.race([next(), new Promise<string>((_, reject) => child.on('exit', () => reject(new Error('gRPC bench backend exited'))))]));
  return {
    port,
    pid: child.pid!,
    served: async () => {
      const answer = next();
      child.stdin!.write('\n');
      return Number(await answer);
    },
    stop: async () => {
      child.kill('SIGTERM');
      await child.catch(() => undefined);
    },
  };
}

function graphOf(port: number, backendPort: number): Graph {
  const backend: BackendRef = { namespace: 'bench', name: 'grpc', group: '', kind: 'Service', port: 80, weight: 1, valid: true, endpoints: [{ address: '127.0.0.1', port: backendPort }] };
  const route: HTTPRouteNode = {
    kind: 'GRPCRoute',
    namespace: 'bench',
    name: 'grpc',
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00Z',
    hostnames: [],
    parents: [],
    rules: [{ index: 0, valid: true, backends: [backend], matches: [{ path: { type: 'Exact', value: METHOD }, headers: [], queryParams: [], grpc: { serviceChars: SERVICE.length, methodChars: 5 } }] }],
  };
  return {
    gatewayClasses: [],
    rejectedGateways: [],
    routes: [route],
    gateways: [
      {
        namespace: 'bench', name: 'gw', generation: 1, className: 'portcullis', accepted: true, requestedAddresses: [], conditions: [],
        listeners: [{ gateway: { namespace: 'bench', name: 'gw' }, name: 'http', port, protocol: 'HTTP', valid: true, routes: [{ route, hostnames: [] }], attachedRoutes: 1, attachable: true, supportedKinds: [], allowedNamespaces: 'Same', conditions: [] }],
      },
    ],
  };
}

/** Busy time of all CPUs (user, nice, system, irq, softirq, steal), in clock ticks. */
function machineBusyTicks(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
}

/** utime + stime of one process, in clock ticks. */
function processTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

interface Driven {
  calls: number;
  /** Wall-clock seconds the calls took. */
  seconds: number;
  /** The client's CPU time, microseconds. */
  clientUs: number;
}

/** grpc-js: calls completed in `seconds` with IN_FLIGHT in flight on one channel. */
async function driveGrpcJs(client: grpc.Client, seconds: number): Promise<Driven> {
  const started = Date.now();
  const end = started + seconds * 1000;
  const cpu = process.cpuUsage();
  let done = 0;
  let failed: Error | undefined;
  const loop = async () => {
    while (Date.now() < end && !failed) {
      await new Promise<void>((resolve) => {
        client.makeUnaryRequest(METHOD, serialize, deserialize, MESSAGE, (err) => {
          if (err) failed = err;
          else done++;
          resolve();
        });
      });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  if (failed) throw new Error(`gRPC call failed: ${failed.message}`);
  const used = process.cpuUsage(cpu);
  return { calls: done, seconds: (Date.now() - started) / 1000, clientUs: used.user + used.system };
}

/**
 * One h2load run; its CPU time is read from the shell that waited for it (cutime + cstime of
 * /proc/<shell>/stat), so no `time` binary is needed.
 */
async function h2load(port: number, args: string[], body: string, tickUs: number): Promise<Driven & { done: number }> {
  const script = 'h2load "$@"; s=$?; echo "children-cpu $(cut -d" " -f16,17 /proc/$$/stat)"; exit $s';
  const started = Date.now();
  const res = await execa('sh', ['-c', script, 'sh', ...args, '-d', body, '-H', 'content-type: application/grpc', '-H', 'te: trailers', `http://127.0.0.1:${port}${METHOD}`], { reject: false });
  const seconds = (Date.now() - started) / 1000;
  const requests = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(res.stdout);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(res.stdout);
  const cpu = /children-cpu (\d+) (\d+)/.exec(res.stdout);
  if (res.exitCode !== 0 || !requests || !codes || !cpu) throw new Error(`h2load failed (${res.exitCode}):\n${res.stdout}\n${res.stderr}`);
  const [done, succeeded, failed, errored, timeout] = requests.slice(1).map(Number);
  if (failed + errored + timeout > 0 || Number(codes[2]) + Number(codes[3]) + Number(codes[4]) > 0) {
    throw new Error(`h2load: calls failed (${failed} failed, ${errored} errored, ${timeout} timed out; status codes ${codes[0]}):\n${res.stdout}`);
  }
  return { calls: succeeded, done, seconds, clientUs: (Number(cpu[1]) + Number(cpu[2])) * tickUs };
}

async function driveH2load(kind: 'h2load-64c' | 'h2load-1c', port: number, seconds: number, body: string, tickUs: number): Promise<Driven & { done: number }> {
  if (kind === 'h2load-64c') {
    return h2load(port, ['-t1', `-c${IN_FLIGHT}`, '-m1', `-D${seconds}`], body, tickUs);
  }
  const total = { calls: 0, done: 0, seconds: 0, clientUs: 0 };
  while (total.seconds < seconds) {
    const run = await h2load(port, ['-t1', '-c1', `-m${IN_FLIGHT}`, `-n${CALLS_PER_CONNECTION}`], body, tickUs);
    total.calls += run.calls;
    total.done += run.done;
    total.seconds += run.seconds;
    total.clientUs += run.clientUs;
  }
  return total;
}

function hasH2load(): boolean {
  return execa.sync('sh', ['-c', 'command -v h2load'], { reject: false }).exitCode === 0;
}

interface Sample {
  rate: number;
  /** Cores' worth of CPU other processes on the machine used during the run. */
  others: number;
  /** CPU microseconds per call: client, backend, nginx. */
  client: number;
  backend: number;
  nginx: number;
}

export async function benchGrpc(options: { nginx: string; seconds: number; rounds: number; freePort: () => Promise<number>; workerTicks: (master: number) => number; tickUs: number }): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-grpc-'));
  const body = path.join(dir, 'request.bin');
  // A gRPC message frame: not compressed (0), 4-byte big-endian length, the message.
  const frame = Buffer.alloc(5 + MESSAGE.length);
  frame.writeUInt32BE(MESSAGE.length, 1);
  MESSAGE.copy(frame, 5);
  fs.writeFileSync(body, frame);
  let kinds = (process.env.BENCH_GRPC_CLIENTS ?? 'h2load-64c,h2load-1c,grpc-js').split(',').map((s) => s.trim()) as ClientKind[];
  for (const k of kinds) if (!(k in CLIENT_LABELS)) throw new Error(`BENCH_GRPC_CLIENTS: unknown client ${k} (${Object.keys(CLIENT_LABELS).join(', ')})`);
  if (!hasH2load() && kinds.some((k) => k.startsWith('h2load'))) {
    console.log('gRPC: h2load not installed (Debian package nghttp2-client; scripts/install.sh installs it): only the grpc-js client runs');
    kinds = kinds.filter((k) => k === 'grpc-js');
  }
  // An even number of rounds, so each target goes first as often as the other.
  const rounds = options.rounds + (options.rounds % 2);
  const backend = await startBackend();
  const port = await options.freePort();
  const prefix = path.join(dir, 'gw');
  const nginx = new NginxProcess({ prefix, binary: options.nginx, log: silentLogger });
  const channels = { direct: new grpc.Client(`127.0.0.1:${backend.port}`, grpc.credentials.createInsecure()), gateway: new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) };
  const ports = { direct: backend.port, gateway: port };
  const samples = new Map<ClientKind, Record<'direct' | 'gateway', Sample[]>>();
  try {
    const config = renderConfig(buildModel(graphOf(port, backend.port)), { listenAddress: '127.0.0.1', prefix, workerProcesses: 1 });
    const started = await nginx.start(config);
    if (!started.ok) throw new Error(started.message);
    const worker = () => {
      // The worker's pid: the only child of the master (workerTicks sums children).
      return options.workerTicks(nginx.pid!);
    };
    console.log(`gRPC unary: ${MESSAGE.length}-byte messages, grpc-js echo backend in its own process, 1 nginx worker (access log on, as shipped), ${options.seconds} s x ${rounds} rounds per client and target (the first target alternates)`);
    for (const kind of kinds) {
      const runs = { direct: [] as Sample[], gateway: [] as Sample[] };
      samples.set(kind, runs);
      console.log(`  ${CLIENT_LABELS[kind]}`);
      for (let round = 1; round <= rounds; round++) {
        // Direct first in odd rounds, the gateway first in even ones: a drift of the machine's
        // load during a round then favours neither target over the rounds.
        for (const target of round % 2 === 1 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const)) {
          const drive = (seconds: number) =>
            kind === 'grpc-js' ? driveGrpcJs(channels[target], seconds) : driveH2load(kind, ports[target], seconds, body, options.tickUs);
          await drive(1); // warm-up: connections, JIT
          const servedBefore = await backend.served();
          const backendBefore = processTicks(backend.pid);
          const nginxBefore = target === 'gateway' ? worker() : 0;
          const busyBefore = machineBusyTicks();
          const wallBefore = process.hrtime.bigint();
          const run = await drive(options.seconds);
          const wallUs = Number(process.hrtime.bigint() - wallBefore) / 1e3;
          const busyUs = (machineBusyTicks() - busyBefore) * options.tickUs;
          const backendUs = (processTicks(backend.pid) - backendBefore) * options.tickUs;
          const nginxUs = target === 'gateway' ? (worker() - nginxBefore) * options.tickUs : 0;
          const others = Math.max(0, busyUs - run.clientUs - backendUs - nginxUs) / wallUs;
          const served = (await backend.served()) - servedBefore;
          const done = 'done' in run ? (run as { done: number }).done : run.calls;
          if (served < done) throw new Error(`gRPC ${target}: the client counted ${done} answers but the backend served ${served} calls: answers that are not the backend's`);
          const s: Sample = { rate: run.calls / run.seconds, others, client: run.clientUs / run.calls, backend: backendUs / run.calls, nginx: nginxUs / run.calls };
          runs[target].push(s);
          console.log(
            `    round ${round} ${target.padEnd(7)} ${s.rate.toFixed(0).padStart(7)} calls/s   CPU us/call: client ${s.client.toFixed(1).padStart(5)}, backend ${s.backend.toFixed(1).padStart(5)}` +
              (target === 'gateway' ? `, nginx ${s.nginx.toFixed(1).padStart(5)}` : '') + `   (load ${os.loadavg()[0].toFixed(1)}, others ${s.others.toFixed(2)} cores)`,
          );
        }
      }
    }
  } finally {
    channels.direct.close();
    channels.gateway.close();
    await nginx.stop();
    await backend.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  const summary = (xs: Sample[]): Sample => ({ rate: median(xs.map((x) => x.rate)), others: median(xs.map((x) => x.others)), client: median(xs.map((x) => x.client)), backend: median(xs.map((x) => x.backend)), nginx: median(xs.map((x) => x.nginx)) });
  const docRows: Array<Array<string | number>> = [];
  for (const [kind, runs] of samples) {
    const d = summary(runs.direct);
    const g = summary(runs.gateway);
    const dTotal = d.client + d.backend;
    const gTotal = g.client + g.backend + g.nginx;
    const roundRatios = runs.gateway.map((x, i) => x.rate / runs.direct[i].rate);
    console.log(
      `gRPC ${CLIENT_LABELS[kind]}: direct ${d.rate.toFixed(0)}, gateway ${g.rate.toFixed(0)} calls/s (medians); ratio gateway/direct ${(g.rate / d.rate).toFixed(3)} (goal >= 0.9); ` +
        `median of the rounds' ratios ${median(roundRatios).toFixed(3)} (${roundRatios.map((r) => r.toFixed(2)).join(', ')})`,
    );
    console.log(
      `  CPU per call (medians): direct ${dTotal.toFixed(1)} us (client ${d.client.toFixed(1)} + backend ${d.backend.toFixed(1)}); ` +
        `gateway ${gTotal.toFixed(1)} us (client ${g.client.toFixed(1)} + backend ${g.backend.toFixed(1)} + nginx ${g.nginx.toFixed(1)}); CPU-bound ratio ${(dTotal / gTotal).toFixed(3)}`,
    );
    // calls/s per core the other work left (the three processes and the others keep the cores
    // busy): the rounds' ratio with most of the machine's noise divided out.
    const perCore = (x: Sample) => x.rate / Math.max(0.1, os.cpus().length - x.others);
    const perCoreRatios = runs.gateway.map((x, i) => perCore(x) / perCore(runs.direct[i]));
    console.log(
      `  calls/s per core left by other work (calls/s / (${os.cpus().length} - others)): ratio ${median(perCoreRatios).toFixed(3)} (${perCoreRatios.map((r) => r.toFixed(2)).join(', ')}); ` +
        `others ${d.others.toFixed(2)} / ${g.others.toFixed(2)} cores (medians, direct / gateway runs)`,
    );
    // With the machine to themselves, each process is one thread on one core at most, and the
    // processes together have all the cores: calls/s <= min(cores / total CPU per call,
    // 1 core / the costliest process's CPU per call). The two paths' bounds, from these costs:
    const cores = os.cpus().length;
    const bound = (costs: number[]) => Math.min(cores / costs.reduce((a, b) => a + b, 0), 1 / Math.max(...costs)) * 1e6;
    const dBound = bound([d.client, d.backend]);
    const gBound = bound([g.client, g.backend, g.nginx]);
    console.log(
      `  bound on ${cores} idle cores from these costs: direct ${dBound.toFixed(0)}, gateway ${gBound.toFixed(0)} calls/s, ratio ${(gBound / dBound).toFixed(3)}` +
        ` (on a shared machine the CPU-bound ratio applies instead)`,
    );
    docRows.push([CLIENT_LABELS[kind], (g.rate / d.rate).toFixed(3), (gBound / dBound).toFixed(3), `${dTotal.toFixed(0)} / ${gTotal.toFixed(0)} µs`, '>= 0.9']);
  }
  docsTable({
    doc: 'gateway',
    id: 'dataplane-grpc',
    command: benchCommand('bench:dataplane'),
    columns: ['client', 'gateway / direct calls/s', 'bound on idle cores', 'CPU per call direct / through nginx', 'goal'],
    rows: docRows,
  });
}
