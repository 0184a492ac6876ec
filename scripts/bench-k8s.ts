/**
 * npm run bench:k8s [-- --routes=5000]
 *
 * The Kubernetes provider on a real API server (../shared/tools/k8s), controller as a local
 * process with nginx local (--dataplane=local), one echo backend in a network namespace:
 *
 * 1. time-to-ready: 30 and 150 namespaces, each with a Service, an EndpointSlice and an
 *    HTTPRoute, created (one kubectl apply) after the controller started, until every route is
 *    served; NGINX Gateway Fabric 2.6 publishes 24 s and 126 s (reconfig suite, created after
 *    the Gateway connected);
 * 2. API requests per route change: requests the controller sent (watches and the lease
 *    aside) and status writes, for one route edited;
 * 3. controller memory (RSS now and its peak, and heap from its own metrics) with N routes
 *    (default 5,000) in Kubernetes mode.
 *
 * --write-docs: also write the figures as docs/benchmarks-gateway.md's table (k8s).
 * --heap-snapshot=DIR: once the memory figure is taken, the controller writes a V8 heap snapshot
 *   into DIR (node's --heapsnapshot-signal; open it in Chrome DevTools' Memory tab).
 */
import { readdirSync, statSync } from 'fs';
import * as path from 'path';
import { startController } from '../e2e/support/controller';
import { controllerHeapMb, metrics, rssMb } from './support/proc-memory';
import { startCluster } from '../e2e/support/kube';
import { gateway, gatewayClass, httpRoute, rule, serviceFor, type Manifest } from '../e2e/support/manifests';
import { startNetnsBackends } from '../e2e/support/netns';
import { backendOf } from '../e2e/support/http';
import { freePort } from '../e2e/support/ports';
import { makeTempDir, removeDir } from '../e2e/support/tmp';
import { benchCommand, docsTable } from './support/bench-docs';

const NGF = { 30: 24, 150: 126 } as Record<number, number>;
const GOAL = { 30: 5, 150: 15 } as Record<number, number>;

function arg(name: string, fallback: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : fallback;
}

function requestsSent(m: Map<string, number>): number {
  let n = 0;
  for (const [k, v] of m) if (k.startsWith('portcullis_controller_api_requests_total{') && !k.includes('verb="watch"')) n += v;
  return n;
}

async function waitServed(port: number, paths: string[], timeoutMs: number): Promise<void> {
  const pending = new Set(paths);
  const deadline = Date.now() + timeoutMs;
  while (pending.size) {
    if (Date.now() > deadline) throw new Error(`${pending.size} routes not served after ${timeoutMs} ms`);
    await Promise.all(
      [...pending].slice(0, 50).map(async (p) => {
        if ((await backendOf(port, p).catch(() => 0)) === 'echo') pending.delete(p);
      }),
    );
    if (pending.size) await new Promise((r) => setTimeout(r, 20));
  }
}

function argText(name: string): string | undefined {
  return process.argv.find((x) => x.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** Waits for the controller's snapshot (written on SIGUSR2) to appear and stop growing. */
async function heapSnapshot(pid: number, dir: string): Promise<string> {
  process.kill(pid, 'SIGUSR2');
  let last = -1;
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 1000));
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && f.includes(`.${pid}.`));
    if (!file) continue;
    const size = statSync(path.join(dir, file)).size;
    if (size > 0 && size === last) return path.join(dir, file);
    last = size;
  }
  throw new Error(`no heap snapshot in ${dir} after 300 s`);
}

