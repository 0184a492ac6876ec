/**
 * npm run bench:forge-content: repository content reads, the forge side by side with a real
 * Gitea 1.27.3 (../shared/tools/gitea, started by scripts/support/gitea.ts), both on SQLite,
 * same repository, same client (autocannon), servers alternating case by case (two rounds each):
 *   GET /repos/{o}/{r}/contents/{file}          a file two folders down, default branch
 *   GET /repos/{o}/{r}/contents/{file}          500 files in turn (first asks miss any cache)
 *   GET /repos/{o}/{r}/contents/{dir}           a folder of 50 files
 *   GET /repos/{o}/{r}/raw/{file}, /media/{file}
 *   GET /repos/{o}/{r}/commits?limit=50          first page of a BENCH_COMMITS-commit history
 *   GET /repos/{o}/{r}/commits?limit=50&page=150 a deep page (paged in git, not in memory)
 *   GET /repos/{o}/{r}/branches                  BENCH_BRANCHES branches (first page)
 *   GET /repos/{o}/{r}/git/commits/{sha}         one commit with files and stats
 *   GET /repos/{o}/{r}/git/trees/main?recursive=1
 *   GET /repos/{o}/{r}/git/refs, /git/refs/heads/b-1
 * Printed per case: req/s, p50/p99 ms and server CPU ms per request (the server process and its
 * git children, from /proc) for both, and ratio = forge req/s / Gitea req/s (>= 1: the forge is
 * faster); the load average before and after. Every answer is checked: a case where either
 * server answered anything but 2xx (or timed out) prints the counts and no ratio.
 *
 * The repository is made with git fast-import (BENCH_COMMITS commits over 500 files in 10
 * folders, a branch every BENCH_COMMITS/BENCH_BRANCHES commits) and pushed over HTTP to both.
 * --write-docs: also write the figures as docs/benchmarks-forge.md's table (forge-content).
 * Env: BENCH_COMMITS (10000), BENCH_BRANCHES (500), BENCH_DURATION s per round (5),
 * BENCH_CONNECTIONS (10), BENCH_ONLY=regexp of case names.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitForUrl } from '../e2e/support/ports';
import { startGitea, type Gitea } from './support/gitea';
import { benchCommand, docsTable } from './support/bench-docs';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<{ requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number; timeouts: number }>;
const exec = promisify(execFile);

const COMMITS = Number(process.env.BENCH_COMMITS ?? 10000);
const BRANCHES = Number(process.env.BENCH_BRANCHES ?? 500);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
const REPO_ROOT = path.resolve(__dirname, '..');
const PASSWORD = 'portcullis-root-1';

interface Server {
  name: string;
  url: string;
  token: string;
  pid: () => number;
  stop(): Promise<void>;
}

async function makeHistory(): Promise<{ dir: string; head: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-content-'));
  await exec('git', ['init', '-q', '--bare', '-b', 'main', dir]);
  const every = Math.max(1, Math.floor(COMMITS / BRANCHES));
  const chunks: string[] = [];
  for (let i = 1; i <= COMMITS; i++) {
    const file = `dir-${i % 10}/sub/file-${i % 500}.txt`;
    const content = `line ${i}\n`.repeat(30);
    const msg = `commit ${i}\n\nchange ${file}\n`;
    chunks.push(
      'commit refs/heads/main',
      `mark :${i}`,
      `author Bench Author <bench@example.com> ${1700000000 + i * 60} +0000`,
      `committer Bench Author <bench@example.com> ${1700000000 + i * 60} +0000`,
      `data ${Buffer.byteLength(msg)}`,
      msg,
      `M 644 inline ${file}`,
      `data ${Buffer.byteLength(content)}`,
      content,
    );
    if (i % every === 0 && i / every <= BRANCHES) chunks.push(`reset refs/heads/b-${i / every}`, `from :${i}`, '');
  }
  await new Promise<void>((resolve, reject) => {
    const p = spawn('git', ['-C', dir, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'inherit'] });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import ${code}`))));
    p.stdin.end(chunks.join('\n') + '\n');
  });
  await exec('git', ['-C', dir, 'gc', '-q']);
  const head = (await exec('git', ['-C', dir, 'rev-parse', 'main'])).stdout.trim();
  return { dir, head };
}

async function api(s: Server, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(`${s.url}/api/v1${p}`, {
    method,
    headers: { authorization: `token ${s.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${s.name} ${method} ${p}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

async function startForge(): Promise<Server> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-content-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = { ...process.env, FORGE_DATA_DIR: dataDir, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: `${url}/`, LOG_LEVEL: 'warn', ENABLE_SWAGGER: 'false' };
  delete env.DATABASE_URL;
  const bin = path.join(REPO_ROOT, 'bin', 'portcullis-forge.js');
  await exec(process.execPath, [bin, 'admin', 'user', 'create', '--username', 'root', '--password', PASSWORD, '--email', 'root@example.com', '--admin'], { env });
  const child: ChildProcess = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  await waitForUrl(`${url}/api/v1/version`, 60000);
  const res = await fetch(`${url}/api/v1/users/root/tokens`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['all'] }),
  });
  const { sha1 } = (await res.json()) as { sha1: string };
  return {
    name: 'forge',
    url,
    token: sha1,
    pid: () => child.pid!,
    stop: async () => {
      if (child.exitCode === null) {
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await done;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function load(s: Server, dir: string): Promise<void> {
  const t0 = Date.now();
  await api(s, 'POST', '/user/repos', { name: 'content', default_branch: 'main' });
  const remote = new URL(`${s.url}/root/content.git`);
  await exec('git', ['-C', dir, '-c', `http.extraHeader=Authorization: token ${s.token}`, 'push', '-q', remote.toString(), 'refs/heads/*:refs/heads/*'], { maxBuffer: 1 << 24 });
  // Gitea records a push in the background: wait until the history and every branch show.
  const deadline = Date.now() + 600_000;
  for (;;) {
    const commits = await fetch(`${s.url}/api/v1/repos/root/content/commits?limit=1&stat=false&files=false&verification=false`, { headers: { authorization: `token ${s.token}` } });
    const branches = await fetch(`${s.url}/api/v1/repos/root/content/branches?limit=1`, { headers: { authorization: `token ${s.token}` } });
    const total = Number(branches.headers.get('x-total-count') ?? -1);
    if (commits.status === 200 && (branches.status === 404 || total >= BRANCHES + 1)) break;
    if (Date.now() > deadline) throw new Error(`${s.name}: the pushed repository did not show up (commits ${commits.status}, branches ${total})`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  // Only now: Gitea's background push handling makes the first pushed branch (b-1) the default
  // branch of an empty repository, overriding an earlier choice.
  // Gitea may still be syncing the branches then and answer 500 "already in queue": retry.
  for (let tries = 0; ; tries++) {
    const ok = await api(s, 'PATCH', '/repos/root/content', { default_branch: 'main' }).then(() => true, (err) => {
      if (tries >= 120) throw err;
      return false;
    });
    if (ok && (await api(s, 'GET', '/repos/root/content')).default_branch === 'main') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(`${s.name}: pushed ${COMMITS} commits, ${BRANCHES + 1} branches in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU (process and git children) per answered request, ms. */
  cpu: number;
  bad: number;
}

