/**
 * The filters and TLS parts of `npm run bench:dataplane` (same routes, backend and wrk as the
 * HTTP part; configs through the real pipeline, one nginx worker):
 *   - filters: requests/s and nginx CPU per request with, on every rule, a RequestHeaderModifier
 *     (set + add), a ResponseHeaderModifier (set + remove) and a URLRewrite (ReplacePrefixMatch)
 *     vs the same rules without filters. Goal: filtered/plain >= 0.97.
 *   - TLS: an HTTPS listener (RSA 2048 certificate made by openssl, TLS 1.3) vs plain HTTP:
 *     requests/s on keep-alive connections, and new connections per second (wrk with
 *     `Connection: close`: one full handshake per request, no session resumption).
 *
 * Method: each config is served by an nginx of its own, started once (no reload between runs),
 * and the two sides of a comparison run back to back in pairs, in the order A B, B A, A B, ...;
 * the ratio printed first is the median of the pairs' ratios. wrk, the gateway and the backend
 * share the machine's cores, so a slow drift of other load moves both runs of a pair alike, and
 * the ABBA order keeps "second in the pair" from favouring one side. The medians' ratio, the
 * spread of the pair ratios and the CPU microseconds per request of the gateway's worker, the
 * backend's worker (/proc/PID/schedstat, ns) and wrk (clock ticks) are printed too: on 2 cores,
 * req/s follows the three's CPU per request.
 *
 * Precision: under other work's load req/s swings 2-3x between runs seconds apart while the
 * CPU per request moves a few per cent, so beside the req/s ratio (what the goal is stated in)
 * the summary prints, per pair, the capacity ratio: A's CPU per request over B's, for the three
 * processes together (on 2 cores shared by the three, or a CPU share under the kernel's
 * autogroup scheduling, req/s = CPU available / CPU per request, so this is the req/s ratio
 * with the machine's noise divided out) and for the gateway alone. Each ratio is given as the
 * median of the pairs with a distribution-free 95 % confidence interval (order statistics of
 * the pairs), so whether two figures like 0.96 and 0.98 can be told apart is printed, not
 * guessed. The req/s ratio per core left by other work (req/s / (cores - others' CPU)) is the
 * throughput figure with most of that noise divided out. Each run also reads the machine's busy time (/proc/stat) minus the three
 * processes': the CPU other work took during it ("others"); the req/s ratio is printed again
 * over the pairs where others took under 0.25 of a core in both runs, when there are 5 or more.
 *
 * With valgrind installed, also nginx's instructions per request for both filter configs under
 * callgrind (scripts/bench-instructions.ts): the same comparison, free of machine noise, but
 * user space only.
 *
 * Env: BENCH_FILTERS=0 / BENCH_TLS=0 skip a part; BENCH_CALLGRIND=0 skips the callgrind count;
 * BENCH_PAIRS (default 20; TLS: a quarter as many per comparison, at least 3), BENCH_PAIR_SECONDS
 * (per run, default 2), BENCH_MAX_PAIRS (filters: after BENCH_PAIRS, pairs go on until the
 * capacity ratio's 95 % interval is at most 0.02 wide or this many pairs ran; default 3x BENCH_PAIRS).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import execa from 'execa';
import { NginxProcess } from '../controller/src/apply/nginx';
import type { Graph } from '../controller/src/graph/types';
import type { RuleFilters } from '../controller/src/graph/filters';
import { childPids } from '../controller/src/apply/procs';
import { silentLogger } from '../controller/src/log';
import { buildModel } from '../controller/src/model';
import { renderConfig } from '../controller/src/render';
import { hasCallgrind, instructionsPerRequest } from './bench-instructions';
import { benchCommand, docsTable } from './support/bench-docs';

export interface BenchFiltersOptions {
  nginx: string;
  routes: number;
  connections: number;
  freePort: () => Promise<number>;
  /** The backend nginx's master: its worker's CPU per request is printed beside the gateway's. */
  backendPid?: number;
  /** The HTTP part's graph: ROUTES routes x 3 PathPrefix rules to one backend. */
  graphOf: (port: number, backendPort: number, matched: boolean) => Graph;
  backendPort: number;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Two header modifiers and a rewrite on every rule of the graph (in place). */
function addFilters(graph: Graph): Graph {
  for (const route of graph.routes) {
    for (const rule of route.rules) {
      const filters: RuleFilters = {
        requestHeaders: { set: [{ name: 'X-Gateway', value: 'portcullis' }], add: [{ name: 'X-Tenant', value: 'gw' }], remove: [] },
        responseHeaders: { set: [{ name: 'X-Served-By', value: 'portcullis' }], add: [], remove: ['X-Internal'] },
        rewrite: { path: { type: 'ReplacePrefixMatch', value: '/backend', prefix: rule.matches[0].path.value } },
        mirrors: [],
      };
      rule.filters = filters;
    }
  }
  return graph;
}

