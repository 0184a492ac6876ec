import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge(
  'migrate and mirrors',
  (f) => {
    const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
    const auth = (name: string) => `http://${name}:${PASSWORD}@${new URL(f().url).host}`;
    const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);
    let tmp: string;
    let work: string;
    beforeAll(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'migrate-'));
      await f().user('alice');
      await f().user('bob');
      expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'src', auto_init: true, default_branch: 'trunk' } })).status).toBe(201);
      expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'hidden', private: true, auto_init: true } })).status).toBe(201);
      work = path.join(tmp, 'w');
      expect((await git(tmp, 'clone', '-q', `${auth('alice')}/alice/src.git`, 'w')).exitCode).toBe(0);
      fs.writeFileSync(path.join(work, 'a.txt'), 'a');
      await git(work, 'add', '.');
      await git(work, 'commit', '-qm', 'second');
      await git(work, 'tag', 'v1');
      await git(work, 'branch', 'feature');
      expect((await git(work, 'push', '-q', 'origin', 'trunk', 'feature', 'v1')).exitCode).toBe(0);
    });
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

    test('a migration copies branches, tags and history from a URL; original_url without credentials', async () => {
      const res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: `${f().url}/alice/src.git`, repo_name: 'copy', description: 'copied' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ full_name: 'bob/copy', mirror: false, empty: false, default_branch: 'trunk', original_url: `${f().url}/alice/src.git`, description: 'copied' });
      const src = (await git(disk('alice', 'src'), 'for-each-ref', '--format=%(refname) %(objectname)')).stdout;
      const copy = (await git(disk('bob', 'copy'), 'for-each-ref', '--format=%(refname) %(objectname)')).stdout;
      expect(copy).toBe(src);
      expect((await git(disk('bob', 'copy'), 'remote')).stdout.trim()).toBe('');
      const c = await git(tmp, 'clone', '-q', `${auth('bob')}/bob/copy.git`, 'copy');
      expect(c.exitCode).toBe(0);
      expect((await git(path.join(tmp, 'copy'), 'log', '--format=%s')).stdout.split('\n')).toEqual(['second', 'Initial commit']);
      const branches = await f().request('GET', '/repos/bob/copy', as('bob'));
      expect(branches.body.branch_count).toBe(2);
    });

    test('a private source with credentials; credentials never stored in original_url', async () => {
      let res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: `${f().url}/alice/hidden.git`, repo_name: 'nocreds' } });
      expect(res.status).toBe(422);
      expect(res.body.message).toMatch(/^Migration failed/);
      expect((await f().request('GET', '/repos/bob/nocreds', as('bob'))).status).toBe(404);
      res = await f().request('POST', '/repos/migrate', {
        ...as('alice'),
        body: { clone_addr: `${f().url}/alice/hidden.git`, repo_name: 'hidden-copy', auth_username: 'alice', auth_password: PASSWORD, private: true },
      });
      expect(res.status).toBe(201);
      expect(res.body.original_url).toBe(`${f().url}/alice/hidden.git`);
      expect(res.body.private).toBe(true);
    });

    test('a pull mirror: read-only to pushes, mirror-sync fetches new commits; mirror-sync of a non-mirror 400', async () => {
      const res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: `${f().url}/alice/src.git`, repo_name: 'mirror', mirror: true, mirror_interval: '1h' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ mirror: true, mirror_interval: '1h0m0s' });
      expect(res.body.mirror_updated).not.toBe('0001-01-01T00:00:00Z');
      const m = path.join(tmp, 'm');
      expect((await git(tmp, 'clone', '-q', `${auth('bob')}/bob/mirror.git`, 'm')).exitCode).toBe(0);
      fs.writeFileSync(path.join(m, 'x.txt'), 'x');
      await git(m, 'add', '.');
      await git(m, 'commit', '-qm', 'not allowed');
      const push = await git(m, 'push', 'origin', 'trunk');
      expect(push.exitCode).not.toBe(0);
      expect(push.stderr).toContain('mirror repository is read-only');

      fs.writeFileSync(path.join(work, 'b.txt'), 'b');
      await git(work, 'add', '.');
      await git(work, 'commit', '-qm', 'third');
      expect((await git(work, 'push', '-q', 'origin', 'trunk')).exitCode).toBe(0);
      await git(work, 'push', '-q', 'origin', ':feature');
      const head = (await git(work, 'rev-parse', 'HEAD')).stdout.trim();
      expect((await f().request('POST', '/repos/bob/mirror/mirror-sync', as('bob'))).status).toBe(200);
      expect((await git(disk('bob', 'mirror'), 'rev-parse', 'trunk')).stdout.trim()).toBe(head);
      // enable_prune (default on) removes a branch deleted at the source.
      expect((await git(disk('bob', 'mirror'), 'rev-parse', '--verify', '-q', 'refs/heads/feature')).exitCode).not.toBe(0);
      expect((await f().request('POST', '/repos/bob/mirror/mirror-sync', as('alice'))).status).toBe(403);
      const notMirror = await f().request('POST', '/repos/bob/copy/mirror-sync', as('bob'));
      expect(notMirror.status).toBe(400);
      expect(notMirror.body.message).toBe('Repository is not a mirror');
      // PATCH changes a mirror's interval (Gitea's minimum is 10m).
      const edit = await f().request('PATCH', '/repos/bob/mirror', { ...as('bob'), body: { mirror_interval: '5m' } });
      expect(edit.status).toBe(422);
      expect((await f().request('PATCH', '/repos/bob/mirror', { ...as('bob'), body: { mirror_interval: '2h30m' } })).body.mirror_interval).toBe('2h30m0s');
    });

    test('update_mirrors fetches the pull mirrors whose interval has passed, then schedules the next; interval 0 never', async () => {
      await f().user('root', { admin: true });
      const prisma = f().app.services.tracker.context.prisma;
      const mirror = async (name: string, interval: string) => {
        const res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: `${f().url}/alice/src.git`, repo_name: name, mirror: true, mirror_interval: interval } });
        expect(res.status).toBe(201);
        return res.body;
      };
      const due = await mirror('pm-due', '10m');
      await mirror('pm-off', '0s');
      await mirror('pm-later', '8h');
      const row = (name: string) => prisma.repository.findFirstOrThrow({ where: { ownerName: 'bob', name } });
      // A new mirror's next fetch is one interval after its creation; none for interval 0.
      expect((await row('pm-due')).mirrorNextUpdateAt!.getTime() - Date.parse(due.mirror_updated)).toBeGreaterThanOrEqual(10 * 60_000 - 1000);
      expect((await row('pm-off')).mirrorNextUpdateAt).toBeNull();

      fs.writeFileSync(path.join(work, 'interval.txt'), 'i');
      await git(work, 'add', '.');
      await git(work, 'commit', '-qm', 'for the interval');
      expect((await git(work, 'push', '-q', 'origin', 'trunk')).exitCode).toBe(0);
      const head = (await git(work, 'rev-parse', 'HEAD')).stdout.trim();
      const before = { off: await git(disk('bob', 'pm-off'), 'rev-parse', 'trunk'), later: await git(disk('bob', 'pm-later'), 'rev-parse', 'trunk') };
      expect(before.off.stdout.trim()).not.toBe(head);

      // Ten minutes pass for pm-due (its next update time is moved back, as the clock would);
      // pm-off's last sync is as old, but interval 0 means never.
      const past = new Date(Date.now() - 60_000);
      await prisma.repository.updateMany({ where: { ownerName: 'bob', name: 'pm-due' }, data: { mirrorNextUpdateAt: past } });
      await prisma.repository.updateMany({ where: { ownerName: 'bob', name: 'pm-off' }, data: { mirrorUpdatedAt: new Date(Date.now() - 3_600_000) } });
      const runs = async () => ((await f().request('GET', '/admin/cron', as('root'))).body as { name: string; exec_times: number }[]).find((t) => t.name === 'update_mirrors')!.exec_times;
      const ran = await runs();
      expect((await f().request('POST', '/admin/cron/update_mirrors', as('root'))).status).toBe(204);
      const deadline = Date.now() + 60_000;
      while ((await runs()) === ran) {
        if (Date.now() > deadline) throw new Error('update_mirrors did not finish');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await git(disk('bob', 'pm-due'), 'rev-parse', 'trunk')).stdout.trim()).toBe(head);
      expect((await git(disk('bob', 'pm-off'), 'rev-parse', 'trunk')).stdout).toBe(before.off.stdout);
      expect((await git(disk('bob', 'pm-later'), 'rev-parse', 'trunk')).stdout).toBe(before.later.stdout);
      const after = (await f().request('GET', '/repos/bob/pm-due', as('bob'))).body;
      expect(Date.parse(after.mirror_updated)).toBeGreaterThan(Date.parse(due.mirror_updated));
      const next = (await row('pm-due')).mirrorNextUpdateAt!.getTime();
      expect(next - Date.parse(after.mirror_updated)).toBeGreaterThanOrEqual(10 * 60_000 - 1000);
      expect(next - Date.now()).toBeLessThanOrEqual(10 * 60_000);

      // Changing the interval schedules the next fetch one new interval from now; 0 stops it.
      expect((await f().request('PATCH', '/repos/bob/pm-later', { ...as('bob'), body: { mirror_interval: '20m' } })).status).toBe(200);
      const later = (await row('pm-later')).mirrorNextUpdateAt!.getTime() - Date.now();
      expect(later).toBeGreaterThan(19 * 60_000);
      expect(later).toBeLessThanOrEqual(20 * 60_000);
      expect((await f().request('PATCH', '/repos/bob/pm-later', { ...as('bob'), body: { mirror_interval: '0s' } })).status).toBe(200);
      expect((await row('pm-later')).mirrorNextUpdateAt).toBeNull();

      // A source that went away: the run logs it, touches the update time, and the mirror stays due.
      expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'gone', auto_init: true } })).status).toBe(201);
      const gone = (await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: `${f().url}/alice/gone.git`, repo_name: 'pm-gone', mirror: true, mirror_interval: '10m' } })).body;
      expect((await f().request('DELETE', '/repos/alice/gone', as('alice'))).status).toBe(204);
      await prisma.repository.updateMany({ where: { ownerName: 'bob', name: 'pm-gone' }, data: { mirrorNextUpdateAt: past } });
      const logged: unknown[] = [];
      expect(await f().app.services.migrations.syncDue((err) => logged.push(err))).toBe(0);
      expect(String(logged[0])).toContain('mirror bob/pm-gone');
      expect((await row('pm-gone')).mirrorNextUpdateAt!.getTime()).toBe(past.getTime());
      expect((await row('pm-gone')).mirrorUpdatedAt!.getTime()).toBeGreaterThan(Date.parse(gone.mirror_updated));
      expect((await git(disk('bob', 'pm-due'), 'rev-parse', 'trunk')).stdout.trim()).toBe(head);
    });

    test('where a migration may clone from: loopback refused unless ALLOW_LOCALNETWORKS; local paths and other schemes refused', async () => {
      const cfg = f().app.config;
      cfg.migrationsAllowLocalNetworks = false;
      try {
        const res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: `${f().url}/alice/src.git`, repo_name: 'x1' } });
        expect(res.status).toBe(422);
        expect(res.body.message).toBe('You can not import from disallowed hosts.');
      } finally {
        cfg.migrationsAllowLocalNetworks = true;
      }
      let res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: `file://${disk('alice', 'src')}`, repo_name: 'x2' } });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('You are not allowed to import local repositories.');
      res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: disk('alice', 'src'), repo_name: 'x3' } });
      expect(res.status).toBe(422);
      res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: 'ftp://127.0.0.1/x', repo_name: 'x4' } });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('The provided URL is invalid.');
      res = await f().request('POST', '/repos/migrate', { ...as('bob'), body: { clone_addr: `${f().url}/alice/src.git`, repo_name: 'x5', repo_owner: 'alice' } });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe('Given user is not an organization.');
      expect((await f().request('POST', '/repos/migrate', { body: { clone_addr: `${f().url}/alice/src.git`, repo_name: 'x6' } })).status).toBe(401);
      for (const n of ['x1', 'x2', 'x3', 'x4', 'x5']) expect(fs.existsSync(disk('bob', n))).toBe(false);
    });
  },
  { migrationsAllowLocalNetworks: true },
);
