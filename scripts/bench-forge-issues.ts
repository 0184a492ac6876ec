/**
 * Issue tracker cases of `npm run bench:forge` (also runnable alone: `npx tsx
 * scripts/bench-forge-issues.ts`), on a repository holding 50,000 issues:
 *   GET  /api/v1/repos/{owner}/{repo}/issues?limit=50   (page of 50 + total, token)
 *   POST /api/v1/repos/{owner}/{repo}/issues            (number allocation, activity, notifications)
 *   POST /api/v1/repos/{owner}/{repo}/issues/{n}/comments
 * Env: BENCH_ISSUES (50000); alone also BENCH_DURATION (10), BENCH_CONNECTIONS (10) and
 * BENCH_DATABASE_URL (a postgresql:// URL to bench PostgreSQL instead of SQLite).
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

const ISSUES = Number(process.env.BENCH_ISSUES ?? 50000);

export interface IssueBenchData {
  token: string;
  repo: string;
  issues: number;
}

type Run = (name: string, opts: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** Seeds user `issuer`, repository issuer/tracker with BENCH_ISSUES issues and a write:issue token. */
export async function seedIssues(databaseUrl: string): Promise<IssueBenchData> {
  await migrate(databaseUrl);
  const prisma = createPrisma(databaseUrl);
  const started = Date.now();
  try {
    const user = await new UserService(prisma).create({ username: 'issuer', email: 'issuer@example.com', password: 'benchpass1', must_change_password: false });
    const watcher = await new UserService(prisma).create({ username: 'watcher', email: 'watcher@example.com', password: 'benchpass1', must_change_password: false });
    const repo = await prisma.repository.create({ data: { ownerId: user.id, ownerName: user.name, name: 'tracker', lowerName: 'tracker' } });
    await prisma.watch.create({ data: { userId: watcher.id, repoId: repo.id } });
    const label = await prisma.label.create({ data: { repoId: repo.id, name: 'kind/bug', color: '#ee0701' } });
    const base = Date.now() - ISSUES * 1000;
    for (let i = 0; i < ISSUES; i += 1000) {
      const n = Math.min(1000, ISSUES - i);
      await prisma.issue.createMany({
        data: Array.from({ length: n }, (_, k) => {
          const index = i + k + 1;
          const at = new Date(base + index * 1000);
          return { repoId: repo.id, index, posterId: index % 2 ? user.id : watcher.id, title: `Issue number ${index}`, body: `Body of issue ${index}`, isClosed: index % 5 === 0, createdAt: at, updatedAt: at };
        }),
      });
    }
    const some = await prisma.issue.findMany({ where: { repoId: repo.id, index: { gt: ISSUES - 200 } }, select: { id: true } });
    await prisma.issueLabel.createMany({ data: some.map((s) => ({ issueId: s.id, labelId: label.id })) });
    const closed = Math.floor(ISSUES / 5);
    await prisma.repository.update({ where: { id: repo.id }, data: { nextIssueIndex: ISSUES + 1, numIssues: ISSUES, numClosedIssues: closed } });
    const { secret } = await new TokenService(prisma).create(user, 'bench-issues', ['write:issue', 'write:repository']);
    console.log(`seeded ${ISSUES} issues in issuer/tracker in ${Date.now() - started} ms`);
    return { token: secret, repo: 'issuer/tracker', issues: ISSUES };
  } finally {
    await prisma.$disconnect();
  }
}

/** The figures every forge benchmark prints for an autocannon result. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function summary(name: string, res: any): Record<string, unknown> {
  return { case: name, 'req/s': Math.round(res.requests.average), 'p50 ms': res.latency.p50, 'p99 ms': res.latency.p99, requests: res.requests.total, non2xx: res.non2xx, errors: res.errors + res.timeouts };
}

/** An autocannon request list of JSON POSTs, each to the path and with the body `next` gives. */
export function jsonPosts(headers: Record<string, string>, next: () => { path: string; body: unknown }): Record<string, unknown>[] {
  return [
    {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      setupRequest: (req: Record<string, unknown>) => {
        const { path, body } = next();
        return { ...req, path, body: JSON.stringify(body) };
      },
    },
  ];
}

/** The three issue cases against a running forge at `base`. */
export async function issueCases(base: string, data: IssueBenchData, run: Run): Promise<Record<string, unknown>[]> {
  const auth = { authorization: `token ${data.token}` };
  const api = `${base}/api/v1/repos/${data.repo}`;
  const out: Record<string, unknown>[] = [];
  out.push(await run(`GET /repos/{o}/{r}/issues?limit=50 (${data.issues} issues, token)`, { url: `${api}/issues?limit=50`, headers: auth }));
  let n = 0;
  out.push(
    await run('POST /repos/{o}/{r}/issues (token)', {
      url: base,
      maxOverallRequests: 5000,
      requests: jsonPosts(auth, () => ({ path: `/api/v1/repos/${data.repo}/issues`, body: { title: `bench issue ${n++}`, body: 'created by the benchmark' } })),
    }),
  );
  let c = 0;
  out.push(
    await run('POST /repos/{o}/{r}/issues/{n}/comments (token)', {
      url: base,
      maxOverallRequests: 5000,
      requests: jsonPosts(auth, () => ({ path: `/api/v1/repos/${data.repo}/issues/${(c++ % 1000) + 1}/comments`, body: { body: `comment ${c}` } })),
    }),
  );
  return out;
}

// ---- standalone run -------------------------------------------------------------------------


async function main() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<any>;
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
  const run: Run = async (name, opts) => {
    const res = await autocannon({ connections, duration, ...opts });
    const line = summary(name, res);
    console.log(JSON.stringify(line));
    return line;
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-bench-issues-'));
  const databaseUrl = process.env.BENCH_DATABASE_URL || loadConfig({ dataDir }).databaseUrl;
  let server: ChildProcess | null = null;
  try {
    const data = await seedIssues(databaseUrl);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [path.join(__dirname, '..', 'bin', 'portcullis-forge.js'), 'serve'], {
      env: { ...process.env, FORGE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: `${base}/`, LOG_LEVEL: 'warn', ENABLE_SWAGGER: 'false' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await waitForUrl(`${base}/api/v1/version`);
    console.table(await issueCases(base, data, run));
  } finally {
    server?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
