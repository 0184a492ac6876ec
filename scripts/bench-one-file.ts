/**
 * npm run bench:one-file [-- --routes=1000 --changes=20]
 *
 * Standalone mode as a user editing one big YAML: one manifest file holds every route (hostless,
 * 3 rules each: the bench:controller routes without hostnames), and each change rewrites the
 * whole file (a temp file renamed into place) with one route's path changed. Prints the time
 * from the controller's spawn until the last route is served, and change -> served per change
 * (p50 / p90), with the load average beside them.
 *
 * Profile it with E2E_CONTROLLER_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR' (the controller
 * writes its profile when it exits at the end). BENCH_LOG_LEVEL=debug also prints the apply
 * phase's parts per reload (writing the files, nginx parsing the config and forking its new
 * workers, the old ones handing over) and the model build's time and what its memo kept, from
 * the controller's debug log.
 *
 * --write-docs: also write the figures as docs/benchmarks-gateway.md's table (one-file).
 */
import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { stringify } from 'yaml';
import { nginxPid, startController } from '../e2e/support/controller';
import { startEchoBackend } from '../e2e/support/echo-backend';
import { httpRequest } from '../e2e/support/http';
import { freePort } from '../e2e/support/ports';
import { makeTempDir, removeDir } from '../e2e/support/tmp';
import { baseDocs, routeDoc } from './bench-manifests';
import { benchCommand, docsTable } from './support/bench-docs';
import { cpuMs, nginxCpuMs } from './support/proc-cpu';

function arg(name: string, fallback: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : fallback;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' / ');

