/**
 * The full-rules part of `npm run bench:dataplane`: many routes (BENCH_FULL_ROUTES, default
 * 5,000, x 3 rules, no hostnames: one server) over HTTPS where every rule has a header, a query
 * and a method match, a RequestHeaderModifier (set) and a ResponseHeaderModifier (set), and every
 * route a RateLimitPolicy (its own limit_req zone, a rate far above what the bench sends) and a
 * ProxySettingsPolicy; against a plain proxy: the same routes as PathPrefix only, without filters
 * or policies, over HTTPS too, so both sides pay the same TLS and the same location tree.
 *
 * Configs go through the real pipeline from manifests (parse -> graph -> policies -> model ->
 * render), the listener made HTTPS on the graph with an openssl-made certificate. Each config is
 * served by an nginx of its own (1 worker); wrk runs in back-to-back pairs in alternating order
 * (bench-filters.ts: comparePairs / report), and with valgrind installed nginx's instructions per
 * request of both are counted under callgrind (bench-instructions.ts): the figure other load on
 * the machine does not move.
 *
 * Env: BENCH_FULL=0 skips it; BENCH_FULL_ROUTES (default 5000); BENCH_PAIRS / BENCH_PAIR_SECONDS
 * as the filters part; BENCH_CALLGRIND=0 skips the count.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import execa from 'execa';
import { NginxProcess } from '../controller/src/apply/nginx';
import { silentLogger } from '../controller/src/log';
import { standardPipeline } from '../controller/src/reconcile';
import { targetsFromGraph } from '../controller/src/policies';
import { DEFAULT_CONTROLLER_NAME } from '../controller/src/graph/types';
import type { RenderedConfig } from '../controller/src/render';
import type { ManifestDoc } from '../controller/src/resources/types';
import { comparePairs, pairRows, report, withTls, type Gateway } from './bench-filters';
import { hasCallgrind, instructionsPerRequest } from './bench-instructions';
import { benchCommand, docsTable } from './support/bench-docs';
import { localService } from './support/l4-manifests';
import { gatewayDocs } from './bench-manifests';

export interface BenchFullOptions {
  nginx: string;
  connections: number;
  backendPort: number;
  backendPid?: number;
  freePort: () => Promise<number>;
}

const api = 'gateway.portcullis.dev/v1alpha1';

/** The manifests: a Gateway, the backend's Service + EndpointSlice, `routes` HTTPRoutes (and their policies when `full`). */
export function fullRuleDocs(routes: number, port: number, backendPort: number, full: boolean): ManifestDoc[] {
  const docs: Record<string, unknown>[] = [...gatewayDocs(port, 'bench', 'web'), ...(localService('echo', 'bench', backendPort) as Record<string, unknown>[])];
  for (let i = 0; i < routes; i++) {
    docs.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: `route-${i}`, namespace: 'bench', creationTimestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() },
      spec: {
        parentRefs: [{ name: 'gw' }],
        rules: [0, 1, 2].map((r) => ({
          matches: [
            full
              ? { path: { type: 'PathPrefix', value: `/r${i}/${r}` }, headers: [{ name: 'X-Tenant', value: `t${i}` }], queryParams: [{ name: 'plan', value: String(r) }], method: 'GET' }
              : { path: { type: 'PathPrefix', value: `/r${i}/${r}` } },
          ],
          ...(full
            ? {
                filters: [
                  { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Gateway', value: 'portcullis' }] } },
                  { type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [{ name: 'X-Served-By', value: 'portcullis' }] } },
                ],
              }
            : {}),
          backendRefs: [{ name: 'echo', port: 80 }],
        })),
      },
    });
    if (!full) continue;
    const target = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: `route-${i}` }];
    docs.push(
      // A zone per route (what a policy per route makes), at a rate the bench never reaches.
      { apiVersion: api, kind: 'RateLimitPolicy', metadata: { name: `rl-${i}`, namespace: 'bench' }, spec: { targetRefs: target, rateLimit: { local: { rules: [{ key: '$binary_remote_addr', rate: '100000r/s', burst: 1000, zoneSize: '1m' }] } } } },
      { apiVersion: api, kind: 'ProxySettingsPolicy', metadata: { name: `ps-${i}`, namespace: 'bench' }, spec: { targetRefs: target, buffering: { busyBuffersSize: '16k' } } },
    );
  }
  return docs.map((doc, i) => {
    const d = doc as { metadata: Record<string, unknown> };
    d.metadata.generation = 1;
    d.metadata.creationTimestamp ??= '2026-01-01T00:00:00.000Z';
    return { source: `bench.yaml:${i}`, doc };
  });
}

