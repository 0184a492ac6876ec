import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('forks', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const auth = (name: string) => `http://${name}:${PASSWORD}@${new URL(f().url).host}`;
  const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);
  let tmp: string;
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'forks-'));
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('bob');
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'base', auto_init: true, description: 'the base' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs', { ...as('alice'), body: { username: 'acme' } })).status).toBe(201);
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('a fork: 202 with parent and owner permissions, borrows the parent objects through alternates, clones and takes pushes', async () => {
    const res = await f().request('POST', '/repos/alice/base/forks', { ...as('bob'), body: {} });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      full_name: 'bob/base',
      fork: true,
      description: 'the base',
      empty: false,
      default_branch: 'main',
      permissions: { admin: true, push: true, pull: true },
      parent: { full_name: 'alice/base', fork: false },
    });
    const alternates = fs.readFileSync(path.join(disk('bob', 'base'), 'objects', 'info', 'alternates'), 'utf8').trim();
    expect(path.isAbsolute(alternates)).toBe(false);
    expect(path.resolve(disk('bob', 'base'), 'objects', alternates)).toBe(path.join(disk('alice', 'base'), 'objects'));
    // No object of the parent was copied: the fork's own object store holds no packs or loose objects.
    const own = fs.readdirSync(path.join(disk('bob', 'base'), 'objects')).filter((d) => /^[0-9a-f]{2}$/.test(d));
    expect(own).toEqual([]);
    expect(fs.readdirSync(path.join(disk('bob', 'base'), 'objects', 'pack'))).toEqual([]);
    const parentHead = (await git(disk('alice', 'base'), 'rev-parse', 'main')).stdout.trim();
    expect((await git(disk('bob', 'base'), 'rev-parse', 'main')).stdout.trim()).toBe(parentHead);

    const w = path.join(tmp, 'w1');
    expect((await git(tmp, 'clone', '-q', `${auth('bob')}/bob/base.git`, 'w1')).exitCode).toBe(0);
    fs.writeFileSync(path.join(w, 'fork.txt'), 'fork only');
    await git(w, 'add', '.');
    await git(w, 'commit', '-qm', 'in the fork');
    expect((await git(w, 'push', '-q', 'origin', 'main')).exitCode).toBe(0);
    // The parent did not change.
    expect((await git(disk('alice', 'base'), 'rev-parse', 'main')).stdout.trim()).toBe(parentHead);

    const parent = await f().request('GET', '/repos/alice/base', as('alice'));
    expect(parent.body.forks_count).toBe(1);
    const got = await f().request('GET', '/repos/bob/base', as('bob'));
    expect(got.body.parent.full_name).toBe('alice/base');
  });

  test("Gitea's errors: forking twice 409, a taken name 409, an organization without rights 403, a missing one 404, anonymous 401", async () => {
    let res = await f().request('POST', '/repos/alice/base/forks', { ...as('bob'), body: { name: 'other' } });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('repository is already forked by user [uname: bob, repo path: alice/base, fork path: bob/base]');
    res = await f().request('POST', '/repos/alice/base/forks', { ...as('alice'), body: {} });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('repository already exists [uname: alice, name: base]');
    res = await f().request('POST', '/repos/alice/base/forks', { ...as('bob'), body: { organization: 'acme' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('User is not allowed to create repositories in this organization.');
    res = await f().request('POST', '/repos/alice/base/forks', { ...as('bob'), body: { organization: 'nope' } });
    expect(res.status).toBe(404);
    expect((await f().request('POST', '/repos/alice/base/forks', { body: {} })).status).toBe(401);
    res = await f().request('POST', '/repos/alice/base/forks', { ...as('bob'), body: { name: 'bad name' } });
    expect(res.status).toBe(422);
  });

  test('into an organization with a new name; the list shows readable forks with paging headers', async () => {
    const res = await f().request('POST', '/repos/alice/base/forks', { ...as('alice'), body: { organization: 'acme', name: 'acme-base' } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ full_name: 'acme/acme-base', fork: true, parent: { full_name: 'alice/base' } });
    const list = await f().request('GET', '/repos/alice/base/forks?limit=1');
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total-count')).toBe('2');
    expect(list.body.map((r: { full_name: string }) => r.full_name)).toEqual(['bob/base']);
    expect(list.headers.get('link')).toContain('rel="next"');
    expect((await f().request('GET', '/repos/alice/base', as('alice'))).body.forks_count).toBe(2);
  });

  test('a private parent gives a private fork; renaming the parent keeps the fork readable; deleting it leaves a complete fork', async () => {
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'secret', private: true, auto_init: true } })).status).toBe(201);
    const r = (await f().app.services.repos.findByOwnerAndName('alice', 'secret'))!;
    const bob = (await f().app.services.users.findByName('bob'))!;
    await f().app.prisma.collaboration.create({ data: { repoId: r.id, userId: bob.id, mode: 1 } });
    const res = await f().request('POST', '/repos/alice/secret/forks', { ...as('bob'), body: {} });
    expect(res.status).toBe(202);
    expect(res.body.private).toBe(true);
    // A fork's visibility follows its parent's.
    const edit = await f().request('PATCH', '/repos/bob/secret', { ...as('bob'), body: { private: false } });
    expect(edit.body.private).toBe(true);

    expect((await f().request('PATCH', '/repos/alice/secret', { ...as('alice'), body: { name: 'moved' } })).status).toBe(200);
    const fsck = await git(disk('bob', 'secret'), 'fsck', '--connectivity-only');
    expect(fsck.exitCode).toBe(0);
    expect((await git(tmp, 'clone', '-q', `${auth('bob')}/bob/secret.git`, 'w2')).exitCode).toBe(0);

    expect((await f().request('DELETE', '/repos/alice/moved', as('alice'))).status).toBe(204);
    expect(fs.existsSync(path.join(disk('bob', 'secret'), 'objects', 'info', 'alternates'))).toBe(false);
    expect((await git(disk('bob', 'secret'), 'fsck', '--connectivity-only')).exitCode).toBe(0);
    const after = await f().request('GET', '/repos/bob/secret', as('bob'));
    expect(after.body.fork).toBe(false);
    expect(after.body.parent).toBeUndefined();
    expect((await git(tmp, 'clone', '-q', `${auth('bob')}/bob/secret.git`, 'w3')).exitCode).toBe(0);
    expect(fs.existsSync(path.join(tmp, 'w3', 'README.md'))).toBe(true);
  });

  test('deleting a fork decrements the parent fork count', async () => {
    expect((await f().request('DELETE', '/repos/acme/acme-base', as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/base', as('alice'))).body.forks_count).toBe(1);
  });
});
