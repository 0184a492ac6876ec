/**
 * npm run bench:forge -- --gitea   (or npm run bench:forge-gitea): the forge side by side with a
 * real Gitea 1.27.3 (../shared/tools/gitea, see scripts/support/gitea.ts), on SQLite and on
 * PostgreSQL 15 (one throwaway cluster holding both servers' databases), same data, same client
 * (autocannon; git for clones), servers alternating case by case:
 *   GET  /repos/search?limit=50                 anonymous
 *   GET  /repos/{o}/{r}                         anonymous, 200 public repositories in turn
 *   GET  /repos/{o}/{r}/issues?limit=50         token, the repository holding BENCH_ISSUES issues
 *   GET  /user                                  token
 *   GET  /repos/{o}/{r}/contents/{file}, /contents (root, 50 files), /raw/{file}   anonymous, the history repository
 *   POST /repos/{o}/{r}/issues                  token
 *   POST /repos/{o}/{r}/issues/{n}/comments     token
 *   git clone --bare of a BENCH_COMMITS-commit repository (anonymous, smart HTTP)
 * and the pull-request cases (scripts/support/forge-gitea-pulls.ts, their own table):
 *   GET  /repos/{o}/{r}/pulls?state=open&limit=50, GET /repos/{o}/{r}/pulls/{index}   token, BENCH_PR_LIST open PRs
 *   PR create, PR merge (style merge): BENCH_PR_OPS sequential each on a BENCH_PR_COMMITS-commit repository
 *   mergeable recomputation after BENCH_PR_ROUNDS pushes to the base of BENCH_PR_MQ open PRs
 * Printed per case and database: req/s, p50/p99 ms, server CPU ms per request (steadiest figure
 * on a shared machine) for both, and ratio = forge req/s / Gitea req/s (>= 1: the forge is
 * faster); then each server's resident memory after the run.
 *
 * Data set, loaded the same way into both: users through each server's admin API; one
 * repository and one issue through each server's own API, then copied row by row with plain
 * SQL into its own tables (BENCH_REPOS repositories over 100 owners, 1 in 10 private;
 * BENCH_ISSUES issues in bencher/tracker, 1 in 5 closed), counters set as the server keeps them;
 * the clone repository pushed over HTTP to both. Both servers are restarted after the SQL load.
 *
 * Env: BENCH_DB=sqlite|postgresql|both (both), BENCH_REPOS (10000), BENCH_ISSUES (50000),
 * BENCH_COMMITS (1000), BENCH_DURATION s per case and server (10), BENCH_CONNECTIONS (10),
 * BENCH_WORKERS (forge --workers, default 1), BENCH_ONLY=regexp of case names, BENCH_GITEA_GC=1
 * (run Gitea's git_gc_repos `git gc` on its clone repository first: see settleHistory),
 * BENCH_FORGE_NODE_ARGS (node options for the forge server, e.g. --cpu-prof --cpu-prof-dir=DIR),
 * BENCH_PR_LIST (1000), BENCH_PR_COMMITS (10000), BENCH_PR_OPS (20), BENCH_PR_MQ (100), BENCH_PR_ROUNDS (3);
 * the PR data set is loaded only when a PR case is selected (BENCH_ONLY='pulls|PR' for those alone).
 * --write-docs: also write the figures as docs/benchmarks-forge.md's tables (forge-gitea, forge-gitea-pulls-sqlite and -postgresql;
 * each only when its cases ran).
 * Quick run: BENCH_REPOS=1000 BENCH_ISSUES=5000 BENCH_COMMITS=100 BENCH_DURATION=3 BENCH_DB=sqlite
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Client as PgClient } from 'pg';
import { freePort, waitForUrl } from '../e2e/support/ports';
import { pssMiB, rssMiB, startGitea, type Gitea } from './support/gitea';
import { benchCommand, docsTable, recordsTable } from './support/bench-docs';
import { needsHousekeeping } from '../forge-api/src/services/git/housekeeping';
import { loadPulls, MERGE_STYLE, PR_COMMITS, PR_LIST, PR_MQ, PR_OPS, PR_ROUNDS, pullHistory, runCreate, runMerge, runMergeable, type LatencyRun, type PullServer } from './support/forge-gitea-pulls';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pgCluster = require('./jest-postgres.js') as { setup(): Promise<void>; teardown(): Promise<void> };
const exec = promisify(execFile);

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

const REPOS = Number(process.env.BENCH_REPOS ?? 10000);
const ISSUES = Number(process.env.BENCH_ISSUES ?? 50000);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 1000);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
/** Extra node options for the forge server only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (NODE_OPTIONS refuses --cpu-prof). */
const FORGE_NODE_ARGS = (process.env.BENCH_FORGE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const DBS = (process.env.BENCH_DB ?? 'both') === 'both' ? ['sqlite', 'postgresql'] : [process.env.BENCH_DB as string];
const GITEA_GC = process.env.BENCH_GITEA_GC === '1';
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
const OWNERS = 100;
const PASSWORD = 'bench-pass-1';
const REPO_ROOT = path.resolve(__dirname, '..');

/* ------------------------------------------------------------------ SQL, both dialects */

interface Sql {
  one(sql: string, params?: unknown[]): Promise<Record<string, unknown> | undefined>;
  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  exec(sql: string, params?: unknown[]): Promise<void>;
  insertMany(table: string, rows: Record<string, unknown>[]): Promise<void>;
  close(): Promise<void>;
}

function sqliteSql(file: string): Sql {
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  return {
    one: async (sql, params = []) => db.prepare(sql).get(...params) as Record<string, unknown> | undefined,
    all: async (sql, params = []) => db.prepare(sql).all(...params) as Record<string, unknown>[],
    exec: async (sql, params = []) => void db.prepare(sql).run(...params),
    async insertMany(table, rows) {
      if (!rows.length) return;
      const cols = Object.keys(rows[0]);
      const stmt = db.prepare(`INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(',')}) VALUES (${cols.map(() => '?').join(',')})`);
      db.transaction(() => {
        for (const r of rows) stmt.run(...cols.map((c) => sqliteValue(r[c])));
      })();
    },
    close: async () => void db.close(),
  };
}

function sqliteValue(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Date) return v.toISOString();
  return v;
}

