/**
 * services/git/ref-memo.ts: ref listings are kept only while no ref changes. Every way git
 * changes refs (update-ref of a loose ref, a new nested folder, deletion, pack-refs, a push)
 * must show in the next listing, compared with what `git for-each-ref` prints at that moment.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listRefs } from '../src/services/git/reader';
import { listRefTips } from '../src/services/git/refs';
import { memoByRefs } from '../src/services/git/ref-memo';
import { git } from './support/git';

let tmp: string;
let bare: string;
let first: string;
let second: string;

async function out(cwd: string, ...args: string[]): Promise<string> {
  const r = await git(cwd, ...args);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Past the racy window: a listing taken now may be kept. */
const settle = () => new Promise((r) => setTimeout(r, 120));

async function gitRefs(): Promise<string[]> {
  return (await out(bare, 'for-each-ref', '--format=%(refname) %(objectname)')).split('\n').filter(Boolean);
}

async function ourRefs(): Promise<string[]> {
  return (await listRefs(bare)).map((r) => `${r.name} ${r.oid}`);
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ref-memo-'));
  bare = path.join(tmp, 'repo.git');
  await out(tmp, 'init', '-q', '--bare', '-b', 'main', bare);
  const tree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'; // git's empty tree, always present
  const env = ['-c', 'user.name=A', '-c', 'user.email=a@example.com'];
  first = (await out(bare, ...env, 'commit-tree', tree, '-m', 'one')).trim();
  second = (await out(bare, ...env, 'commit-tree', tree, '-p', first, '-m', 'two')).trim();
  await out(bare, 'update-ref', 'refs/heads/main', first);
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('a kept listing is reused while no ref changes', async () => {
  await settle();
  let computed = 0;
  const compute = async () => ++computed;
  expect(await memoByRefs(bare, 'count', compute)).toBe(1);
  expect(await memoByRefs(bare, 'count', compute)).toBe(1);
  expect(computed).toBe(1);
});

test('a moved, added, nested, deleted or packed ref shows in the next listing', async () => {
  await settle();
  expect(await ourRefs()).toEqual(await gitRefs());

  // Moved at once after a listing (same mtime tick as far as the cache knows).
  await out(bare, 'update-ref', 'refs/heads/main', second);
  expect(await ourRefs()).toEqual(await gitRefs());
  expect((await listRefs(bare, 'refs/heads/main'))[0].oid).toBe(second);

  await settle();
  await ourRefs();
  await out(bare, 'update-ref', 'refs/heads/feature/deep/x', first);
  expect(await ourRefs()).toEqual(await gitRefs());

  await settle();
  await ourRefs();
  await out(bare, 'update-ref', 'refs/heads/feature/deep/y', second);
  expect(await ourRefs()).toEqual(await gitRefs());

  await settle();
  await ourRefs();
  await out(bare, 'pack-refs', '--all');
  expect(await ourRefs()).toEqual(await gitRefs());

  await settle();
  await ourRefs();
  await out(bare, 'update-ref', '-d', 'refs/heads/feature/deep/x');
  expect(await ourRefs()).toEqual(await gitRefs());
  expect((await ourRefs()).some((r) => r.startsWith('refs/heads/feature/deep/x '))).toBe(false);

  await settle();
  await ourRefs();
  await out(bare, 'tag', 'v1', first);
  expect(await ourRefs()).toEqual(await gitRefs());
});

test('a push into the repository shows in the branch list', async () => {
  await settle();
  const before = (await listRefTips(bare, 'heads')).map((t) => t.name);
  const work = path.join(tmp, 'work');
  await out(tmp, 'clone', '-q', bare, work);
  await out(work, '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '--allow-empty', '-m', 'three');
  await out(work, 'push', '-q', 'origin', 'HEAD:refs/heads/pushed');
  const after = (await listRefTips(bare, 'heads')).map((t) => t.name);
  expect(after).toEqual(expect.arrayContaining([...before, 'pushed']));
  expect(after).toHaveLength(before.length + 1);
});
