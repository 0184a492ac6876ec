/**
 * npm run bench:controller — how fast the controller turns manifests into nginx config, and how
 * long a manifest change takes to be served.
 *
 * 1. Build + render for 100, 1,000 and 5,000 HTTPRoutes (3 rules each, mixing path, header,
 *    query and method matches): parseManifests + buildGraph + buildModel ("build"), then
 *    renderConfig ("render"). Each size runs in its own child process, so the peak memory
 *    (maxRSS from the kernel) belongs to that size alone; the heap live after a full collection
 *    and the most V8 committed are printed beside it. "cold" is the first run in a fresh
 *    process (what a controller start pays), "warm" the median of the next runs (a reconcile).
 * 2. Change-to-serving with 1,000 routes (--serve-routes: a list of sizes): the real controller
 *    CLI with real nginx; a route's manifest file is rewritten with a new path and we poll that
 *    path until the echo backend answers; p50/p90 over the changes; then the controller
 *    process's RSS, peak RSS and heap (goals at 20,000 routes: p50 < 500 ms, < 600 MB).
 *
 * 3. Policies: the same build + render for 1,000 routes each carrying route-level
 *    policies (RateLimitPolicy, ProxySettingsPolicy, ClientSettingsPolicy) plus the three kinds
 *    on the Gateway, vs. the same routes without policies (goal: within 1.5x, time and memory).
 *
 * 4. One host: 1,000 routes of 3 rules with no hostnames, all on one hostless
 *    listener, so nginx has one big server block; each change adds one route (a new file renamed
 *    into place) and we poll its path until the echo backend answers (goal p50 < 150 ms).
 *
 * Goals: 5,000 routes under 1 s and 250 MB of RSS; change-to-serving p50 under 150 ms
 * (NGINX Gateway Fabric 2.6 publishes a 160 ms average per change batch at 1,000 HTTPRoutes).
 *
 * 1b. Warm one-file change: the controller's own share of a reconcile (scan, build,
 *    render, status) when one manifest file of 100 routes changed, with the real file provider
 *    and reconciler and a dataplane that accepts at once (goal: < 60 ms at 1,000 routes).
 *
 *   npm run bench:controller [-- --sizes=100,1000,5000 --changes=20 --serve-routes=1000
 *                               --warm-routes=1000 --warm-changes=20
 *                               --regex-every=10 --serve-budget-s=300
 *                               --policy-routes=1000 --policy-repeats=3
 *                               --one-host-routes=1000 --one-host-changes=20 --write-docs]
 * --write-docs: also write the figures as docs/benchmarks-gateway.md's table (controller).
 */
import { spawnSync } from 'child_process';
import * as v8 from 'v8';
import { promises as fs } from 'fs';
import * as path from 'path';
import { stringify } from 'yaml';
import { localDataplane, Reconciler, standardPipeline, type ReconcileSummary } from '../controller/src/reconcile';
import { FileProvider } from '../controller/src/providers/file';
import { silentLogger } from '../controller/src/log';
import { targetsFromGraph, type EffectivePolicies } from '../controller/src/policies';
import { DEFAULT_CONTROLLER_NAME } from '../controller/src/graph/types';
import type { ManifestDoc } from '../controller/src/resources/types';
import { freezeDocument } from '../controller/src/resources/readonly';
import { limitHeapGrowth } from '../controller/src/heap';
import { startController } from '../e2e/support/controller';
import { startEchoBackend } from '../e2e/support/echo-backend';
import { httpRequest } from '../e2e/support/http';
import { freePort } from '../e2e/support/ports';
import { makeTempDir, removeDir } from '../e2e/support/tmp';
import { baseDocs, HOSTS, policyDocs, routeDoc as routeDocWith, SERVICES } from './bench-manifests';
import { benchCommand, docsTable } from './support/bench-docs';
import { rssMb } from './support/proc-memory';

const routeDoc = (i: number, changedPath?: string) => routeDocWith(i, changedPath, REGEX_EVERY);

/** Every Nth route uses a RegularExpression path (the others Exact/PathPrefix); 1 = all. */
const REGEX_EVERY = Number(arg('regex-every', '10'));
/** The children load the TypeScript sources as the controller's bin does (not through tsx). */
const TS_LOADER = path.resolve(__dirname, '..', 'bin', 'typescript.js');
/** A size that needs more heap than this is reported as failed rather than thrashing for minutes. */
const CHILD_HEAP_MB = 1536;

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

// ---------------------------------------------------------------- 1. build + render per size