async function pgSql(url: string): Promise<Sql> {
  const client = new PgClient({ connectionString: url });
  await client.connect();
  const q = (sql: string) => sql.replace(/\?/g, ((n) => () => `$${++n}`)(0));
  return {
    one: async (sql, params = []) => (await client.query(q(sql), params)).rows[0],
    all: async (sql, params = []) => (await client.query(q(sql), params)).rows,
    exec: async (sql, params = []) => void (await client.query(q(sql), params)),
    async insertMany(table, rows) {
      if (!rows.length) return;
      const cols = Object.keys(rows[0]);
      for (let i = 0; i < rows.length; i += 500) {
        const chunk = rows.slice(i, i + 500);
        const params: unknown[] = [];
        const values = chunk.map((r) => `(${cols.map((c) => (params.push(r[c]), `$${params.length}`)).join(',')})`);
        await client.query(`INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(',')}) VALUES ${values.join(',')}`, params);
      }
    },
    close: () => client.end(),
  };
}

/* ------------------------------------------------------------------ the two servers */

/** What differs between the servers' tables: names of tables and columns, time encoding. */
interface Dialect {
  user: string;
  repo: string;
  issue: string;
  col: Record<'id' | 'ownerId' | 'ownerName' | 'name' | 'lowerName' | 'description' | 'isPrivate' | 'repoId' | 'index' | 'posterId' | 'title' | 'body' | 'isClosed' | 'createdAt' | 'updatedAt' | 'numRepos' | 'numIssues' | 'numClosedIssues', string>;
  /** Copies a time value of the template row shifted by `seconds`. */
  shift(template: unknown, seconds: number): unknown;
}

const GITEA: Dialect = {
  user: 'user',
  repo: 'repository',
  issue: 'issue',
  col: {
    id: 'id', ownerId: 'owner_id', ownerName: 'owner_name', name: 'name', lowerName: 'lower_name', description: 'description', isPrivate: 'is_private',
    repoId: 'repo_id', index: 'index', posterId: 'poster_id', title: 'name', body: 'content', isClosed: 'is_closed', createdAt: 'created_unix', updatedAt: 'updated_unix',
    numRepos: 'num_repos', numIssues: 'num_issues', numClosedIssues: 'num_closed_issues',
  },
  shift: (t, s) => Number(t) + s,
};

const FORGE: Dialect = {
  user: 'User',
  repo: 'Repository',
  issue: 'Issue',
  col: {
    id: 'id', ownerId: 'ownerId', ownerName: 'ownerName', name: 'name', lowerName: 'lowerName', description: 'description', isPrivate: 'isPrivate',
    repoId: 'repoId', index: 'index', posterId: 'posterId', title: 'title', body: 'body', isClosed: 'isClosed', createdAt: 'createdAt', updatedAt: 'updatedAt',
    numRepos: 'numRepos', numIssues: 'numIssues', numClosedIssues: 'numClosedIssues',
  },
  shift(t, s) {
    if (t instanceof Date) return new Date(t.getTime() + s * 1000);
    if (typeof t === 'number') return t + s * 1000;
    return new Date(new Date(String(t)).getTime() + s * 1000).toISOString();
  },
};

