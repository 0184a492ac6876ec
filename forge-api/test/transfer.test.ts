import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('repository transfer', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const auth = (name: string) => `http://${name}:${PASSWORD}@${new URL(f().url).host}`;
  const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);
  let tmp: string;
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'transfer-'));
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('bob');
    for (const name of ['one', 'two', 'three']) expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name, auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/orgs', { ...as('alice'), body: { username: 'acme' } })).status).toBe(201);
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test("Gitea's refusals: not the owner 403, unknown owner 404, teams for a user 422, anonymous 401", async () => {
    const r = (await f().app.services.repos.findByOwnerAndName('alice', 'one'))!;
    const bob = (await f().app.services.users.findByName('bob'))!;
    await f().app.prisma.collaboration.create({ data: { repoId: r.id, userId: bob.id, mode: 3 } });
    let res = await f().request('POST', '/repos/alice/one/transfer', { ...as('bob'), body: { new_owner: 'bob' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should be the owner of the repo');
    res = await f().request('POST', '/repos/alice/one/transfer', { ...as('alice'), body: { new_owner: 'nope' } });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('The new owner does not exist or cannot be found');
    res = await f().request('POST', '/repos/alice/one/transfer', { ...as('alice'), body: { new_owner: 'bob', team_ids: [1] } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Teams can only be added to organization-owned repositories');
    expect((await f().request('POST', '/repos/alice/one/transfer', { body: { new_owner: 'bob' } })).status).toBe(401);
  });

  test('to another user: pending (201, repo_transfer), 409 while pending, only the recipient accepts (403), accept moves the folder', async () => {
    let res = await f().request('POST', '/repos/alice/one/transfer', { ...as('alice'), body: { new_owner: 'bob' } });
    expect(res.status).toBe(201);
    expect(res.body.full_name).toBe('alice/one');
    expect(res.body.repo_transfer).toMatchObject({ doer: { login: 'alice' }, recipient: { login: 'bob' }, teams: [] });
    expect((await f().request('GET', '/repos/alice/one', as('alice'))).body.repo_transfer.recipient.login).toBe('bob');
    res = await f().request('POST', '/repos/alice/one/transfer', { ...as('alice'), body: { new_owner: 'root' } });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('repository is already being transferred [uname: , name: ]');
    res = await f().request('POST', '/repos/alice/one/transfer/accept', as('alice'));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('permission denied');
    res = await f().request('POST', '/repos/alice/one/transfer/accept', as('bob'));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ full_name: 'bob/one', owner: { login: 'bob' }, permissions: { admin: true } });
    expect(res.body.repo_transfer).toBeUndefined();
    expect(fs.existsSync(disk('bob', 'one'))).toBe(true);
    expect(fs.existsSync(disk('alice', 'one'))).toBe(false);
    expect((await f().request('GET', '/repos/alice/one', as('alice'))).status).toBe(404);
    expect((await git(tmp, 'clone', '-q', `${auth('bob')}/bob/one.git`, 'one')).exitCode).toBe(0);
    expect(fs.existsSync(path.join(tmp, 'one', 'README.md'))).toBe(true);
    // bob was a collaborator and is now the owner: the collaboration is gone.
    const r = (await f().app.services.repos.findByOwnerAndName('bob', 'one'))!;
    expect(await f().app.prisma.collaboration.count({ where: { repoId: r.id } })).toBe(0);
    res = await f().request('POST', '/repos/bob/one/transfer/accept', as('bob'));
    expect(res.status).toBe(404);
    expect(res.body.message).toBe(`repository doesn't have a pending transfer [repo_id: ${r.id}]`);
  });

  test('reject leaves the repository where it was; the recipient could read it meanwhile', async () => {
    let res = await f().request('POST', '/repos/alice/two/transfer', { ...as('alice'), body: { new_owner: 'bob' } });
    expect(res.status).toBe(201);
    expect((await f().request('GET', '/repos/alice/two', as('bob'))).status).toBe(200);
    res = await f().request('POST', '/repos/alice/two/transfer/reject', as('bob'));
    expect(res.status).toBe(200);
    expect(res.body.full_name).toBe('alice/two');
    expect(res.body.repo_transfer).toBeUndefined();
    expect(fs.existsSync(disk('alice', 'two'))).toBe(true);
  });

  test('direct (202): into an organization the doer may create in, with a team; by a site admin; a taken name 422', async () => {
    const team = await f().request('POST', '/orgs/acme/teams', { ...as('alice'), body: { name: 'devs', permission: 'write', units: ['repo.code'] } });
    expect(team.status).toBe(201);
    let res = await f().request('POST', '/repos/alice/three/transfer', { ...as('alice'), body: { new_owner: 'acme', team_ids: [team.body.id] } });
    expect(res.status).toBe(202);
    expect(res.body.full_name).toBe('acme/three');
    const teamRepos = await f().request('GET', `/teams/${team.body.id}/repos`, as('alice'));
    expect(teamRepos.body.map((r: { full_name: string }) => r.full_name)).toEqual(['acme/three']);
    expect((await git(tmp, 'clone', '-q', `${auth('alice')}/acme/three.git`, 'three')).exitCode).toBe(0);
    expect((await f().request('POST', '/user/repos', { ...as('bob'), body: { name: 'three' } })).status).toBe(201);
    res = await f().request('POST', '/repos/acme/three/transfer', { ...as('root'), body: { new_owner: 'bob' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('repository already exists [uname: bob, name: three]');
    res = await f().request('POST', '/repos/bob/three/transfer', { ...as('root'), body: { new_owner: 'alice' } });
    expect(res.status).toBe(202);
    expect(res.body.full_name).toBe('alice/three');
  });
});
