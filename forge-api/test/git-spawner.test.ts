/**
 * services/git/spawner.ts: git started by the helper process gives the same bytes, exit codes
 * and stderr as git forked by the forge, for inputs and outputs larger than a socket buffer;
 * kill reaches it; a dead helper is replaced and commands meanwhile run directly.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import execa from 'execa';
import { GitSpawner, type GitProcess } from '../src/services/git/spawner';
import { gitEnv } from '../src/services/git/run';

function run(p: GitProcess, input?: Buffer): Promise<{ code: number | null; signal: string | null; stdout: Buffer; stderr: string }> {
  const out: Buffer[] = [];
  let stderr = '';
  p.stdout.on('data', (c: Buffer) => out.push(c));
  p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  p.stdin.on('error', () => undefined);
  p.stdin.end(input);
  return new Promise((resolve) => {
    p.on('error', () => undefined);
    p.on('close', (code: number | null, signal: string | null) => resolve({ code, signal, stdout: Buffer.concat(out), stderr }));
  });
}

async function helperUp(s: GitSpawner): Promise<void> {
  s.spawn(['--version']).on('error', () => undefined);
  for (let i = 0; i < 200 && !s.ready; i++) await new Promise((r) => setTimeout(r, 25));
  expect(s.ready).toBe(true);
}

let tmp: string;
let repo: string;
let spawner: GitSpawner;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'git-spawner-'));
  repo = path.join(tmp, 'r.git');
  await execa('git', ['init', '-q', '--bare', repo], { env: gitEnv() });
  spawner = new GitSpawner();
  await helperUp(spawner);
});

afterAll(async () => {
  await spawner.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('8 MiB in and out through the helper, byte for byte; environment additions reach git', async () => {
  const input = crypto.randomBytes(8 << 20);
  const oid = (await run(spawner.spawn(['--git-dir', repo, 'hash-object', '-w', '--stdin']), input)).stdout.toString().trim();
  expect(oid).toBe((await execa('git', ['hash-object', '--stdin'], { input, env: gitEnv(), encoding: null })).stdout.toString().trim());
  const back = await run(spawner.spawn(['--git-dir', repo, 'cat-file', 'blob', oid]));
  expect(back.code).toBe(0);
  expect(Buffer.compare(back.stdout, input)).toBe(0);
  const env = await run(spawner.spawn(['var', 'GIT_COMMITTER_IDENT'], { GIT_COMMITTER_NAME: 'Through Helper', GIT_COMMITTER_EMAIL: 'h@example.com' }));
  expect(env.stdout.toString()).toMatch(/^Through Helper <h@example.com>/);
});

test('many at once: each command gets its own output', async () => {
  const inputs = Array.from({ length: 12 }, (_, i) => Buffer.from(`blob ${i}\n`.repeat(1000 * (i + 1))));
  const got = await Promise.all(inputs.map((b) => run(spawner.spawn(['hash-object', '--stdin']), b)));
  const want = await Promise.all(inputs.map((b) => execa('git', ['hash-object', '--stdin'], { input: b, env: gitEnv() })));
  expect(got.map((g) => g.stdout.toString().trim())).toEqual(want.map((w) => w.stdout.trim()));
});

test('a failing command: its exit code and stderr', async () => {
  const r = await run(spawner.spawn(['--git-dir', path.join(tmp, 'missing.git'), 'rev-parse', 'HEAD']));
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/not a git repository|cannot change to/);
});

test('kill ends a command that waits for input', async () => {
  const p = spawner.spawn(['hash-object', '--stdin']);
  p.stdin.write('never ends');
  const done = new Promise<{ code: number | null; signal: string | null }>((resolve) => p.on('close', (code: number | null, signal: string | null) => resolve({ code, signal })));
  await new Promise((r) => setTimeout(r, 200));
  expect(p.exitCode).toBeNull();
  expect(p.kill('SIGTERM')).toBe(true);
  expect(await done).toEqual({ code: null, signal: 'SIGTERM' });
});

test('a helper that died is replaced; commands in between still run (directly)', async () => {
  const s = new GitSpawner();
  try {
    await helperUp(s);
    const pid = (s as unknown as { helper: { pid: number } }).helper.pid;
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 200 && s.ready; i++) await new Promise((r) => setTimeout(r, 25));
    expect(s.ready).toBe(false);
    const r = await run(s.spawn(['hash-object', '--stdin']), Buffer.from('x\n'));
    expect(r.stdout.toString().trim()).toBe('587be6b4c3f93f93c489c0111bba5596147a26cb');
    await helperUp(s);
    expect((s as unknown as { helper: { pid: number } }).helper.pid).not.toBe(pid);
  } finally {
    await s.close();
  }
});
