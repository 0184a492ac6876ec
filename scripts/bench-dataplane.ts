/**
 * npm run bench:dataplane — requests/s through nginx for plain prefix routes vs routes with
 * header + query + method matches, on the same config size (ROUTES HTTPRoutes x 3 rules).
 *
 * Both configs go through the real pipeline (buildModel -> renderConfig -> NginxProcess), each
 * served by an nginx of its own (1 worker, started once). The backend is a separate minimal
 * nginx answering 200 from memory, so the figures measure the gateway, not a Node server. wrk
 * runs on loopback in back-to-back pairs of alternating order (bench-filters.ts comparePairs):
 * the req/s ratio is the median of the pairs' ratios with a distribution-free 95 % interval,
 * beside the capacity ratio (CPU per request of wrk + gateway + backend) and, with valgrind
 * installed, nginx's instructions per request of both configs (callgrind), which other load on
 * the machine does not move. Goal: matched/plain >= 0.97.
 *
 * Env: BENCH_PAIRS (default 20), BENCH_PAIR_SECONDS (default 2), BENCH_ROUTES (default 100),
 *      BENCH_CONNECTIONS (default 32), BENCH_SECONDS / BENCH_ROUNDS (gRPC part), BENCH_CALLGRIND=0
 *      skips the counts, PORTCULLIS_NGINX (see controller/src/apply/nginx-binary.ts),
 *      BENCH_HTTP=0 skips the matching part, BENCH_FILTERS=0 / BENCH_TLS=0 the filters / TLS parts
 *      (scripts/bench-filters.ts: filtered/plain req/s, HTTPS vs HTTP keep-alive and handshakes/s),
 *      BENCH_FULL=0 the full-rules part (scripts/bench-full-rules.ts: 5,000 routes over HTTPS),
 *      BENCH_GRPC=0 the gRPC part (scripts/bench-grpc.ts: unary calls/s gateway vs direct).
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
import { benchFilters, comparePairs, pairRows, report, type Gateway } from './bench-filters';
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

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-dp-'));
  const backendPort = await freePort();
  const { child: backend } = await startBackend(path.join(dir, 'backend'), backendPort);
  const target = `/r${Math.floor(ROUTES / 2)}/1/item?plan=1`;
  const headers = [`X-Tenant: t${Math.floor(ROUTES / 2)}`];
  const render = (matched: boolean, port: number, at: string) =>
    renderConfig(buildModel(graphOf(port, backendPort, matched)), { listenAddress: '127.0.0.1', prefix: at, workerProcesses: 1, accessLog: false });
  const gateways: Gateway[] = [];
  /** Each config on an nginx of its own, started once: no reload between the runs of a pair. */
  const start = async (kind: 'plain' | 'matched'): Promise<Gateway> => {
    const port = await freePort();
    const nginx = new NginxProcess({ prefix: path.join(dir, kind), binary: NGINX, log: silentLogger });
    const gateway = { nginx, port };
    gateways.push(gateway);
    const started = await nginx.start(render(kind === 'matched', port, path.join(dir, kind)));
    if (!started.ok) throw new Error(started.message);
    return gateway;
  };
  const pairs = Number(process.env.BENCH_PAIRS ?? 20);
  const pairSeconds = Number(process.env.BENCH_PAIR_SECONDS ?? 2);
  try {
    console.log(`bench:dataplane  nginx ${(await execa(NGINX, ['-v'], { reject: false })).stderr.replace('nginx version: ', '')}, ` +
      `${os.cpus().length} CPUs, ${ROUTES} HTTPRoutes x 3 rules, ${pairs} pairs of back-to-back wrk -t1 -c${CONNECTIONS} runs of ${pairSeconds} s, 1 nginx worker each, access log off`);
    console.log(`  plain:   PathPrefix only                   GET ${target}`);
    console.log(`  matched: PathPrefix + header + query + GET GET ${target} (X-Tenant header)`);
    if (process.env.BENCH_HTTP !== '0') {
      const o = { nginx: NGINX, routes: ROUTES, connections: CONNECTIONS, freePort, graphOf, backendPort, backendPid: backend.pid };
      const plain = await start('plain');
      const matched = await start('matched');
      const url = (g: Gateway) => `http://127.0.0.1:${g.port}${target}`;
      const [r] = await comparePairs(o, [[{ name: 'plain', gateway: plain, url: url(plain) }, { name: 'matched', gateway: matched, url: url(matched) }]], pairs, pairSeconds, undefined, headers);
      const m = report('plain', 'matched', r, 0.97);
      const rows = pairRows(m);
      if (process.env.BENCH_CALLGRIND !== '0' && hasCallgrind()) {
        // Load-independent: nginx's own instructions per request of both configs (user space).
        const cgPort = await freePort();
        const count = (kind: 'plain' | 'matched') => {
          const at = path.join(dir, `cg-${kind}`);
          return instructionsPerRequest({ nginx: NGINX, prefix: at, config: render(kind === 'matched', cgPort, at), url: `http://127.0.0.1:${cgPort}${target}`, headers, requests: 1000 });
        };
        const none = await count('plain');
        const all = await count('matched');
        console.log(`nginx instructions per request (callgrind, user space): plain ${none.toFixed(0)}, matched ${all.toFixed(0)} (${(all / none).toFixed(3)}x)`);
        rows.push(['nginx instructions per request (callgrind)', `${all.toFixed(0)} / ${none.toFixed(0)} (${(all / none).toFixed(3)}x)`, '']);
      }
      docsTable({ doc: 'gateway', id: 'dataplane-matching', command: benchCommand('bench:dataplane'), columns: ['figure', `matched / plain, ${ROUTES} routes`, 'goal'], rows });
    }
    if (process.env.BENCH_FILTERS !== '0' || process.env.BENCH_TLS !== '0') {
      await benchFilters({ nginx: NGINX, routes: ROUTES, connections: CONNECTIONS, freePort, graphOf, backendPort, backendPid: backend.pid });
    }
    if (process.env.BENCH_FULL !== '0') {
      await benchFullRules({ nginx: NGINX, connections: CONNECTIONS, freePort, backendPort, backendPid: backend.pid });
    }
  } finally {
    for (const g of gateways) await g.nginx.stop();
    backend.kill('SIGQUIT');
    await backend.catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
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