async function main(): Promise<void> {
  const routes = arg('routes', 1000);
  const changes = arg('changes', 20);
  const dir = await makeTempDir('portcullis-bench-one-file-');
  const manifestsDir = path.join(dir, 'manifests');
  await fs.mkdir(manifestsDir);
  const echo = await startEchoBackend('bench');
  const port = await freePort();
  const changed = new Map<number, string>();
  const hostless = (i: number) => {
    const doc = routeDoc(i, changed.get(i)) as { spec: Record<string, unknown> };
    delete doc.spec.hostnames;
    return doc;
  };
  // The file's text is made before the clock starts: serialising 1,000 documents is the
  // editor's work, and took longer than the controller's whole reconcile on a busy machine.
  const fileText = () =>
    [...baseDocs(port, echo.port), ...Array.from({ length: routes }, (_, i) => hostless(i))].map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join('');
  const writeAll = async (text: string) => {
    const tmp = path.join(manifestsDir, '.gateway.yaml.tmp');
    await fs.writeFile(tmp, text);
    await fs.rename(tmp, path.join(manifestsDir, 'gateway.yaml'));
  };
  await writeAll(fileText());
  const serves = async (p: string, headers: Record<string, string> = {}) =>
    (await httpRequest(port, p, { headers, timeoutMs: 2000 }).catch(() => ({ status: 0, json: undefined }))).status === 200;
  console.log(`load average before: ${load()}`);
  const t0 = Date.now();
  const controller = await startController({ manifestsDir, stateDir: path.join(dir, 'state'), logLevel: process.env.BENCH_LOG_LEVEL ?? 'info' }, false);
  try {
    while (!(await serves(`/r${routes - 1}/x`))) {
      if (Date.now() - t0 > 120000) throw new Error('the last route was not served within 120 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    const startMs = Date.now() - t0;
    console.log(`start (controller spawned) -> last route served: ${startMs} ms`);
    await new Promise((r) => setTimeout(r, 1000));
    const before = controller.logs.filter((l) => l.msg === 'reconciled').length;
    const stateDir = path.join(dir, 'state');
    const master = await nginxPid(stateDir);
    // CPU per change moves less with the load than wall times (the controller's whole work for a
    // change, statuses included; nginx's master and workers, old and new).
    const cpu = () => ({ controller: cpuMs(controller.child.pid!), nginx: master ? nginxCpuMs(master) : 0 });
    const cpuBefore = cpu();
    const samples: number[] = [];
    for (let c = 0; c < changes; c++) {
      const i = (c * 37 + 11) % routes;
      const p = `/changed-${c}/api`;
      changed.set(i, p);
      const text = fileText();
      const t = Date.now();
      await writeAll(text);
      while (!(await serves(p, { 'X-Tenant': `t${i % 7}` }))) {
        if (Date.now() - t > 30000) throw new Error(`change ${c} not served within 30 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
      samples.push(Date.now() - t);
      if (process.env.BENCH_TRACE) {
        const r = controller.logs.filter((l) => l.msg === 'reconciled').slice(-2).map((l) => `${Date.parse(String(l.time)) - Number(l.ms) - t}+${l.ms}`);
        console.log(`change ${c}: served ${Date.now() - t} ms; last reconciles start+ms ${r.join(' ')}`);
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    const cpuAfter = cpu();
    const perChange = (k: 'controller' | 'nginx') => ((cpuAfter[k] - cpuBefore[k]) / changes).toFixed(0);
    console.log(`one file of ${routes} hostless routes x 3 rules rewritten and renamed: change -> served p50 ${percentile(samples, 50)} ms, p90 ${percentile(samples, 90)} ms (${changes} changes)`);
    console.log(`CPU per change: controller ${perChange('controller')} ms, nginx ${perChange('nginx')} ms`);
    // Where a change's time goes, from the controller's own log (medians over the changes).
    const reconciles = controller.logs.filter((l) => l.msg === 'reconciled').slice(before) as unknown as { ms: number; waitMs: number; phases: Record<string, number> }[];
    const med = (xs: number[]) => percentile(xs, 50);
    const phases = Object.keys(reconciles[0]?.phases ?? {}).map((k) => `${k} ${med(reconciles.map((r) => r.phases[k]))}`);
    console.log(`controller per change (${reconciles.length} reconciles, medians): total ${med(reconciles.map((r) => r.ms))} ms = ${phases.join(', ')} ms; waited ${med(reconciles.map((r) => r.waitMs))} ms before starting`);
    // With BENCH_LOG_LEVEL=debug: the apply phase's parts (apply/nginx.ts logs them per reload).
    const reloads = controller.logs.filter((l) => l.msg === 'nginx reloaded').slice(-changes) as unknown as Record<string, number>[];
    if (reloads.length) {
      const parts = ['checkMs', 'reloadMs', 'forkMs', 'drainMs'].map((k) => `${k} ${med(reloads.map((r) => r[k]).filter((x) => x !== undefined))}`);
      console.log(`nginx per reload (${reloads.length}, medians): ${parts.join(', ')}`);
    }
    // With BENCH_LOG_LEVEL=debug: the model build (dataplane/local.ts logs it with its memo's counts).
    const models = controller.logs.filter((l) => l.msg === 'model built').slice(-changes) as unknown as Record<string, number>[];
    if (models.length) {
      const parts = Object.keys(models[0]).filter((k) => typeof models[0][k] === 'number').map((k) => `${k} ${med(models.map((m) => m[k]))}`);
      console.log(`model per change (${models.length}, medians): ${parts.join(', ')}`);
    }
    console.log(`load average after: ${load()}`);
    docsTable({
      doc: 'gateway',
      id: 'one-file',
      command: benchCommand('bench:one-file'),
      columns: ['figure', 'Portcullis', 'goal'],
      rows: [
        [`start (controller spawned) -> last of ${routes} routes served`, `${(startMs / 1000).toFixed(1)} s`, '< 3 s'],
        [`whole file rewritten and renamed: change -> served p50 / p90 (${changes} changes)`, `${percentile(samples, 50)} / ${percentile(samples, 90)} ms`, 'p50 < 100 ms'],
        ['of which the controller, medians: scan / build / render / apply (nginx reload in it)', ['scan', 'build', 'render', 'apply'].map((k) => med(reconciles.map((r) => r.phases[k]))).join(' / ') + ' ms', ''],
        ['CPU per change: controller / nginx', `${perChange('controller')} / ${perChange('nginx')} ms`, ''],
      ],
    });
  } finally {
    await controller.stop('SIGTERM');
    await echo.close();
    await removeDir(dir);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
