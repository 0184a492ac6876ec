/**
 * The pull-request cases of scripts/bench-forge-gitea.ts: the same data set made on both servers
 * through their own API and git over HTTP, and the cases that time them.
 *
 * One local repository is built with git fast-import (pullHistory): `main` holds BENCH_PR_COMMITS
 * commits (10,000) over 50 files plus `shared.txt`, and one-commit branches off its tip:
 *   list-1..BENCH_PR_LIST   each adds its own file        -> bencher/prs, one open PR each
 *   feat-1..BENCH_PR_OPS    each adds its own file        -> bencher/big, created and merged by the cases
 *   mq-1..BENCH_PR_MQ       each adds its own file; 1 in 3 (i % 3 == 1) also rewrites shared.txt
 *                                                         -> bencher/mergeq, one open PR each
 *   base-1..BENCH_PR_ROUNDS commits pushed in turn to bencher/mergeq's main: odd rounds rewrite
 *                           shared.txt (the 1-in-3 PRs then conflict), even rounds put it back
 *                           (every PR mergeable again)
 * Each of the three repositories gets `main` and its branches in one push (the whole history).
 * PRs are opened through each server's `POST /pulls` (four at a time for bencher/prs), and both servers are left to
 * finish their mergeability checks (every PR reports mergeable) before any case runs.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export const PR_COMMITS = Number(process.env.BENCH_PR_COMMITS ?? 10000);
export const PR_LIST = Number(process.env.BENCH_PR_LIST ?? 1000);
export const PR_OPS = Number(process.env.BENCH_PR_OPS ?? 20);
export const PR_MQ = Number(process.env.BENCH_PR_MQ ?? 100);
export const PR_ROUNDS = Number(process.env.BENCH_PR_ROUNDS ?? 3);
/** The merge style of the merge case (Gitea's `Do`). */
export const MERGE_STYLE = 'merge';

export interface PullServer {
  name: string;
  url: string;
  token?: string;
  /** Numbers of the bencher/big PRs made by the create case, merged by the merge case. */
  toMerge?: number[];
  /** How many feat-* branches have been used. */
  feats?: number;
}

const PASSWORD = 'bench-pass-1';

async function api(server: PullServer, method: string, p: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${server.url}/api/v1${p}`, {
    method,
    headers: { authorization: `token ${server.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

async function must(server: PullServer, method: string, p: string, body?: unknown): Promise<unknown> {
  const r = await api(server, method, p, body);
  if (r.status >= 300) throw new Error(`${server.name} ${method} ${p}: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The local repository described at the top, built by one git fast-import. */
export async function pullHistory(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pr-history-'));
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  const out: string[] = [];
  const blob = (file: string, content: string) => out.push(`M 644 inline ${file}`, `data ${Buffer.byteLength(content)}`, content);
  let t = 1700000000;
  const commit = (ref: string, msg: string, from: string | null, mark?: string) => {
    out.push(`commit ${ref}`);
    if (mark) out.push(`mark ${mark}`);
    out.push(`committer Bench <bench@example.com> ${++t} +0000`, `data ${Buffer.byteLength(msg)}`, msg);
    if (from) out.push(`from ${from}`);
  };
  for (let i = 1; i <= PR_COMMITS; i++) {
    commit('refs/heads/main', `commit ${i}\n`, null, i === PR_COMMITS ? ':1' : undefined);
    blob(`file-${i % 50}.txt`, `line ${i}\n`.repeat(20));
    if (i === 1) blob('shared.txt', 'base\n');
  }
  for (let i = 1; i <= PR_LIST; i++) {
    commit(`refs/heads/list-${i}`, `list change ${i}\n`, ':1');
    blob(`list/${i}.txt`, `list ${i}\n`);
  }
  for (let i = 1; i <= PR_OPS; i++) {
    commit(`refs/heads/feat-${i}`, `feature ${i}\n`, ':1');
    blob(`feat/${i}.txt`, `feature ${i}\n`);
  }
  for (let i = 1; i <= PR_MQ; i++) {
    commit(`refs/heads/mq-${i}`, `mergeable change ${i}\n`, ':1');
    blob(`mq/${i}.txt`, `mq ${i}\n`);
    if (i % 3 === 1) blob('shared.txt', `changed by pull request ${i}\n`);
  }
  for (let r = 1; r <= PR_ROUNDS; r++) {
    commit(`refs/heads/base-${r}`, `base round ${r}\n`, r === 1 ? ':1' : `refs/heads/base-${r - 1}`);
    blob('shared.txt', r % 2 ? `changed on the base, round ${r}\n` : 'base\n');
    blob(`rounds/${r}.txt`, `round ${r}\n`);
  }
  await new Promise<void>((resolve, reject) => {
    const p = spawn('git', ['-C', dir, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'inherit'] });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import ${code}`))));
    p.stdin.end(out.join('\n') + '\n');
  });
  return dir;
}

