/**
 * services/git/housekeeping.ts and git/disk-lock.ts through the real forge: a push plans a
 * repack with a bitmap and a commit-graph; a clone afterwards carries exactly the pushed objects;
 * deleting, transferring or renaming a repository while its housekeeping runs waits for it and
 * loses nothing; a push while it runs is kept; a running fetch holds the repack back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { openArchive } from '../src/services/content/archive';
import { repoDiskLock } from '../src/services/git/disk-lock';
import { needsHousekeeping, RepoHousekeeping } from '../src/services/git/housekeeping';
import { gitEnv } from '../src/services/git/run';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

async function out(cwd: string, ...args: string[]): Promise<string> {
  const r = await git(cwd, ...args);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Adds `count` commits (a growing file and a file per commit) on `branch` of the work tree `dir`, through git fast-import. */
async function addCommits(dir: string, branch: string, count: number, tag: string): Promise<void> {
  const parent = (await git(dir, 'rev-parse', '-q', '--verify', `refs/heads/${branch}`)).stdout.trim();
  let s = '';
  let text = '';
  for (let i = 0; i < count; i++) {
    text += `line ${tag} ${i}\n`;
    const msg = `${tag} commit ${i}\n`;
    const file = `${tag} file ${i}: ${'x'.repeat(i % 50)}\n`;
    s += `commit refs/heads/${branch}\ncommitter Dev <dev@example.com> ${1700000000 + i} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}`;
    if (i === 0 && parent) s += `from ${parent}\n`;
    s += `M 100644 inline log.txt\ndata ${Buffer.byteLength(text)}\n${text}\n`;
    s += `M 100644 inline files/${tag}-${i}.txt\ndata ${Buffer.byteLength(file)}\n${file}\n`;
  }
  await execa('git', ['fast-import', '--quiet'], { cwd: dir, input: s, env: gitEnv(), extendEnv: false });
}

/** Every object a repository holds, sorted: `<oid> <type> <size>` lines. */
async function objectList(gitDir: string): Promise<string[]> {
  const r = await out(gitDir, 'cat-file', '--batch-all-objects', '--batch-check');
  return r.split('\n').filter(Boolean).sort();
}

function packFiles(repo: string): string[] {
  return fs.readdirSync(path.join(repo, 'objects', 'pack')).sort();
}

