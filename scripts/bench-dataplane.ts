/**
 * npm run bench:dataplane — requests/s through nginx for plain prefix routes vs routes with
 * header + query + method matches, on the same config size (ROUTES HTTPRoutes x 3 rules).
 *
 * Both configs go through the real pipeline (buildModel -> renderConfig -> NginxProcess). The
 * backend is a separate minimal nginx answering 200 from memory, so the figures measure the
 * gateway, not a Node server. wrk runs on loopback, bounded in time, alternating plain and
 * matched runs to spread machine noise over both. Prints the figures and the matched/plain ratio
 * (goal >= 0.97). Besides requests/s (sensitive to whatever else runs on the machine), it reads
 * the nginx worker's CPU time from /proc and prints CPU microseconds per request: the cost that
 * bounds throughput when nginx is the bottleneck, and a ratio that other load barely moves.
 *
 * Env: BENCH_SECONDS (per run, default 5), BENCH_ROUNDS (default 3), BENCH_ROUTES (default 100),
 *      BENCH_CONNECTIONS (default 32), PORTCULLIS_NGINX (see controller/src/apply/nginx-binary.ts),
 *      BENCH_HTTP=0 skips the HTTP rounds, BENCH_FILTERS=0 / BENCH_TLS=0 the filters / TLS parts
 *      (scripts/bench-filters.ts: filtered/plain req/s, HTTPS vs HTTP keep-alive and handshakes/s), BENCH_GRPC=0 the gRPC part (scripts/bench-grpc.ts: unary calls/s gateway vs direct).
 * --write-docs: also write each part's figures as its table in docs/benchmarks-gateway.md.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import execa from 'execa';
import { NginxProcess } from '../controller/src/apply/nginx';
import type { BackendRef, Graph, HTTPRouteNode, RouteMatch } from '../controller/src/graph/types';
import { silentLogger } from '../controller/src/log';
import { buildModel } from '../controller/src/model';
import { renderConfig } from '../controller/src/render';
import { defaultNginxBinary } from '../controller/src/apply/nginx-binary';
import { benchGrpc } from './bench-grpc';
import { benchFilters } from './bench-filters';
import { benchFullRules } from './bench-full-rules';
import { hasCallgrind, instructionsPerRequest } from './bench-instructions';
import { freePort } from '../e2e/support/ports';
import { benchCommand, docsTable } from './support/bench-docs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUTES = Number(process.env.BENCH_ROUTES ?? 100);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const NGINX = defaultNginxBinary();


/** A minimal nginx answering 200 "ok" on `port`: a backend that costs next to nothing. */
/** Returns the child wrapped: an execa child is a promise, and returning it would wait for its exit. */
async function startBackend(dir: string, port: number): Promise<{ child: execa.ExecaChildProcess }> {
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const conf = path.join(dir, 'backend.conf');
  fs.writeFileSync(
    conf,
    `worker_processes 1;\npid ${dir}/backend.pid;\nerror_log ${dir}/logs/backend-error.log warn;\n` +
      `events { worker_connections 4096; }\nhttp { access_log off; client_body_temp_path ${dir}/cb; proxy_temp_path ${dir}/pt;\n` +
      `keepalive_requests 100000;\n` +
      `server { listen 127.0.0.1:${port}; location / { return 200 "ok\\n"; } } }\n`,
  );
  const child = execa(NGINX, ['-p', dir + '/', '-e', 'stderr', '-c', conf, '-g', 'daemon off;'], { reject: false, stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((r) => {
      const s = net.connect(port, '127.0.0.1', () => (s.destroy(), r(true)));
      s.on('error', () => r(false));
    });
    if (up) return { child };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('backend nginx did not start');
}

function graphOf(port: number, backendPort: number, matched: boolean): Graph {
  const backend: BackendRef = {
    namespace: 'bench', name: 'echo', group: '', kind: 'Service', port: 80, weight: 1, valid: true,
    endpoints: [{ address: '127.0.0.1', port: backendPort }],
  };
  const routes: HTTPRouteNode[] = [];
  for (let i = 0; i < ROUTES; i++) {
    routes.push({
      namespace: 'bench',
      name: `route-${i}`,
      generation: 1,
      creationTimestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      hostnames: [],
      parents: [],
      rules: [0, 1, 2].map((r) => {
        const m: RouteMatch = { path: { type: 'PathPrefix', value: `/r${i}/${r}` }, headers: [], queryParams: [] };
        if (matched) {
          m.headers = [{ name: 'X-Tenant', type: 'Exact', value: `t${i}` }];
          m.queryParams = [{ name: 'plan', type: 'Exact', value: String(r) }];
          m.method = 'GET';
        }
        return { index: r, matches: [m], backends: [backend], valid: true };
      }),
    });
  }
  return {
    gatewayClasses: [],
    rejectedGateways: [],
    routes,
    gateways: [
      {
        namespace: 'bench', name: 'gw', generation: 1, className: 'portcullis', accepted: true, requestedAddresses: [], conditions: [],
        listeners: [
          {
            gateway: { namespace: 'bench', name: 'gw' }, name: 'http', port, protocol: 'HTTP', valid: true,
            routes: routes.map((route) => ({ route, hostnames: [] })), attachedRoutes: routes.length, attachable: true,
            supportedKinds: [], allowedNamespaces: 'Same', conditions: [],
          },
        ],
      },
    ],
  };
}

/** utime + stime (clock ticks) of every child of `master` (the workers). */
function workerTicks(master: number): number {
  let ticks = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === master) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks;
}

const TICK_US = 1e6 / Number(process.env.CLK_TCK ?? 100);

interface Run {
  rps: number;
  requests: number;
}

async function wrk(port: number, target: string, seconds = SECONDS): Promise<Run> {
  const res = await execa('wrk', [`-t1`, `-c${CONNECTIONS}`, `-d${seconds}s`, '-H', `X-Tenant: t${Math.floor(ROUTES / 2)}`, `http://127.0.0.1:${port}${target}`]);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(res.stdout);
  const requests = /(\d+) requests in/.exec(res.stdout);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(res.stdout);
  if (!rps) throw new Error(`cannot read wrk output:\n${res.stdout}`);
  if (non2xx) throw new Error(`${non2xx[1]} non-2xx answers for ${target}: the route did not match`);
  return { rps: Number(rps[1]), requests: Number(requests?.[1] ?? 0) };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-dp-'));
  const backendPort = await freePort();
  const { child: backend } = await startBackend(path.join(dir, 'backend'), backendPort);
  const port = await freePort();
  const nginx = new NginxProcess({ prefix: path.join(dir, 'gw'), binary: NGINX, log: silentLogger });
  const target = `/r${Math.floor(ROUTES / 2)}/1/item?plan=1`;
  const configs = {
    plain: renderConfig(buildModel(graphOf(port, backendPort, false)), { listenAddress: '127.0.0.1', prefix: path.join(dir, 'gw'), workerProcesses: 1, accessLog: false }),
    matched: renderConfig(buildModel(graphOf(port, backendPort, true)), { listenAddress: '127.0.0.1', prefix: path.join(dir, 'gw'), workerProcesses: 1, accessLog: false }),
  };
  const results: Record<'plain' | 'matched', number[]> = { plain: [], matched: [] };
  const cpu: Record<'plain' | 'matched', number[]> = { plain: [], matched: [] };
  const instructions: Partial<Record<'plain' | 'matched', number>> = {};
  try {
    console.log(`bench:dataplane  nginx ${(await execa(NGINX, ['-v'], { reject: false })).stderr.replace('nginx version: ', '')}, ` +
      `${os.cpus().length} CPUs, ${ROUTES} HTTPRoutes x 3 rules, wrk -t1 -c${CONNECTIONS} -d${SECONDS}s x ${ROUNDS} rounds, 1 nginx worker, access log off`);
    console.log(`  plain:   PathPrefix only                   GET ${target}`);
    console.log(`  matched: PathPrefix + header + query + GET GET ${target} (X-Tenant header)`);
    const first = await nginx.start(configs.plain);
    if (!first.ok) throw new Error(first.message);
    for (let round = 1; round <= (process.env.BENCH_HTTP === '0' ? 0 : ROUNDS); round++) {
      for (const kind of ['plain', 'matched'] as const) {
        const applied = await nginx.apply(configs[kind]);
        if (!applied.ok) throw new Error(applied.message);
        await wrk(port, target, 1); // warm-up: connections, caches
        const before = workerTicks(nginx.pid!);
        const run = await wrk(port, target);
        const usPerRequest = ((workerTicks(nginx.pid!) - before) * TICK_US) / run.requests;
        results[kind].push(run.rps);
        cpu[kind].push(usPerRequest);
        console.log(`  round ${round} ${kind.padEnd(7)} ${run.rps.toFixed(0).padStart(8)} req/s  ${usPerRequest.toFixed(1).padStart(6)} us nginx CPU/request`);
      }
    }
    if (process.env.BENCH_FILTERS !== '0' || process.env.BENCH_TLS !== '0') {
      await benchFilters({ nginx: NGINX, routes: ROUTES, connections: CONNECTIONS, freePort, graphOf, backendPort, backendPid: backend.pid });
    }
    if (process.env.BENCH_HTTP !== '0' && process.env.BENCH_CALLGRIND !== '0' && hasCallgrind()) {
      // Load-independent: nginx's own instructions per request of both configs (user space).
      const cgPort = await freePort();
      for (const kind of ['plain', 'matched'] as const) {
        const at = path.join(dir, `cg-${kind}`);
        const config = renderConfig(buildModel(graphOf(cgPort, backendPort, kind === 'matched')), { listenAddress: '127.0.0.1', prefix: at, workerProcesses: 1, accessLog: false });
        instructions[kind] = await instructionsPerRequest({ nginx: NGINX, prefix: at, config, url: `http://127.0.0.1:${cgPort}${target}`, headers: [`X-Tenant: t${Math.floor(ROUTES / 2)}`], requests: 1000 });
      }
    }
    if (process.env.BENCH_FULL !== '0') {
      await benchFullRules({ nginx: NGINX, connections: CONNECTIONS, freePort, backendPort, backendPid: backend.pid });
    }
  } finally {
    await nginx.stop();
    backend.kill('SIGQUIT');
    await backend.catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (results.plain.length > 0) {
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const plain = median(results.plain);
    const matched = median(results.matched);
    console.log(`plain   median ${plain.toFixed(0)} req/s`);
    console.log(`matched median ${matched.toFixed(0)} req/s`);
    const cpuPlain = median(cpu.plain);
    const cpuMatched = median(cpu.matched);
    const best = (xs: number[]) => Math.min(...xs);
    console.log(`ratio matched/plain ${(matched / plain).toFixed(3)} req/s (goal >= 0.97)`);
    console.log(`nginx CPU per request: plain ${cpuPlain.toFixed(1)} us, matched ${cpuMatched.toFixed(1)} us; ` +
      `capacity ratio plain/matched CPU ${(cpuPlain / cpuMatched).toFixed(3)} (goal >= 0.97)`);
    console.log(`least-disturbed rounds: plain ${best(cpu.plain).toFixed(1)} us, matched ${best(cpu.matched).toFixed(1)} us; ` +
      `ratio ${(best(cpu.plain) / best(cpu.matched)).toFixed(3)}; best req/s ratio ${(Math.max(...results.matched) / Math.max(...results.plain)).toFixed(3)}`);
    const rows: Array<Array<string | number>> = [
      [`req/s (medians of ${results.plain.length} rounds)`, matched.toFixed(0), plain.toFixed(0), (matched / plain).toFixed(3), '>= 0.97'],
      ['nginx CPU per request', `${cpuMatched.toFixed(1)} µs`, `${cpuPlain.toFixed(1)} µs`, (cpuPlain / cpuMatched).toFixed(3), ''],
    ];
    if (instructions.plain && instructions.matched) {
      console.log(`nginx instructions per request (callgrind, user space): plain ${instructions.plain.toFixed(0)}, matched ${instructions.matched.toFixed(0)} (${(instructions.matched / instructions.plain).toFixed(3)}x)`);
      rows.push(['nginx instructions per request (callgrind)', instructions.matched.toFixed(0), instructions.plain.toFixed(0), (instructions.matched / instructions.plain).toFixed(3), '']);
    }
    docsTable({
      doc: 'gateway',
      id: 'dataplane-matching',
      command: benchCommand('bench:dataplane'),
      columns: ['figure', 'matched routes', 'plain proxy', 'ratio', 'goal'],
      rows,
    });
  }
  if (process.env.BENCH_GRPC !== '0') {
    await benchGrpc({ nginx: NGINX, seconds: SECONDS, rounds: ROUNDS, freePort, workerTicks, tickUs: TICK_US });
  }
  console.log(`load average during the run: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (other work on the machine skews req/s)`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
