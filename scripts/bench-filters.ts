/**
 * The filters and TLS parts of `npm run bench:dataplane` (same routes, backend and wrk as the
 * HTTP part; configs through the real pipeline, one nginx worker, rounds alternating):
 *   - filters: requests/s and nginx CPU per request with, on every rule, a RequestHeaderModifier
 *     (set + add), a ResponseHeaderModifier (set + remove) and a URLRewrite (ReplacePrefixMatch)
 *     vs the same rules without filters. Goal: filtered/plain >= 0.97.
 *   - TLS: an HTTPS listener (RSA 2048 certificate made by openssl, TLS 1.3) vs plain HTTP:
 *     requests/s on keep-alive connections, and new connections per second (wrk with
 *     `Connection: close`: one full handshake per request, no session resumption).
 *
 *     With valgrind installed, also nginx's instructions per request for both configs under
 *     callgrind (scripts/bench-instructions.ts): the same comparison, free of machine noise.
 *
 * Env: BENCH_FILTERS=0 / BENCH_TLS=0 skip a part; BENCH_CALLGRIND=0 skips the callgrind count.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import execa from 'execa';
import { NginxProcess } from '../controller/src/apply/nginx';
import type { Graph } from '../controller/src/graph/types';
import type { RuleFilters } from '../controller/src/graph/filters';
import { silentLogger } from '../controller/src/log';
import { buildModel } from '../controller/src/model';
import { renderConfig, type RenderedConfig } from '../controller/src/render';
import { hasCallgrind, instructionsPerRequest } from './bench-instructions';

export interface BenchFiltersOptions {
  nginx: string;
  seconds: number;
  rounds: number;
  routes: number;
  connections: number;
  freePort: () => Promise<number>;
  workerTicks: (master: number) => number;
  tickUs: number;
  /** The HTTP part's graph: ROUTES routes x 3 PathPrefix rules to one backend. */
  graphOf: (port: number, backendPort: number, matched: boolean) => Graph;
  backendPort: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

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
function withTls(graph: Graph, pem: string): Graph {
  for (const l of graph.gateways[0].listeners) {
    l.protocol = 'HTTPS';
    l.certificates = [{ id: 'bench_cert', pem }];
  }
  return graph;
}

interface Run {
  rps: number;
  requests: number;
  errors: number;
}

async function wrk(url: string, seconds: number, connections: number, close = false): Promise<Run> {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '-H', 'X-Tenant: t1'];
  if (close) args.push('-H', 'Connection: close');
  const res = await execa('wrk', [...args, url]);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(res.stdout);
  const requests = /(\d+) requests in/.exec(res.stdout);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(res.stdout);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(res.stdout);
  if (!rps) throw new Error(`cannot read wrk output:\n${res.stdout}`);
  if (non2xx) throw new Error(`${non2xx[1]} non-2xx answers for ${url}`);
  return { rps: Number(rps[1]), requests: Number(requests?.[1] ?? 0), errors: socketErrors ? Number(socketErrors[1]) + Number(socketErrors[4]) : 0 };
}

/** Alternating rounds of several configs on one nginx; per config the req/s and CPU us/request of each round. */
async function compare(
  o: BenchFiltersOptions,
  nginx: NginxProcess,
  runs: { name: string; config: RenderedConfig; url: string; close?: boolean }[],
): Promise<Record<string, { rps: number[]; cpu: number[] }>> {
  const out: Record<string, { rps: number[]; cpu: number[] }> = {};
  for (const r of runs) out[r.name] = { rps: [], cpu: [] };
  for (let round = 1; round <= o.rounds; round++) {
    for (const r of runs) {
      const applied = await nginx.apply(r.config);
      if (!applied.ok) throw new Error(applied.message);
      await wrk(r.url, 1, o.connections, r.close);
      const before = o.workerTicks(nginx.pid!);
      const run = await wrk(r.url, o.seconds, o.connections, r.close);
      const us = ((o.workerTicks(nginx.pid!) - before) * o.tickUs) / run.requests;
      out[r.name].rps.push(run.rps);
      out[r.name].cpu.push(us);
      console.log(`  round ${round} ${r.name.padEnd(22)} ${run.rps.toFixed(0).padStart(8)} req/s  ${us.toFixed(1).padStart(7)} us nginx CPU/request${run.errors ? `  (${run.errors} socket errors)` : ''}`);
    }
  }
  return out;
}

