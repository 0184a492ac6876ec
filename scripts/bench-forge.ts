/**
 * npm run bench:forge — requests/s and p99 latency of the forge API on SQLite with 10,000
 * repositories, over loopback, bounded in time and requests:
 *   GET  /api/v1/repos/search?limit=50          (anonymous, first page + total count)
 *   GET  /api/v1/repos/search?q=<term>&limit=50 (anonymous, name filter)
 *   GET  /api/v1/repos/{owner}/{repo}           (token-authenticated)
 *   POST /api/v1/user/repos                     (token-authenticated, creates row + bare repo)
 * and the issue tracker's cases from scripts/bench-forge-issues.ts (50,000 issues).
 * The data is seeded through Prisma directly (createMany), the server runs in its own process
 * (bin/portcullis-forge.js serve) so autocannon does not share its event loop.
 * `npm run bench:forge -- --gitea` runs the side-by-side comparison with a real Gitea instead.
 * --write-docs: also write the figures as docs/benchmarks-forge.md's table.
 * Env: BENCH_REPOS (10000), BENCH_DURATION seconds per case (10), BENCH_CONNECTIONS (10).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForUrl } from '../e2e/support/ports';
import { loadConfig } from '../forge-api/src/config';
import { createPrisma, migrate } from '../forge-api/src/services/database';
import { TokenService } from '../forge-api/src/services/tokens';
import { UserService } from '../forge-api/src/services/users';
import { benchCommand, docsTable, recordsTable } from './support/bench-docs';
import { issueCases, jsonPosts, seedIssues, summary } from './bench-forge-issues';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
}

const REPOS = Number(process.env.BENCH_REPOS ?? 10000);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const OWNERS = 100;



async function seed(dataDir: string): Promise<{ token: string; sample: string[] }> {
  const config = loadConfig({ dataDir });
  await migrate(config.databaseUrl);
  const prisma = createPrisma(config.databaseUrl);
  const users = new UserService(prisma);
  const started = Date.now();
  const bencher = await users.create({ username: 'bencher', email: 'bencher@example.com', password: 'benchpass1', must_change_password: false });
  const owners = await prisma.$transaction(
    Array.from({ length: OWNERS }, (_, i) =>
      prisma.user.create({ data: { name: `owner${i}`, lowerName: `owner${i}`, email: `owner${i}@example.com`, loginName: `owner${i}`, emails: { create: { email: `owner${i}@example.com`, lowerEmail: `owner${i}@example.com`, isPrimary: true } } } }),
    ),
  );
  const rows = Array.from({ length: REPOS }, (_, i) => {
    const owner = owners[i % OWNERS];
    const name = `repo-${String(i).padStart(5, '0')}`;
    return { ownerId: owner.id, ownerName: owner.name, name, lowerName: name, description: `benchmark repository ${i}`, isPrivate: i % 10 === 0, size: i % 1000 };
  });
  for (let i = 0; i < rows.length; i += 1000) await prisma.repository.createMany({ data: rows.slice(i, i + 1000) });
  const { secret } = await new TokenService(prisma).create(bencher, 'bench', ['write:repository', 'write:user']);
  const count = await prisma.repository.count();
  await prisma.$disconnect();
  console.log(`seeded ${count} repositories for ${OWNERS} owners in ${Date.now() - started} ms`);
  return { token: secret, sample: rows.filter((r) => !r.isPrivate).slice(0, 200).map((r) => `${r.ownerName}/${r.name}`) };
}

/** The server's pid, for its CPU time per request (load-independent, unlike req/s here). */
let serverPid: number | undefined;

/** utime+stime (+ reaped children: git) of a process, in ms, from /proc (Linux). */
function cpuMs(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // fields[11..14] = utime, stime, cutime, cstime in clock ticks (100 Hz on Linux)
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
  } catch {
    return null;
  }
}

async function run(name: string, opts: Record<string, unknown>) {
  const cpuBefore = cpuMs(serverPid);
  const res = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts });
  const cpuAfter = cpuMs(serverPid);
  const line = {
    ...summary(name, res),
    'server cpu ms/req': cpuBefore !== null && cpuAfter !== null && res.requests.total > 0 ? +((cpuAfter - cpuBefore) / res.requests.total).toFixed(2) : null,
  };
  console.log(JSON.stringify(line));
  return line;
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-bench-'));
  let server: ChildProcess | null = null;
  try {
    const { token, sample } = await seed(dataDir);
    const issueData = await seedIssues(loadConfig({ dataDir }).databaseUrl);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [path.join(__dirname, '..', 'bin', 'portcullis-forge.js'), 'serve'], {
      env: { ...process.env, FORGE_DATA_DIR: dataDir, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: `${base}/`, LOG_LEVEL: 'warn', ENABLE_SWAGGER: 'false' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    serverPid = server.pid;
    await waitForUrl(`${base}/api/v1/version`);
    const auth = { authorization: `token ${token}` };
    const results = [];
    results.push(await run('GET /repos/search?limit=50', { url: `${base}/api/v1/repos/search?limit=50` }));
    results.push(await run('GET /repos/search?q=repo-012&limit=50', { url: `${base}/api/v1/repos/search?q=repo-012&limit=50` }));
    let i = 0;
    results.push(
      await run('GET /repos/{owner}/{repo} (token)', {
        url: base,
        headers: auth,
        requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/api/v1/repos/${sample[i++ % sample.length]}` }) }],
      }),
    );
    let n = 0;
    results.push(
      await run('POST /user/repos (token)', {
        url: base,
        maxOverallRequests: 2000,
        requests: jsonPosts(auth, () => ({ path: '/api/v1/user/repos', body: { name: `new-${process.pid}-${n++}`, description: 'bench' } })),
      }),
    );
    results.push(...(await issueCases(base, issueData, run)));
    console.table(results);
    docsTable({ doc: 'forge', id: 'forge', command: benchCommand('bench:forge'), ...recordsTable(results) });
    // Figures from a shared machine are only comparable at similar load.
    console.log(`load average (1/5/15 min): ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${os.cpus().length} CPUs`);
  } finally {
    server?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// `--gitea`: the side-by-side mode against a real Gitea 1.27.3 (scripts/bench-forge-gitea.ts).
(process.argv.includes('--gitea') ? import('./bench-forge-gitea').then((m) => m.main()) : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