/** The config for the docs, its listener made HTTPS with `pem`; throws when a policy was not accepted. */
export function renderFull(docs: ReturnType<typeof fullRuleDocs>, pem: string, prefix: string): RenderedConfig {
  const p = standardPipeline;
  const parsed = p.parseManifests(docs);
  if (parsed.errors.length > 0 || parsed.invalid.length > 0) throw new Error(`bench manifests: ${JSON.stringify(parsed.errors[0] ?? parsed.invalid[0])}`);
  const graph = withTls(p.buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME }), pem);
  const policies = p.parsePolicyDocs!(docs);
  if (policies.invalid.length > 0 || policies.errors.length > 0) throw new Error(`bench policies: ${JSON.stringify(policies.invalid[0] ?? policies.errors[0])}`);
  const result = p.computePolicies!({ policies: policies.policies, invalid: policies.invalid, targets: targetsFromGraph(graph) });
  const config = renderConfigOf(p, graph, result.effective, prefix);
  const text = Object.values(config.files).join('\n');
  const full = docs.some((d) => (d.doc as { kind: string }).kind === 'RateLimitPolicy');
  if (full && !(/limit_req "zone=/.test(text) && /proxy_busy_buffers_size "16k";/.test(text))) throw new Error('the bench policies are not in the rendered config');
  return config;
}

function renderConfigOf(p: typeof standardPipeline, graph: Parameters<typeof p.buildModel>[0], effective: Parameters<typeof p.buildModel>[1], prefix: string): RenderedConfig {
  const config = p.renderConfig(p.buildModel(graph, effective), { listenAddress: '127.0.0.1', prefix });
  // One worker, as the other parts; no access log (the plain proxy's figures have none either).
  config.files['nginx.conf'] = config.files['nginx.conf'].replace(/^worker_processes \S+;/m, 'worker_processes 1;').replace(/^(\s*)access_log [^;]*;/m, '$1access_log off;');
  return config;
}

export async function benchFullRules(o: BenchFullOptions): Promise<void> {
  const routes = Number(process.env.BENCH_FULL_ROUTES ?? 5000);
  const pairs = Number(process.env.BENCH_PAIRS ?? 20);
  const seconds = Number(process.env.BENCH_PAIR_SECONDS ?? 2);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-full-'));
  const gateways: Gateway[] = [];
  const mid = Math.floor(routes / 2);
  const target = `/r${mid}/1/item?plan=1`;
  const headers = [`X-Tenant: t${mid}`];
  try {
    await execa('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '2', '-subj', '/CN=bench.example'], { cwd: dir });
    const pem = fs.readFileSync(path.join(dir, 'c.pem'), 'utf8') + fs.readFileSync(path.join(dir, 'k.pem'), 'utf8');
    const configFor = (kind: 'plain' | 'full', port: number, prefix: string) => renderFull(fullRuleDocs(routes, port, o.backendPort, kind === 'full'), pem, prefix);
    const start = async (kind: 'plain' | 'full'): Promise<Gateway> => {
      const port = await o.freePort();
      const prefix = path.join(dir, kind);
      const nginx = new NginxProcess({ prefix, binary: o.nginx, log: silentLogger });
      const gateway = { nginx, port };
      gateways.push(gateway);
      const started = await nginx.start(configFor(kind, port, prefix));
      if (!started.ok) throw new Error(started.message);
      return gateway;
    };
    console.log(
      `full rules: ${routes} HTTPRoutes x 3 rules over HTTPS (RSA 2048), each rule header + query + method matches, RequestHeaderModifier set, ResponseHeaderModifier set, ` +
        `each route a RateLimitPolicy (own zone) and a ProxySettingsPolicy; vs the same routes as PathPrefix only over HTTPS; ${pairs} pairs of wrk -c${o.connections} runs of ${seconds} s`,
    );
    const plain = await start('plain');
    const full = await start('full');
    const url = (g: Gateway) => `https://127.0.0.1:${g.port}${target}`;
    // The full rule must really run: its ResponseHeaderModifier's header is there.
    const probe = await execa('curl', ['-sk', '-D', '-', '-o', '/dev/null', '-H', headers[0], url(full)]);
    if (!/^x-served-by: portcullis/im.test(probe.stdout)) throw new Error(`the full rule did not answer with X-Served-By:\n${probe.stdout}`);
    const [r] = await comparePairs(
      { ...o, routes, graphOf: () => { throw new Error('unused'); } },
      [[{ name: 'plain https', gateway: plain, url: url(plain) }, { name: 'full rules https', gateway: full, url: url(full) }]],
      pairs,
      seconds,
      undefined,
      headers,
    );
    const f = report('plain https', 'full rules https', r, 0.97);
    const rows = pairRows(f);
    if (process.env.BENCH_CALLGRIND !== '0' && hasCallgrind()) {
      const count = async (kind: 'plain' | 'full') => {
        const port = await o.freePort();
        const at = path.join(dir, `cg-${kind}`);
        return instructionsPerRequest({ nginx: o.nginx, prefix: at, config: configFor(kind, port, at), url: `https://127.0.0.1:${port}${target}`, headers, requests: 1000 });
      };
      const none = await count('plain');
      const all = await count('full');
      console.log(`nginx instructions per request (callgrind, user space, HTTPS keep-alive): plain ${none.toFixed(0)}, full rules ${all.toFixed(0)} (${(all / none).toFixed(3)}x)`);
      rows.push(['nginx instructions per request (callgrind)', `${all.toFixed(0)} / ${none.toFixed(0)} (${(all / none).toFixed(3)}x)`, '']);
    }
    docsTable({ doc: 'gateway', id: 'dataplane-full-rules', command: benchCommand('bench:dataplane'), columns: ['figure', `full rules / plain, ${routes} routes over HTTPS`, 'goal'], rows });
  } finally {
    for (const g of gateways) await g.nginx.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