interface Server extends PullServer {
  name: 'forge' | 'gitea';
  url: string;
  dialect: Dialect;
  pids(): number[];
  sql(): Promise<Sql>;
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** The bare repository `owner/name` on disk. */
  repoDir(owner: string, name: string): string;
  /** Set by load(). */
  token?: string;
  sample?: string[];
}

async function api(server: Server, method: string, p: string, body?: unknown, auth?: string): Promise<unknown> {
  const res = await fetch(`${server.url}/api/v1${p}`, {
    method,
    headers: { ...(auth ? { authorization: auth } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${server.name} ${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

async function inParallel<T>(items: T[], n: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

async function startForge(db: 'sqlite' | 'postgresql', pgUrl: string | undefined): Promise<Server> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-vs-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = { ...process.env, FORGE_DATA_DIR: dataDir, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: `${url}/`, LOG_LEVEL: 'warn', ENABLE_SWAGGER: 'false' };
  if (db === 'postgresql') env.DATABASE_URL = pgUrl;
  else delete env.DATABASE_URL;
  const bin = path.join(REPO_ROOT, 'bin', 'portcullis-forge.js');
  await exec(process.execPath, [bin, 'admin', 'user', 'create', '--username', 'root', '--password', 'portcullis-root-1', '--email', 'root@example.com', '--admin'], { env });
  let child: ChildProcess;
  const launch = async () => {
    const args = [bin, 'serve', ...(WORKERS > 1 ? ['--workers', String(WORKERS)] : [])];
    child = spawn(process.execPath, [...FORGE_NODE_ARGS, ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    await waitForUrl(`${url}/api/v1/version`, 60000);
  };
  await launch();
  const stopChild = async () => {
    const c = child;
    if (c.exitCode !== null) return;
    const done = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await done;
  };
  return {
    name: 'forge',
    url,
    dialect: FORGE,
    pids: () => [child.pid!, ...childPids(child.pid!)],
    repoDir: (owner, name) => path.join(dataDir, 'repositories', owner, `${name}.git`),
    sql: async () => (db === 'postgresql' ? pgSql(pgUrl!) : sqliteSql(path.join(dataDir, 'forge.db'))),
    restart: async () => {
      await stopChild();
      await launch();
    },
    stop: async () => {
      await stopChild();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A process's command line, shortened (for the memory breakdown). */
function processName(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).map((a) => path.basename(a)).slice(0, 3).join(' ');
  } catch {
    return String(pid);
  }
}

/** Direct children of a process (cluster workers), from /proc. */
function childPids(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function startGiteaServer(db: 'sqlite' | 'postgresql', pgUrl: string | undefined): Promise<Server> {
  const gitea: Gitea = await startGitea(db === 'postgresql' ? { database: 'postgres', databaseUrl: `${pgUrl!.replace(/^postgresql:/, 'postgres:')}?sslmode=disable` } : {});
  return {
    name: 'gitea',
    url: gitea.url,
    dialect: GITEA,
    pids: () => [gitea.pid],
    repoDir: (owner, name) => path.join(gitea.dir, 'repositories', owner, `${name}.git`),
    sql: async () => (db === 'postgresql' ? pgSql(pgUrl!) : sqliteSql(gitea.dbFile)),
    restart: () => gitea.restart(),
    stop: () => gitea.stop(),
  };
}

/* ------------------------------------------------------------------ loading the data set */

async function load(server: Server, historyDir: string): Promise<void> {
  const t0 = Date.now();
  const admin = basic('root', 'portcullis-root-1');
  const c = server.dialect.col;
  const users = ['bencher', 'watcher', ...Array.from({ length: OWNERS }, (_, i) => `owner${i}`)];
  await inParallel(users, 4, (u) => api(server, 'POST', '/admin/users', { username: u, email: `${u}@example.com`, password: PASSWORD, must_change_password: false }, admin));
  const tok = (await api(server, 'POST', '/users/bencher/tokens', { name: 'bench', scopes: ['write:repository', 'write:user', 'write:issue'] }, basic('bencher', PASSWORD))) as { sha1: string };
  server.token = tok.sha1;
  const auth = `token ${tok.sha1}`;
  // Templates made by the server itself, then copied.
  await api(server, 'POST', '/admin/users/owner0/repos', { name: 'repo-00000', description: 'benchmark repository 0', private: false }, admin);
  await api(server, 'POST', '/user/repos', { name: 'tracker' }, auth);
  await api(server, 'POST', '/user/repos', { name: 'history' }, auth);
  await api(server, 'POST', '/repos/bencher/tracker/issues', { title: 'Issue number 1', body: 'Body of issue 1' }, auth);
  await api(server, 'PUT', '/repos/bencher/tracker/subscription', undefined, basic('watcher', PASSWORD));
  await exec('git', ['-C', historyDir, 'push', '-q', `${server.url.replace('//', `//bencher:${PASSWORD}@`)}/bencher/history.git`, 'main']);

  const sql = await server.sql();
  try {
    const owners = new Map((await sql.all(`SELECT "${c.id}" AS id, "${c.name}" AS name FROM "${server.dialect.user}" WHERE "${c.name}" LIKE 'owner%'`)).map((r) => [String(r.name), Number(r.id)]));
    const repoT = (await sql.one(`SELECT * FROM "${server.dialect.repo}" WHERE "${c.lowerName}" = 'repo-00000'`))!;
    const rows: Record<string, unknown>[] = [];
    for (let i = 1; i < REPOS; i++) {
      const owner = `owner${i % OWNERS}`;
      const name = `repo-${String(i).padStart(5, '0')}`;
      const row = { ...repoT, [c.ownerId]: owners.get(owner), [c.ownerName]: owner, [c.name]: name, [c.lowerName]: name, [c.description]: `benchmark repository ${i}`, [c.isPrivate]: i % 10 === 0 };
      delete row[c.id];
      rows.push(row);
    }
    await sql.insertMany(server.dialect.repo, rows);
    if (server.name === 'gitea') {
      // Gitea keeps each repository's units (issues, wiki, ...) in repo_unit: copy the template's.
      const units = await sql.all('SELECT * FROM repo_unit WHERE repo_id = ?', [repoT.id]);
      const ids = await sql.all(`SELECT id FROM repository WHERE lower_name LIKE 'repo-%' AND id <> ?`, [repoT.id]);
      await sql.insertMany('repo_unit', ids.flatMap((r) => units.map((u) => ({ ...u, id: undefined, repo_id: r.id })).map(({ id: _drop, ...u }) => u)));
    }
    for (const [name, id] of owners) {
      const n = Math.floor(REPOS / OWNERS) + (Number(name.slice(5)) < REPOS % OWNERS ? 1 : 0);
      await sql.exec(`UPDATE "${server.dialect.user}" SET "${c.numRepos}" = ? WHERE "${c.id}" = ?`, [n, id]);
    }

    const tracker = (await sql.one(`SELECT "${c.id}" AS id FROM "${server.dialect.repo}" WHERE "${c.lowerName}" = 'tracker'`))!;
    const issueT = (await sql.one(`SELECT * FROM "${server.dialect.issue}" WHERE "${c.repoId}" = ?`, [tracker.id]))!;
    const watcher = (await sql.one(`SELECT "${c.id}" AS id FROM "${server.dialect.user}" WHERE "${c.name}" = 'watcher'`))!;
    for (let start = 2; start <= ISSUES; start += 5000) {
      const chunk: Record<string, unknown>[] = [];
      for (let index = start; index < start + 5000 && index <= ISSUES; index++) {
        const row = {
          ...issueT,
          [c.index]: index,
          [c.title]: `Issue number ${index}`,
          [c.body]: `Body of issue ${index}`,
          [c.posterId]: index % 2 ? issueT[c.posterId] : watcher.id,
          [c.isClosed]: index % 5 === 0,
          [c.createdAt]: server.dialect.shift(issueT[c.createdAt], index - ISSUES),
          [c.updatedAt]: server.dialect.shift(issueT[c.updatedAt], index - ISSUES),
        };
        delete row[c.id];
        if (server.name === 'gitea' && index % 5 === 0) row.closed_unix = row.updated_unix;
        chunk.push(row);
      }
      await sql.insertMany(server.dialect.issue, chunk);
    }
    const closed = Math.floor(ISSUES / 5);
    await sql.exec(`UPDATE "${server.dialect.repo}" SET "${c.numIssues}" = ?, "${c.numClosedIssues}" = ? WHERE "${c.id}" = ?`, [ISSUES, closed, tracker.id]);
    if (server.name === 'gitea') await sql.exec('UPDATE issue_index SET max_index = ? WHERE group_id = ?', [ISSUES, tracker.id]);
    else await sql.exec('UPDATE "Repository" SET "nextIssueIndex" = ? WHERE id = ?', [ISSUES + 1, tracker.id]);
  } finally {
    await sql.close();
  }
  await server.restart();
  await settleHistory(server);
  server.sample = Array.from({ length: Math.min(REPOS, 220) }, (_, i) => i).filter((i) => i % 10 !== 0).map((i) => `owner${i % OWNERS}/repo-${String(i).padStart(5, '0')}`);
  const count = (await fetch(`${server.url}/api/v1/repos/search?limit=1`)).headers.get('x-total-count');
  console.log(`${server.name}: loaded ${REPOS} repositories (${count} public), ${ISSUES} issues, ${COMMITS} commits in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

async function makeHistory(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-history-'));
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  const lines: string[] = [];
  for (let i = 1; i <= COMMITS; i++) {
    const content = `line ${i}\n`.repeat(20);
    lines.push('commit refs/heads/main', `committer Bench <bench@example.com> ${1700000000 + i} +0000`, `data ${`commit ${i}\n`.length}`, `commit ${i}`);
    lines.push(`M 644 inline file-${i % 50}.txt`, `data ${Buffer.byteLength(content)}`, content);
  }
  await new Promise<void>((resolve, reject) => {
    const p = spawn('git', ['-C', dir, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'inherit'] });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import ${code}`))));
    p.stdin.end(lines.join('\n') + '\n');
  });
  return dir;
}

/**
 * The clone repository's pack layout before the runs. The forge housekeeps it after the push
 * (services/git/housekeeping.ts: one pack with a bitmap, a commit-graph); a restart within the
 * quiet time leaves that to the sweep a few seconds after start, so wait for it. Gitea 1.27
 * does nothing after a push (git's `gc --auto` leaves a single pushed pack alone; its
 * git_gc_repos cron is off by default and runs every 72 h when on), so its copy keeps the pushed
 * pack unless BENCH_GITEA_GC=1, which runs what that cron runs (`git gc`, with Gitea's
 * gc.writeCommitGraph=true; bitmaps are git's default for bare repositories): like with like.
 */
async function settleHistory(server: Server): Promise<void> {
  const dir = server.repoDir('bencher', 'history');
  if (server.name === 'gitea') {
    if (GITEA_GC) await exec('git', ['-C', dir, '-c', 'gc.writeCommitGraph=true', 'gc', '-q']);
  } else {
    const deadline = Date.now() + 120_000;
    while ((await needsHousekeeping(dir)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  }
  const pack = fs.readdirSync(path.join(dir, 'objects', 'pack'));
  const layout = `${pack.filter((f) => f.endsWith('.pack')).length} pack(s), bitmap ${pack.some((f) => f.endsWith('.bitmap')) ? 'yes' : 'no'}, commit-graph ${fs.existsSync(path.join(dir, 'objects', 'info', 'commit-graph')) ? 'yes' : 'no'}`;
  console.log(`${server.name}: clone repository: ${layout}`);
}

/* ------------------------------------------------------------------ measuring */

function cpuMs(pids: number[]): number {
  let sum = 0;
  for (const pid of pids) {
    try {
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      sum += [11, 12, 13, 14].reduce((s, i) => s + Number(f[i]), 0) * 10;
    } catch {
      /* gone */
    }
  }
  return sum;
}

/**
 * Waits (up to 30 s) until the server uses under a tenth of a core over one second: work left
 * from the previous case (requests the client gave up on keep running in the server) or started
 * in the background after a restart (Gitea runs its check_repo_stats cron over every repository
 * at start) would otherwise be counted against this case, in its CPU per request and in the
 * CPU the other server can get.
 */
async function quiet(server: Server): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const before = cpuMs(server.pids());
    await new Promise((r) => setTimeout(r, 1000));
    if (cpuMs(server.pids()) - before < 100) return;
    if (Date.now() - t0 > 30_000) {
      console.log(`${server.name}: still busy after 30 s before the next case`);
      return;
    }
  }
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  cpu: number | null;
  bad: number;
  note?: string;
}

/**
 * A case: throughput (autocannon: req/s, p50/p99) or, with `latency`, sequential operations
 * timed one by one (p50/p90; the ratio is then Gitea p50 / forge p50). `table: 'pulls'` cases
 * go to the pull-request table.
 */
type Case = {
  name: string;
  table?: 'pulls';
  latency?: boolean;
  goal?: string;
  run(server: Server): Promise<{ total: number; rps: number; p50: number; p99: number; bad: number; note?: string }>;
};

/** Figures of a latency case: p50 and p90 in the p50/p99 slots. */
function latencyFigures(r: LatencyRun) {
  const times = [...r.times].sort((a, b) => a - b);
  const pct = (p: number) => (times.length ? Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))]) : 0);
  return { total: times.length, rps: 0, p50: pct(0.5), p99: pct(0.9), bad: r.bad, note: r.note };
}

function cases(prHistory?: string): Case[] {
  const http = (name: string, opts: (s: Server) => Record<string, unknown>): Case => ({
    name,
    async run(server) {
      const res = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts(server) });
      return { total: res.requests.total, rps: res.requests.average, p50: res.latency.p50, p99: res.latency.p99, bad: res.non2xx + res.errors + res.timeouts };
    },
  });
  const post = (s: Server, next: () => { path: string; body: unknown }) => ({
    url: s.url,
    requests: [{
      method: 'POST',
      headers: { authorization: `token ${s.token}`, 'content-type': 'application/json' },
      setupRequest: (req: Record<string, unknown>) => {
        const { path: p, body } = next();
        return { ...req, path: p, body: JSON.stringify(body) };
      },
    }],
  });
  let n = 0;
  return [
    http('GET /repos/search?limit=50', (s) => ({ url: `${s.url}/api/v1/repos/search?limit=50` })),
    http('GET /repos/{o}/{r}', (s) => {
      let i = 0;
      return { url: s.url, requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/api/v1/repos/${s.sample![i++ % s.sample!.length]}` }) }] };
    }),
    http('GET /repos/{o}/{r}/issues?limit=50', (s) => ({ url: `${s.url}/api/v1/repos/bencher/tracker/issues?limit=50`, headers: { authorization: `token ${s.token}` } })),
    http('GET /user', (s) => ({ url: `${s.url}/api/v1/user`, headers: { authorization: `token ${s.token}` } })),
    http('GET /repos/{o}/{r}/contents/{file}', (s) => ({ url: `${s.url}/api/v1/repos/bencher/history/contents/file-7.txt` })),
    http('GET /repos/{o}/{r}/contents (50 entries)', (s) => ({ url: `${s.url}/api/v1/repos/bencher/history/contents` })),
    http('GET /repos/{o}/{r}/raw/{file}', (s) => ({ url: `${s.url}/api/v1/repos/bencher/history/raw/file-7.txt` })),
    http('POST /repos/{o}/{r}/issues', (s) => post(s, () => ({ path: '/api/v1/repos/bencher/tracker/issues', body: { title: `bench issue ${n++}`, body: 'opened by the benchmark' } }))),
    http('POST /repos/{o}/{r}/issues/{n}/comments', (s) => post(s, () => ({ path: `/api/v1/repos/bencher/tracker/issues/${ISSUES}/comments`, body: { body: `comment ${n++}` } }))),
    {
      name: `git clone (${COMMITS} commits)`,
      async run(server: Server) {
        const times: number[] = [];
        const deadline = Date.now() + DURATION * 1000;
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-clone-'));
        let bad = 0;
        // Two clones at a time: one per core.
        await Promise.all([0, 1].map(async (w) => {
          for (let k = 0; Date.now() < deadline; k++) {
            const dest = path.join(tmp, `${w}-${k}`);
            const t = process.hrtime.bigint();
            try {
              await exec('git', ['clone', '-q', '--bare', `${server.url}/bencher/history.git`, dest]);
              times.push(Number(process.hrtime.bigint() - t) / 1e6);
            } catch {
              bad++;
            }
            fs.rmSync(dest, { recursive: true, force: true });
          }
        }));
        fs.rmSync(tmp, { recursive: true, force: true });
        times.sort((a, b) => a - b);
        const pct = (p: number) => (times.length ? Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))]) : 0);
        return { total: times.length, rps: times.length / DURATION, p50: pct(0.5), p99: pct(0.99), bad };
      },
    },
    ...pullCases(prHistory),
  ].filter((c) => !ONLY || ONLY.test(c.name));
}

function pullCases(prHistory?: string): Case[] {
  const http = (name: string, opts: (s: Server) => Record<string, unknown>): Case => ({
    name,
    table: 'pulls',
    goal: '>= 1.5',
    async run(server) {
      const res = await autocannon({ connections: CONNECTIONS, duration: DURATION, headers: { authorization: `token ${server.token}` }, ...opts(server) });
      return { total: res.requests.total, rps: res.requests.average, p50: res.latency.p50, p99: res.latency.p99, bad: res.non2xx + res.errors + res.timeouts };
    },
  });
  const latency = (name: string, run: (s: Server) => Promise<LatencyRun>): Case => ({ name, table: 'pulls', latency: true, goal: '>= 1.0', run: async (s) => latencyFigures(await run(s)) });
  return [
    http(`GET /repos/{o}/{r}/pulls?limit=50 (${PR_LIST} open PRs)`, (s) => ({ url: `${s.url}/api/v1/repos/bencher/prs/pulls?state=open&limit=50` })),
    http('GET /repos/{o}/{r}/pulls/{index}', (s) => {
      let i = 0;
      return { url: s.url, requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/api/v1/repos/bencher/prs/pulls/${1 + (i++ % PR_LIST)}` }) }] };
    }),
    latency(`PR create (${PR_COMMITS}-commit repository, ${PR_OPS} sequential)`, runCreate),
    latency(`PR merge, style ${MERGE_STYLE} (${PR_COMMITS}-commit repository, ${PR_OPS} sequential)`, runMerge),
    latency(`PR mergeable after a base push (${PR_MQ} open PRs, ${PR_ROUNDS} rounds)`, (s) => runMergeable(s, prHistory!)),
  ];
}

