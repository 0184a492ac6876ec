/**
 * What a push changed (services/git/push.ts) on a real repository: the commits listed per ref
 * (newest first, at most 20, total kept), their files, messages and people, for a push that
 * creates several branches at once.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { recordRefs, takePush } from '../src/services/git/push';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Ann', GIT_AUTHOR_EMAIL: 'ann@example.com', GIT_COMMITTER_NAME: 'Cid', GIT_COMMITTER_EMAIL: 'cid@example.com' } }).trim();

describe('push commits', () => {
  let dir: string;
  let bare: string;
  let work: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'push-commits-'));
    bare = path.join(dir, 'repo.git');
    work = path.join(dir, 'work');
    git(dir, 'init', '-q', '--bare', '-b', 'main', bare);
    git(dir, 'init', '-q', '-b', 'main', work);
    fs.writeFileSync(path.join(work, 'a.txt'), 'a\n');
    git(work, 'add', 'a.txt');
    git(work, 'commit', '-q', '-m', 'first');
    git(work, 'push', '-q', bare, 'main');
    await recordRefs(bare);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a push of several branches lists each ref its new commits, with files and people', async () => {
    fs.writeFileSync(path.join(work, 'a.txt'), 'changed\n');
    fs.writeFileSync(path.join(work, 'b.txt'), 'b\n');
    git(work, 'add', '.');
    git(work, 'commit', '-q', '-m', 'modify a, add b\n\nwith a body');
    git(work, 'rm', '-q', 'b.txt');
    git(work, 'commit', '-q', '-m', 'remove b');
    git(work, 'checkout', '-q', '-b', 'many', 'main');
    for (let i = 0; i < 25; i++) git(work, 'commit', '-q', '--allow-empty', '-m', `empty ${i}`);
    git(work, 'push', '-q', bare, 'main', 'many');
    const pushed = await takePush(bare);
    const main = pushed.find((p) => p.ref === 'refs/heads/main');
    const many = pushed.find((p) => p.ref === 'refs/heads/many');
    expect(main?.total).toBe(2);
    expect(main?.commits.map((c) => c.message)).toEqual(['remove b\n', 'modify a, add b\n\nwith a body\n']);
    expect(main?.commits[0]).toMatchObject({ removed: ['b.txt'], added: [], modified: [], author: { name: 'Ann', email: 'ann@example.com' }, committer: { name: 'Cid', email: 'cid@example.com' } });
    expect(main?.commits[1]).toMatchObject({ added: ['b.txt'], modified: ['a.txt'], removed: [] });
    expect(main?.commits[0].id).toBe(git(bare, 'rev-parse', 'main'));
    // 27 new commits on the new branch: 20 listed, newest first, the total kept.
    expect(many?.total).toBe(27);
    expect(many?.commits).toHaveLength(20);
    expect(many?.commits[0].message).toBe('empty 24\n');
    expect(many?.commits[0].id).toBe(git(bare, 'rev-parse', 'many'));
    // Nothing new on a second look.
    expect(await takePush(bare)).toEqual([]);
  });
});
