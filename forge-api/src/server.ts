/** Starts the forge: migrations, then listen on FORGE_PORT; optionally as a cluster of processes. */
import cluster from 'node:cluster';
import v8 from 'node:v8';
import { buildApp } from './app';
import { loadConfig, type ForgeConfigInput } from './config';
import { migrate } from './services/database';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it
 * collects again: 1.5x. On a machine with much memory V8 picks up to 4x; the forge's live heap
 * is ~85 MiB, and a burst of thousands of requests a second promotes a few MiB of short-lived
 * objects per second, so the old generation reached 270-320 MiB of mostly garbage before the next
 * full collection (npm run bench:forge-gitea; V8 keeps the pages for a while after it). At 1.5x
 * it stays near 105 MiB; a full collection then comes every few seconds of such a burst, ~20 ms
 * of main thread plus incremental marking (forge-api/README.md "Memory"). A
 * `--heap-growing-percent` given to node is left alone.
 */
export const HEAP_GROWING_PERCENT = 50;

export function boundHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
  if (process.execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

export async function startServer(overrides: ForgeConfigInput = {}, opts: { worker?: { background: boolean } } = {}) {
  boundHeapGrowth();
  const config = loadConfig(overrides);
  const app = await buildApp({
    config: overrides,
    logger: { level: process.env.LOG_LEVEL ?? 'info' },
    skipMigrations: opts.worker !== undefined,
    noBackground: opts.worker ? !opts.worker.background : false,
  });
  await app.listen({ port: config.port, host: config.host });
  // The git helper process is started now rather than by the first clone (services/git/spawner.ts).
  void app.services.gitTransport.warm();
  const close = async () => {
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  return app;
}

/**
 * `serve --workers N`: the primary applies migrations once, then forks N processes that share
 * the listening socket (node:cluster hands out connections). Only the first worker runs the
 * background work (webhook deliveries, cron), so nothing is delivered twice. The workers share
 * nothing in memory: a token's verified result is cached per process for 2 s at most, so a
 * deleted token may still pass in another worker for that long. SQLite: WAL mode with a busy
 * timeout lets the processes write to one file (services/database.ts tunePrisma). A worker that
 * dies is replaced.
 */
export async function startCluster(overrides: ForgeConfigInput, workers: number): Promise<void> {
  if (cluster.isWorker) {
    await startServer(overrides, { worker: { background: process.env.FORGE_WORKER_BACKGROUND === '1' } });
    return;
  }
  await migrate(loadConfig(overrides).databaseUrl);
  let stopping = false;
  const fork = (background: boolean) => {
    const w = cluster.fork({ FORGE_WORKER_BACKGROUND: background ? '1' : '0' });
    w.on('exit', (code, signal) => {
      if (stopping) return;
      console.error(`forge worker ${w.process.pid} exited (${signal ?? code}); starting another`);
      fork(background);
    });
  };
  for (let i = 0; i < workers; i++) fork(i === 0);
  const stop = () => {
    stopping = true;
    const alive = Object.values(cluster.workers ?? {}).filter((w) => w && !w.isDead());
    if (!alive.length) process.exit(0);
    let left = alive.length;
    for (const w of alive) {
      w!.once('exit', () => {
        if (--left === 0) process.exit(0);
      });
      w!.process.kill('SIGTERM');
    }
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
