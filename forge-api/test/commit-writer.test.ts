/**
 * The path rules (tree-path.ts) and the plumbing commit writer (commit-writer.ts) on real bare
 * repositories, checked with the real git CLI (fsck, log, show).
 */
import { promises as fs } from 'fs';
import os from 'os';
import path from 'path';
import { initRepository } from '../src/services/git';
import { NULL_OID, RefChangedError, writeCommit, type Signature } from '../src/services/git/commit-writer';
import { RepoHousekeeping } from '../src/services/git/housekeeping';
import { cleanTreePath, escapeTreePath, TreePathError } from '../src/services/git/tree-path';
import { git } from './support/git';

describe('cleanTreePath', () => {
  it('cleans what Gitea cleans', () => {
    expect(cleanTreePath('a//b/./c/')).toBe('a/b/c');
    expect(cleanTreePath('')).toBe('');
    expect(cleanTreePath('.')).toBe('');
    expect(cleanTreePath('docs/README.md')).toBe('docs/README.md');
    expect(cleanTreePath('dir\\file')).toBe('dir\\file');
  });

  it.each([
    ['..', '".." component'],
    ['a/../../etc/passwd', '".." component'],
    ['/etc/passwd', 'absolute path'],
    ['a\0b', 'control character in path'],
    ['a\nb', 'control character in path'],
    ['.git/config', '".git" component'],
    ['sub/.GIT/hooks/pre-receive', '".git" component'],
    ['.git./config', '".git" component'],
    ['.git /config', '".git" component'],
    ['GIT~1/config', '".git" component'],
    ['x'.repeat(256), 'component longer than 255 bytes'],
    [Array.from({ length: 20 }, () => 'y'.repeat(250)).join('/'), 'path longer than 4096 bytes'],
  ])('refuses %j (%s)', (raw, reason) => {
    let caught: unknown;
    try {
      cleanTreePath(raw);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TreePathError);
    expect((caught as TreePathError).reason).toBe(reason);
    expect((caught as TreePathError).message).toBe(`path contains a malformed path component [path: ${raw}]`);
  });

  it('refuses the root where a file is needed', () => {
    expect(() => cleanTreePath('/', { allowRoot: false })).toThrow(TreePathError);
    expect(() => cleanTreePath('./', { allowRoot: false })).toThrow(TreePathError);
  });

  it('escapes segments as Go url.PathEscape', () => {
    expect(escapeTreePath('a b/c?d/e+f@g:h;i,j(k)')).toBe('a%20b/c%3Fd/e+f@g:h%3Bi%2Cj%28k%29');
    expect(escapeTreePath('ü.txt')).toBe('%C3%BC.txt');
  });
});

