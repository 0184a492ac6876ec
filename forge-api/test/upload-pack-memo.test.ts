/**
 * services/git/upload-pack-memo.ts: the kept advertisement and ls-refs answers of
 * `git upload-pack` must be byte for byte what git answers at that moment, after every change
 * that shows in them (a ref, HEAD's target, the config), and git is not run again while nothing
 * changed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { gitEnv } from '../src/services/git/run';
import { isLsRefsRequest, lsRefsAnswer, uploadPackAdvertisement } from '../src/services/git/upload-pack-memo';
import { git } from './support/git';

let tmp: string;
let bare: string;
let first: string;

async function out(cwd: string, ...args: string[]): Promise<string> {
  const r = await git(cwd, ...args);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const settle = () => new Promise((r) => setTimeout(r, 120));

function pkt(s: string): string {
  return (s.length + 4).toString(16).padStart(4, '0') + s;
}

/** What a git 2.x client sends for `git clone` over protocol v2. */
const LS_REFS = Buffer.from(
  pkt('command=ls-refs\n') + pkt('object-format=sha1') + '0001' + pkt('peel\n') + pkt('symrefs\n') + pkt('unborn\n') +
    pkt('ref-prefix HEAD\n') + pkt('ref-prefix refs/heads/\n') + pkt('ref-prefix refs/tags/\n') + '0000',
);

let runs = 0;
async function uploadPack(protocol: string, args: string[], input?: Buffer): Promise<Buffer> {
  runs++;
  const r = await execa('git', ['upload-pack', '--stateless-rpc', ...args, bare], {
    env: gitEnv({ GIT_PROTOCOL: protocol }),
    extendEnv: false,
    encoding: null,
    input,
  });
  return r.stdout as unknown as Buffer;
}

const advertise = (protocol: string) => uploadPackAdvertisement(bare, protocol, () => uploadPack(protocol, ['--advertise-refs']));
const lsRefs = () => lsRefsAnswer(bare, 'version=2', LS_REFS, () => uploadPack('version=2', [], LS_REFS));

/** Both answers, kept or not, equal git's answers now. */
async function expectCurrent(): Promise<void> {
  expect((await advertise('')).toString()).toBe((await uploadPack('', ['--advertise-refs'])).toString());
  expect((await advertise('version=2')).toString()).toBe((await uploadPack('version=2', ['--advertise-refs'])).toString());
  expect((await lsRefs()).toString()).toBe((await uploadPack('version=2', [], LS_REFS)).toString());
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'upload-pack-memo-'));
  bare = path.join(tmp, 'repo.git');
  await out(tmp, 'init', '-q', '--bare', '-b', 'main', bare);
  const tree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
  first = (await out(bare, 'commit-tree', tree, '-m', 'one')).trim();
  await out(bare, 'update-ref', 'refs/heads/main', first);
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('recognises the ls-refs command and nothing else', () => {
  expect(isLsRefsRequest(LS_REFS)).toBe(true);
  expect(isLsRefsRequest(Buffer.from(pkt('command=fetch\n') + '0000'))).toBe(false);
  expect(isLsRefsRequest(Buffer.from('0032want 0000000000000000000000000000000000000000\n'))).toBe(false);
  expect(isLsRefsRequest(Buffer.from('zzzzcommand=ls-refs\n'))).toBe(false);
});

test('answers are kept while nothing changes', async () => {
  await settle();
  await expectCurrent();
  const before = runs;
  await advertise('');
  await advertise('version=2');
  await lsRefs();
  expect(runs).toBe(before);
});

test('a new branch, a tag, a new HEAD and a config change show at once', async () => {
  await settle();
  await expectCurrent();
  await out(bare, 'update-ref', 'refs/heads/feature', first);
  await expectCurrent();
  expect((await lsRefs()).toString()).toContain('refs/heads/feature');

  await settle();
  await expectCurrent();
  await out(bare, 'tag', '-a', '-m', 'v1', 'v1', first);
  await expectCurrent();
  expect((await lsRefs()).toString()).toContain('refs/tags/v1');

  await settle();
  await expectCurrent();
  await out(bare, 'symbolic-ref', 'HEAD', 'refs/heads/feature');
  await expectCurrent();
  expect((await lsRefs()).toString()).toContain('symref-target:refs/heads/feature');

  await settle();
  await expectCurrent();
  await out(bare, 'config', 'uploadpack.hideRefs', 'refs/tags');
  await expectCurrent();
  expect((await lsRefs()).toString()).not.toContain('refs/tags/v1');
});