async function measure(server: Server, c: Case): Promise<Figures> {
  const before = cpuMs(server.pids());
  const r = await c.run(server);
  const cpu = r.total > 0 ? (cpuMs(server.pids()) - before) / r.total : null;
  return { rps: r.rps, p50: r.p50, p99: r.p99, cpu, bad: r.bad, note: r.note };
}

/** One row of the pull-request table. */
function pullRow(db: string, c: Case, f: Figures, g: Figures): Record<string, unknown> {
  const show = (x: Figures) => (c.latency ? `${x.p50} ms p50` : `${x.rps.toFixed(1)} req/s`);
  const ratio = c.latency ? (f.p50 > 0 ? g.p50 / f.p50 : null) : g.rps > 0 ? f.rps / g.rps : null;
  return {
    db,
    case: c.name,
    forge: show(f),
    gitea: show(g),
    ratio: ratio === null ? null : +ratio.toFixed(2),
    goal: c.goal,
    'forge p50/p99 ms (latency: p50/p90)': `${f.p50}/${f.p99}`,
    'gitea p50/p99 ms (latency: p50/p90)': `${g.p50}/${g.p99}`,
    'cpu ms/op forge / gitea': `${f.cpu === null ? '' : f.cpu.toFixed(2)} / ${g.cpu === null ? '' : g.cpu.toFixed(2)}`,
    'non-2xx f/g': `${f.bad}/${g.bad}`,
    ...(f.note || g.note ? { notes: `forge: ${f.note ?? ''}; gitea: ${g.note ?? ''}` } : {}),
  };
}