/** The graph's one listener made HTTPS with `pem` (certificate + key). */
export function withTls(graph: Graph, pem: string): Graph {
  for (const l of graph.gateways[0].listeners) {
    l.protocol = 'HTTPS';
    l.certificates = [{ id: 'bench_cert', pem }];
  }
  return graph;
}

interface Sample {
  rps: number;
  requests: number;
  errors: number;
  /** CPU microseconds per request: the gateway's nginx worker, the backend's worker, wrk. */
  gateway: number;
  backend: number;
  client: number;
  /** Cores' worth of CPU that other processes on the machine used during the run. */
  others: number;
}

/** Busy time of all CPUs (user, nice, system, irq, softirq, steal), in clock ticks. */
function machineBusyTicks(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
}

/** CPU nanoseconds the children of `master` (its workers) have run: exact, unlike clock ticks. */
function workersNs(master: number | undefined): number {
  if (master === undefined) return 0;
  let ns = 0;
  for (const pid of childPids(master)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      /* exited meanwhile */
    }
  }
  return ns;
}

const TICK_US = 1e6 / Number(process.env.CLK_TCK ?? 100);

/**
 * One wrk run; also reads the CPU time of the gateway's worker, the backend's worker and wrk
 * itself (the shell's reaped-children time, /proc/$$/stat fields cutime + cstime, in ticks).
 */
async function wrk(o: BenchFiltersOptions, gateway: Gateway, url: string, seconds: number, close = false, headers = ['X-Tenant: t1']): Promise<Sample> {
  const args = ['-t1', `-c${o.connections}`, `-d${seconds}s`, ...headers.flatMap((h) => ['-H', h])];
  if (close) args.push('-H', 'Connection: close');
  const g0 = workersNs(gateway.nginx.pid);
  const b0 = workersNs(o.backendPid);
  const m0 = machineBusyTicks();
  const t0 = process.hrtime.bigint();
  const res = await execa('sh', ['-c', 'wrk "$@" && cat /proc/$$/stat', 'sh', ...args, url]);
  const g1 = workersNs(gateway.nginx.pid);
  const b1 = workersNs(o.backendPid);
  const busyUs = (machineBusyTicks() - m0) * TICK_US;
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3;
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(res.stdout);
  const requests = Number(/(\d+) requests in/.exec(res.stdout)?.[1] ?? 0);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(res.stdout);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(res.stdout);
  if (!rps || requests === 0) throw new Error(`cannot read wrk output:\n${res.stdout}`);
  if (non2xx) throw new Error(`${non2xx[1]} non-2xx answers for ${url}`);
  const stat = res.stdout.trim().split('\n').pop()!;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const clientTicks = Number(fields[13]) + Number(fields[14]);
  const ownUs = (g1 - g0 + b1 - b0) / 1e3 + clientTicks * TICK_US;
  return {
    rps: Number(rps[1]),
    requests,
    errors: socketErrors ? Number(socketErrors[1]) + Number(socketErrors[4]) : 0,
    gateway: (g1 - g0) / 1e3 / requests,
    backend: (b1 - b0) / 1e3 / requests,
    client: (clientTicks * TICK_US) / requests,
    // This process (node) and the shell are idle during the run: what is left is other work.
    others: Math.max(0, busyUs - ownUs) / wallUs,
  };
}

/** A gateway nginx serving one config on a port of its own, for the whole part. */
export interface Gateway {
  nginx: NginxProcess;
  port: number;
}

export interface Side {
  name: string;
  gateway: Gateway;
  url: string;
  close?: boolean;
}

export interface PairResult {
  a: Sample[];
  b: Sample[];
  /** b.rps / a.rps of each pair of back-to-back runs. */
  ratios: number[];
}

/**
 * Runs `pairs` pairs of back-to-back runs of two sides, in the order A B, B A, A B, ... (a drift
 * of the machine's load during a pair then favours neither side over the whole series), on
 * gateways that stay up: no reload between runs, each side on its own nginx with its own config.
 */
