/**
 * services/git/reader.ts against real repositories made by the git CLI: every answer is
 * compared with what git itself prints.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GitReader, GitReaderPool, countCommits, listRefs, logCommitIds, logCommits, parseTree } from '../src/services/git/reader';
import { git } from './support/git';

let tmp: string;
let work: string;
let bare: string;
let pool: GitReaderPool;

async function out(cwd: string, ...args: string[]): Promise<string> {
  const r = await git(cwd, ...args);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function commitFile(file: string, text: string, message: string, date: string): Promise<string> {
  fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
  fs.writeFileSync(path.join(work, file), text);
  await out(work, 'add', '-A');
  const env = { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  const r = await (await import('execa')).default('git', ['commit', '-q', '-m', message], {
    cwd: work,
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Ann Author', GIT_AUTHOR_EMAIL: 'ann@example.com', GIT_COMMITTER_NAME: 'Cy Committer', GIT_COMMITTER_EMAIL: 'cy@example.com', ...env },
    reject: false,
  });
  if (r.exitCode !== 0) throw new Error(r.stderr);
  return (await out(work, 'rev-parse', 'HEAD')).trim();
}

const commits: string[] = [];

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'git-reader-'));
  work = path.join(tmp, 'work');
  bare = path.join(tmp, 'repo.git');
  await out(tmp, 'init', '-q', '-b', 'main', work);
  for (let i = 0; i < 12; i++) {
    const file = i % 3 === 0 ? 'docs/guide.md' : `src/file${i}.txt`;
    commits.push(await commitFile(file, `content ${i}\n`, `commit number ${i}\n\nbody ${i}\n`, `2024-01-${String(i + 1).padStart(2, '0')}T10:00:00+0130`));
  }
  fs.writeFileSync(path.join(work, 'big.bin'), Buffer.alloc(3 * 1024 * 1024 + 17, 7));
  commits.push(await commitFile('link', 'x', 'big file', '2024-02-01T00:00:00Z'));
  await out(work, 'tag', 'light', commits[2]);
  await out(work, 'tag', '-a', 'v1.0', '-m', 'release one\n\nnotes', commits[5]);
  await out(work, 'branch', 'maint', commits[4]);
  await out(work, 'branch', 'feature/x', commits[7]);
  await out(tmp, 'clone', '-q', '--bare', work, bare);
  pool = new GitReaderPool({ idleMs: 60_000 });
});

afterAll(async () => {
  await pool.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('GitReader', () => {
  it('reads objects as git cat-file does and parses commits', async () => {
    const r = pool.reader(bare);
    const head = commits[commits.length - 1];
    expect(await r.resolve('HEAD')).toBe(head);
    expect(await r.resolve('main')).toBe(head);
    expect(await r.resolve('refs/heads/maint')).toBe(commits[4]);

    const c = await r.readCommit(commits[3]);
    expect(c).not.toBeNull();
    expect(c!.oid).toBe(commits[3]);
    expect(c!.parents).toEqual([commits[2]]);
    expect(c!.tree).toBe((await out(bare, 'rev-parse', `${commits[3]}^{tree}`)).trim());
    expect(c!.author).toEqual({ name: 'Ann Author', email: 'ann@example.com', when: new Date('2024-01-04T08:30:00Z'), timezone: '+0130' });
    expect(c!.committer.name).toBe('Cy Committer');
    expect(c!.message).toBe('commit number 3\n\nbody 3\n');
    expect(c!.signature).toBeNull();
    expect((await r.readCommit(commits[0]))!.parents).toEqual([]);

    const blob = await r.readBlob(`${commits[3]}:docs/guide.md`);
    expect(blob!.content.toString()).toBe('content 3\n');
    expect(blob!.type).toBe('blob');
    expect(await r.readBlob(`${commits[3]}:docs`)).toBeNull();
    expect((await r.info(`${commits[3]}:docs`))!.type).toBe('tree');
  });

  it('reads a tree with modes, types and ids as git ls-tree prints them', async () => {
    const r = pool.reader(bare);
    const tree = await r.readTree('main');
    const lsTree = (await out(bare, 'ls-tree', 'main')).trim().split('\n');
    expect(tree!.entries.map((e) => `${e.mode.padStart(6, '0')} ${e.type} ${e.oid}\t${e.name}`)).toEqual(lsTree);
    expect(tree!.oid).toBe((await out(bare, 'rev-parse', 'main^{tree}')).trim());
    expect(await r.readTree('nope')).toBeNull();
    expect(parseTree(Buffer.from('garbage'))).toEqual([]);
  });

  it('reads an annotated tag and peels it', async () => {
    const r = pool.reader(bare);
    const tagOid = (await out(bare, 'rev-parse', 'v1.0')).trim();
    const tag = await r.readTag('v1.0');
    expect(tag).toMatchObject({ oid: tagOid, object: commits[5], objectType: 'commit', tag: 'v1.0', message: 'release one\n\nnotes\n', signature: null });
    expect(tag!.tagger!.email).toBe('dev@example.com');
    expect(await r.resolveCommit('v1.0')).toBe(commits[5]);
    expect(await r.readTag('light')).toBeNull();
    expect(await r.resolveCommit('light')).toBe(commits[2]);
  });

  it('parses a signed commit: signature and the payload it signs', async () => {
    const r = pool.reader(bare);
    const raw = (await out(bare, 'cat-file', 'commit', commits[1]));
    const sig = '-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----';
    const [head, ...rest] = raw.split('\n\n');
    const signed = `${head}\ngpgsig ${sig.split('\n').join('\n ')}\n\n${rest.join('\n\n')}\n`;
    const oid = (await (await import('execa')).default('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: bare, input: signed })).stdout.trim();
    const c = await r.readCommit(oid);
    expect(c!.signature!.signature).toBe(`${sig}\n`);
    expect(c!.signature!.payload).toBe(`${raw}\n`);
    expect(c!.message).toBe('commit number 1\n\nbody 1\n');
  });

  it('answers null for missing objects and for rev expressions that would stop the process, keeping one process', async () => {
    const r = new GitReader(bare);
    try {
      const bad = ['', ' HEAD', 'HEAD\ninfo HEAD', 'nope', '0000000000000000000000000000000000000000', 'HEAD:./x', 'HEAD:../x', 'HEAD:a/../b', '@{u}', 'main@{upstream}', ':/commit', 'HEAD^{/number}', 'main:nope/file', 'a\0b', 'x tree 12'];
      const answers = await Promise.all(bad.map((b) => r.info(b)));
      expect(answers).toEqual(bad.map(() => null));
      expect(await r.read('HEAD:../../etc/passwd')).toBeNull();
      expect(await r.resolve('HEAD')).toBe(commits[commits.length - 1]);
      expect(r.spawned).toBe(1);
    } finally {
      await r.close();
    }
  });

  it('answers many concurrent requests correctly over one process, large objects included', async () => {
    const r = new GitReader(bare);
    try {
      const revs = commits.flatMap((c) => [c, `${c}^{tree}`, `${c}:src`, `${c}:big.bin`, `${c}:docs/guide.md`]);
      const expected = await Promise.all(
        revs.map(async (rev) => {
          const res = await git(bare, 'rev-parse', '--verify', '--quiet', rev);
          return res.exitCode === 0 ? res.stdout.trim() : null;
        }),
      );
      const results = await Promise.all([...revs, ...revs].map((rev) => r.read(rev)));
      expect(results.map((o) => o?.oid ?? null)).toEqual([...expected, ...expected]);
      const big = results.find((o) => o && o.size > 3 * 1024 * 1024)!;
      expect(big.content.length).toBe(3 * 1024 * 1024 + 17);
      expect(big.content.every((b) => b === 7)).toBe(true);
      expect(r.spawned).toBe(1);
    } finally {
      await r.close();
    }
  });

  it('sees refs and objects written after it started', async () => {
    const r = new GitReader(bare);
    try {
      expect(await r.resolve('refs/heads/late')).toBeNull();
      await out(bare, 'update-ref', 'refs/heads/late', commits[1]);
      expect(await r.resolve('refs/heads/late')).toBe(commits[1]);
      await out(bare, 'pack-refs', '--all');
      await out(bare, 'update-ref', 'refs/heads/late', commits[2]);
      expect(await r.resolve('refs/heads/late')).toBe(commits[2]);
      const blob = (await (await import('execa')).default('git', ['hash-object', '-w', '--stdin'], { cwd: bare, input: 'fresh object\n' })).stdout.trim();
      expect((await r.readBlob(blob))!.content.toString()).toBe('fresh object\n');
      await out(bare, 'update-ref', '-d', 'refs/heads/late');
      expect(await r.resolve('refs/heads/late')).toBeNull();
      expect(r.spawned).toBe(1);
    } finally {
      await r.close();
    }
  });

  it('ends its process when idle and starts another on the next request', async () => {
    const r = new GitReader(bare, 50);
    await r.resolve('HEAD');
    expect(r.running).toBe(true);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.running).toBe(false);
    expect(await r.resolve('HEAD')).toBe(commits[commits.length - 1]);
    expect(r.spawned).toBe(2);
    await r.close();
  });

  it('fails (never hangs) for a folder that is no repository', async () => {
    const r = new GitReader(path.join(tmp, 'missing.git'));
    await expect(r.resolve('HEAD')).rejects.toThrow();
    const notRepo = fs.mkdtempSync(path.join(tmp, 'plain-'));
    const r2 = new GitReader(notRepo);
    await expect(r2.resolve('HEAD')).rejects.toThrow();
    await r2.close();
    await r.close();
  });

  it('does not answer from a repository folder that was moved away and replaced', async () => {
    const copy = path.join(tmp, 'copy.git');
    await out(tmp, 'clone', '-q', '--bare', bare, copy);
    const r = new GitReader(copy);
    expect(await r.resolve('HEAD')).toBe(commits[commits.length - 1]);
    fs.renameSync(copy, path.join(tmp, 'moved.git'));
    await out(tmp, 'init', '-q', '--bare', copy);
    expect(await r.resolve('HEAD')).toBeNull();
    expect(await r.resolve(commits[0])).toBeNull();
    fs.rmSync(copy, { recursive: true });
    await expect(r.resolve(commits[0])).rejects.toThrow();
    await r.close();
  });

  it('answers requests sent before close', async () => {
    const r = new GitReader(bare);
    const p = Promise.all(commits.map((c) => r.readCommit(c)));
    await r.close();
    expect((await p).map((c) => c?.oid)).toEqual(commits);
  });
});

describe('GitReaderPool', () => {
  it('shares one reader per repository and closes the least recently used beyond its size', async () => {
    const small = new GitReaderPool({ maxReaders: 1 });
    const a = small.reader(bare);
    expect(small.reader(bare)).toBe(a);
    await a.resolve('HEAD');
    expect(a.running).toBe(true);
    const other = path.join(tmp, 'other.git');
    await out(tmp, 'init', '-q', '--bare', other);
    small.reader(other);
    await new Promise((res) => setTimeout(res, 50));
    expect(a.running).toBe(false);
    await small.close();
  });
});

describe('refs and history', () => {
  it('lists refs by string prefix with peeled tags, as for-each-ref', async () => {
    const all = await listRefs(bare);
    const expected = (await out(bare, 'for-each-ref', '--format=%(refname) %(objectname)')).trim().split('\n');
    expect(all.map((r) => `${r.name} ${r.oid}`)).toEqual(expected);
    expect((await listRefs(bare, 'refs/heads/ma')).map((r) => r.name)).toEqual(['refs/heads/main', 'refs/heads/maint']);
    expect((await listRefs(bare, 'refs/heads/feature/')).map((r) => r.name)).toEqual(['refs/heads/feature/x']);
    const v1 = (await listRefs(bare, 'refs/tags/v'))[0];
    expect(v1).toMatchObject({ name: 'refs/tags/v1.0', type: 'tag', peeled: commits[5], peeledType: 'commit' });
    expect((await listRefs(bare, 'refs/tags/light'))[0]).toMatchObject({ type: 'commit', peeled: null });
    expect(await listRefs(bare, 'refs/nothing/')).toEqual([]);
    expect(await listRefs(bare, 'refs/heads/--help')).toEqual([]);
  });

  it('pages history in git: skip, limit, path, since/until, exclusions', async () => {
    const newestFirst = [...commits].reverse();
    expect(await logCommitIds(bare, { revs: ['main'], skip: 0, limit: 5 })).toEqual(newestFirst.slice(0, 5));
    expect(await logCommitIds(bare, { revs: ['main'], skip: 5, limit: 5 })).toEqual(newestFirst.slice(5, 10));
    expect(await countCommits(bare, { revs: ['main'] })).toBe(commits.length);
    const docs = [commits[9], commits[6], commits[3], commits[0]];
    expect(await logCommitIds(bare, { revs: ['main'], paths: ['docs/guide.md'] })).toEqual(docs);
    expect(await countCommits(bare, { revs: ['main'], paths: ['docs'] })).toBe(4);
    expect(await logCommitIds(bare, { revs: ['main'], since: new Date('2024-01-10T00:00:00Z'), until: new Date('2024-01-11T23:00:00Z') })).toEqual([commits[10], commits[9]]);
    expect(await logCommitIds(bare, { revs: ['main'], not: ['maint'] })).toEqual(newestFirst.slice(0, commits.length - 5));
    await expect(logCommitIds(bare, { revs: ['--all'] })).rejects.toThrow();
    const page = await logCommits(pool.reader(bare), { revs: ['main'], limit: 3 });
    expect(page.map((c) => c.message.split('\n')[0])).toEqual(['big file', 'commit number 11', 'commit number 10']);
  });
});