async function benchDatabase(db: 'sqlite' | 'postgresql', history: string, prHistory: string | undefined, pgUrl?: string): Promise<{ rows: Record<string, unknown>[]; pulls: Record<string, unknown>[] }> {
  let forge: Server | undefined;
  let gitea: Server | undefined;
  let pg: PgClient | undefined;
  try {
    let forgeUrl: string | undefined;
    let giteaUrl: string | undefined;
    if (db === 'postgresql') {
      pg = new PgClient({ connectionString: pgUrl });
      await pg.connect();
      const stamp = Date.now().toString(36);
      await pg.query(`CREATE DATABASE forge_${stamp}`);
      await pg.query(`CREATE DATABASE gitea_${stamp}`);
      forgeUrl = pgUrl!.replace(/\/[^/]*$/, `/forge_${stamp}`);
      giteaUrl = pgUrl!.replace(/\/[^/]*$/, `/gitea_${stamp}`);
    }
    // One at a time, so a failure to start the second still stops the first (finally below).
    forge = await startForge(db, forgeUrl);
    gitea = await startGiteaServer(db, giteaUrl);
    await load(gitea, history);
    await load(forge, history);
    if (prHistory) {
      await loadPulls(gitea, prHistory);
      await loadPulls(forge, prHistory);
    }
    const rows: Record<string, unknown>[] = [];
    const pulls: Record<string, unknown>[] = [];
    let flip = false;
    for (const c of cases(prHistory)) {
      // Alternate which server goes first, so neither always follows the other's load.
      const order = flip ? [gitea, forge] : [forge, gitea];
      flip = !flip;
      const got: Record<string, Figures> = {};
      for (const s of order) {
        await quiet(s);
        got[s.name] = await measure(s, c);
      }
      const f = got.forge;
      const g = got.gitea;
      if (c.table === 'pulls') {
        const row = pullRow(db, c, f, g);
        console.log(JSON.stringify(row));
        pulls.push(row);
        continue;
      }
      const row = {
        db,
        case: c.name,
        'forge req/s': +f.rps.toFixed(1),
        'gitea req/s': +g.rps.toFixed(1),
        ratio: g.rps > 0 ? +(f.rps / g.rps).toFixed(2) : null,
        'forge p50/p99 ms': `${f.p50}/${f.p99}`,
        'gitea p50/p99 ms': `${g.p50}/${g.p99}`,
        'cpu ms/req forge': f.cpu === null ? null : +f.cpu.toFixed(2),
        'cpu ms/req gitea': g.cpu === null ? null : +g.cpu.toFixed(2),
        'non-2xx f/g': `${f.bad}/${g.bad}`,
      };
      console.log(JSON.stringify(row));
      rows.push(row);
    }
    const sum = (pids: number[], size: (pid: number) => number | null) => pids.map(size).reduce<number>((a, b) => a + (b ?? 0), 0);
    // Which processes the forge's figure holds (the server, cluster workers, the git spawner, git children alive at the end).
    const parts = forge.pids().map((pid) => `${processName(pid)} ${rssMiB(pid) ?? '?'} (pss ${pssMiB(pid) ?? '?'})`);
    console.log(`${db}: forge resident MiB by process: ${parts.join(', ')}`);
    const [fr, gr] = [sum(forge.pids(), rssMiB), sum(gitea.pids(), rssMiB)];
    rows.push({ db, case: 'resident memory after the run, RSS summed (MiB)', 'forge req/s': fr, 'gitea req/s': gr, ratio: +(gr / fr).toFixed(2) });
    // The summed RSS counts the node binary's shared pages once per node process (server and spawner).
    const [fp, gp] = [sum(forge.pids(), pssMiB), sum(gitea.pids(), pssMiB)];
    rows.push({ db, case: 'memory after the run, PSS summed (MiB)', 'forge req/s': fp, 'gitea req/s': gp, ratio: +(gp / fp).toFixed(2) });
    return { rows, pulls };
  } finally {
    await forge?.stop();
    await gitea?.stop();
    await pg?.end();
  }
}