export async function comparePairs(
  o: BenchFiltersOptions,
  series: [Side, Side][],
  pairs: number,
  seconds: number,
  more?: { maxPairs: number; enough: (r: PairResult[]) => boolean },
  headers?: string[],
): Promise<PairResult[]> {
  const out: PairResult[] = series.map(() => ({ a: [], b: [], ratios: [] }));
  for (const [a, b] of series) for (const side of [a, b]) await wrk(o, side.gateway, side.url, 1, side.close, headers); // warm-up
  // After `pairs` pairs, more pairs (up to maxPairs, an even number in all) until `enough`.
  for (let i = 0; i < pairs || (more && i < more.maxPairs && (i % 2 === 1 || !more.enough(out))); i++) {
    for (let s = 0; s < series.length; s++) {
      const [a, b] = series[s];
      const order = i % 2 === 0 ? [a, b] : [b, a];
      const got: Record<string, Sample> = {};
      for (const side of order) {
        const r = await wrk(o, side.gateway, side.url, seconds, side.close, headers);
        got[side.name] = r;
        console.log(
          `  pair ${String(i + 1).padStart(2)} ${side.name.padEnd(22)} ${r.rps.toFixed(0).padStart(8)} req/s  CPU us/request: nginx ${r.gateway.toFixed(1).padStart(5)}, ` +
            `backend ${r.backend.toFixed(1).padStart(5)}, wrk ${r.client.toFixed(1).padStart(5)}; others ${r.others.toFixed(2)} cores${r.errors ? `  (${r.errors} socket errors)` : ''}`,
        );
      }
      out[s].a.push(got[a.name]);
      out[s].b.push(got[b.name]);
      out[s].ratios.push(got[b.name].rps / got[a.name].rps);
    }
  }
  return out;
}

/**
 * The median of `xs` with a distribution-free 95 % confidence interval: the order statistics
 * x(k) and x(n+1-k) for the largest k with P(Binomial(n, 1/2) < k) <= 2.5 % (n >= 6; for fewer
 * pairs the interval is the whole range, which says as much).
 */
export function medianInterval(xs: number[]): { median: number; low: number; high: number } {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  let k = 0;
  let below = 0; // P(Binomial(n, 1/2) < k + 1) = sum of P(X = i) for i <= k
  let term = Math.pow(0.5, n); // P(X = 0)
  while (k < n && below + term <= 0.025) {
    below += term;
    term = (term * (n - k)) / (k + 1);
    k++;
  }
  const lo = Math.max(1, k);
  return { median: median(s), low: s[lo - 1], high: s[n - lo] };
}

const f3 = (x: number) => x.toFixed(3);
const interval = (xs: number[]) => {
  const m = medianInterval(xs);
  // Under 6 pairs no order statistics cover 95 %: the whole range is shown, named as such.
  return `${f3(m.median)} [${xs.length >= 6 ? '95 % CI' : `range of ${xs.length}`} ${f3(m.low)}-${f3(m.high)}]`;
};

/** Per pair: A's CPU per request over B's, the three processes together. */
export function capacityRatios(r: PairResult): number[] {
  const all = (x: Sample) => x.gateway + x.backend + x.client;
  return r.a.map((x, i) => all(x) / all(r.b[i]));
}

/** Pairs where other work took under this much CPU (cores) in both runs: the quiet ones. */
const QUIET_OTHERS = 0.25;

/** The summary lines of a series: B against A. Returns the figures docs/benchmarks-gateway.md's tables hold. */
/** The four req/s and CPU rows every pairs table starts with, from report()'s figures. */
export const pairRows = (m: ReturnType<typeof report>, goal = '>= 0.97'): Array<Array<string | number>> => [
  ['req/s ratio, median of pairs [95 % interval]', m.ratio, goal],
  ['ratio of the req/s medians', m.medians, ''],
  ['capacity ratio [95 % interval]', m.capacity, ''],
  ['nginx CPU per request', m.nginx, ''],
];