/** A process and its descendants (git children), from /proc. */
function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ');
      parent.set(Number(d), Number(f[1]));
    } catch {
      /* gone */
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parent) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

/** CPU ms of a process tree: user + system of each process and of its reaped children. */
function cpuMs(root: number): number {
  const tick = 1000 / 100;
  let sum = 0;
  for (const pid of processTree(root)) {
    try {
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      sum += [11, 12, 13, 14].reduce((a, i) => a + Number(f[i]), 0) * tick;
    } catch {
      /* gone */
    }
  }
  return sum;
}

/** One path, or several asked in turn (each server meets each path for the first time once). */
type Target = string | string[];

async function measure(s: Server, p: Target): Promise<Figures> {
  // Child processes that exit during the run are counted through the parent's reaped-children
  // times; long-lived ones (cat-file readers) through their own.
  const before = cpuMs(s.pid());
  const headers = { authorization: `token ${s.token}` };
  let i = 0;
  const target = typeof p === 'string'
    ? { url: `${s.url}/api/v1${p}` }
    : { url: s.url, requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/api/v1${p[i++ % p.length]}` }) }] };
  const res = await autocannon({ ...target, connections: CONNECTIONS, duration: DURATION, headers });
  const cpu = (cpuMs(s.pid()) - before) / Math.max(1, res.requests.total);
  return { rps: res.requests.average, p50: res.latency.p50, p99: res.latency.p99, cpu, bad: res.non2xx + res.errors + res.timeouts };
}

const loadavg = () => os.loadavg().map((l) => l.toFixed(2)).join(' / ');

async function main(): Promise<void> {
  console.log(`bench:forge-content: ${COMMITS} commits, ${BRANCHES} branches, ${DURATION}s x 2 rounds per case and server, ${CONNECTIONS} connections`);
  const { dir, head } = await makeHistory();
  let gitea: Gitea | null = null;
  let forge: Server | null = null;
  try {
    gitea = await startGitea({ extraIni: '[api]\nMAX_RESPONSE_ITEMS = 50\n' });
    const giteaServer: Server = { name: 'gitea', url: gitea.url, token: gitea.token, pid: () => gitea!.pid, stop: async () => gitea!.stop() };
    forge = await startForge();
    await load(forge, dir);
    await load(giteaServer, dir);
    // Files change in turn (commit i writes dir-(i%10)/sub/file-(i%500).txt): this one was last
    // written 7 commits before the tip.
    const file = `dir-${(COMMITS - 7) % 10}/sub/file-${(COMMITS - 7) % 500}.txt`;
    const files = Array.from({ length: 500 }, (_, k) => `/repos/root/content/contents/dir-${k % 10}/sub/file-${k}.txt`);
    const cases: [string, Target][] = [
      ['GET /contents/{file}', `/repos/root/content/contents/${file}`],
      ['GET /contents/{file} (500 in turn)', files],
      ['GET /contents/{dir} (50 files)', '/repos/root/content/contents/dir-3/sub'],
      ['GET /raw/{file}', `/repos/root/content/raw/${file}`],
      ['GET /media/{file}', `/repos/root/content/media/${file}`],
      ['GET /commits?limit=50', '/repos/root/content/commits?limit=50'],
      ['GET /commits?limit=50&page=150', '/repos/root/content/commits?limit=50&page=150'],
      ['GET /branches', '/repos/root/content/branches'],
      ['GET /git/commits/{sha}', `/repos/root/content/git/commits/${head}`],
      ['GET /git/trees/main?recursive=1', '/repos/root/content/git/trees/main?recursive=1'],
      ['GET /git/refs', '/repos/root/content/git/refs'],
      ['GET /git/refs/heads/b-1', '/repos/root/content/git/refs/heads/b-1'],
    ];
    console.log(`load average before: ${loadavg()} on ${os.cpus().length} CPUs`);
    const rows: string[] = [];
    const docRows: string[][] = [];
    for (const [name, p] of cases) {
      if (ONLY && !ONLY.test(name)) continue;
      const first = typeof p === 'string' ? p : p[p.length - 1];
      const served = await Promise.all([forge, giteaServer].map(async (s) => {
        const res = await fetch(`${s.url}/api/v1${first}`, { headers: { authorization: `token ${s.token}` } });
        return { status: res.status, text: (await res.text()).slice(0, 160) };
      }));
      if (served.some((r) => r.status !== 200)) {
        rows.push(`${name.padEnd(34)} not compared: forge ${served[0].status}, gitea ${served[1].status} ${served.find((r) => r.status !== 200)!.text}`);
        console.log(rows[rows.length - 1]);
        docRows.push([name, `not compared: forge ${served[0].status}, gitea ${served[1].status}`, '', '>= 1.5']);
        continue;
      }
      const runs: Record<string, Figures[]> = { forge: [], gitea: [] };
      for (let round = 0; round < 2; round++) {
        for (const s of round === 0 ? [forge, giteaServer] : [giteaServer, forge]) runs[s.name].push(await measure(s, p));
      }
      const avg = (f: Figures[]) => ({ rps: (f[0].rps + f[1].rps) / 2, p50: Math.max(f[0].p50, f[1].p50), p99: Math.max(f[0].p99, f[1].p99), cpu: (f[0].cpu + f[1].cpu) / 2, bad: f[0].bad + f[1].bad });
      const a = avg(runs.forge);
      const b = avg(runs.gitea);
      const side = (n: string, x: ReturnType<typeof avg>) => `${n} ${x.rps.toFixed(1).padStart(7)} req/s p50 ${String(x.p50).padStart(4)} p99 ${String(x.p99).padStart(5)} ms cpu ${x.cpu.toFixed(2).padStart(6)} ms/req`;
      const verdict = a.bad + b.bad ? `NOT COMPARED: non-2xx/errors forge ${a.bad}, gitea ${b.bad}`
        : a.rps === 0 || b.rps === 0 ? `NOT COMPARED: no answer within ${DURATION} s (forge ${a.rps}, gitea ${b.rps} req/s)`
        : `ratio ${(a.rps / b.rps).toFixed(2)} (cpu gitea/forge ${(b.cpu / a.cpu).toFixed(2)})`;
      const line = `${name.padEnd(34)} ${side('forge', a)} | ${side('gitea', b)} | ${verdict}`;
      rows.push(line);
      console.log(line);
      docRows.push([name, verdict.startsWith('ratio') ? (a.rps / b.rps).toFixed(2) : verdict, `${a.cpu.toFixed(2)} / ${b.cpu.toFixed(2)}`, '>= 1.5']);
    }
    docsTable({ doc: 'forge', id: 'forge-content', command: benchCommand('bench:forge-content'), columns: ['case', 'forge / Gitea req/s', 'CPU ms/req forge / Gitea', 'goal'], rows: docRows });
    console.log('\nsummary');
    for (const r of rows) console.log(r);
    console.log(`load average after: ${loadavg()} on ${os.cpus().length} CPUs`);
  } finally {
    await forge?.stop().catch(() => undefined);
    await gitea?.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
