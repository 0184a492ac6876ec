import { describeForge, PASSWORD } from './support/forge';

describeForge('organizations', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('owner');
    await f().user('member');
    await f().user('outsider');
  });

  test('create (201) and get; duplicates and bad names are 422', async () => {
    let res = await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'acme', full_name: 'Acme Inc', description: 'd', website: 'https://acme.example', location: 'X' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'acme', username: 'acme', full_name: 'Acme Inc', visibility: 'public', repo_admin_change_team_access: false, description: 'd' });
    expect(typeof res.body.id).toBe('number');
    res = await f().request('GET', '/orgs/ACME');
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('acme');
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'acme' } })).status).toBe(422);
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'owner' } })).status).toBe(422);
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: '-bad-' } })).status).toBe(422);
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'v1', visibility: 'secret' } })).status).toBe(422);
    expect((await f().request('POST', '/orgs', { body: { username: 'anon-org' } })).status).toBe(401);
  });

  test('private orgs are 404 to outsiders and anonymous, visible to members and admins', async () => {
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'secretive', visibility: 'private' } })).status).toBe(201);
    expect((await f().request('GET', '/orgs/secretive')).status).toBe(404);
    expect((await f().request('GET', '/orgs/secretive', as('outsider'))).status).toBe(404);
    expect((await f().request('GET', '/orgs/secretive', as('owner'))).status).toBe(200);
    expect((await f().request('GET', '/orgs/secretive', as('root'))).status).toBe(200);
    const list = await f().request('GET', '/orgs');
    expect(list.body.map((o: { name: string }) => o.name)).toEqual(['acme']);
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'limited-org', visibility: 'limited' } })).status).toBe(201);
    expect((await f().request('GET', '/orgs/limited-org')).status).toBe(404);
    expect((await f().request('GET', '/orgs/limited-org', as('outsider'))).status).toBe(200);
  });

  test("my orgs and a user's orgs (public memberships for others)", async () => {
    const mine = await f().request('GET', '/user/orgs', as('owner'));
    expect(mine.body.map((o: { name: string }) => o.name)).toEqual(['acme', 'limited-org', 'secretive']);
    expect(mine.headers.get('x-total-count')).toBe('3');
    // Memberships start private (Gitea): others see none until made public.
    const theirs = await f().request('GET', '/users/owner/orgs', as('outsider'));
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual([]);
    const org = await f().app.services.orgs.findByName('acme');
    await f().app.prisma.orgUser.updateMany({ where: { orgId: org!.id }, data: { isPublic: true } });
    const now = await f().request('GET', '/users/owner/orgs', as('outsider'));
    expect(now.body.map((o: { name: string }) => o.name)).toEqual(['acme']);
    expect((await f().request('GET', '/users/owner/orgs')).status).toBe(401);
  });

  test('members and public members', async () => {
    const org = (await f().app.services.orgs.findByName('acme'))!;
    const member = (await f().app.services.users.findByName('member'))!;
    const team = await f().app.prisma.team.create({ data: { orgId: org.id, name: 'Devs', lowerName: 'devs', authorize: 2 } });
    await f().app.prisma.teamUser.create({ data: { orgId: org.id, teamId: team.id, userId: member.id } });
    await f().app.prisma.orgUser.create({ data: { orgId: org.id, userId: member.id, isPublic: false } });
    const byMember = await f().request('GET', '/orgs/acme/members', as('member'));
    expect(byMember.body.map((u: { login: string }) => u.login)).toEqual(['member', 'owner']);
    expect(byMember.headers.get('x-total-count')).toBe('2');
    const byOutsider = await f().request('GET', '/orgs/acme/members', as('outsider'));
    expect(byOutsider.body.map((u: { login: string }) => u.login)).toEqual(['owner']);
    const pub = await f().request('GET', '/orgs/acme/public_members');
    expect(pub.body.map((u: { login: string }) => u.login)).toEqual(['owner']);
    expect((await f().request('GET', '/orgs/acme/members')).status).toBe(401);
  });

  test("a user's permissions in an org", async () => {
    const owner = await f().request('GET', '/users/owner/orgs/acme/permissions', as('owner'));
    expect(owner.body).toEqual({ is_owner: true, is_admin: true, can_write: true, can_read: true, can_create_repository: true });
    const member = await f().request('GET', '/users/member/orgs/acme/permissions', as('owner'));
    expect(member.body).toEqual({ is_owner: false, is_admin: false, can_write: true, can_read: true, can_create_repository: false });
    const outsider = await f().request('GET', '/users/outsider/orgs/acme/permissions', as('outsider'));
    expect(outsider.body).toEqual({ is_owner: false, is_admin: false, can_write: false, can_read: false, can_create_repository: false });
    expect((await f().request('GET', '/users/outsider/orgs/secretive/permissions', as('outsider'))).status).toBe(404);
  });

  test('org repositories: owners create (201), others 403, duplicates 409; list shows what the caller may read', async () => {
    let res = await f().request('POST', '/orgs/acme/repos', { ...as('owner'), body: { name: 'site', description: 'web' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ full_name: 'acme/site', permissions: { admin: true, push: true, pull: true } });
    expect(res.body.owner.login).toBe('acme');
    res = await f().request('POST', '/orgs/acme/repos', { ...as('owner'), body: { name: 'vault', private: true } });
    expect(res.status).toBe(201);
    res = await f().request('POST', '/orgs/acme/repos', { ...as('member'), body: { name: 'nope' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Given user is not allowed to create repository in organization.');
    expect((await f().request('POST', '/orgs/acme/repos', { ...as('owner'), body: { name: 'SITE' } })).status).toBe(409);
    res = await f().request('POST', '/org/acme/repos', { ...as('owner'), body: { name: 'legacy-path' } });
    expect(res.status).toBe(201);

    const anon = await f().request('GET', '/orgs/acme/repos');
    expect(anon.body.map((r: { name: string }) => r.name)).toEqual(['legacy-path', 'site']);
    expect(anon.headers.get('x-total-count')).toBe('2');
    const owner = await f().request('GET', '/orgs/acme/repos', as('owner'));
    expect(owner.body.map((r: { name: string }) => r.name)).toEqual(['legacy-path', 'site', 'vault']);
    // A team with repository access but no includes_all: only linked repositories.
    const member = await f().request('GET', '/orgs/acme/repos', as('member'));
    expect(member.body.map((r: { name: string }) => r.name)).toEqual(['legacy-path', 'site']);
    const site = await f().request('GET', '/repos/acme/site', as('member'));
    expect(site.body.permissions).toEqual({ admin: false, push: false, pull: true });
  });
});