export function report(a: string, b: string, r: PairResult, goal?: number): { ratio: string; medians: string; capacity: string; nginx: string; rpsA: number; rpsB: number } {
  const m = (xs: Sample[], f: keyof Sample) => median(xs.map((x) => x[f]));
  const all = (x: Sample) => x.gateway + x.backend + x.client;
  const total = (xs: Sample[]) => median(xs.map(all));
  console.log(
    `${b} vs ${a}: req/s ratio ${median(r.ratios).toFixed(3)} (median of ${r.ratios.length} back-to-back pairs; min ${Math.min(...r.ratios).toFixed(3)}, max ${Math.max(...r.ratios).toFixed(3)})` +
      `${goal ? ` (goal >= ${goal})` : ''}; medians ${m(r.b, 'rps').toFixed(0)} vs ${m(r.a, 'rps').toFixed(0)} req/s (${(m(r.b, 'rps') / m(r.a, 'rps')).toFixed(3)})`,
  );
  console.log(
    `  CPU us per request, ${a} -> ${b}: nginx ${m(r.a, 'gateway').toFixed(1)} -> ${m(r.b, 'gateway').toFixed(1)} (capacity ratio ${(m(r.a, 'gateway') / m(r.b, 'gateway')).toFixed(3)}), ` +
      `backend ${m(r.a, 'backend').toFixed(1)} -> ${m(r.b, 'backend').toFixed(1)}, wrk ${m(r.a, 'client').toFixed(1)} -> ${m(r.b, 'client').toFixed(1)}; ` +
      `all three ${total(r.a).toFixed(1)} -> ${total(r.b).toFixed(1)} (ratio ${(total(r.a) / total(r.b)).toFixed(3)})`,
  );
  const capacity = capacityRatios(r);
  const gatewayCapacity = r.a.map((x, i) => x.gateway / r.b[i].gateway);
  const quiet = r.ratios.filter((_, i) => r.a[i].others < QUIET_OTHERS && r.b[i].others < QUIET_OTHERS);
  const others = [...r.a, ...r.b].map((x) => x.others);
  console.log(
    `  per pair, median [95 % CI]: req/s ratio ${interval(r.ratios)}; capacity ratio (${a} CPU / ${b} CPU per request, all three processes) ${interval(capacity)}, ` +
      `gateway alone ${interval(gatewayCapacity)}; other work on the machine ${median(others).toFixed(2)} cores (median of the runs, max ${Math.max(...others).toFixed(2)})`,
  );
  // req/s per core the other work left: on a saturated machine (the bench's processes use what
  // others leave), this divides the machine's noise out of req/s itself.
  const cores = os.cpus().length;
  const perCore = (x: Sample) => x.rps / Math.max(0.1, cores - x.others);
  console.log(`  req/s per core left by other work (req/s / (${cores} - others)), per pair: ${interval(r.b.map((x, i) => perCore(x) / perCore(r.a[i])))}`);
  console.log(
    quiet.length >= 5
      ? `  req/s ratio over the ${quiet.length} quiet pairs (others < ${QUIET_OTHERS} cores in both runs): ${interval(quiet)}`
      : `  only ${quiet.length} quiet pairs (others < ${QUIET_OTHERS} cores in both runs): the req/s ratio carries the machine's noise; the capacity ratio does not`,
  );
  return {
    ratio: `${median(r.ratios).toFixed(3)} (median of ${r.ratios.length} pairs) ${interval(r.ratios)}`,
    medians: `${(m(r.b, 'rps') / m(r.a, 'rps')).toFixed(3)} (${m(r.b, 'rps').toFixed(0)} / ${m(r.a, 'rps').toFixed(0)})`,
    capacity: interval(capacity),
    nginx: `${m(r.b, 'gateway').toFixed(1)} / ${m(r.a, 'gateway').toFixed(1)} µs`,
    rpsA: m(r.a, 'rps'),
    rpsB: m(r.b, 'rps'),
  };
}