export async function main(): Promise<void> {
  const history = await makeHistory();
  const prHistory = cases('').some((c) => c.table === 'pulls') ? await pullHistory() : undefined;
  const all: Record<string, unknown>[] = [];
  const pulls: Record<string, unknown>[] = [];
  let startedPg = false;
  try {
    for (const db of DBS) {
      if (db !== 'sqlite' && db !== 'postgresql') throw new Error(`BENCH_DB: ${db}`);
      if (db === 'postgresql' && !process.env.PG_TEST_URL) {
        await pgCluster.setup();
        startedPg = true;
      }
      const r = await benchDatabase(db, history, prHistory, process.env.PG_TEST_URL);
      all.push(...r.rows);
      pulls.push(...r.pulls);
    }
  } finally {
    if (startedPg) await pgCluster.teardown();
    fs.rmSync(history, { recursive: true, force: true });
    if (prHistory) fs.rmSync(prHistory, { recursive: true, force: true });
  }
  console.log(`\nforge vs Gitea 1.27.3: ${REPOS} repositories, ${ISSUES} issues, ${COMMITS}-commit clone; ${DURATION} s per case and server, ${CONNECTIONS} connections, forge workers ${WORKERS}, Gitea's copy gc'd ${GITEA_GC ? 'yes' : 'no'}; ratio = forge/Gitea req/s (memory row: Gitea/forge MiB)`);
  const ran = all.filter((r) => !String(r.case).includes('memory'));
  if (ran.length) {
    console.table(all);
    docsTable({ doc: 'forge', id: 'forge-gitea', command: benchCommand('bench:forge-gitea'), ...recordsTable(all) });
  }
  if (pulls.length) {
    console.log(`\npull requests: ${PR_LIST} open PRs to list/get, ${PR_COMMITS}-commit repository for create/merge (${PR_OPS} each, merge style ${MERGE_STYLE}), ${PR_MQ} open PRs and ${PR_ROUNDS} base pushes for mergeable; ratio = forge/Gitea req/s for reads, Gitea p50 / forge p50 for latencies (>= 1: the forge is as fast)`);
    console.table(pulls);
    // One table per database, so that the two can come from separate runs (each says its load).
    for (const db of DBS) {
      const rows = pulls.filter((r) => r.db === db);
      if (rows.length) docsTable({ doc: 'forge', id: `forge-gitea-pulls-${db}`, command: benchCommand('bench:forge-gitea'), ...recordsTable(rows) });
    }
  }
  console.log(`load average (1/5/15 min): ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} on ${os.cpus().length} CPUs`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
