/**
 * Push mirrors against real git: the targets are other repositories of the same forge reached
 * over smart HTTP with a password or a token (loopback, allowed by MIGRATIONS_ALLOW_LOCALNETWORKS),
 * and they really receive, move and lose branches and tags.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge(
  'push mirrors',
  (f) => {
    const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
    const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);
    const refsOf = async (owner: string, name: string) => (await git(disk(owner, name), 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags')).stdout;
    const withAuth = (user: string, pass: string) => {
      const u = new URL(f().url);
      u.username = user;
      u.password = pass;
      return u.toString().replace(/\/$/, '');
    };
    const target = (owner: string, name: string) => `${f().url}/${owner}/${name}.git`;
    const idle = () => f().app.services.pushMirrors.idle();
    let tmp: string;
    let work: string;

    const commit = async (file: string, text: string) => {
      // The branch may have moved on the server (commits through the API): start from there.
      await git(work, 'fetch', '-q', 'origin');
      await git(work, 'reset', '-q', '--hard', 'origin/main');
      fs.writeFileSync(path.join(work, file), text);
      await git(work, 'add', '.');
      await git(work, 'commit', '-qm', `edit ${file}`);
      return (await git(work, 'rev-parse', 'HEAD')).stdout.trim();
    };
    const mirror = async (repo: string, body: Record<string, unknown>) => {
      const res = await f().request('POST', `/repos/alice/${repo}/push_mirrors`, { ...as('alice'), body });
      expect(res.status).toBe(200);
      return res.body;
    };

    beforeAll(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'push-mirrors-'));
      await f().user('alice');
      await f().user('bob');
      await f().user('root', { admin: true });
      for (const [who, name, extra] of [
        ['alice', 'src', { auto_init: true }],
        ['alice', 'dst', {}],
        ['alice', 'dst2', {}],
        ['alice', 'quiet', {}],
        ['bob', 'bobdst', { private: true }],
        ['alice', 'hidden', { private: true, auto_init: true }],
        ['alice', 'wikisrc', { auto_init: true }],
        ['alice', 'wikidst', {}],
        ['alice', 'nowiki', {}],
      ] as const) {
        expect((await f().request('POST', '/user/repos', { ...as(who), body: { name, ...extra } })).status).toBe(201);
      }
      work = path.join(tmp, 'w');
      expect((await git(tmp, 'clone', '-q', `${withAuth('alice', PASSWORD)}/alice/src.git`, 'w')).exitCode).toBe(0);
      await commit('a.txt', 'a');
      await git(work, 'tag', 'v1');
      await git(work, 'tag', '-a', 'v1-annotated', '-m', 'annotated');
      await git(work, 'branch', 'feature');
      expect((await git(work, 'push', '-q', 'origin', 'main', 'feature', 'v1', 'v1-annotated')).exitCode).toBe(0);
      await idle();
    });
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

    test("Gitea's validation: interval first, then the address; statuses and messages", async () => {
      const cases: [Record<string, unknown>, number, string][] = [
        [{ remote_address: target('alice', 'dst') }, 400, 'invalid interval: time: invalid duration ""'],
        [{ remote_address: target('alice', 'dst'), interval: 'abc' }, 400, 'invalid interval: time: invalid duration "abc"'],
        [{ remote_address: 'ssh://x/y', interval: '5m' }, 400, 'interval is shorter than minimum 10m0s'],
        [{ remote_address: target('alice', 'dst'), interval: '-1h' }, 400, 'interval is shorter than minimum 10m0s'],
        [{ remote_address: 'ssh://127.0.0.1/y', interval: '0' }, 400, 'Invalid mirror protocol'],
        [{ remote_address: 'http://%zz/y', interval: '0' }, 400, 'Invalid Url '],
        [{ remote_address: 'git@127.0.0.1:x/y', interval: '0' }, 400, 'Invalid Url '],
        [{ remote_address: disk('alice', 'dst'), interval: '0' }, 401, 'Permission denied'],
        [{ remote_address: `file://${disk('alice', 'dst')}`, interval: '0' }, 401, 'Permission denied'],
        [{ remote_address: '', interval: '0' }, 401, 'Permission denied'],
        [{ remote_address: target('alice', 'dst'), interval: '0', sync_on_commit: {} }, 422, ''],
      ];
      for (const [body, status, message] of cases) {
        const res = await f().request('POST', '/repos/alice/src/push_mirrors', { ...as('alice'), body });
        expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), status]);
        if (message) expect(res.body.message).toBe(message);
      }
      // Loopback is a local network: refused unless MIGRATIONS_ALLOW_LOCALNETWORKS.
      const cfg = f().app.config;
      cfg.migrationsAllowLocalNetworks = false;
      try {
        const res = await f().request('POST', '/repos/alice/src/push_mirrors', { ...as('alice'), body: { remote_address: target('alice', 'dst'), interval: '0' } });
        expect(res.status).toBe(401);
        expect(res.body.message).toBe('Permission denied');
      } finally {
        cfg.migrationsAllowLocalNetworks = true;
      }
      expect((await f().request('GET', '/repos/alice/src/push_mirrors', as('alice'))).body).toEqual([]);
      expect((await git(disk('alice', 'src'), 'remote')).stdout.trim()).toBe('');
    });

    test('who may: repository admins only (anonymous gets reqAdmin 403), private repositories 404 to strangers', async () => {
      expect((await f().request('GET', '/repos/alice/src/push_mirrors')).status).toBe(403);
      expect((await f().request('POST', '/repos/alice/src/push_mirrors', { body: { interval: 'x' } })).status).toBe(403);
      expect((await f().request('POST', '/repos/alice/src/push_mirrors-sync')).status).toBe(403);
      expect((await f().request('GET', '/repos/alice/src/push_mirrors', as('bob'))).status).toBe(403);
      expect((await f().request('DELETE', '/repos/alice/src/push_mirrors/x', as('bob'))).status).toBe(403);
      expect((await f().request('GET', '/repos/alice/hidden/push_mirrors', as('bob'))).status).toBe(404);
      expect((await f().request('GET', '/repos/alice/hidden/push_mirrors')).status).toBe(404);
      expect((await f().request('GET', '/repos/alice/src/push_mirrors', as('root'))).status).toBe(200);
    });

    test('create, list, get: Gitea JSON, credentials kept in the git config only', async () => {
      const created = await mirror('src', { remote_address: target('alice', 'dst'), remote_username: 'alice', remote_password: PASSWORD, interval: '1h30m', sync_on_commit: false });
      expect(created).toEqual({
        repo_name: 'src',
        remote_name: expect.stringMatching(/^remote_mirror_[A-Za-z0-9]{10}$/),
        remote_address: target('alice', 'dst'),
        created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        last_update: '1970-01-01T00:00:00Z',
        last_error: '',
        interval: '1h30m0s',
        sync_on_commit: false,
      });
      // Credentials inside the address are kept for git and hidden from the answer too.
      const inline = await mirror('src', { remote_address: `${withAuth('alice', PASSWORD)}/alice/dst2.git`, interval: '0' });
      expect(inline.remote_address).toBe(target('alice', 'dst2'));
      expect(inline.interval).toBe('0s');
      expect(inline.sync_on_commit).toBe(false);

      const list = await f().request('GET', '/repos/alice/src/push_mirrors', as('alice'));
      expect(list.status).toBe(200);
      expect(list.headers.get('x-total-count')).toBe('2');
      expect(list.body.map((m: { remote_name: string }) => m.remote_name)).toEqual([created.remote_name, inline.remote_name]);
      expect(list.text).not.toContain(PASSWORD);
      const page = await f().request('GET', '/repos/alice/src/push_mirrors?limit=1&page=2', as('alice'));
      expect(page.body.map((m: { remote_name: string }) => m.remote_name)).toEqual([inline.remote_name]);
      const one = await f().request('GET', `/repos/alice/src/push_mirrors/${created.remote_name}`, as('alice'));
      expect(one.body).toEqual(created);
      expect((await f().request('GET', '/repos/alice/src/push_mirrors/remote_mirror_nope', as('alice'))).status).toBe(404);

      const url = (await git(disk('alice', 'src'), 'config', `remote.${created.remote_name}.url`)).stdout.trim();
      expect(new URL(url).password).toBe(PASSWORD);
      expect((await git(disk('alice', 'src'), 'config', '--get-all', `remote.${created.remote_name}.push`)).stdout.trim().split('\n')).toEqual([
        '+refs/heads/*:refs/heads/*',
        '+refs/tags/*:refs/tags/*',
      ]);
      for (const m of [created, inline]) expect((await f().request('DELETE', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'))).status).toBe(204);
    });

    test('sync pushes every branch and tag with a password, then moves and deletes them like the source', async () => {
      const m = await mirror('src', { remote_address: target('alice', 'dst'), remote_username: 'alice', remote_password: PASSWORD, interval: '0' });
      const sync = await f().request('POST', '/repos/alice/src/push_mirrors-sync', as('alice'));
      expect(sync.status).toBe(200);
      expect(await refsOf('alice', 'dst')).toBe(await refsOf('alice', 'src'));
      expect(await refsOf('alice', 'dst')).toMatch(/refs\/tags\/v1-annotated/);
      const after = (await f().request('GET', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'))).body;
      expect(after.last_error).toBe('');
      expect(after.last_update).not.toBe('1970-01-01T00:00:00Z');
      // The target is a repository like any other: the forge saw the push.
      expect((await f().request('GET', '/repos/alice/dst', as('alice'))).body).toMatchObject({ empty: false, branch_count: 2 });

      // Deleted branch and tag, a new branch, a moved (force-pushed) main.
      await git(work, 'push', '-q', 'origin', ':feature', ':v1');
      await git(work, 'reset', '-q', '--hard', 'HEAD~1');
      fs.writeFileSync(path.join(work, 'b.txt'), 'rewritten');
      await git(work, 'add', '.');
      await git(work, 'commit', '-qm', 'rewritten');
      await git(work, 'branch', 'next');
      expect((await git(work, 'push', '-q', '-f', 'origin', 'main', 'next')).exitCode).toBe(0);
      expect((await f().request('POST', '/repos/alice/src/push_mirrors-sync', as('alice'))).status).toBe(200);
      const refs = await refsOf('alice', 'dst');
      expect(refs).toBe(await refsOf('alice', 'src'));
      expect(refs).not.toMatch(/refs\/heads\/feature|refs\/tags\/v1 /);
      expect(refs).toMatch(/refs\/heads\/next/);
      await f().request('DELETE', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'));
      expect((await git(disk('alice', 'src'), 'remote')).stdout.trim()).toBe('');
    });

    test("a token works as the password on another user's private repository", async () => {
      const token = await f().token('bob', ['write:repository']);
      const m = await mirror('src', { remote_address: target('bob', 'bobdst'), remote_username: 'bob', remote_password: token, interval: '0' });
      expect((await f().request('POST', '/repos/alice/src/push_mirrors-sync', as('alice'))).status).toBe(200);
      expect(await refsOf('bob', 'bobdst')).toBe(await refsOf('alice', 'src'));
      const json = await f().request('GET', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'));
      expect(json.text).not.toContain(token);
      await f().request('DELETE', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'));
    });

    test('a failing sync is 422 naming the mirror; last_error says why without the credentials', async () => {
      const wrong = await mirror('src', { remote_address: target('bob', 'bobdst'), remote_username: 'bob', remote_password: 'not-the-password', interval: '0' });
      const down = await mirror('src', { remote_address: 'http://127.0.0.1:1/x/y.git', remote_username: 'u', remote_password: 'secret-pw', interval: '0' });
      const bobBefore = await refsOf('bob', 'bobdst');
      await commit('c.txt', 'c');
      await git(work, 'push', '-q', 'origin', 'main');
      await idle();
      const res = await f().request('POST', '/repos/alice/src/push_mirrors-sync', as('alice'));
      expect(res.status).toBe(422);
      expect(res.body.message).toBe(`error occurred when syncing push mirrors: ${wrong.remote_name}, ${down.remote_name}`);
      expect(await refsOf('bob', 'bobdst')).toBe(bobBefore);
      const list = await f().request('GET', '/repos/alice/src/push_mirrors', as('alice'));
      const byName = Object.fromEntries(list.body.map((m: { remote_name: string }) => [m.remote_name, m]));
      expect(byName[wrong.remote_name].last_error).toMatch(/^push failed: /);
      expect(byName[down.remote_name].last_error).toMatch(/^push failed: .*127\.0\.0\.1/s);
      expect(list.text).not.toContain('not-the-password');
      expect(list.text).not.toContain('secret-pw');
      for (const m of [wrong, down]) await f().request('DELETE', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'));
    });

    test('sync_on_commit: a git push and a commit through the API reach the mirror; other mirrors wait', async () => {
      const onCommit = await mirror('src', { remote_address: target('alice', 'dst'), remote_username: 'alice', remote_password: PASSWORD, interval: '0', sync_on_commit: true });
      const quiet = await mirror('src', { remote_address: target('alice', 'quiet'), remote_username: 'alice', remote_password: PASSWORD, interval: '0', sync_on_commit: false });
      const head = await commit('d.txt', 'd');
      expect((await git(work, 'push', '-q', 'origin', 'main')).exitCode).toBe(0);
      await idle();
      expect((await git(disk('alice', 'dst'), 'rev-parse', 'main')).stdout.trim()).toBe(head);
      expect(await refsOf('alice', 'quiet')).toBe('');

      const put = await f().request('POST', '/repos/alice/src/contents/api.txt', { ...as('alice'), body: { content: Buffer.from('api').toString('base64') } });
      expect(put.status).toBe(201);
      await idle();
      expect((await git(disk('alice', 'dst'), 'rev-parse', 'main')).stdout.trim()).toBe(put.body.commit.sha);
      // A new tag is pushed commits too (Gitea's PushCommits for tags).
      const tag = await f().request('POST', '/repos/alice/src/tags', { ...as('alice'), body: { tag_name: 'v2', target: 'main' } });
      expect(tag.status).toBe(201);
      await idle();
      expect((await git(disk('alice', 'dst'), 'rev-parse', 'refs/tags/v2')).exitCode).toBe(0);
      expect(await refsOf('alice', 'quiet')).toBe('');
      for (const m of [onCommit, quiet]) await f().request('DELETE', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'));
    });

    test('update_mirrors syncs mirrors whose interval has passed; interval 0 never', async () => {
      const due = await mirror('src', { remote_address: target('alice', 'dst2'), remote_username: 'alice', remote_password: PASSWORD, interval: '10m' });
      const off = await mirror('src', { remote_address: target('alice', 'quiet'), remote_username: 'alice', remote_password: PASSWORD, interval: '0' });
      const notYet = await mirror('src', { remote_address: target('alice', 'dst'), remote_username: 'alice', remote_password: PASSWORD, interval: '8h' });
      const prisma = f().app.prisma;
      const long = new Date(Date.now() - 11 * 60_000);
      await prisma.pushMirror.updateMany({ where: { remoteName: { in: [due.remote_name, off.remote_name] } }, data: { lastUpdate: long } });
      await prisma.pushMirror.updateMany({ where: { remoteName: notYet.remote_name }, data: { lastUpdate: long } });
      const dstBefore = await refsOf('alice', 'dst');
      const head = await commit('e.txt', 'e');
      await git(work, 'push', '-q', 'origin', 'main');
      await idle();
      expect((await f().request('POST', '/admin/cron/update_mirrors', as('root'))).status).toBe(204);
      const deadline = Date.now() + 30_000;
      while ((await prisma.pushMirror.findFirstOrThrow({ where: { remoteName: due.remote_name } })).lastUpdate!.getTime() === long.getTime()) {
        if (Date.now() > deadline) throw new Error('update_mirrors did not sync');
        await new Promise((r) => setTimeout(r, 50));
      }
      await idle();
      expect((await git(disk('alice', 'dst2'), 'rev-parse', 'main')).stdout.trim()).toBe(head);
      expect(await refsOf('alice', 'quiet')).toBe('');
      expect(await refsOf('alice', 'dst')).toBe(dstBefore);
      const cron = await f().request('GET', '/admin/cron', as('root'));
      expect(cron.body.map((t: { name: string }) => t.name)).toContain('update_mirrors');
      for (const m of [due, off, notYet]) await f().request('DELETE', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'));
    });

    test("the wiki follows to the remote's wiki when the remote has one", async () => {
      const wikiRefs = async (name: string) => (await git(disk('alice', name).replace(/\.git$/, '.wiki.git'), 'for-each-ref', '--format=%(refname) %(objectname)')).stdout;
      const page = (repo: string, title: string) =>
        f().request('POST', `/repos/alice/${repo}/wiki/new`, { ...as('alice'), body: { title, content_base64: Buffer.from(title).toString('base64') } });
      expect((await page('wikisrc', 'Home')).status).toBe(201);
      expect((await page('wikisrc', 'Second')).status).toBe(201);
      expect((await page('wikidst', 'Old page')).status).toBe(201);
      const withWiki = await mirror('wikisrc', { remote_address: target('alice', 'wikidst'), remote_username: 'alice', remote_password: PASSWORD, interval: '0' });
      const without = await mirror('wikisrc', { remote_address: target('alice', 'nowiki'), remote_username: 'alice', remote_password: PASSWORD, interval: '0' });
      expect((await f().request('POST', '/repos/alice/wikisrc/push_mirrors-sync', as('alice'))).status).toBe(200);
      expect(await refsOf('alice', 'wikidst')).toBe(await refsOf('alice', 'wikisrc'));
      expect(await refsOf('alice', 'nowiki')).toBe(await refsOf('alice', 'wikisrc'));
      expect(await wikiRefs('wikidst')).toBe(await wikiRefs('wikisrc'));
      const pages = await f().request('GET', '/repos/alice/wikidst/wiki/pages', as('alice'));
      expect(pages.body.map((p: { title: string }) => p.title).sort()).toEqual(['Home', 'Second']);
      expect(fs.existsSync(disk('alice', 'nowiki').replace(/\.git$/, '.wiki.git'))).toBe(false);
      for (const m of [withWiki, without]) expect((await f().request('DELETE', `/repos/alice/wikisrc/push_mirrors/${m.remote_name}`, as('alice'))).status).toBe(204);
      expect((await git(disk('alice', 'wikisrc').replace(/\.git$/, '.wiki.git'), 'remote')).stdout.trim()).toBe('');
    });

    test('delete: 204 also for an unknown name; archived repositories refuse changes and syncs (423) but list', async () => {
      expect((await f().request('DELETE', '/repos/alice/src/push_mirrors/remote_mirror_unknown', as('alice'))).status).toBe(204);
      const m = await mirror('src', { remote_address: target('alice', 'dst'), interval: '0' });
      expect((await f().request('PATCH', '/repos/alice/src', { ...as('alice'), body: { archived: true } })).status).toBe(200);
      try {
        expect((await f().request('POST', '/repos/alice/src/push_mirrors', { ...as('alice'), body: { remote_address: target('alice', 'dst'), interval: '0' } })).status).toBe(423);
        expect((await f().request('POST', '/repos/alice/src/push_mirrors-sync', as('alice'))).status).toBe(423);
        expect((await f().request('DELETE', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'))).status).toBe(423);
        expect((await f().request('GET', '/repos/alice/src/push_mirrors', as('alice'))).body).toHaveLength(1);
      } finally {
        await f().request('PATCH', '/repos/alice/src', { ...as('alice'), body: { archived: false } });
      }
      expect((await f().request('DELETE', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'))).status).toBe(204);
      expect((await f().request('GET', `/repos/alice/src/push_mirrors/${m.remote_name}`, as('alice'))).status).toBe(404);
      expect((await git(disk('alice', 'src'), 'config', '--get-regexp', '^remote\\.')).stdout.trim()).toBe('');
    });
  },
  { migrationsAllowLocalNetworks: true },
);
