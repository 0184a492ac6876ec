import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';

const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOYu6vQyQZ1C4r9xg3XrCkP2ptKk6dN0ZyKoXnA5x0Yh test@example';

describeForge('users and admin', (f) => {
  const root = { basic: ['root', PASSWORD] as [string, string] };
  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('hidden', { visibility: 'private' });
  });

  test('GET /users/{username}: public fields for others, private fields for self and admins', async () => {
    const anon = await f().request('GET', '/users/alice');
    expect(anon.status).toBe(200);
    expect(anon.body).toMatchObject({ login: 'alice', username: 'alice', is_admin: false, visibility: 'public', last_login: '0001-01-01T00:00:00Z' });
    expect(anon.body.email).toBe('alice@noreply.127.0.0.1');
    expect(anon.body.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const self = await f().request('GET', '/users/alice', { basic: ['alice', PASSWORD] });
    expect(self.body).toMatchObject({ email: 'alice@example.com', active: true, login_name: 'alice' });
    const byAdmin = await f().request('GET', '/users/ALICE', root);
    expect(byAdmin.body.login).toBe('alice');
  });

  test('a private user is 404 to others', async () => {
    expect((await f().request('GET', '/users/hidden')).status).toBe(404);
    expect((await f().request('GET', '/users/hidden', { basic: ['alice', PASSWORD] })).status).toBe(404);
    expect((await f().request('GET', '/users/hidden', root)).status).toBe(200);
    expect((await f().request('GET', '/users/nobody-here')).status).toBe(404);
  });

  test('GET /users/search returns {ok, data} with paging headers and hides private users', async () => {
    const res = await f().request('GET', '/users/search?q=al');
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.data.map((u: { login: string }) => u.login)).toEqual(['alice']);
    expect(res.headers.get('x-total-count')).toBe('1');
    const all = await f().request('GET', '/users/search');
    expect(all.body.data.map((u: { login: string }) => u.login)).not.toContain('hidden');
  });

  test('admin creates a user (201, must_change_password defaults on) and rejects duplicates with 422', async () => {
    let res = await f().request('POST', '/admin/users', { ...root, body: { username: 'frank', email: 'frank@example.com', password: 'longenough', full_name: 'Frank' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ login: 'frank', full_name: 'Frank', email: 'frank@example.com' });
    const blocked = await f().request('GET', '/user', { basic: ['frank', 'longenough'] });
    expect(blocked.status).toBe(403);
    res = await f().request('POST', '/admin/users', { ...root, body: { username: 'Frank', email: 'other@example.com', password: 'longenough' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('user already exists [name: Frank]');
    res = await f().request('POST', '/admin/users', { ...root, body: { username: 'frank2', email: 'FRANK@example.com', password: 'longenough' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/e-mail already in use/);
    res = await f().request('POST', '/admin/users', { ...root, body: { username: 'api', email: 'api@example.com', password: 'longenough' } });
    expect(res.status).toBe(422);
    res = await f().request('POST', '/admin/users', { ...root, body: { username: 'shorty', email: 's@example.com', password: 'short' } });
    expect(res.status).toBe(400);
    res = await f().request('POST', '/admin/users', { ...root, body: { username: 'nomail', password: 'longenough' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('[Email]: Required');
  });

  test('admin edits a user: fields take effect at once', async () => {
    let res = await f().request('PATCH', '/admin/users/frank', {
      ...root,
      body: { login_name: 'frank', must_change_password: false, full_name: 'Frank F', location: 'Here', website: 'https://f.example', admin: true, visibility: 'limited' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ full_name: 'Frank F', location: 'Here', website: 'https://f.example', is_admin: true, visibility: 'limited' });
    expect((await f().request('GET', '/user', { basic: ['frank', 'longenough'] })).status).toBe(200);
    res = await f().request('PATCH', '/admin/users/frank', { ...root, body: { login_name: 'frank', prohibit_login: true } });
    expect(res.body.prohibit_login).toBe(true);
    expect((await f().request('GET', '/user', { basic: ['frank', 'longenough'] })).status).toBe(403);
    res = await f().request('PATCH', '/admin/users/frank', { ...root, body: { login_name: 'frank', prohibit_login: false, password: 'newpassword' } });
    expect((await f().request('GET', '/user', { basic: ['frank', 'newpassword'] })).status).toBe(200);
    res = await f().request('PATCH', '/admin/users/frank', { ...root, body: { full_name: 'x' } });
    expect(res.status).toBe(422);
    expect((await f().request('PATCH', '/admin/users/nobody', { ...root, body: { login_name: 'x' } })).status).toBe(404);
  });

  test('admin lists users (alphabetical) and filters by login_name', async () => {
    const res = await f().request('GET', '/admin/users', root);
    const logins = res.body.map((u: { login: string }) => u.login);
    expect(logins).toEqual([...logins].sort());
    expect(logins).toContain('hidden');
    const one = await f().request('GET', '/admin/users?login_name=alice', root);
    expect(one.body.map((u: { login: string }) => u.login)).toEqual(['alice']);
  });

  test('admin renames a user; the old name answers 307 to the new one; repositories move on disk', async () => {
    await f().user('oldname');
    const created = await f().request('POST', '/admin/users/oldname/repos', { ...root, body: { name: 'stuff', auto_init: true } });
    expect(created.status).toBe(201);
    const res = await f().request('POST', '/admin/users/oldname/rename', { ...root, body: { new_username: 'newname' } });
    expect(res.status).toBe(204);
    expect((await f().request('GET', '/users/newname')).body.login).toBe('newname');
    const redirect = await f().request('GET', '/users/oldname');
    expect(redirect.status).toBe(307);
    expect(redirect.headers.get('location')).toBe('/api/v1/users/newname');
    const old = await f().request('GET', '/repos/oldname/stuff');
    expect(old.status).toBe(307);
    expect(old.headers.get('location')).toBe('/api/v1/repos/newname/stuff');
    const repo = await f().request('GET', '/repos/newname/stuff');
    expect(repo.status).toBe(200);
    expect(repo.body.full_name).toBe('newname/stuff');
    expect(fs.existsSync(path.join(f().dataDir, 'repositories', 'newname', 'stuff.git'))).toBe(true);
    const taken = await f().request('POST', '/admin/users/newname/rename', { ...root, body: { new_username: 'alice' } });
    expect(taken.status).toBe(422);
  });

  test('admin deletes a user: 204, 422 while the user owns repositories', async () => {
    await f().user('temp');
    expect((await f().request('DELETE', '/admin/users/temp', root)).status).toBe(204);
    expect((await f().request('GET', '/users/temp')).status).toBe(404);
    const owner = await f().request('DELETE', '/admin/users/newname', root);
    expect(owner.status).toBe(422);
  });

  test('admin adds a public key for a user', async () => {
    const res = await f().request('POST', '/admin/users/alice/keys', { ...root, body: { key: ED25519, title: 'laptop', read_only: true } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'laptop', key_type: 'user', key: ED25519.split(' ').slice(0, 2).join(' ') });
    // As Gitea 1.27: `read_only` is ignored for a user's key and not part of its JSON.
    expect(res.body).not.toHaveProperty('read_only');
    expect(res.body.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(res.body.user.login).toBe('alice');
    expect((await f().request('POST', '/admin/users/alice/keys', { ...root, body: { key: ED25519, title: 'again' } })).status).toBe(422);
    expect((await f().request('POST', '/admin/users/alice/keys', { ...root, body: { key: 'ssh-ed25519 garbage', title: 'bad' } })).status).toBe(422);
  });

  test('admin creates an organization and a repository for a user, lists orgs', async () => {
    let res = await f().request('POST', '/admin/users/alice/orgs', { ...root, body: { username: 'alice-org', visibility: 'private', full_name: 'Alice Org' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'alice-org', username: 'alice-org', full_name: 'Alice Org', visibility: 'private' });
    res = await f().request('GET', '/admin/orgs', root);
    expect(res.body.map((o: { name: string }) => o.name)).toContain('alice-org');
    expect(res.headers.get('x-total-count')).toBe('1');
    res = await f().request('GET', '/admin/users/alice/orgs', root);
    expect(res.body.map((o: { name: string }) => o.name)).toEqual(['alice-org']);
    res = await f().request('POST', '/admin/users/alice/repos', { ...root, body: { name: 'given', private: true } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ full_name: 'alice/given', private: true, empty: true });
    expect((await f().request('POST', '/admin/users/alice/repos', { ...root, body: { name: 'given' } })).status).toBe(409);
    expect((await f().request('POST', '/admin/users/nobody/repos', { ...root, body: { name: 'x' } })).status).toBe(404);
  });

  test('admin lists and searches emails', async () => {
    let res = await f().request('GET', '/admin/emails', root);
    expect(res.status).toBe(200);
    expect(res.body).toContainEqual({ email: 'alice@example.com', verified: true, primary: true, user_id: expect.any(Number), username: 'alice' });
    res = await f().request('GET', '/admin/emails/search?q=ALICE', root);
    expect(res.body.map((e: { email: string }) => e.email)).toEqual(['alice@example.com']);
    expect(res.headers.get('x-total-count')).toBe('1');
  });

  test('admin cron list answers the scheduled jobs (none are scheduled yet) with X-Total-Count', async () => {
    const res = await f().request('GET', '/admin/cron', root);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.headers.get('x-total-count')).toBe(String(res.body.length));
  });

  test('admin lists unadopted repositories: folders on disk without a row', async () => {
    const dir = path.join(f().dataDir, 'repositories', 'alice', 'orphan.git');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
    let res = await f().request('GET', '/admin/unadopted', root);
    expect(res.status).toBe(200);
    expect(res.body).toContain('alice/orphan');
    expect(res.body).not.toContain('alice/given');
    res = await f().request('GET', '/admin/unadopted?query=zzz', root);
    expect(res.body).toEqual([]);
  });

  test('admin adopts an unadopted repository (private, HEAD as default branch) and deletes another', async () => {
    const repos = path.join(f().dataDir, 'repositories', 'alice');
    const work = fs.mkdtempSync(path.join(f().dataDir, 'work-'));
    execFileSync('git', ['init', '-q', '-b', 'trunk', work]);
    execFileSync('git', ['-C', work, '-c', 'user.name=a', '-c', 'user.email=a@example.com', 'commit', '-q', '--allow-empty', '-m', 'init']);
    for (const name of ['adoptme', 'dropme']) execFileSync('git', ['clone', '-q', '--bare', work, path.join(repos, `${name}.git`)]);
    const alice = { basic: ['alice', PASSWORD] as [string, string] };
    expect((await f().request('POST', '/admin/unadopted/alice/adoptme', alice)).status).toBe(403);
    expect((await f().request('POST', '/admin/unadopted/alice/absent', root)).status).toBe(404);
    expect((await f().request('POST', '/admin/unadopted/nobody/adoptme', root)).status).toBe(404);
    expect((await f().request('POST', '/admin/unadopted/alice/adoptme', root)).status).toBe(204);
    const repo = await f().request('GET', '/repos/alice/adoptme', alice);
    expect(repo.body).toMatchObject({ private: true, default_branch: 'trunk', empty: false });
    // Adopted: no longer unadopted, so neither adopt nor delete reaches it.
    expect((await f().request('POST', '/admin/unadopted/alice/adoptme', root)).status).toBe(404);
    expect((await f().request('DELETE', '/admin/unadopted/alice/adoptme', root)).status).toBe(404);
    expect((await f().request('DELETE', '/admin/unadopted/alice/dropme', root)).status).toBe(204);
    expect(fs.existsSync(path.join(repos, 'dropme.git'))).toBe(false);
    expect(fs.existsSync(path.join(repos, 'adoptme.git'))).toBe(true);
    expect((await f().request('GET', '/admin/unadopted', root)).body).not.toContain('alice/dropme');
  });

  test('admin routes refuse non-admins (403) and anonymous callers (401)', async () => {
    expect((await f().request('GET', '/admin/users', { basic: ['alice', PASSWORD] })).status).toBe(403);
    expect((await f().request('GET', '/admin/users')).status).toBe(401);
  });
});