export async function benchFilters(o: BenchFiltersOptions): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-filters-'));
  const port = await o.freePort();
  const prefix = path.join(dir, 'gw');
  const nginx = new NginxProcess({ prefix, binary: o.nginx, log: silentLogger });
  const render = (g: Graph, at = prefix) => renderConfig(buildModel(g), { listenAddress: '127.0.0.1', prefix: at, workerProcesses: 1, accessLog: false });

  const target = `/r${Math.floor(o.routes / 2)}/1/item?plan=1`;
  const url = `http://127.0.0.1:${port}${target}`;
  try {
    const plain = render(o.graphOf(port, o.backendPort, false));
    const first = await nginx.start(plain);
    if (!first.ok) throw new Error(first.message);

    if (process.env.BENCH_FILTERS !== '0') {
      console.log(`filters: ${o.routes} HTTPRoutes x 3 rules, each with RequestHeaderModifier (set+add), ResponseHeaderModifier (set+remove), URLRewrite (ReplacePrefixMatch) vs none`);
      const filtered = render(addFilters(o.graphOf(port, o.backendPort, false)));
      // The filters must really run: the response header a ResponseHeaderModifier sets is there.
      const applied = await nginx.apply(filtered);
      if (!applied.ok) throw new Error(applied.message);
      if ((await fetch(url)).headers.get('x-served-by') !== 'portcullis') throw new Error('the filtered config did not set X-Served-By');
      const r = await compare(o, nginx, [
        { name: 'no filters', config: plain, url },
        { name: 'filters', config: filtered, url },
      ]);
      const ratio = median(r.filters.rps) / median(r['no filters'].rps);
      console.log(`filters median ${median(r.filters.rps).toFixed(0)} req/s vs none ${median(r['no filters'].rps).toFixed(0)} req/s: ratio ${ratio.toFixed(3)} (goal >= 0.97)`);
      console.log(`nginx CPU per request: none ${median(r['no filters'].cpu).toFixed(1)} us, filters ${median(r.filters.cpu).toFixed(1)} us; capacity ratio ${(median(r['no filters'].cpu) / median(r.filters.cpu)).toFixed(3)}`);
      if (process.env.BENCH_CALLGRIND !== '0' && hasCallgrind()) {
        // Load-independent: nginx's own instructions per request under callgrind (user space only).
        // On a port of its own: the bench's nginx still listens on `port`.
        const cgPort = await o.freePort();
        const count = (kind: 'plain' | 'filtered') => {
          const at = path.join(dir, `cg-${kind}`);
          const g = o.graphOf(cgPort, o.backendPort, false);
          return instructionsPerRequest({ nginx: o.nginx, prefix: at, config: render(kind === 'filtered' ? addFilters(g) : g, at), url: `http://127.0.0.1:${cgPort}${target}`, headers: ['X-Tenant: t1'], requests: 1000 });
        };
        const none = await count('plain');
        const withFilters = await count('filtered');
        console.log(`nginx instructions per request (callgrind, user space): none ${none.toFixed(0)}, filters ${withFilters.toFixed(0)} (+${(withFilters - none).toFixed(0)}, +${((100 * (withFilters - none)) / none).toFixed(1)} %)`);
      }
    }

    if (process.env.BENCH_TLS !== '0') {
      await execa('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '2', '-subj', '/CN=bench.example'], { cwd: dir });
      const pem = fs.readFileSync(path.join(dir, 'c.pem'), 'utf8') + fs.readFileSync(path.join(dir, 'k.pem'), 'utf8');
      const tls = render(withTls(o.graphOf(port, o.backendPort, false), pem));
      const httpsUrl = `https://127.0.0.1:${port}${target}`;
      console.log(`TLS: HTTPS listener (RSA 2048, nginx default protocols) vs HTTP, same routes; keep-alive, then Connection: close (a full handshake per request)`);
      const r = await compare(o, nginx, [
        { name: 'http keep-alive', config: plain, url },
        { name: 'https keep-alive', config: tls, url: httpsUrl },
        { name: 'http new connection', config: plain, url, close: true },
        { name: 'https new connection', config: tls, url: httpsUrl, close: true },
      ]);
      const m = (k: string) => median(r[k].rps);
      console.log(`keep-alive: https ${m('https keep-alive').toFixed(0)} req/s vs http ${m('http keep-alive').toFixed(0)} req/s, ratio ${(m('https keep-alive') / m('http keep-alive')).toFixed(3)}`);
      console.log(`new connections: https ${m('https new connection').toFixed(0)} handshakes/s vs http ${m('http new connection').toFixed(0)} connections/s, ratio ${(m('https new connection') / m('http new connection')).toFixed(3)}; ` +
        `nginx CPU per handshake+request ${median(r['https new connection'].cpu).toFixed(0)} us vs ${median(r['http new connection'].cpu).toFixed(0)} us`);
    }
  } finally {
    await nginx.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