describe('writeCommit', () => {
  let tmp: string;
  let repo: string;
  const who: Signature = { name: 'Ann', email: 'ann@example.com', date: new Date('2026-01-02T03:04:05Z') };

  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-cw-'));
    repo = path.join(tmp, 'r.git');
    await initRepository(repo, { defaultBranch: 'main' });
  });
  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  const out = async (...args: string[]) => {
    const r = await git(repo, ...args);
    if (r.exitCode !== 0) throw new Error(r.stderr);
    return r.stdout;
  };

  it('makes a first commit, then one on top, with author, committer, dates and sign-off', async () => {
    const first = await writeCommit({
      repoPath: repo,
      ref: 'refs/heads/main',
      base: null,
      changes: [
        { kind: 'write', path: 'README.md', content: Buffer.from('hello\n') },
        { kind: 'write', path: 'bin/run.sh', content: Buffer.from('#!/bin/sh\n'), mode: '100755' },
      ],
      message: '  first  ',
      author: who,
      committer: who,
    });
    expect(first.parents).toEqual([]);
    expect(first.oldOid).toBe(NULL_OID);
    expect(await out('rev-parse', 'refs/heads/main')).toBe(first.commit);
    const second = await writeCommit({
      repoPath: repo,
      ref: 'refs/heads/main',
      base: first.commit,
      changes: [
        { kind: 'delete', path: 'README.md' },
        { kind: 'write', path: 'docs/a.md', content: Buffer.from('A') },
      ],
      message: 'second',
      author: who,
      committer: { name: 'Cid', email: 'cid@example.com', date: new Date('2026-02-03T00:00:00Z'), tzOffsetMinutes: 120 },
      signoff: true,
    });
    expect(await out('rev-parse', 'main')).toBe(second.commit);
    expect(await out('rev-parse', 'main^')).toBe(first.commit);
    expect((await out('ls-tree', '-r', '--name-only', 'main')).split('\n')).toEqual(['bin/run.sh', 'docs/a.md']);
    expect(await out('ls-tree', 'main', 'bin/run.sh')).toMatch(/^100755 blob /);
    expect(await out('show', '-s', '--format=%an <%ae> %aI|%cn <%ce> %cI', 'main')).toBe(
      'Ann <ann@example.com> 2026-01-02T03:04:05+00:00|Cid <cid@example.com> 2026-02-03T02:00:00+02:00',
    );
    expect(await out('show', '-s', '--format=%B', 'main')).toBe('second\n\nSigned-off-by: Cid <cid@example.com>');
    expect(await out('show', '-s', '--format=%B', first.commit)).toBe('first\n');
    const fsck = await git(repo, 'fsck', '--strict');
    expect(fsck.exitCode).toBe(0);
  });

  it('deletes a folder recursively', async () => {
    const c = await writeCommit({
      repoPath: repo,
      ref: 'refs/heads/main',
      base: null,
      changes: ['d/a', 'd/e/b', 'keep'].map((p) => ({ kind: 'write' as const, path: p, content: Buffer.from(p) })),
      message: 'm',
      author: who,
      committer: who,
    });
    await writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: c.commit, changes: [{ kind: 'delete', path: 'd', recursive: true }], message: 'rm', author: who, committer: who });
    expect(await out('ls-tree', '-r', '--name-only', 'main')).toBe('keep');
  });

  it('replaces a file by a folder (callers check the rules), and refuses an unclean path without touching the branch', async () => {
    const c = await writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: null, changes: [{ kind: 'write', path: 'a', content: Buffer.from('x') }], message: 'm', author: who, committer: who });
    for (const bad of ['.git/hooks/post-update', 'a/../b', '/abs', 'x/./y', '']) {
      await expect(
        writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: c.commit, changes: [{ kind: 'write', path: bad, content: Buffer.from('y') }], message: 'm', author: who, committer: who }),
      ).rejects.toBeInstanceOf(TreePathError);
    }
    expect(await out('rev-parse', 'main')).toBe(c.commit);
    await expect(fs.stat(path.join(repo, 'hooks', 'post-update'))).rejects.toThrow();
    await writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: c.commit, changes: [{ kind: 'write', path: 'a/b', content: Buffer.from('y') }], message: 'm', author: who, committer: who });
    expect(await out('ls-tree', '-r', '--name-only', 'main')).toBe('a/b');
  });

  it('loses a race with RefChangedError and never moves the branch under a concurrent writer', async () => {
    const base = await writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: null, changes: [{ kind: 'write', path: 'n', content: Buffer.from('0') }], message: 'base', author: who, committer: who });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: base.commit, changes: [{ kind: 'write', path: `f${i}`, content: Buffer.from(String(i)) }], message: `w${i}`, author: who, committer: who }),
      ),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(1);
    for (const r of lost) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(RefChangedError);
    expect(await out('rev-parse', 'main')).toBe((won[0] as PromiseFulfilledResult<{ commit: string }>).value.commit);
  });

  it("keeps writing when housekeeping's repack removes the object folder the writer has just made", async () => {
    // The interleaving that made a commit through the API answer 500 (ENOENT on the blob's
    // temporary file) while housekeeping ran: `git repack -d` ends with prune-packed, which
    // removes every object folder it finds empty, the one a writer has just made included.
    // The real housekeeping runs right after the writer's first folder creation, through a
    // pass-through of fs.promises.mkdir (the only way to hit that instant every time).
    const housekeeping = new RepoHousekeeping({ delayMs: -1 });
    const base = await writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: null, changes: [{ kind: 'write', path: 'a', content: Buffer.from('a') }], message: 'base', author: who, committer: who });
    expect(await housekeeping.run(repo)).toBe(true); // everything packed: no object folder is left
    const content = Buffer.from('written while housekeeping runs');
    const realMkdir = fs.mkdir.bind(fs);
    let removedUnderWriter = false;
    const mkdir = jest.spyOn(fs, 'mkdir').mockImplementation((async (dir: string, opts?: object) => {
      const made = await realMkdir(dir, opts as never);
      if (!removedUnderWriter && dir.startsWith(path.join(repo, 'objects') + path.sep)) {
        expect(await housekeeping.run(repo)).toBe(true);
        removedUnderWriter = await fs.stat(dir).then(() => false, () => true);
      }
      return made;
    }) as typeof fs.mkdir);
    try {
      const c = await writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: base.commit, changes: [{ kind: 'write', path: 'b', content }], message: 'b', author: who, committer: who });
      expect(removedUnderWriter).toBe(true);
      expect(await out('rev-parse', 'main')).toBe(c.commit);
      expect(await out('show', 'main:b')).toBe(content.toString());
    } finally {
      mkdir.mockRestore();
    }
    expect((await git(repo, 'fsck', '--strict')).exitCode).toBe(0);
  });

  it('creates a new branch only while it does not exist', async () => {
    const base = await writeCommit({ repoPath: repo, ref: 'refs/heads/main', base: null, changes: [{ kind: 'write', path: 'n', content: Buffer.from('0') }], message: 'base', author: who, committer: who });
    const req = { repoPath: repo, ref: 'refs/heads/feature', base: base.commit, expectedOld: NULL_OID, changes: [], message: 'empty', author: who, committer: who };
    const made = await writeCommit(req);
    expect(await out('rev-parse', 'feature^')).toBe(base.commit);
    expect(made.tree).toBe(await out('rev-parse', 'main^{tree}'));
    await expect(writeCommit(req)).rejects.toBeInstanceOf(RefChangedError);
  });
});