const pushUrl = (s: PullServer, repo: string) => `${s.url.replace('//', `//bencher:${PASSWORD}@`)}/bencher/${repo}.git`;

async function push(dir: string, s: PullServer, repo: string, refspecs: string[]): Promise<void> {
  await exec('git', ['-C', dir, 'push', '-q', pushUrl(s, repo), ...refspecs], { maxBuffer: 64 << 20 });
}

/** Opens one PR (retrying a server error such as a busy SQLite; a 409 means an earlier try made it). */
async function openPull(s: PullServer, repo: string, head: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const r = await api(s, 'POST', `/repos/bencher/${repo}/pulls`, { head, base: 'main', title: `Change from ${head}` });
    if (r.status === 201) return (r.json as { number: number }).number;
    if (r.status === 409 || attempt >= 5) {
      if (r.status === 409) return -1;
      throw new Error(`${s.name} open PR ${repo} ${head}: ${r.status} ${JSON.stringify(r.json)}`);
    }
    await sleep(500);
  }
}

async function openPulls(s: PullServer, repo: string, heads: string[]): Promise<void> {
  let next = 0;
  await Promise.all([0, 1, 2, 3].map(async () => {
    while (next < heads.length) await openPull(s, repo, heads[next++]);
  }));
}

/** `mergeable` of every open PR of a repository, by number (pages of 50). */
export async function openMergeable(s: PullServer, repo: string, expect: number): Promise<Map<number, boolean>> {
  const got = new Map<number, boolean>();
  for (let page = 1; page <= Math.ceil(expect / 50); page++) {
    const list = (await must(s, 'GET', `/repos/bencher/${repo}/pulls?state=open&limit=50&page=${page}`)) as Array<{ number: number; mergeable: boolean }>;
    for (const pr of list) got.set(pr.number, pr.mergeable);
  }
  return got;
}

/** Polls until every open PR of the repository reports `want(number)`; ms taken and polls made. */
async function untilMergeable(s: PullServer, repo: string, count: number, want: (n: number) => boolean, timeoutMs: number, t0 = Date.now()): Promise<{ ms: number; polls: number }> {
  for (let polls = 1; ; polls++) {
    const got = await openMergeable(s, repo, count);
    if (got.size === count && [...got].every(([n, m]) => m === want(n))) return { ms: Date.now() - t0, polls };
    if (Date.now() - t0 > timeoutMs) {
      const wrong = [...got].filter(([n, m]) => m !== want(n)).map(([n]) => n);
      throw new Error(`${s.name} ${repo}: ${got.size}/${count} open PRs, ${wrong.length} not as expected after ${timeoutMs} ms (e.g. ${wrong.slice(0, 5).join(', ')})`);
    }
    await sleep(100);
  }
}

async function untilBranches(s: PullServer, repo: string, count: number): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const res = await fetch(`${s.url}/api/v1/repos/bencher/${repo}/branches?limit=1`, { headers: { authorization: `token ${s.token}` } });
    await res.arrayBuffer();
    if (Number(res.headers.get('x-total-count')) >= count) return;
    if (Date.now() - t0 > 3_600_000) throw new Error(`${s.name} ${repo}: ${res.headers.get('x-total-count')} of ${count} branches after an hour`);
    await sleep(1000);
  }
}

