import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';

function newKey(dir: string, name: string, comment: string): string {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
  return fs.readFileSync(`${file}.pub`, 'utf8').trim();
}

describeForge('deploy keys', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  let dir: string;
  let k1: string;
  let k2: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-keys-'));
    k1 = newKey(dir, 'k1', 'me@host');
    k2 = newKey(dir, 'k2', 'other');
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('bob');
    for (const name of ['one', 'two']) expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name } })).status).toBe(201);
    const r = (await f().app.services.repos.findByOwnerAndName('alice', 'one'))!;
    const bob = (await f().app.services.users.findByName('bob'))!;
    await f().app.prisma.collaboration.create({ data: { repoId: r.id, userId: bob.id, mode: 2 } });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('add (201, Gitea DeployKey JSON), list with the repository for the owner, get, the same key on two repositories', async () => {
    const res = await f().request('POST', '/repos/alice/one/keys', { ...as('alice'), body: { title: 'ci', key: k1, read_only: true } });
    expect(res.status).toBe(201);
    const fp = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', path.join(dir, 'k1.pub')], { encoding: 'utf8' }).split(' ')[1];
    expect(res.body).toEqual({
      id: expect.any(Number),
      key_id: expect.any(Number),
      key: k1,
      url: `${f().api}/repos/alice/one/keys/${res.body.id}`,
      title: 'ci',
      fingerprint: fp,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      read_only: true,
    });
    const list = await f().request('GET', '/repos/alice/one/keys', as('alice'));
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total-count')).toBe('1');
    expect(list.body[0]).toMatchObject({ id: res.body.id, read_only: true, repository: { full_name: 'alice/one', permissions: { admin: false, push: false, pull: true } } });
    expect((await f().request('GET', `/repos/alice/one/keys?fingerprint=${encodeURIComponent(fp)}`, as('alice'))).body).toHaveLength(1);
    expect((await f().request('GET', '/repos/alice/one/keys?fingerprint=SHA256:nope', as('alice'))).body).toEqual([]);
    const got = await f().request('GET', `/repos/alice/one/keys/${res.body.id}`, as('alice'));
    expect(got.body).toMatchObject({ title: 'ci', key: k1 });
    const two = await f().request('POST', '/repos/alice/two/keys', { ...as('alice'), body: { title: 'ci', key: k1 } });
    expect(two.status).toBe(201);
    expect(two.body.key_id).toBe(res.body.key_id);
    expect(two.body.read_only).toBe(false);
    // Another repository's key id is 404 here.
    expect((await f().request('GET', `/repos/alice/one/keys/${two.body.id}`, as('alice'))).status).toBe(404);
  });

  test("Gitea's 422s: same key twice, same title, a user's key, bad content; the key cannot become a user key", async () => {
    let res = await f().request('POST', '/repos/alice/one/keys', { ...as('alice'), body: { title: 'again', key: k1 } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('This key has already been added to this repository');
    res = await f().request('POST', '/repos/alice/one/keys', { ...as('alice'), body: { title: 'ci', key: k2 } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('A key with the same name already exists');
    res = await f().request('POST', '/user/keys', { ...as('bob'), body: { title: 'mine', key: k1 } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Key content has been used as non-deploy key');
    expect((await f().request('POST', '/user/keys', { ...as('bob'), body: { title: 'mine', key: k2 } })).status).toBe(201);
    res = await f().request('POST', '/repos/alice/one/keys', { ...as('alice'), body: { title: 'k2', key: k2 } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Key content has been used as non-deploy key');
    res = await f().request('POST', '/repos/alice/one/keys', { ...as('alice'), body: { title: 'bad', key: 'ssh-rsa AAAA' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/^Invalid key content/);
    // Deploy keys are not user keys.
    expect((await f().request('GET', '/user/keys', as('alice'))).body).toEqual([]);
  });

  test('permissions: a writer gets reqAdmin 403, anonymous 401; delete is 204, also for a missing id; the key row goes with its last grant', async () => {
    expect((await f().request('GET', '/repos/alice/one/keys', as('bob'))).status).toBe(403);
    expect((await f().request('GET', '/repos/alice/one/keys')).status).toBe(401);
    const [one] = (await f().request('GET', '/repos/alice/one/keys', as('alice'))).body;
    const [two] = (await f().request('GET', '/repos/alice/two/keys', as('alice'))).body;
    expect((await f().request('DELETE', `/repos/alice/one/keys/${one.id}`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', `/repos/alice/one/keys/${one.id}`, as('alice'))).status).toBe(404);
    expect((await f().request('DELETE', '/repos/alice/one/keys/99999', as('alice'))).status).toBe(204);
    expect(await f().app.prisma.publicKey.count({ where: { id: one.key_id } })).toBe(1);
    expect((await f().request('DELETE', `/repos/alice/two/keys/${two.id}`, as('alice'))).status).toBe(204);
    expect(await f().app.prisma.publicKey.count({ where: { id: one.key_id } })).toBe(0);
    // Now the content is free to be a user key.
    expect((await f().request('POST', '/user/keys', { ...as('bob'), body: { title: 'mine2', key: k1 } })).status).toBe(201);
  });
});