async function main(): Promise<void> {
  const manyRoutes = arg('routes', 5000);
  const dir = await makeTempDir('portcullis-bench-k8s-');
  const cluster = await startCluster();
  const netns = await startNetnsBackends(['echo']);
  const port = await freePort();
  const metricsPort = await freePort();
  const address = netns.address;
  const echoPort = netns.ports.echo;
  let controller: Awaited<ReturnType<typeof startController>> | undefined;
  const snapshotDir = argText('heap-snapshot');
  if (snapshotDir) {
    const flags = `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${path.resolve(snapshotDir)}`;
    process.env.E2E_CONTROLLER_NODE_ARGS = `${process.env.E2E_CONTROLLER_NODE_ARGS ?? ''} ${flags}`.trim();
  }
  try {
    await cluster.apply([gatewayClass(), gateway('gw', [{ name: 'http', port, allowedRoutes: { namespaces: { from: 'All' } } }])]);
    controller = await startController({
      manifestsDir: dir,
      stateDir: path.join(dir, 'state'),
      kubeconfig: cluster.kubeconfig,
      logLevel: 'info',
      args: ['--leader-election=false', `--health-address=127.0.0.1:${await freePort()}`, `--metrics-address=127.0.0.1:${metricsPort}`],
    });
    const pid = controller.child.pid!;
    console.log('time-to-ready: namespaces each with Service + EndpointSlice + HTTPRoute, created after the controller started');
    const rows: Array<Array<string | number>> = [];
    for (const n of [30, 150]) {
      const docs: Manifest[] = [];
      const paths: string[] = [];
      for (let i = 0; i < n; i++) {
        const ns = `ttr${n}-${i}`;
        docs.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
        docs.push(...serviceFor('echo', echoPort, address, ns));
        docs.push(httpRoute('app', { namespace: ns, parentRefs: [{ name: 'gw', namespace: 'default' }], rules: [rule('echo', [{ path: { type: 'PathPrefix', value: `/${ns}` } }])] }));
        paths.push(`/${ns}/x`);
      }
      const t0 = Date.now();
      await cluster.apply(docs);
      const applied = Date.now() - t0;
      await waitServed(port, paths, 300000);
      const s = (Date.now() - t0) / 1000;
      console.log(`  ${String(n).padStart(3)} namespaces: ${s.toFixed(1)} s (kubectl apply ${(applied / 1000).toFixed(1)} s of it)  NGF 2.6: ${NGF[n]} s  ratio ${(NGF[n] / s).toFixed(1)}x  goal < ${GOAL[n]} s`);
      rows.push([`time to ready, ${n} namespaces (kubectl apply ${(applied / 1000).toFixed(1)} s of it)`, `${s.toFixed(1)} s`, `< ${GOAL[n]} s`, `NGF 2.6: ${NGF[n]} s`]);
    }

    // API requests for one route change (steady state first).
    await new Promise((r) => setTimeout(r, 2000));
    const before = await metrics(metricsPort);
    await cluster.kubectl(['patch', 'httproute', 'app', '-n', 'ttr30-0', '--type=merge', '-p', JSON.stringify({ spec: { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/changed' } }], backendRefs: [{ name: 'echo', port: 80 }] }] } })]);
    await waitServed(port, ['/changed/x'], 30000);
    await new Promise((r) => setTimeout(r, 2000));
    const after = await metrics(metricsPort);
    const d = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
    console.log(
      `API requests per route change: ${requestsSent(after) - requestsSent(before)} sent (status writes ${d('portcullis_controller_status_writes_total')}, reconciles ${d('portcullis_controller_reconciles_total')}); watch events in, no list`,
    );
    rows.push(['one route changed: API requests / reconciles', `${requestsSent(after) - requestsSent(before)} / ${d('portcullis_controller_reconciles_total')}`, '', '']);

    if (manyRoutes > 0) {
      const rssBefore = rssMb(pid);
      const t0 = Date.now();
      for (let start = 0; start < manyRoutes; start += 500) {
        const chunk: Manifest[] = [];
        for (let i = start; i < Math.min(manyRoutes, start + 500); i++) {
          chunk.push(httpRoute(`m${i}`, { rules: [rule('echo', [{ path: { type: 'PathPrefix', value: `/m${i}` } }])] }));
        }
        await cluster.apply([...serviceFor('echo', echoPort, address), ...chunk]);
      }
      await waitServed(port, [`/m0/x`, `/m${manyRoutes - 1}/x`], 600000);
      await new Promise((r) => setTimeout(r, 3000));
      // The controller's own gauges (prom-client's default metrics): how much of the RSS is heap.
      const m = await metrics(metricsPort);
      const heap = controllerHeapMb(m);
      const [rss, peak] = [rssMb(pid), rssMb(pid, 'VmHWM')];
      console.log(`controller memory with ${manyRoutes + 180} routes: RSS ${rss} MB, peak ${peak} MB (${rssBefore} MB with 180), heap used / total ${heap.used} / ${heap.total} MB; all served ${((Date.now() - t0) / 1000).toFixed(1)} s after the first apply`);
      rows.push([`controller RSS / peak RSS with ${manyRoutes + 180} routes (heap used / total)`, `${rss} / ${peak} MB (${heap.used} / ${heap.total} MB)`, '< 250 MB', 'Envoy Gateway: 256 MiB at 1,000 routes']);
      if (snapshotDir) console.log(`controller heap snapshot: ${await heapSnapshot(pid, path.resolve(snapshotDir))}`);
    }
    docsTable({ doc: 'gateway', id: 'k8s', command: benchCommand('bench:k8s'), columns: ['figure', 'Portcullis', 'goal', 'anchor'], rows });
  } finally {
    await controller?.stop('SIGTERM');
    await netns.close();
    await cluster.stop();
    await removeDir(dir);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