/** The PR data set on one server (after its token exists). */
export async function loadPulls(s: PullServer, dir: string): Promise<void> {
  const t0 = Date.now();
  for (const repo of ['prs', 'big', 'mergeq']) await must(s, 'POST', '/user/repos', { name: repo });
  const range = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);
  // Gitea handles a push in a queue, one pushed branch after the other (a repository stays
  // "empty", its PR API answering 404, until its turn): the small pushes go first.
  await push(dir, s, 'mergeq', ['main', ...range(PR_MQ, 'mq')]);
  await push(dir, s, 'big', ['main', ...range(PR_OPS, 'feat')]);
  await push(dir, s, 'prs', ['main', ...range(PR_LIST, 'list')]);
  for (const [repo, n] of [['mergeq', PR_MQ], ['big', PR_OPS], ['prs', PR_LIST]] as const) await untilBranches(s, repo, n + 1);
  const pushed = Date.now();
  // mq-* first and in order, so that PR number i is branch mq-i (the conflict pattern is by number).
  for (const head of range(PR_MQ, 'mq')) await openPull(s, 'mergeq', head);
  await openPulls(s, 'prs', range(PR_LIST, 'list'));
  const opened = Date.now();
  await untilMergeable(s, 'mergeq', PR_MQ, () => true, 600_000);
  await untilMergeable(s, 'prs', PR_LIST, () => true, 1_200_000);
  s.feats = 0;
  s.toMerge = [];
  console.log(`${s.name}: pull requests: pushed in ${((pushed - t0) / 1000).toFixed(1)} s, ${PR_LIST + PR_MQ} opened in ${((opened - pushed) / 1000).toFixed(1)} s, all checked after ${((Date.now() - opened) / 1000).toFixed(1)} s more`);
}

export interface LatencyRun {
  times: number[];
  bad: number;
  note?: string;
}

/** PR create latency: BENCH_PR_OPS sequential `POST /pulls` on bencher/big, each from its own pushed branch. */
export async function runCreate(s: PullServer): Promise<LatencyRun> {
  const times: number[] = [];
  let bad = 0;
  while ((s.feats ?? 0) < PR_OPS) {
    const head = `feat-${++s.feats!}`;
    const t = process.hrtime.bigint();
    const r = await api(s, 'POST', '/repos/bencher/big/pulls', { head, base: 'main', title: `Feature ${head}`, body: 'opened by the benchmark' });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r.status === 201) {
      times.push(ms);
      s.toMerge!.push((r.json as { number: number }).number);
    } else bad++;
  }
  return { times, bad };
}

/**
 * PR merge latency: each PR made by the create case (or made here, untimed, when only this case
 * runs) is merged with `POST /pulls/{n}/merge` {Do: 'merge'}, one after the other; before each,
 * untimed, the PR must report mergeable (both servers refuse a merge while their check runs).
 */
export async function runMerge(s: PullServer): Promise<LatencyRun> {
  if (!s.toMerge?.length) await runCreate(s);
  const times: number[] = [];
  let bad = 0;
  for (const n of s.toMerge!.splice(0)) {
    const t0 = Date.now();
    for (;;) {
      const pr = (await must(s, 'GET', `/repos/bencher/big/pulls/${n}`)) as { mergeable: boolean };
      if (pr.mergeable) break;
      if (Date.now() - t0 > 120_000) throw new Error(`${s.name}: big PR ${n} not mergeable after 120 s`);
      await sleep(50);
    }
    const t = process.hrtime.bigint();
    const r = await api(s, 'POST', `/repos/bencher/big/pulls/${n}/merge`, { Do: MERGE_STYLE, MergeTitleField: `Merge ${n}` });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r.status === 200) times.push(ms);
    else {
      bad++;
      console.log(`${s.name}: merge ${n}: ${r.status} ${JSON.stringify(r.json)}`);
    }
  }
  return { times, bad };
}

const roundsDone = new Map<string, number>();

/**
 * Mergeable recomputation: per round, push base-r to bencher/mergeq's main and poll both pages of
 * its open PRs until every one of the BENCH_PR_MQ reports the value the new base gives it (odd
 * rounds: PRs 1, 4, 7, ... false, the rest true; even rounds: all true). Time from the start of
 * the push; the push's own time is printed beside.
 */
export async function runMergeable(s: PullServer, dir: string): Promise<LatencyRun> {
  const times: number[] = [];
  const pushes: number[] = [];
  let polls = 0;
  const done = roundsDone.get(s.name) ?? 0;
  for (let r = done + 1; r <= PR_ROUNDS; r++) {
    const t0 = Date.now();
    await push(dir, s, 'mergeq', [`base-${r}:main`]);
    pushes.push(Date.now() - t0);
    const got = await untilMergeable(s, 'mergeq', PR_MQ, (n) => !(r % 2 === 1 && n % 3 === 1), 600_000, t0);
    times.push(got.ms);
    polls += got.polls;
    roundsDone.set(s.name, r);
  }
  return { times, bad: 0, note: `rounds ${times.join(', ')} ms (push ${pushes.join(', ')} ms, ${polls} polls)` };
}
