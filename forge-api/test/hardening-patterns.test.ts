/**
 * No user-controlled pattern runs on a backtracking engine. Webhook branch filters and the
 * unadopted-repository query are globs written by users; the glob matcher must answer in time
 * linear in the text. The budget is enforced by a worker that is terminated when it runs out
 * (a hung matcher fails the test instead of hanging it), not by timing assertions; and a push
 * that meets a hostile filter must leave the API answering.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import execa from 'execa';
import { compileGlob } from '../src/services/glob';
import { branchMatches } from '../src/services/webhooks/events';
import { describeForge, PASSWORD } from './support/forge';

/** Patterns that take exponential time on a backtracking regular expression engine. */
const HOSTILE: [string, string][] = [
  ['*a*a*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(40)],
  ['**a**a**a**a**a**a**a**a**a**a**a**b', 'a'.repeat(60)],
  ['{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}b', 'a'.repeat(25)],
  ['{*a,*a}{*a,*a}{*a,*a}{*a,*a}{*a,*a}{*a,*a}{*a,*a}{*a,*a}b', 'a'.repeat(50)],
  ['?*?*?*?*?*?*?*?*?*?*?*?*?*?*b', 'x'.repeat(100)],
  ['[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*!', 'q'.repeat(100)],
  [`${'*a'.repeat(100)}b`, 'a'.repeat(1000)],
];

/** Runs branchMatches for every hostile case in a worker; rejects if the budget runs out. */
function matchInWorker(cases: [string, string][], budgetMs: number): Promise<boolean[]> {
  const code = `
    require('tsx/cjs');
    const { parentPort, workerData } = require('node:worker_threads');
    const { branchMatches } = require(workerData.mod);
    parentPort.postMessage(workerData.cases.map(([f, b]) => branchMatches(f, b)));
  `;
  const worker = new Worker(code, { eval: true, workerData: { mod: path.join(__dirname, '../src/services/webhooks/events.ts'), cases } });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`glob matching did not finish within ${budgetMs} ms`));
    }, budgetMs);
    worker.once('message', (m: boolean[]) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(m);
    });
    worker.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

describe('globs are matched like Gitea\'s, in linear time', () => {
  test.each([
    ['', 'anything', true],
    ['*', 'feature/x', true],
    ['**', 'a/b/c', true],
    ['main', 'main', true],
    ['main', 'mainline', false],
    ['feature/*', 'feature/a/b', true], // no separators: `*` crosses `/`, as in Gitea
    ['{main,release/*}', 'release/1.0', true],
    ['{main,release/*}', 'dev', false],
    ['v?.x', 'v1.x', true],
    ['[a-c]*', 'beta', true],
    ['[!a-c]eta', 'beta', false],
    ['[!a-c]eta', 'zeta', true],
    ['[^a-c]*', 'delta', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['a.b', 'axb', false],
    ['a+b', 'a+b', true],
    ['{a,{b,c}d}', 'cd', true],
    ['x{,y}', 'x', true],
    ['refs/heads/ma*', 'main', true], // the full ref is tried too
  ])('filter %j on branch %j -> %s', (filter, branch, expected) => {
    expect(branchMatches(filter, branch)).toBe(expected);
  });

  test('invalid globs are syntax errors (refused when a hook is saved)', () => {
    for (const bad of ['[a', '{a,b', 'a\\', '[]']) expect(() => compileGlob(bad)).toThrow();
  });

  test('hostile filters are answered within a 5 s worker budget (a backtracking engine needs minutes)', async () => {
    const results = await matchInWorker(HOSTILE, 5000);
    expect(results).toEqual(HOSTILE.map(() => false));
    // The same filters do match what they describe.
    expect(branchMatches(HOSTILE[0][0], `${'a'.repeat(40)}b`)).toBe(true);
  });
});

describeForge('a hostile branch filter does not hold the server', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });

  beforeAll(async () => {
    await f().user('globber');
    expect((await f().request('POST', '/user/repos', { ...as('globber'), body: { name: 'g', auto_init: true } })).status).toBe(201);
  });

  test('an invalid filter is refused with 422', async () => {
    const res = await f().request('POST', '/repos/globber/g/hooks', {
      ...as('globber'),
      body: { type: 'gitea', active: true, branch_filter: '[unterminated', config: { url: 'http://127.0.0.1:9/', content_type: 'json' } },
    });
    expect(res.status).toBe(422);
  });

  test('a push of a long branch name meets the hostile filter and the API keeps answering', async () => {
    const hook = await f().request('POST', '/repos/globber/g/hooks', {
      ...as('globber'),
      body: { type: 'gitea', active: true, events: ['push', 'create'], branch_filter: HOSTILE[0][0], config: { url: 'http://127.0.0.1:9/', content_type: 'json' } },
    });
    expect(hook.status).toBe(201);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'glob-push-'));
    const env = { GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
    try {
      const remote = new URL(`${f().url}/globber/g.git`);
      remote.username = 'globber';
      remote.password = PASSWORD;
      await execa('git', ['clone', remote.toString(), '.'], { cwd: work, env });
      const push = execa('git', ['push', 'origin', `main:${'a'.repeat(40)}`], { cwd: work, env, reject: false });
      // While the push is handled the server answers other requests; the client gives it 10 s.
      const version = await fetch(`${f().api}/version`, { signal: AbortSignal.timeout(10_000) });
      expect(version.status).toBe(200);
      const done = await push;
      expect(done.exitCode).toBe(0);
      // The filter does not match: nothing was queued for the hook.
      expect(await f().app.prisma.hookTask.count({ where: { hookId: hook.body.id } })).toBe(0);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  test('the unadopted query is a glob too (owner/repo), on the linear matcher', async () => {
    await f().user('globadmin', { admin: true });
    const dir = path.join(f().dataDir, 'repositories', 'globber', 'orphan.git');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
    const q = async (query: string) => (await f().request('GET', `/admin/unadopted?query=${encodeURIComponent(query)}`, as('globadmin'))).body;
    expect(await q('glob*/orph*')).toEqual(['globber/orphan']);
    expect(await q('globber')).toEqual(['globber/orphan']);
    expect(await q('other/*')).toEqual([]);
    expect(await q(`${'*a'.repeat(30)}b/*`)).toEqual([]);
  });
});
