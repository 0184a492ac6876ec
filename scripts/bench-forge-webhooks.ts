/**
 * npm run bench:forge-webhooks — does a slow or dead webhook receiver slow the API down?
 * The forge runs in its own process (SQLite); autocannon creates issues in one repository
 *   1. with no webhooks,
 *   2. with 5 active `issues` hooks whose receiver answers only after 2 s,
 *   3. with 5 active hooks pointing at a port where nothing listens,
 * and reports req/s and p50/p99 per case, plus how many deliveries were queued and how many
 * were still pending when the case ended (the queue absorbs them; the requests do not wait).
 * --write-docs: also write the figures as docs/benchmarks-forge.md's table.
 * Env: BENCH_REQUESTS per case (1000), BENCH_CONNECTIONS (10).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForUrl } from '../e2e/support/ports';
import { summary } from './bench-forge-issues';
import { loadConfig } from '../forge-api/src/config';
import { createPrisma, migrate } from '../forge-api/src/services/database';
import { TokenService } from '../forge-api/src/services/tokens';
import { UserService } from '../forge-api/src/services/users';
import { benchCommand, docsTable, recordsTable } from './support/bench-docs';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<{
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}>;

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const HOOKS = 5;


async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-bench-hooks-'));
  const config = loadConfig({ dataDir });
  await migrate(config.databaseUrl);
  const prisma = createPrisma(config.databaseUrl);
  const bencher = await new UserService(prisma).create({ username: 'bencher', email: 'bencher@example.com', password: 'benchpass1', must_change_password: false });
  const { secret } = await new TokenService(prisma).create(bencher, 'bench', ['all']);

  // A receiver that holds every delivery for 2 s before answering.
  const slow = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.end('ok'), 2000));
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  const slowUrl = `http://127.0.0.1:${(slow.address() as net.AddressInfo).port}/`;
  const deadUrl = `http://127.0.0.1:${await freePort()}/`;

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let server: ChildProcess | null = null;
  try {
    server = spawn(process.execPath, [path.join(__dirname, '..', 'bin', 'portcullis-forge.js'), 'serve'], {
      env: { ...process.env, FORGE_DATA_DIR: dataDir, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: `${base}/`, LOG_LEVEL: 'warn', ENABLE_SWAGGER: 'false', WEBHOOK_DELIVER_TIMEOUT_MS: '5000', ALLOWED_HOST_LIST: 'loopback' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await waitForUrl(`${base}/api/v1/version`);
    const auth = { authorization: `token ${secret}`, 'content-type': 'application/json' };
    const made = await fetch(`${base}/api/v1/user/repos`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'bench' }) });
    if (made.status !== 201) throw new Error(`repo creation failed: ${made.status}`);

    const results: Record<string, unknown>[] = [];
    const runCase = async (name: string) => {
      const before = await prisma.hookTask.count();
      let n = 0;
      const res = await autocannon({
        url: base,
        connections: CONNECTIONS,
        amount: REQUESTS,
        requests: [{ method: 'POST', path: '/api/v1/repos/bencher/bench/issues', headers: auth, setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify({ title: `issue ${n++}` }) }) }],
      });
      const queued = (await prisma.hookTask.count()) - before;
      const pending = await prisma.hookTask.count({ where: { isDelivered: false } });
      const line = {
        ...summary(name, res),
        'deliveries queued': queued,
        'pending at end': pending,
      };
      console.log(JSON.stringify(line));
      results.push(line);
    };
    const addHooks = async (url: string) => {
      await prisma.webhook.deleteMany({});
      for (let i = 0; i < HOOKS; i++) {
        const r = await fetch(`${base}/api/v1/repos/bencher/bench/hooks`, { method: 'POST', headers: auth, body: JSON.stringify({ type: 'gitea', active: true, events: ['issues'], config: { url, content_type: 'json' } }) });
        if (r.status !== 201) throw new Error(`hook creation failed: ${r.status}`);
      }
    };

    await runCase('POST /issues, no webhooks');
    await addHooks(slowUrl);
    await runCase(`POST /issues, ${HOOKS} hooks, receiver answers after 2 s`);
    await addHooks(deadUrl);
    await runCase(`POST /issues, ${HOOKS} hooks, receiver down`);
    console.table(results);
    docsTable({ doc: 'forge', id: 'forge-webhooks', command: benchCommand('bench:forge-webhooks'), ...recordsTable(results) });
    console.log(`load average (1/5/15 min): ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${os.cpus().length} CPUs`);
  } finally {
    server?.kill('SIGTERM');
    slow.closeAllConnections();
    slow.close();
    await prisma.$disconnect();
    await new Promise((r) => setTimeout(r, 300));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