describeForge(
  'git housekeeping after pushes',
  (f) => {
    const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
    const remote = (p: string) => `http://alice:${PASSWORD}@${new URL(f().url).host}/${p}.git`;
    const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);
    let tmp: string;
    let n = 0;
    /** The work tree of alice/during (the tests of reads during a repack share it). */
    let duringWork: string;

    /** A repository of alice's with `commits` commits pushed over HTTP in one push; its work tree. */
    async function pushedRepo(name: string, commits: number): Promise<string> {
      expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name } })).status).toBe(201);
      const work = path.join(tmp, `${name}-${n++}`);
      await out(tmp, 'init', '-q', '-b', 'main', work);
      await addCommits(work, 'main', commits, name);
      await out(work, 'push', '-q', remote(`alice/${name}`), 'main');
      return work;
    }

    beforeAll(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'housekeeping-'));
      await f().user('alice');
      expect((await f().request('POST', '/orgs', { ...as('alice'), body: { username: 'acme' } })).status).toBe(201);
    });
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

    test('pushes are followed by one pack with a bitmap and a commit-graph; clones over v0 and v2 carry exactly the pushed objects', async () => {
      const hk = f().app.services.gitHousekeeping;
      const before = hk.runs;
      const work = await pushedRepo('packed', 150);
      await addCommits(work, 'main', 40, 'second');
      await out(work, 'push', '-q', remote('alice/packed'), 'main');
      await out(work, 'tag', 'v1', 'main~10');
      await out(work, 'push', '-q', remote('alice/packed'), 'v1');
      await hk.idle();
      expect(hk.runs).toBeGreaterThan(before);

      const repo = disk('alice', 'packed');
      const packs = packFiles(repo).filter((p) => p.endsWith('.pack'));
      expect(packs).toHaveLength(1);
      expect(packFiles(repo).some((p) => p.endsWith('.bitmap'))).toBe(true);
      expect(fs.existsSync(path.join(repo, 'objects', 'info', 'commit-graph'))).toBe(true);
      expect((await git(repo, 'fsck', '--strict', '--no-dangling')).exitCode).toBe(0);

      const expected = await objectList(path.join(work, '.git'));
      for (const version of [2, 0]) {
        const dest = path.join(tmp, `clone-v${version}`);
        await out(tmp, '-c', `protocol.version=${version}`, 'clone', '-q', '--mirror', remote('alice/packed'), dest);
        expect(await objectList(dest)).toEqual(expected);
        expect((await git(dest, 'fsck', '--strict', '--no-dangling')).exitCode).toBe(0);
        expect(await out(dest, 'rev-parse', 'main', 'v1')).toBe(await out(work, 'rev-parse', 'main', 'v1'));
      }
    });

    test('the sweep (run after a start) finds repositories left with several packs and housekeeps them', async () => {
      const hk = f().app.services.gitHousekeeping;
      const work = await pushedRepo('swept', 120);
      await hk.idle();
      const repo = disk('alice', 'swept');
      expect(await needsHousekeeping(repo)).toBe(false);
      // Objects that arrive past the forge's transports (as before a restart): a second pack.
      await addCommits(work, 'main', 150, 'direct');
      await out(work, 'push', '-q', repo, 'main');
      expect(packFiles(repo).filter((p) => p.endsWith('.pack')).length).toBeGreaterThan(1);
      expect(await needsHousekeeping(repo)).toBe(true);
      expect(await hk.sweep(path.join(f().dataDir, 'repositories'))).toBeGreaterThanOrEqual(1);
      await hk.idle();
      expect(await needsHousekeeping(repo)).toBe(false);
      expect(packFiles(repo).filter((p) => p.endsWith('.pack'))).toHaveLength(1);
      expect(await objectList(repo)).toEqual(await objectList(path.join(work, '.git')));
    });

    test('a push during housekeeping is kept; housekeeping does not start while a push runs', async () => {
      const hk = f().app.services.gitHousekeeping;
      const work = await pushedRepo('busy', 300);
      await hk.idle();
      const repo = disk('alice', 'busy');
      await addCommits(work, 'main', 200, 'later');
      // Housekeeping and a push of 200 more commits at once, several times over.
      for (let i = 0; i < 3; i++) {
        await addCommits(work, 'main', 20, `round${i}`);
        const [ran] = await Promise.all([hk.run(repo), out(work, 'push', '-q', remote('alice/busy'), 'main')]);
        expect(typeof ran).toBe('boolean');
      }
      hk.pushStarted(repo);
      expect(await hk.run(repo)).toBe(false);
      hk.pushEnded(repo);
      await hk.idle();
      expect((await git(repo, 'fsck', '--strict', '--no-dangling')).exitCode).toBe(0);
      expect(await out(repo, 'rev-parse', 'main')).toBe(await out(work, 'rev-parse', 'main'));
      const dest = path.join(tmp, 'busy-clone');
      await out(tmp, 'clone', '-q', '--mirror', remote('alice/busy'), dest);
      expect(await objectList(dest)).toEqual(await objectList(path.join(work, '.git')));
    });

    test('housekeeping waits for the fetches and clones running in the repository before it repacks', async () => {
      const hk = f().app.services.gitHousekeeping;
      const work = await pushedRepo('read', 120);
      await hk.idle();
      const repo = disk('alice', 'read');
      await addCommits(work, 'main', 30, 'second');
      await out(work, 'push', '-q', repo, 'main'); // past the transports: a second pack to replace
      const packs = packFiles(repo).filter((p) => p.endsWith('.pack'));
      expect(packs.length).toBeGreaterThan(1);
      // An upload-pack of the forge's transport, waiting for its client's wants (as during a clone).
      const reader = await f().app.services.gitTransport.spawn('upload-pack', repo, { statelessRpc: true });
      let repacked = false;
      const run = hk.run(repo).then((r) => (repacked = r));
      try {
        await new Promise((r) => setTimeout(r, 300));
        expect(repacked).toBe(false);
        expect(packFiles(repo).filter((p) => p.endsWith('.pack'))).toEqual(packs);
      } finally {
        reader.stdin.end();
        await run;
      }
      expect(repacked).toBe(true);
      expect(packFiles(repo).filter((p) => p.endsWith('.pack'))).toHaveLength(1);
    });

    test('a clone that starts while a repack runs waits for it: git starts on the new pack, and the clone is whole', async () => {
      const hk = f().app.services.gitHousekeeping;
      const work = await pushedRepo('during', 300);
      duringWork = work;
      await hk.idle();
      const repo = disk('alice', 'during');
      for (let round = 0; round < 2; round++) {
        await addCommits(work, 'main', 40, `during${round}`);
        await out(work, 'push', '-q', repo, 'main'); // past the transports: a second pack to replace
        const before = packFiles(repo).filter((p) => p.endsWith('.pack'));
        expect(before.length).toBeGreaterThan(1);
        const run = hk.run(repo);
        while (!hk.repacking(repo)) await new Promise((r) => setTimeout(r, 2));
        // The upload-pack of a clone arriving now: it must not start before the repack is done
        // (the repack deletes the packs it replaced; a reader that listed them fails).
        const reader = await f().app.services.gitTransport.spawn('upload-pack', repo, { statelessRpc: true });
        const seen = packFiles(repo).filter((p) => p.endsWith('.pack'));
        reader.stdin.end();
        expect(hk.repacking(repo)).toBe(false);
        expect(seen).toHaveLength(1);
        expect(before).not.toContain(seen[0]);
        // And a real clone over HTTP started while the next repack runs.
        await addCommits(work, 'main', 10, `clone${round}`);
        await out(work, 'push', '-q', repo, 'main');
        await run;
        const again = hk.run(repo);
        while (!hk.repacking(repo)) await new Promise((r) => setTimeout(r, 2));
        const dest = path.join(tmp, `during-clone-${round}`);
        const cloned = await git(tmp, 'clone', '-q', '--mirror', remote('alice/during'), dest);
        expect({ exitCode: cloned.exitCode, stderr: cloned.stderr }).toEqual({ exitCode: 0, stderr: '' });
        expect(await again).toBe(true);
        expect(await objectList(dest)).toEqual(await objectList(path.join(work, '.git')));
      }
    });

    test('an archive or bundle download asked for while a repack runs starts after it, and is whole', async () => {
      const hk = f().app.services.gitHousekeeping;
      const repo = disk('alice', 'during');
      const row = await f().app.prisma.repository.findFirstOrThrow({ where: { lowerName: 'during' }, include: { owner: true } });
      for (const name of ['main.bundle', 'main.tar.gz']) {
        await addCommits(duringWork, 'main', 5, `arch-${name}`);
        await out(duringWork, 'push', '-q', repo, 'main'); // a second pack for the repack to replace
        const run = hk.run(repo);
        while (!hk.repacking(repo)) await new Promise((r) => setTimeout(r, 2));
        const a = await openArchive(row, f().app.services.contents.reader(row), name, [], hk);
        expect(hk.repacking(repo)).toBe(false);
        const chunks: Buffer[] = [];
        for await (const c of a.stream) chunks.push(c as Buffer);
        expect(Buffer.concat(chunks).length).toBeGreaterThan(1000);
        expect(await run).toBe(true);
      }
    });

    test('reads held back by a repack wait at most readWaitMs; housekeeping that cannot get past long reads gives up and plans itself again', async () => {
      const repo = disk('alice', 'during');
      const hk = new RepoHousekeeping({ delayMs: -1, readWaitMs: 300 });
      // A long read (a clone whose client stalls): an upload-pack waiting for its client.
      const stalled = await f().app.services.gitTransport.spawn('upload-pack', repo, { statelessRpc: true });
      const ownRead = await hk.startRead(repo);
      ownRead(stalled);
      try {
        const run = hk.run(repo);
        // After the first step, new reads wait (a stream of clones cannot keep housekeeping out)...
        while (!hk.repacking(repo)) await new Promise((r) => setTimeout(r, 5));
        const t0 = Date.now();
        const waited = hk.startRead(repo).then(() => Date.now() - t0);
        // ...but only until housekeeping gives up on the read that does not end.
        expect(await run).toBe(false);
        expect(hk.repacking(repo)).toBe(false);
        const ms = await waited;
        expect(ms).toBeGreaterThanOrEqual(150);
        expect(ms).toBeLessThan(2000);
      } finally {
        stalled.stdin.end();
      }
    });

    test('DELETE waits for the housekeeping running in the repository; nothing is left on disk', async () => {
      const hk = f().app.services.gitHousekeeping;
      await pushedRepo('gone', 300);
      await hk.idle();
      const repo = disk('alice', 'gone');
      // Held work (as a long repack would be): the deletion must not remove the folder under it.
      let release!: () => void;
      const held = repoDiskLock.withWork(repo, () => new Promise<void>((r) => (release = r)));
      const deletion = f().request('DELETE', '/repos/alice/gone', as('alice'));
      await new Promise((r) => setTimeout(r, 300));
      expect(fs.existsSync(path.join(repo, 'HEAD'))).toBe(true);
      release();
      await held;
      expect((await deletion).status).toBe(204);
      expect(fs.existsSync(repo)).toBe(false);

      // And with a real repack running when the deletion arrives.
      await pushedRepo('gone2', 400);
      await hk.idle();
      const repo2 = disk('alice', 'gone2');
      const [ran, res] = await Promise.all([hk.run(repo2), f().request('DELETE', '/repos/alice/gone2', as('alice'))]);
      expect(ran).toBe(true);
      expect(res.status).toBe(204);
      expect(fs.existsSync(repo2)).toBe(false);
      // Planned housekeeping of a deleted repository is skipped, not an error.
      expect(await hk.run(repo2)).toBe(false);
      expect(repoDiskLock.busy(repo2)).toBe(false);
    });

    test('transfer and rename during housekeeping: the repository arrives whole, nothing stays at the old path', async () => {
      const hk = f().app.services.gitHousekeeping;
      const work = await pushedRepo('moved', 400);
      await hk.idle();
      await addCommits(work, 'main', 30, 'more');
      await out(work, 'push', '-q', remote('alice/moved'), 'main');
      const from = disk('alice', 'moved');
      const [ran, res] = await Promise.all([hk.run(from), f().request('POST', '/repos/alice/moved/transfer', { ...as('alice'), body: { new_owner: 'acme' } })]);
      expect(ran).toBe(true);
      expect(res.status).toBe(202);
      expect(fs.existsSync(from)).toBe(false);
      const to = disk('acme', 'moved');
      expect(packFiles(to).filter((p) => p.endsWith('.pack'))).toHaveLength(1);
      expect((await git(to, 'fsck', '--strict', '--no-dangling')).exitCode).toBe(0);

      const [ran2, res2] = await Promise.all([hk.run(to), f().request('PATCH', '/repos/acme/moved', { ...as('alice'), body: { name: 'renamed' } })]);
      expect(ran2).toBe(true);
      expect(res2.status).toBe(200);
      expect(fs.existsSync(to)).toBe(false);
      const dest = path.join(tmp, 'moved-clone');
      await out(tmp, 'clone', '-q', '--mirror', `http://alice:${PASSWORD}@${new URL(f().url).host}/acme/renamed.git`, dest);
      expect(await objectList(dest)).toEqual(await objectList(path.join(work, '.git')));
    });
  },
  { gitHousekeepingDelayMs: 50 },
);
