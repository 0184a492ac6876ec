/**
 * npm run bench:git — the git side of the forge, measured on loopback with the real git CLI:
 *  1. creating an auto_init repository (README + LICENSE + .gitignore): `git init` plus the
 *     commit's objects written directly vs the temporary work tree + commit + push Gitea runs;
 *  2. `git clone` and `git push` over smart HTTP against buildApp (SQLite), sequential latency
 *     (push includes the size/empty/default-branch refresh);
 *  3. rendering a comment with POST /markdown's renderer (Mode comment).
 * Env: BENCH_N (iterations per measurement, default 30).
 * --write-docs: also write the figures as docs/benchmarks-forge.md's table (git).
 */
import { promises as fs } from 'fs';
import os from 'os';
import path from 'path';
import crypto from 'crypto';
import execa from 'execa';
import { buildApp } from '../forge-api/src/app';
import { initRepository } from '../forge-api/src/services/git';
import { gitEnv } from '../forge-api/src/services/git/run';
import { gitignoreText, licenseText, readmeText } from '../forge-api/src/services/templates';
import { renderMarkup } from '../forge-api/src/services/markup';
import { benchCommand, docsTable } from './support/bench-docs';

const N = Number(process.env.BENCH_N ?? 30);
const env = gitEnv({ GIT_AUTHOR_NAME: 'B', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'B', GIT_COMMITTER_EMAIL: 'b@e' });
const git = (cwd: string, ...args: string[]) => execa('git', args, { cwd, env, extendEnv: false });

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, mean: +mean.toFixed(2), p50: +q(0.5).toFixed(2), p99: +q(0.99).toFixed(2), perSecond: +(1000 / mean).toFixed(1) };
}

async function time(fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = process.hrtime.bigint();
    await fn(i);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

/** What Gitea does: init bare, clone to a temp dir, write files, add, commit, push. */
async function workTreeInit(repoPath: string, tmp: string) {
  await git(tmp, 'init', '--bare', '-q', '--initial-branch=main', repoPath);
  const wt = await fs.mkdtemp(path.join(tmp, 'wt-'));
  await git(tmp, 'clone', '-q', repoPath, wt);
  await fs.writeFile(path.join(wt, 'README.md'), readmeText('Default', { Name: 'r', Description: 'd' })!);
  await fs.writeFile(path.join(wt, 'LICENSE'), licenseText('MIT', { year: 2026, owner: 'b' })!);
  await fs.writeFile(path.join(wt, '.gitignore'), `# ---> Node\n${gitignoreText('Node')}\n`);
  await git(wt, 'add', '--all');
  await git(wt, 'commit', '-q', '--no-gpg-sign', '-m', 'Initial commit');
  await git(wt, 'push', '-q', 'origin', 'HEAD:main');
  await fs.rm(wt, { recursive: true, force: true });
}

async function main() {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-git-'));
  const results: Record<string, unknown> = {};
  try {
    const autoInit = { readme: { name: 'r', description: 'd' }, license: 'MIT', gitignores: ['Node'], author: { name: 'B', email: 'b@e' } };
    const fast = stats(await time((i) => initRepository(path.join(tmp, 'fast', `r${i}.git`), { defaultBranch: 'main', autoInit })));
    const slow = stats(await time((i) => workTreeInit(path.join(tmp, 'slow', `r${i}.git`), tmp)));
    results['auto_init create (init + direct objects)'] = fast;
    results['auto_init create (work tree + push, as Gitea)'] = slow;
    results['auto_init speed-up'] = +(slow.mean / fast.mean).toFixed(2);

    const dataDir = path.join(tmp, 'forge');
    const app = await buildApp({ config: { dataDir, rootUrl: 'http://127.0.0.1/' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const base = `http://127.0.0.1:${port}`;
    try {
      const user = await app.services.users.create({ username: 'bench', email: 'bench@example.com', password: 'password1', admin: false, restricted: false, must_change_password: false } as never);
      await app.services.repos.create(user, user, { name: 'code', auto_init: true, license: 'MIT' } as never);
      // 200 small files and a 1 MiB blob make the clone measure packing, not only round trips
      const seed = path.join(tmp, 'seed');
      await git(tmp, 'clone', '-q', `${base}/bench/code.git`, seed);
      for (let i = 0; i < 200; i++) await fs.writeFile(path.join(seed, `f${i}.txt`), `file ${i}\n`.repeat(50));
      await fs.writeFile(path.join(seed, 'blob.bin'), crypto.randomBytes(1024 * 1024));
      await git(seed, 'add', '.');
      await git(seed, 'commit', '-q', '-m', 'seed');
      const auth = `http://bench:password1@127.0.0.1:${port}/bench/code.git`;
      await git(seed, 'push', '-q', auth, 'main');

      results['git clone over HTTP (201 files, 1 MiB)'] = stats(await time((i) => git(tmp, 'clone', '-q', `${base}/bench/code.git`, path.join(tmp, `c${i}`))));
      results['git push over HTTP (1 small commit, incl. refresh)'] = stats(
        await time(async (i) => {
          await fs.writeFile(path.join(seed, 'n.txt'), String(i));
          await git(seed, 'add', 'n.txt');
          await git(seed, 'commit', '-q', '-m', `c${i}`);
          await git(seed, 'push', '-q', auth, 'main');
        }),
      );
    } finally {
      await app.close();
    }

    const comment = Array.from({ length: 40 }, (_, i) => `Line ${i} with **bold**, \`code\`, #${i} and https://example.org/${i}`).join('\n') + '\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [ ] task\n- [x] done\n';
    const renders = await time(async () => {
      for (let k = 0; k < 20; k++) await renderMarkup({ mode: 'comment', text: comment, context: '/o/r', appUrl: 'http://h/' });
    });
    const r = stats(renders);
    results[`render comment (${comment.length} chars), per render`] = { ...r, mean: +(r.mean / 20).toFixed(3), p50: +(r.p50 / 20).toFixed(3), p99: +(r.p99 / 20).toFixed(3), perSecond: +(r.perSecond * 20).toFixed(0) };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
  console.log(JSON.stringify(results, null, 2));
  const fig = (v: unknown) => (typeof v === 'object' && v !== null ? `mean ${(v as { mean: number }).mean} ms, p50 ${(v as { p50: number }).p50} ms, p99 ${(v as { p99: number }).p99} ms` : String(v));
  docsTable({ doc: 'forge', id: 'git', command: benchCommand('bench:git'), columns: ['figure', 'forge'], rows: Object.entries(results).map(([name, v]) => [name, fig(v)]) });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