export async function benchFilters(o: BenchFiltersOptions): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-filters-'));
  const gateways: Gateway[] = [];
  const target = `/r${Math.floor(o.routes / 2)}/1/item?plan=1`;
  const render = (g: Graph, at: string) => renderConfig(buildModel(g), { listenAddress: '127.0.0.1', prefix: at, workerProcesses: 1, accessLog: false });
  /** A gateway of its own for the graph `build` makes for a port. */
  const start = async (name: string, build: (port: number) => Graph): Promise<Gateway> => {
    const port = await o.freePort();
    const prefix = path.join(dir, name);
    const nginx = new NginxProcess({ prefix, binary: o.nginx, log: silentLogger });
    const gateway = { nginx, port };
    gateways.push(gateway);
    const started = await nginx.start(render(build(port), prefix));
    if (!started.ok) throw new Error(started.message);
    return gateway;
  };
  const pairs = Number(process.env.BENCH_PAIRS ?? 20);
  const seconds = Number(process.env.BENCH_PAIR_SECONDS ?? 2);
  const maxPairs = Number(process.env.BENCH_MAX_PAIRS ?? 3 * pairs);
  try {
    const plain = await start('plain', (port) => o.graphOf(port, o.backendPort, false));
    const url = (g: Gateway, scheme = 'http') => `${scheme}://127.0.0.1:${g.port}${target}`;

    if (process.env.BENCH_FILTERS !== '0') {
      console.log(
        `filters: ${o.routes} HTTPRoutes x 3 rules, each with RequestHeaderModifier (set+add), ResponseHeaderModifier (set+remove), URLRewrite (ReplacePrefixMatch) vs none; ` +
          `each config on its own nginx (1 worker), ${pairs} to ${maxPairs} pairs of back-to-back wrk -c${o.connections} runs of ${seconds} s`,
      );
      const filtered = await start('filtered', (port) => addFilters(o.graphOf(port, o.backendPort, false)));
      // The filters must really run: the response header a ResponseHeaderModifier sets is there.
      if ((await fetch(url(filtered))).headers.get('x-served-by') !== 'portcullis') throw new Error('the filtered config did not set X-Served-By');
      // Enough: the capacity ratio's 95 % interval is at most 0.02 wide (0.96 vs 0.98 told apart).
      const enough = ([f]: PairResult[]) => {
        const c = medianInterval(capacityRatios(f));
        return c.high - c.low <= 0.02;
      };
      const [r] = await comparePairs(
        o,
        [[{ name: 'no filters', gateway: plain, url: url(plain) }, { name: 'filters', gateway: filtered, url: url(filtered) }]],
        pairs,
        seconds,
        { maxPairs, enough },
      );
      const f = report('no filters', 'filters', r, 0.97);
      const filterRows = pairRows(f);
      if (process.env.BENCH_CALLGRIND !== '0' && hasCallgrind()) {
        // Load-independent: nginx's own instructions per request under callgrind (user space only).
        const cgPort = await o.freePort();
        const count = (kind: 'plain' | 'filtered') => {
          const at = path.join(dir, `cg-${kind}`);
          const g = o.graphOf(cgPort, o.backendPort, false);
          return instructionsPerRequest({ nginx: o.nginx, prefix: at, config: render(kind === 'filtered' ? addFilters(g) : g, at), url: `http://127.0.0.1:${cgPort}${target}`, headers: ['X-Tenant: t1'], requests: 1000 });
        };
        const none = await count('plain');
        const withFilters = await count('filtered');
        console.log(`nginx instructions per request (callgrind, user space): none ${none.toFixed(0)}, filters ${withFilters.toFixed(0)} (+${(withFilters - none).toFixed(0)}, +${((100 * (withFilters - none)) / none).toFixed(1)} %)`);
        filterRows.push(['nginx instructions per request (callgrind)', `${withFilters.toFixed(0)} / ${none.toFixed(0)} (+${((100 * (withFilters - none)) / none).toFixed(1)} %)`, '']);
      }
      docsTable({ doc: 'gateway', id: 'dataplane-filters', command: benchCommand('bench:dataplane'), columns: ['figure', 'with filters / without', 'goal'], rows: filterRows });
    }

    if (process.env.BENCH_TLS !== '0') {
      await execa('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '2', '-subj', '/CN=bench.example'], { cwd: dir });
      const pem = fs.readFileSync(path.join(dir, 'c.pem'), 'utf8') + fs.readFileSync(path.join(dir, 'k.pem'), 'utf8');
      const tls = await start('tls', (port) => withTls(o.graphOf(port, o.backendPort, false), pem));
      console.log(`TLS: HTTPS listener (RSA 2048, nginx default protocols) vs HTTP, same routes; keep-alive, then Connection: close (a full handshake per request)`);
      const [ka, nc] = await comparePairs(
        o,
        [
          [{ name: 'http keep-alive', gateway: plain, url: url(plain) }, { name: 'https keep-alive', gateway: tls, url: url(tls, 'https') }],
          [{ name: 'http new connection', gateway: plain, url: url(plain), close: true }, { name: 'https new connection', gateway: tls, url: url(tls, 'https'), close: true }],
        ],
        Math.max(3, Math.ceil(pairs / 4)),
        seconds,
      );
      const k = report('http keep-alive', 'https keep-alive', ka);
      const n = report('http new connection', 'https new connection', nc);
      docsTable({
        doc: 'gateway',
        id: 'dataplane-tls',
        command: benchCommand('bench:dataplane'),
        columns: ['figure', 'HTTPS / HTTP req/s (medians)', 'HTTPS / HTTP req/s, median of pairs', 'nginx CPU per request HTTPS / HTTP'],
        rows: [
          ['keep-alive connections', `${k.rpsB.toFixed(0)} / ${k.rpsA.toFixed(0)}`, k.ratio, k.nginx],
          ['a new connection per request (HTTPS: a full handshake)', `${n.rpsB.toFixed(0)} / ${n.rpsA.toFixed(0)}`, n.ratio, n.nginx],
        ],
      });
    }
  } finally {
    for (const g of gateways) await g.nginx.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