interface SizeResult {
  routes: number;
  coldBuildMs: number;
  coldRenderMs: number;
  warmBuildMs: number;
  warmRenderMs: number;
  configBytes: number;
  /** nginx `map` blocks (each one a variable nginx resolves by linear search when loading). */
  maps: number;
  coldStages: { parse: number; graph: number; model: number };
  maxRssMB: number;
  /** Heap in use after a full GC while one build (resources, graph, model, config) is held. */
  liveHeapMB?: number;
  /** The largest heap V8 had committed (its pages, what RSS holds of it) after a build. */
  heapTotalMB: number;
  baselineRssMB: number;
  /** Policy documents in the input (section 3). */
  policies?: number;
  /** Freezing the documents first, as the file provider does in its scan (not in build). */
  freezeMs?: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

function runSize(routes: number, withPolicies = false): SizeResult {
  const baselineRssMB = process.resourceUsage().maxRSS / 1024;
  const policies = withPolicies ? policyDocs(routes) : [];
  let freezeNs = 0n;
  const docs: ManifestDoc[] = [...baseDocs(8080, 9000), ...Array.from({ length: routes }, (_, i) => routeDoc(i)), ...policies].map((doc, i) => {
    const d = doc as { metadata: Record<string, unknown> };
    d.metadata.generation = 1;
    d.metadata.creationTimestamp ??= '2026-01-01T00:00:00.000Z';
    // Read-only, as the file provider hands documents out: a warm run re-validates nothing.
    // The provider pays this in its scan; reported on its own (freezeMs), not in build.
    const t = process.hrtime.bigint();
    freezeDocument(doc);
    freezeNs += process.hrtime.bigint() - t;
    return { source: `bench.yaml:${i}`, doc };
  });
  const prefix = '/tmp/portcullis-bench/nginx';
  let previous: EffectivePolicies | undefined;
  /** The last build, held as a controller holds what it serves (for the live heap figure). */
  let held: unknown;
  let heapTotal = 0;
  const once = () => {
    const t0 = process.hrtime.bigint();
    const parsed = standardPipeline.parseManifests(docs);
    const parsedPolicies = standardPipeline.parsePolicyDocs!(docs);
    const tp = process.hrtime.bigint();
    const graph = standardPipeline.buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
    // As reconcile does: policies against the graph, the previous run's settings as "applied".
    const pol = standardPipeline.computePolicies!({ policies: parsedPolicies.policies, invalid: parsedPolicies.invalid, targets: targetsFromGraph(graph), previous });
    previous = pol.effective;
    const tg = process.hrtime.bigint();
    const model = standardPipeline.buildModel(graph, pol.effective);
    const t1 = process.hrtime.bigint();
    const config = standardPipeline.renderConfig(model, { listenAddress: '127.0.0.1', prefix });
    const t2 = process.hrtime.bigint();
    const refused = pol.statuses.filter((st) => JSON.stringify(st.status).includes('"False"'));
    if (parsedPolicies.invalid.length || refused.length) {
      throw new Error(`bench policies not all accepted: ${JSON.stringify([...parsedPolicies.invalid, ...refused].slice(0, 2))}`);
    }
    if (parsed.invalid.length || parsed.errors.length) {
      throw new Error(`bench manifests invalid: ${JSON.stringify([...parsed.invalid, ...parsed.errors].slice(0, 3))}`);
    }
    held = { parsed, parsedPolicies, graph, pol, model, config };
    heapTotal = Math.max(heapTotal, v8.getHeapStatistics().total_heap_size);
    const bytes = Object.values(config.files).reduce((n, f) => n + Buffer.byteLength(f), 0);
    const maps = (config.files['maps.conf']?.match(/^map /gm) ?? []).length;
    return {
      build: Number(t1 - t0) / 1e6,
      render: Number(t2 - t1) / 1e6,
      bytes,
      maps,
      stages: { parse: Number(tp - t0) / 1e6, graph: Number(tg - tp) / 1e6, model: Number(t1 - tg) / 1e6 },
    };
  };
  const cold = once();
  const warm = Array.from({ length: routes >= 5000 ? 3 : 5 }, once);
  // The child runs with --expose-gc: what stays once the garbage of the builds is collected.
  (globalThis as { gc?: () => void }).gc?.();
  const liveHeapMB = held ? process.memoryUsage().heapUsed / 1048576 : undefined;
  return {
    routes,
    coldBuildMs: cold.build,
    coldRenderMs: cold.render,
    warmBuildMs: median(warm.map((w) => w.build)),
    warmRenderMs: median(warm.map((w) => w.render)),
    configBytes: cold.bytes,
    maps: cold.maps,
    coldStages: cold.stages,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
    liveHeapMB,
    heapTotalMB: heapTotal / 1048576,
    baselineRssMB,
    policies: policies.length,
    freezeMs: Number(freezeNs) / 1e6,
  };
}

// ---------------------------------------------------------------- 1b. warm one-file change

interface WarmResult {
  routes: number;
  changes: number;
  /** Median per phase (ms) over the one-file-change reconciles, as the controller logs them. */
  phases: Record<string, number>;
  /** Median per pipeline stage and provider call (ms), first reconcile excluded. */
  stages: Record<string, number>;
  /** Median of scan + build + render + status: everything in the controller process. */
  controllerMs: number;
  firstMs: number;
  maxRssMB: number;
}

/**
 * The controller's own share of a reconcile after one manifest file changed: the real
 * FileProvider (manifests folder, status.yaml, resources.json) and the real Reconciler with a
 * dataplane that accepts every config at once, so "apply" is ~0 and the other phases are what
 * the controller process pays per change. Files of 100 routes, as in section 2.
 */
async function warmOneFileChange(routes: number, changes: number, oneHost = false): Promise<WarmResult> {
  const routeDoc = (i: number, changedPath?: string) => {
    const doc = routeDocWith(i, changedPath, REGEX_EVERY) as { spec: Record<string, unknown> };
    if (oneHost) delete doc.spec.hostnames;
    return doc as Record<string, unknown>;
  };
  const dir = await makeTempDir('portcullis-bench-warm-');
  const manifestsDir = path.join(dir, 'manifests');
  const stateDir = path.join(dir, 'state');
  await fs.mkdir(manifestsDir);
  const perFile = 100;
  const fileOf = (i: number) => `routes-${String(Math.floor(i / perFile)).padStart(3, '0')}.yaml`;
  const changed = new Map<number, string>();
  const fileDocs = (f: number) =>
    Array.from({ length: Math.min(perFile, routes - f * perFile) }, (_, k) => f * perFile + k).map((i) => routeDoc(i, changed.get(i)));
  const writeFile = async (file: string, docs: Record<string, unknown>[]) => {
    const tmp = path.join(manifestsDir, `.${file}.tmp`);
    await fs.writeFile(tmp, docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join(''));
    await fs.rename(tmp, path.join(manifestsDir, file));
  };
  await writeFile('00-base.yaml', baseDocs(8080, 9000));
  for (let f = 0; f * perFile < routes; f++) await writeFile(fileOf(f * perFile), fileDocs(f));
  const provider = new FileProvider({ manifestsDir, stateDir, log: silentLogger });
  const { previousStatuses } = await provider.open();
  const accept = async () => ({ ok: true as const });
  // Each stage timed on its own, so "build" splits into parse / graph / policies / model.
  const stageMs: Record<string, number[]> = {};
  const timed = <F extends (...args: never[]) => unknown>(name: string, f: F): F =>
    ((...args: Parameters<F>) => {
      const t = process.hrtime.bigint();
      const out = f(...args);
      (stageMs[name] ??= []).push(Number(process.hrtime.bigint() - t) / 1e6);
      return out;
    }) as F;
  const timedAsync = <F extends (...args: never[]) => Promise<unknown>>(name: string, f: F): F =>
    (async (...args: Parameters<F>) => {
      const t = process.hrtime.bigint();
      const out = await f(...args);
      (stageMs[name] ??= []).push(Number(process.hrtime.bigint() - t) / 1e6);
      return out;
    }) as F;
  const p = standardPipeline;
  const pipeline: typeof standardPipeline = {
    parseManifests: timed('parseManifests', p.parseManifests),
    parsePolicyDocs: timed('parsePolicyDocs', p.parsePolicyDocs!),
    buildGraph: timed('buildGraph', p.buildGraph),
    computePolicies: timed('computePolicies', p.computePolicies!),
    buildModel: timed('buildModel', p.buildModel),
    renderConfig: timed('renderConfig', p.renderConfig),
    computeStatuses: timed('computeStatuses', p.computeStatuses),
    carryTransitionTimes: timed('carryTransitionTimes', p.carryTransitionTimes),
  };
  const source = {
    scan: timedAsync('provider.scan', () => provider.scan()),
    writeStatuses: timedAsync('provider.writeStatuses', (e: Parameters<typeof provider.writeStatuses>[0]) => provider.writeStatuses(e)),
  };
  const reconciler = new Reconciler({
    pipeline,
    source,
    dataplane: localDataplane(pipeline, { start: accept, apply: accept, stop: async () => undefined }, { log: silentLogger, listenAddress: '127.0.0.1', prefix: path.join(stateDir, 'nginx') }),
    log: silentLogger,
    controllerName: DEFAULT_CONTROLLER_NAME,
    previousStatuses,
    retryMs: 0,
  });
  const summaries: ReconcileSummary[] = [];
  reconciler.onReconciled((s) => summaries.push(s));
  try {
    await reconciler.trigger();
    if (!summaries[0]?.programmed || summaries[0].routes !== routes) throw new Error(`first reconcile: ${JSON.stringify(summaries[0])}`);
    for (let c = 0; c < changes; c++) {
      if (oneHost) {
        await writeFile(`added-${String(c).padStart(3, '0')}.yaml`, [routeDoc(routes + c)]);
      } else {
        const i = (c * 37 + 11) % routes;
        changed.set(i, `/changed-${c}-${i}`);
        await writeFile(fileOf(i), fileDocs(Math.floor(i / perFile)));
      }
      await reconciler.trigger();
      if (!summaries[c + 1].applied) throw new Error(`change ${c} did not change the config`);
    }
  } finally {
    await reconciler.stop();
    await provider.flush().catch(() => undefined);
    await removeDir(dir);
  }
  const warm = summaries.slice(1);
  const phases: Record<string, number> = {};
  for (const k of Object.keys(warm[0].phases)) phases[k] = median(warm.map((s) => (s.phases as Record<string, number>)[k]));
  const stages: Record<string, number> = {};
  for (const [k, v] of Object.entries(stageMs)) stages[k] = median(v.slice(1));
  return {
    routes,
    changes,
    phases,
    stages,
    controllerMs: median(warm.map((s) => s.phases.scan + s.phases.build + s.phases.render + s.phases.status)),
    firstMs: summaries[0].ms,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
  };
}

// ---------------------------------------------------------------- 2. change-to-serving

/**
 * `oneHost`: routes without hostnames (one server block on the hostless listener), and each
 * change adds a route in a file of its own instead of changing a path in a file of 100 routes.
 */
interface ServeResult {
  samples: number[];
  reconcileMs: number[];
  phases: Record<string, number[]>;
  /** The controller process after the changes: RSS now and its peak, heap used / total (MB). */
  memory: { rss: number; peak: number; heapUsed: number; heapTotal: number; maxHeapTotal: number };
}

async function changeToServing(routes: number, changes: number, budgetMs: number, oneHost = false): Promise<ServeResult> {
  const routeDoc = (i: number, changedPath?: string) => {
    const doc = routeDocWith(i, changedPath, REGEX_EVERY) as { spec: Record<string, unknown> };
    if (oneHost) delete doc.spec.hostnames;
    return doc as Record<string, unknown>;
  };
  const dir = await makeTempDir('portcullis-bench-');
  const manifestsDir = path.join(dir, 'manifests');
  const stateDir = path.join(dir, 'state');
  await fs.mkdir(manifestsDir);
  const echo = await startEchoBackend('bench');
  const port = await freePort();
  const perFile = 100;
  const fileOf = (i: number) => `routes-${String(Math.floor(i / perFile)).padStart(3, '0')}.yaml`;
  const writeFile = async (file: string, docs: Record<string, unknown>[]) => {
    const tmp = path.join(manifestsDir, `.${file}.tmp`);
    await fs.writeFile(tmp, docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join(''));
    await fs.rename(tmp, path.join(manifestsDir, file));
  };
  await writeFile('00-base.yaml', baseDocs(port, echo.port));
  const changed = new Map<number, string>();
  const fileDocs = (f: number) =>
    Array.from({ length: Math.min(perFile, routes - f * perFile) }, (_, k) => f * perFile + k).map((i) => routeDoc(i, changed.get(i)));
  for (let f = 0; f * perFile < routes; f++) await writeFile(fileOf(f * perFile), fileDocs(f));

  // debug: the nginx apply logs its check / reload / drain times ("nginx reloaded").
  // The standalone controller serves no metrics: a preloaded gauge writes its heap to a file.
  const gaugeFile = path.join(dir, 'memory.json');
  const nodeArgs = process.env.E2E_CONTROLLER_NODE_ARGS;
  process.env.E2E_CONTROLLER_NODE_ARGS = `${nodeArgs ?? ''} -r ${path.resolve(__dirname, 'support', 'memory-gauge.js')}`.trim();
  process.env.MEMORY_GAUGE_FILE = gaugeFile;
  const controller = await startController({ manifestsDir, stateDir, logLevel: 'debug' }, false).finally(() => {
    if (nodeArgs === undefined) delete process.env.E2E_CONTROLLER_NODE_ARGS;
    else process.env.E2E_CONTROLLER_NODE_ARGS = nodeArgs;
    delete process.env.MEMORY_GAUGE_FILE;
  });
  const samples: number[] = [];
  let memory: ServeResult['memory'] | undefined;
  try {
    // The first apply of 1,000 routes may be refused by nginx's own readiness timeout and retried.
    await controller.waitForLog((l) => l.msg === 'reconciled' && l.programmed === true, 240000);
    const probe = await httpRequest(port, '/r1/api', { host: oneHost ? 'any.example.test' : 'app-1.example.test', headers: { 'X-Tenant': 't1' } });
    if (probe.status !== 200) throw new Error(`route not served before the changes: ${probe.status} ${probe.text.slice(0, 200)}`);
    const started = Date.now();
    for (let c = 0; c < changes; c++) {
      // Bounded in time: a slow dataplane yields fewer samples, not an endless run.
      if (c >= 3 && Date.now() - started > budgetMs) break;
      const i = oneHost ? routes + c : (c * 37 + 11) % routes;
      const newPath = oneHost ? `/r${i}/api` : `/changed-${c}-${i}`;
      if (!oneHost) changed.set(i, newPath);
      const host = oneHost ? 'any.example.test' : `app-${i % HOSTS}.example.test`;
      const before = controller.reconciles();
      // The clock starts when the new file is in place (written aside, renamed over the old one),
      // not while this script serialises it.
      const file = oneHost ? `added-${String(c).padStart(3, '0')}.yaml` : fileOf(i);
      const tmp = path.join(manifestsDir, `.${file}.tmp`);
      const docs = oneHost ? [routeDoc(i)] : fileDocs(Math.floor(i / perFile));
      await fs.writeFile(tmp, docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join(''));
      const t0 = process.hrtime.bigint();
      await fs.rename(tmp, path.join(manifestsDir, file));
      for (;;) {
        const res = await httpRequest(port, newPath, { host, headers: { 'X-Tenant': `t${i % 7}` } });
        if (res.status === 200 && res.json?.backend === 'bench') break;
        if (Number(process.hrtime.bigint() - t0) / 1e6 > 30000) throw new Error(`change ${c} not served after 30 s`);
        // A probe every ~2 ms: back-to-back probes would keep a core of this 2-core machine
        // busy (bench + nginx) and slow down the controller being measured.
        await new Promise((r) => setTimeout(r, 2));
      }
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
      // Let the reconcile finish its status write before the next change.
      await controller.waitForReconciles(before + 1, 30000);
      await new Promise((r) => setTimeout(r, 100));
    }
    const pid = controller.child.pid!;
    await new Promise((r) => setTimeout(r, 400));
    const heap = JSON.parse(await fs.readFile(gaugeFile, 'utf8')) as { heapUsed: number; heapTotal: number; maxHeapTotal: number };
    const mb = (bytes: number) => Math.round(bytes / 1048576);
    memory = { rss: rssMb(pid), peak: rssMb(pid, 'VmHWM'), heapUsed: mb(heap.heapUsed), heapTotal: mb(heap.heapTotal), maxHeapTotal: mb(heap.maxHeapTotal) };
  } finally {
    await controller.stop('SIGTERM');
    await echo.close();
    await removeDir(dir);
  }
  const recs = controller.logs.filter((l) => l.msg === 'reconciled' && l.applied === true).slice(1);
  const phases: Record<string, number[]> = {};
  for (const r of recs) {
    for (const [k, v] of Object.entries((r.phases as Record<string, number>) ?? {})) (phases[k] ??= []).push(v);
  }
  // Inside apply: nginx -t on the staged config, SIGHUP until the new workers answer, old workers gone.
  for (const l of controller.logs.filter((x) => x.msg === 'nginx reloaded').slice(1)) {
    for (const k of ['checkMs', 'reloadMs', 'drainMs']) (phases[`nginx.${k.replace('Ms', '')}`] ??= []).push(Number(l[k]));
  }
  return { samples, reconcileMs: recs.map((r) => Number(r.ms)), phases, memory: memory! };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  // The children build as the controller does, with its heap settings (controller/src/heap.ts).
  if (process.argv.includes('--child') || process.argv.includes('--child-warm')) limitHeapGrowth();
  const child = process.argv.indexOf('--child');
  if (child >= 0) {
    const result = runSize(Number(process.argv[child + 1]), process.argv.includes('--with-policies'));
    process.stdout.write(JSON.stringify(result) + '\n');
    return;
  }
  const warmChild = process.argv.indexOf('--child-warm');
  if (warmChild >= 0) {
    const result = await warmOneFileChange(Number(process.argv[warmChild + 1]), Number(arg('warm-changes', '20')), process.argv.includes('--one-host'));
    process.stdout.write(JSON.stringify(result) + '\n');
    return;
  }
  const sizes = arg('sizes', '100,1000,5000').split(',').filter(Boolean).map(Number);
  const policyRoutes = Number(arg('policy-routes', '1000'));
  const changes = Number(arg('changes', '20'));
  const serveSizes = arg('serve-routes', '1000').split(',').filter(Boolean).map(Number);
  const fmt = (n: number) => n.toFixed(1).padStart(8);

  const os = require('os') as typeof import('os');
  console.log(`bench:controller  node ${process.version}, ${os.cpus().length} cpus, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`routes: 3 rules each (header+query / method+Exact / query regex, method, prefix), ${HOSTS} hostnames, ${SERVICES} services; RegularExpression path in 1 of ${REGEX_EVERY} routes`);
  console.log('\n1. build (parseManifests + buildGraph + buildModel) and render (renderConfig), one process per size');
  console.log('routes   build cold   render cold   total cold   build warm  render warm   config KB   peak RSS MB   nginx maps   cold build = parse + graph + model');
  const results: SizeResult[] = [];
  const docRows: Array<Array<string | number>> = [];
  const runChild = (n: number, withPolicies: boolean): SizeResult | undefined => {
    const r = spawnSync(
      process.execPath,
      [`--max-old-space-size=${CHILD_HEAP_MB}`, '--expose-gc', '-r', TS_LOADER, __filename, '--child', String(n), `--regex-every=${REGEX_EVERY}`, ...(withPolicies ? ['--with-policies'] : [])],
      { cwd: path.resolve(__dirname, '..'), encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    if (r.status !== 0) {
      const oom = /heap out of memory/.test(r.stderr);
      console.log(`${String(n).padStart(6)}  FAILED: ${oom ? `out of memory (heap limit ${CHILD_HEAP_MB} MB)` : r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      return undefined;
    }
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as SizeResult;
  };
  const row = (res: SizeResult) =>
    `${String(res.routes).padStart(6)} ${fmt(res.coldBuildMs)} ms ${fmt(res.coldRenderMs)} ms ${fmt(res.coldBuildMs + res.coldRenderMs)} ms ${fmt(res.warmBuildMs)} ms ${fmt(res.warmRenderMs)} ms ${fmt(res.configBytes / 1024)}     ${fmt(res.maxRssMB)}     ${String(res.maps).padStart(8)}   ${res.coldStages.parse.toFixed(0)} + ${res.coldStages.graph.toFixed(0)} + ${res.coldStages.model.toFixed(0)} ms`;
  for (const n of sizes) {
    const res = runChild(n, false);
    if (!res) continue;
    results.push(res);
    console.log(
      `${String(n).padStart(6)} ${fmt(res.coldBuildMs)} ms ${fmt(res.coldRenderMs)} ms ${fmt(res.coldBuildMs + res.coldRenderMs)} ms ${fmt(res.warmBuildMs)} ms ${fmt(res.warmRenderMs)} ms ${fmt(res.configBytes / 1024)}     ${fmt(res.maxRssMB)}     ${String(res.maps).padStart(8)}   ${res.coldStages.parse.toFixed(0)} + ${res.coldStages.graph.toFixed(0)} + ${res.coldStages.model.toFixed(0)} ms; heap live ${res.liveHeapMB?.toFixed(0)} / committed ${res.heapTotalMB.toFixed(0)} MB`,
    );
  }
  for (const r of results) docRows.push([`${r.routes} routes: build + render first / later, peak RSS (heap live / committed)`, `${(r.coldBuildMs + r.coldRenderMs).toFixed(0)} / ${(r.warmBuildMs + r.warmRenderMs).toFixed(0)} ms, ${r.maxRssMB.toFixed(0)} MB (${r.liveHeapMB?.toFixed(0)} / ${r.heapTotalMB.toFixed(0)} MB)`, '', '']);
  const big = results.find((r) => r.routes === 5000);
  if (big) {
    const total = big.coldBuildMs + big.coldRenderMs;
    docRows.push(['5,000 routes: build + render, first run in a process / a later reconcile', `${total.toFixed(0)} / ${(big.warmBuildMs + big.warmRenderMs).toFixed(0)} ms`, '< 1,000 ms', '']);
    docRows.push(['5,000 routes: peak RSS (heap live holding one build / committed)', `${big.maxRssMB.toFixed(0)} MB (${big.liveHeapMB?.toFixed(0)} / ${big.heapTotalMB.toFixed(0)} MB)`, '< 250 MB', '']);
    console.log(
      `goal 5,000 routes < 1000 ms and < 250 MB: ${total.toFixed(0)} ms cold (${(big.warmBuildMs + big.warmRenderMs).toFixed(0)} ms warm), ${big.maxRssMB.toFixed(0)} MB peak RSS (live heap ${big.liveHeapMB?.toFixed(0)} MB) -> ${total < 1000 && big.maxRssMB < 250 ? 'met' : 'NOT met'} (documents frozen beforehand as the file provider does: ${big.freezeMs?.toFixed(0)} ms, not counted)`,
    );
  }

  const warmRoutes = Number(arg('warm-routes', '1000'));
  if (warmRoutes > 0) {
    const warmChanges = Number(arg('warm-changes', '20'));
    console.log(`\n1b. warm one-file change, ${warmRoutes} routes in files of 100: real FileProvider + Reconciler, a dataplane that accepts at once; median of ${warmChanges} changes`);
    const r = spawnSync(
      process.execPath,
      [`--max-old-space-size=${CHILD_HEAP_MB}`, '-r', TS_LOADER, __filename, '--child-warm', String(warmRoutes), `--warm-changes=${warmChanges}`, `--regex-every=${REGEX_EVERY}`],
      { cwd: path.resolve(__dirname, '..'), encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    if (r.status !== 0) {
      console.log(`FAILED: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    } else {
      const w = JSON.parse(r.stdout.trim().split('\n').pop()!) as WarmResult;
      console.log(`phase medians ms: ${Object.entries(w.phases).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
      console.log(`stage medians ms: ${Object.entries(w.stages).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
      console.log(`scan + build + render + status: ${w.controllerMs.toFixed(1)} ms (first reconcile ${w.firstMs.toFixed(0)} ms, peak RSS ${w.maxRssMB.toFixed(0)} MB) -> goal < 60 ms ${w.controllerMs < 60 ? 'met' : 'NOT met'}`);
      docRows.push([`one file of 100 routes changed (${warmRoutes} routes): the controller's scan + build + render + status`, `${w.controllerMs.toFixed(1)} ms`, '< 60 ms', '']);
    }
  }

  if (policyRoutes > 0) {
    console.log(`\n3. policies: ${policyRoutes} routes, each with a RateLimitPolicy + ProxySettingsPolicy + ClientSettingsPolicy, plus the three on the Gateway, vs. the same routes without policies`);
    console.log('(build includes parsePolicyDocs + computePolicies; cold build = parse + graph/policies + model)');
    console.log('routes   build cold   render cold   total cold   build warm  render warm   config KB   peak RSS MB   nginx maps   cold build = parse + graph + model');
    // Alternating runs, median per figure: on a loaded machine one run of each is mostly noise.
    const repeats = Number(arg('policy-repeats', '3'));
    const runs: { without: SizeResult[]; with: SizeResult[] } = { without: [], with: [] };
    for (let k = 0; k < repeats; k++) {
      const a = runChild(policyRoutes, false);
      const b = runChild(policyRoutes, true);
      if (a) runs.without.push(a);
      if (b) runs.with.push(b);
    }
    const med = (rs: SizeResult[]): SizeResult | undefined => {
      if (rs.length === 0) return undefined;
      const m = (f: (r: SizeResult) => number) => median(rs.map(f));
      return {
        ...rs[0],
        coldBuildMs: m((r) => r.coldBuildMs),
        coldRenderMs: m((r) => r.coldRenderMs),
        warmBuildMs: m((r) => r.warmBuildMs),
        warmRenderMs: m((r) => r.warmRenderMs),
        maxRssMB: m((r) => r.maxRssMB),
        coldStages: { parse: m((r) => r.coldStages.parse), graph: m((r) => r.coldStages.graph), model: m((r) => r.coldStages.model) },
      };
    };
    const without = med(runs.without);
    const withP = med(runs.with);
    console.log(`(median of ${repeats} alternating runs each)`);
    if (without && withP) {
      console.log(`${row(without)}   without policies`);
      console.log(`${row(withP)}   with ${withP.policies} policies`);
      const ratio = (a: number, b: number) => (b > 0 ? a / b : NaN);
      const cold = ratio(withP.coldBuildMs + withP.coldRenderMs, without.coldBuildMs + without.coldRenderMs);
      const warm = ratio(withP.warmBuildMs + withP.warmRenderMs, without.warmBuildMs + without.warmRenderMs);
      const mem = ratio(withP.maxRssMB, without.maxRssMB);
      console.log(`ratio with/without: cold build+render ${cold.toFixed(2)}x, warm ${warm.toFixed(2)}x, peak RSS ${mem.toFixed(2)}x -> goal 1.5x ${cold <= 1.5 && warm <= 1.5 && mem <= 1.5 ? 'met' : 'NOT met'}`);
      docRows.push([`${policyRoutes} routes with policies / without: cold, warm, peak RSS`, `${cold.toFixed(2)}x, ${warm.toFixed(2)}x, ${mem.toFixed(2)}x`, '<= 1.5x', '']);
    }
  }

  for (const serveRoutes of changes > 0 ? serveSizes : []) {
    // The goals by size: 150 ms at 1,000 routes; 250 MB at 5,000; 500 ms and 600 MB at 20,000.
    const goalMs = serveRoutes > 5000 ? 500 : serveRoutes <= 1000 ? 150 : undefined;
    const goalMb = serveRoutes > 5000 ? 600 : serveRoutes > 1000 ? 250 : undefined;
    console.log(`\n2. change-to-serving, ${serveRoutes} routes, ${changes} changes (write manifest -> a request sees the new path; real CLI + nginx)`);
    let result: ServeResult;
    try {
      result = await changeToServing(serveRoutes, changes, Number(arg('serve-budget-s', '300')) * 1000);
    } catch (err) {
      console.log(`FAILED: ${(err as Error).message.slice(0, 1500)}`);
      process.exitCode = 1;
      return;
    }
    const { samples, reconcileMs, phases, memory } = result;
    const p50 = percentile(samples, 50);
    if (samples.length < changes) console.log(`(time budget reached after ${samples.length} of ${changes} changes; --serve-budget-s to raise it)`);
    console.log(`change-to-serving ms: p50 ${p50.toFixed(1)}, p90 ${percentile(samples, 90).toFixed(1)}, min ${Math.min(...samples).toFixed(1)}, max ${Math.max(...samples).toFixed(1)}`);
    console.log(`reconcile ms (controller log): p50 ${percentile(reconcileMs, 50)?.toFixed(1)}; phase medians: ${Object.entries(phases).map(([k, v]) => `${k} ${median(v).toFixed(1)}`).join(', ')}`);
    console.log(`controller process after the changes: RSS ${memory.rss} MB, peak ${memory.peak} MB, heap used / total ${memory.heapUsed} / ${memory.heapTotal} MB (most committed ${memory.maxHeapTotal} MB); load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const goals = [...(goalMs ? [`p50 < ${goalMs} ms`] : []), ...(goalMb ? [`peak RSS < ${goalMb} MB`] : [])];
    console.log(`goal ${goals.join(' and ')}: ${(!goalMs || p50 < goalMs) && (!goalMb || memory.peak < goalMb) ? 'met' : 'NOT met'}`);
    docRows.push([`${serveRoutes} routes on ${HOSTS} hosts: manifest changed -> served p50 / p90`, `${p50.toFixed(1)} / ${percentile(samples, 90).toFixed(1)} ms`, goalMs ? `p50 < ${goalMs} ms` : '', serveRoutes === 1000 ? 'NGF 2.6: 160 ms per change batch at 1,000 routes, before its reload' : '']);
    docRows.push([`${serveRoutes} routes: the controller's RSS / peak RSS after the changes (heap used / total)`, `${memory.rss} / ${memory.peak} MB (${memory.heapUsed} / ${memory.heapTotal} MB)`, goalMb ? `< ${goalMb} MB` : '', serveRoutes === 1000 ? 'Envoy Gateway: 256 MiB at 1,000 routes' : '']);
  }

  const oneHostRoutes = Number(arg('one-host-routes', '1000'));
  const oneHostChanges = Number(arg('one-host-changes', '20'));
  if (oneHostRoutes > 0 && oneHostChanges > 0) {
    console.log(`\n4. one host: ${oneHostRoutes} routes without hostnames on one hostless listener (one nginx server block)`);
    const r = spawnSync(
      process.execPath,
      [`--max-old-space-size=${CHILD_HEAP_MB}`, '-r', TS_LOADER, __filename, '--child-warm', String(oneHostRoutes), `--warm-changes=${oneHostChanges}`, `--regex-every=${REGEX_EVERY}`, '--one-host'],
      { cwd: path.resolve(__dirname, '..'), encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    if (r.status !== 0) {
      console.log(`warm one-route add FAILED: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    } else {
      const w = JSON.parse(r.stdout.trim().split('\n').pop()!) as WarmResult;
      console.log(`controller share of adding one route (real FileProvider + Reconciler, a dataplane that accepts at once): scan + build + render + status ${w.controllerMs.toFixed(1)} ms`);
      console.log(`  phase medians ms: ${Object.entries(w.phases).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
      console.log(`  stage medians ms: ${Object.entries(w.stages).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
    }
    console.log(`change-to-serving: ${oneHostRoutes} routes without hostnames on one hostless listener ${oneHostChanges} changes each adding a route in a new file renamed into place (real CLI + nginx)`);
    let result: ServeResult;
    try {
      result = await changeToServing(oneHostRoutes, oneHostChanges, Number(arg('serve-budget-s', '300')) * 1000, true);
    } catch (err) {
      console.log(`FAILED: ${(err as Error).message.slice(0, 1500)}`);
      process.exitCode = 1;
      return;
    }
    const { samples, reconcileMs, phases } = result;
    const p50 = percentile(samples, 50);
    if (samples.length < oneHostChanges) console.log(`(time budget reached after ${samples.length} of ${oneHostChanges} changes; --serve-budget-s to raise it)`);
    console.log(`change-to-serving ms: p50 ${p50.toFixed(1)}, p90 ${percentile(samples, 90).toFixed(1)}, min ${Math.min(...samples).toFixed(1)}, max ${Math.max(...samples).toFixed(1)}`);
    console.log(`reconcile ms (controller log): p50 ${percentile(reconcileMs, 50)?.toFixed(1)}; phase medians: ${Object.entries(phases).map(([k, v]) => `${k} ${median(v).toFixed(1)}`).join(', ')}`);
    console.log(`goal p50 < 150 ms: ${p50 < 150 ? 'met' : 'NOT met'}`);
    docRows.push([`one host, ${oneHostRoutes} routes: a route added -> served p50 / p90`, `${p50.toFixed(1)} / ${percentile(samples, 90).toFixed(1)} ms`, 'p50 < 150 ms', '']);
  }
  docsTable({ doc: 'gateway', id: 'controller', command: benchCommand('bench:controller'), columns: ['figure', 'Portcullis', 'goal', 'anchor'], rows: docRows });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
