/**
 * services/content/git-read.ts: one walk over a folder's history answers each entry's last
 * commit too, but only where that is exactly what `git log -1 -- <entry>` says (a history
 * without merges). Compared with real git on a linear history and on one with a merge.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isLinearHistory, knownLastCommit, lastCommit, lastCommitsOfEntries } from '../src/services/content/git-read';
import { git } from './support/git';

let tmp: string;

async function out(cwd: string, ...args: string[]): Promise<string> {
  const r = await git(cwd, ...args);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function commit(work: string, files: Record<string, string>, message: string): Promise<void> {
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(work, f)), { recursive: true });
    fs.writeFileSync(path.join(work, f), text);
  }
  await out(work, 'add', '-A');
  await out(work, 'commit', '-q', '-m', message);
}

async function gitLast(work: string, p: string): Promise<string> {
  return (await out(work, 'log', '-1', '--format=%H', 'HEAD', '--', p)).trim();
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'last-commit-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('in a linear history a folder walk answers each entry as git log -1 does', async () => {
  const work = path.join(tmp, 'linear');
  await out(tmp, 'init', '-q', '-b', 'main', work);
  await commit(work, { 'docs/a.txt': '1', 'docs/b.txt': '1', 'docs/deep/c.txt': '1' }, 'one');
  await commit(work, { 'docs/a.txt': '2' }, 'two');
  await commit(work, { 'other.txt': 'x' }, 'three');
  await commit(work, { 'docs/deep/c.txt': '2' }, 'four');
  fs.chmodSync(path.join(work, 'docs/b.txt'), 0o755);
  await commit(work, {}, 'five: mode only');
  const tip = (await out(work, 'rev-parse', 'HEAD')).trim();
  expect(await isLinearHistory(work, tip)).toBe(true);

  const names = ['a.txt', 'b.txt', 'deep'];
  const found = await lastCommitsOfEntries(work, tip, 'docs', names);
  for (const name of names) {
    const expected = await gitLast(work, `docs/${name}`);
    expect(found.get(name)?.sha).toBe(expected);
    const known = knownLastCommit(work, tip, `docs/${name}`);
    expect(known).toBeDefined();
    expect((await known!)?.sha).toBe(expected);
  }
});

test('with a merge the folder walk answers the listing only; files ask git log', async () => {
  const work = path.join(tmp, 'merged');
  await out(tmp, 'init', '-q', '-b', 'main', work);
  await commit(work, { 'docs/a.txt': '1', 'docs/b.txt': '1' }, 'base');
  await out(work, 'checkout', '-q', '-b', 'side');
  await commit(work, { 'docs/a.txt': 'side' }, 'side change');
  await out(work, 'checkout', '-q', 'main');
  await commit(work, { 'docs/b.txt': 'main' }, 'main change');
  await out(work, 'merge', '-q', '--no-edit', 'side');
  const tip = (await out(work, 'rev-parse', 'HEAD')).trim();
  expect(await isLinearHistory(work, tip)).toBe(false);

  await lastCommitsOfEntries(work, tip, 'docs', ['a.txt', 'b.txt']);
  expect(knownLastCommit(work, tip, 'docs/a.txt')).toBeUndefined();
  for (const name of ['a.txt', 'b.txt']) expect((await lastCommit(work, tip, `docs/${name}`))?.sha).toBe(await gitLast(work, `docs/${name}`));
});
