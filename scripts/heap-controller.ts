/**
 * npx tsx scripts/heap-controller.ts [--routes=5000 --changes=3 --dir=/tmp/heap] — what the
 * running standalone controller holds: the real CLI with real nginx serves N routes (files of
 * 100, as bench:controller), one file changes a few times, then the controller writes a heap
 * snapshot (node --heapsnapshot-signal) into --dir; prints its RSS and the snapshot's path.
 * Read the snapshot with scripts/heap-top.ts (largest retainers) or Chrome DevTools.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { stringify } from 'yaml';
import { startController } from '../e2e/support/controller';
import { startEchoBackend } from '../e2e/support/echo-backend';
import { freePort } from '../e2e/support/ports';
import { makeTempDir, removeDir } from '../e2e/support/tmp';
import { baseDocs, routeDoc } from './bench-manifests';
import { rssMb } from './support/proc-memory';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const ROUTES = Number(arg('routes', '5000'));
const CHANGES = Number(arg('changes', '3'));
const OUT = path.resolve(arg('dir', '/tmp/heap'));

async function main(): Promise<void> {
  await fs.mkdir(OUT, { recursive: true });
  const dir = await makeTempDir('portcullis-heap-');
  const manifestsDir = path.join(dir, 'manifests');
  await fs.mkdir(manifestsDir);
  const echo = await startEchoBackend('heap');
  const port = await freePort();
  const perFile = 100;
  const changed = new Map<number, string>();
  const write = async (file: string, docs: unknown[]) => {
    const tmp = path.join(manifestsDir, `.${file}.tmp`);
    await fs.writeFile(tmp, docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join(''));
    await fs.rename(tmp, path.join(manifestsDir, file));
  };
  const fileDocs = (f: number) => Array.from({ length: Math.min(perFile, ROUTES - f * perFile) }, (_, k) => f * perFile + k).map((i) => routeDoc(i, changed.get(i), 10));
  const fileOf = (f: number) => `routes-${String(f).padStart(3, '0')}.yaml`;
  await write('00-base.yaml', baseDocs(port, echo.port));
  for (let f = 0; f * perFile < ROUTES; f++) await write(fileOf(f), fileDocs(f));
  process.env.E2E_CONTROLLER_NODE_ARGS = `${process.env.E2E_CONTROLLER_NODE_ARGS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${OUT}`.trim();
  const controller = await startController({ manifestsDir, stateDir: path.join(dir, 'state') }, false);
  try {
    await controller.waitForLog((l) => l.msg === 'reconciled' && l.programmed === true, 600000);
    const pid = controller.child.pid!;
    console.log(`${ROUTES} routes served: RSS ${rssMb(pid)} MB, peak ${rssMb(pid, 'VmHWM')} MB`);
    for (let c = 0; c < CHANGES; c++) {
      const before = controller.reconciles();
      const i = (c * 37 + 11) % ROUTES;
      changed.set(i, `/changed-${c}-${i}`);
      await write(fileOf(Math.floor(i / perFile)), fileDocs(Math.floor(i / perFile)));
      await controller.waitForReconciles(before + 1, 120000);
    }
    await new Promise((r) => setTimeout(r, 1000));
    console.log(`after ${CHANGES} changes: RSS ${rssMb(pid)} MB, peak ${rssMb(pid, 'VmHWM')} MB`);
    const before = new Set(await fs.readdir(OUT));
    process.kill(pid, 'SIGUSR2');
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      const added = (await fs.readdir(OUT)).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
      if (added.length) {
        const file = path.join(OUT, added[0]);
        // Done once its size has not grown for 10 s (a busy machine writes it in bursts).
        let size = -1;
        for (let still = 0; still < 10; ) {
          const s = (await fs.stat(file)).size;
          still = s === size && s > 0 ? still + 1 : 0;
          size = s;
          await new Promise((r) => setTimeout(r, 1000));
        }
        console.log(`snapshot ${file} (${Math.round(size / 1048576)} MB)`);
        break;
      }
    }
  } finally {
    await controller.stop('SIGTERM');
    await echo.close?.();
    await removeDir(dir);
  }
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
