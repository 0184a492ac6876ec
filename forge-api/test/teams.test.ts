/**
 * Teams, team access and org permissions over HTTP, on SQLite and PostgreSQL: the permission
 * matrix (site admin, org owner, team members by permission, org member outside the team,
 * outsider, anonymous) and org visibility (public, limited, private).
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('teams and org permissions', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  let readTeam: number;
  let writeTeam: number;
  let ownersTeam: number;

  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['owner', 'writer', 'reader', 'member', 'outsider']) await f().user(u);
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'acme', visibility: 'public' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'limco', visibility: 'limited' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'privco', visibility: 'private' } })).status).toBe(201);
    for (const name of ['secret', 'other']) {
      expect((await f().request('POST', '/orgs/acme/repos', { ...as('owner'), body: { name, private: true } })).status).toBe(201);
    }
  });

  test('every org has an Owners team with owner permission and all units', async () => {
    const res = await f().request('GET', '/orgs/acme/teams', as('owner'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('1');
    const owners = res.body[0];
    ownersTeam = owners.id;
    expect(owners).toMatchObject({ name: 'Owners', permission: 'owner', includes_all_repositories: true, can_create_org_repo: true, organization: null });
    expect(owners.units).toEqual(expect.arrayContaining(['repo.code', 'repo.issues', 'repo.pulls']));
    expect(owners.units_map['repo.code']).toBe('owner');
  });

  test('create teams: permission with units, units_map, admin; validation and duplicates', async () => {
    let res = await f().request('POST', '/orgs/acme/teams', {
      ...as('owner'),
      body: { name: 'readers', description: 'Read the code', permission: 'read', units: ['repo.code', 'repo.issues'] },
    });
    expect(res.status).toBe(201);
    // Gitea 1.27 keeps a unit team's own permission at none: the units carry the modes.
    expect(res.body).toMatchObject({ name: 'readers', permission: 'none', units: ['repo.code', 'repo.issues'], units_map: { 'repo.code': 'read', 'repo.issues': 'read' } });
    expect(res.body.organization.name).toBe('acme');
    readTeam = res.body.id;

    // units_map wins over the permission's mode for each unit.
    res = await f().request('POST', '/orgs/acme/teams', {
      ...as('owner'),
      body: { name: 'writers', permission: 'read', units_map: { 'repo.code': 'write', 'repo.issues': 'write', 'repo.ext_wiki': 'read' }, can_create_org_repo: true },
    });
    expect(res.status).toBe(201);
    expect(res.body.permission).toBe('none');
    expect(res.body.units_map).toEqual({ 'repo.code': 'write', 'repo.ext_wiki': 'read', 'repo.issues': 'write' });
    writeTeam = res.body.id;

    res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'admins', permission: 'admin', includes_all_repositories: true } });
    expect(res.status).toBe(201);
    // An admin team shows its mode on every unit, the external ones too.
    expect(res.body.units_map['repo.code']).toBe('admin');
    expect(res.body.units_map['repo.ext_issues']).toBe('admin');

    res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'Readers', permission: 'read', units: ['repo.code'] } });
    expect(res.status).toBe(422);
    res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { permission: 'read', units: ['repo.code'] } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('[Name]: Required');
    res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'bad name', units: ['repo.code'] } });
    expect(res.status).toBe(422);
    // Gitea 1.27 takes any permission text; only read, write and admin mean something.
    res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'x', permission: 'owner', units: ['repo.code'] } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ permission: 'none', units: ['repo.code'], units_map: { 'repo.code': 'none' } });
  });

  test('members: add, get, list; members join the org', async () => {
    expect((await f().request('PUT', `/teams/${readTeam}/members/reader`, as('owner'))).status).toBe(204);
    expect((await f().request('PUT', `/teams/${writeTeam}/members/writer`, as('owner'))).status).toBe(204);
    expect((await f().request('PUT', `/teams/${writeTeam}/members/member`, as('owner'))).status).toBe(204);
    expect((await f().request('PUT', `/teams/${writeTeam}/members/nobody`, as('owner'))).status).toBe(404);
    let res = await f().request('GET', `/teams/${writeTeam}/members`, as('writer'));
    expect(res.status).toBe(200);
    expect(res.body.map((u: { login: string }) => u.login)).toEqual(['member', 'writer']);
    expect(res.headers.get('x-total-count')).toBe('2');
    res = await f().request('GET', `/teams/${writeTeam}/members/writer`, as('writer'));
    expect(res.status).toBe(200);
    expect(res.body.login).toBe('writer');
    expect((await f().request('GET', `/teams/${writeTeam}/members/reader`, as('owner'))).status).toBe(404);
    // Team members are org members (private membership).
    res = await f().request('GET', '/orgs/acme/members', as('owner'));
    expect(res.body.map((u: { login: string }) => u.login)).toEqual(['member', 'owner', 'reader', 'writer']);
    // Leaving the last team leaves the org.
    expect((await f().request('DELETE', `/teams/${writeTeam}/members/member`, as('owner'))).status).toBe(204);
    res = await f().request('GET', '/orgs/acme/members', as('owner'));
    expect(res.body.map((u: { login: string }) => u.login)).not.toContain('member');
    expect((await f().request('PUT', `/teams/${readTeam}/members/member`, as('owner'))).status).toBe(204);
  });

  test('the Owners team keeps its last member', async () => {
    const res = await f().request('DELETE', `/teams/${ownersTeam}/members/owner`, as('owner'));
    expect(res.status).toBe(422);
    expect((await f().request('DELETE', `/teams/${ownersTeam}`, as('owner'))).status).toBe(422);
  });

  test('team access matrix on /teams/{id}', async () => {
    // member of the team, org owner, site admin: 200
    for (const u of ['reader', 'owner', 'root']) expect((await f().request('GET', `/teams/${readTeam}`, as(u))).status).toBe(200);
    // org member outside the team: 403; outsider: 404; anonymous: 401
    expect((await f().request('GET', `/teams/${readTeam}`, as('writer'))).status).toBe(403);
    expect((await f().request('GET', `/teams/${readTeam}`, as('outsider'))).status).toBe(404);
    expect((await f().request('GET', `/teams/${readTeam}`)).status).toBe(401);
    expect((await f().request('GET', '/teams/99999', as('root'))).status).toBe(404);
    // Only org owners edit, delete, change members: Gitea 1.27 answers others 403.
    let res = await f().request('PATCH', `/teams/${readTeam}`, { ...as('reader'), body: { name: 'readers', description: 'x' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Must be an organization owner');
    expect((await f().request('PUT', `/teams/${readTeam}/members/outsider`, as('reader'))).status).toBe(403);
    // Listing/searching teams needs org membership: 403 for outsiders of a visible org.
    expect((await f().request('GET', '/orgs/acme/teams', as('outsider'))).status).toBe(403);
    expect((await f().request('GET', '/orgs/acme/teams')).status).toBe(401);
    expect((await f().request('POST', '/orgs/acme/teams', { ...as('writer'), body: { name: 'mine', permission: 'read', units: ['repo.code'] } })).status).toBe(403);
  });

  test('search teams: {ok, data}, q on name and description, members see only their teams', async () => {
    let res = await f().request('GET', '/orgs/acme/teams/search?q=code', as('root'));
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.data.map((t: { name: string }) => t.name)).toEqual(['readers']);
    res = await f().request('GET', '/orgs/acme/teams/search?q=code&include_desc=false', as('root'));
    expect(res.body.data).toEqual([]);
    // A member sees the teams they are in and the limited ones (Owners is limited).
    res = await f().request('GET', '/orgs/acme/teams/search?q=ers', as('writer'));
    expect(res.body.data.map((t: { name: string }) => t.name)).toEqual(['Owners', 'writers']);
    expect(res.headers.get('x-total-count')).toBe('2');
  });

  test('team visibility (Gitea 1.27): private by default, limited to org members, public to signed-in users', async () => {
    let res = await f().request('GET', `/teams/${ownersTeam}`, as('owner'));
    expect(res.body.visibility).toBe('limited');
    expect((await f().request('GET', `/teams/${readTeam}`, as('owner'))).body.visibility).toBe('private');
    // A private team: listed and readable by its members and the owners only.
    let names = (await f().request('GET', '/orgs/acme/teams', as('writer'))).body.map((t: { name: string }) => t.name);
    expect(names).not.toContain('readers');
    expect(names).toContain('Owners');
    res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'openteam', permission: 'read', units: ['repo.code'], visibility: 'public' } });
    expect(res.status).toBe(201);
    expect(res.body.visibility).toBe('public');
    const open = res.body.id;
    res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'limteam', permission: 'read', units: ['repo.code'], visibility: 'limited' } });
    const limited = res.body.id;
    expect((await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'badvis', permission: 'read', units: ['repo.code'], visibility: 'secret' } })).status).toBe(422);
    // Public: any signed-in user who sees the organization reads it; limited: org members only.
    expect((await f().request('GET', `/teams/${open}`, as('outsider'))).status).toBe(200);
    expect((await f().request('GET', `/teams/${limited}`, as('writer'))).status).toBe(200);
    expect((await f().request('GET', `/teams/${limited}`, as('outsider'))).status).toBe(404);
    expect((await f().request('GET', `/teams/${readTeam}`, as('writer'))).status).toBe(403);
    names = (await f().request('GET', '/orgs/acme/teams', as('writer'))).body.map((t: { name: string }) => t.name);
    expect(names).toEqual(expect.arrayContaining(['openteam', 'limteam', 'writers', 'Owners']));
    // Editing keeps the visibility unless given; the Owners team's stays limited.
    res = await f().request('PATCH', `/teams/${open}`, { ...as('owner'), body: { name: 'openteam', visibility: 'private' } });
    expect(res.body.visibility).toBe('private');
    expect((await f().request('GET', `/teams/${open}`, as('outsider'))).status).toBe(404);
    res = await f().request('PATCH', `/teams/${ownersTeam}`, { ...as('owner'), body: { name: 'Owners', visibility: 'private' } });
    expect(res.body.visibility).toBe('limited');
    for (const id of [open, limited]) expect((await f().request('DELETE', `/teams/${id}`, as('owner'))).status).toBe(204);
  });

  test('repositories through teams: read/write by permission, enforced on the API', async () => {
    // Before the repository is added, team members cannot see it.
    expect((await f().request('GET', '/repos/acme/secret', as('reader'))).status).toBe(404);
    expect((await f().request('PUT', `/teams/${readTeam}/repos/acme/secret`, as('reader'))).status).toBe(403);
    expect((await f().request('PUT', `/teams/${readTeam}/repos/acme/secret`, as('owner'))).status).toBe(204);
    expect((await f().request('PUT', `/teams/${writeTeam}/repos/acme/secret`, as('owner'))).status).toBe(204);
    let res = await f().request('GET', '/repos/acme/secret', as('reader'));
    expect(res.status).toBe(200);
    expect(res.body.permissions).toEqual({ admin: false, push: false, pull: true });
    res = await f().request('GET', '/repos/acme/secret', as('writer'));
    expect(res.body.permissions).toEqual({ admin: false, push: true, pull: true });
    expect((await f().request('GET', '/repos/acme/secret', as('outsider'))).status).toBe(404);
    expect((await f().request('GET', '/repos/acme/secret')).status).toBe(404);
    expect((await f().request('GET', '/repos/acme/other', as('reader'))).status).toBe(404);
    // Team repository listing and lookup.
    res = await f().request('GET', `/teams/${readTeam}/repos`, as('reader'));
    expect(res.body.map((r: { full_name: string }) => r.full_name)).toEqual(['acme/secret']);
    expect((await f().request('GET', `/teams/${readTeam}/repos/acme/secret`, as('reader'))).status).toBe(200);
    expect((await f().request('GET', `/teams/${readTeam}/repos/acme/other`, as('reader'))).status).toBe(404);
    // An includes-all team covers every repository.
    res = await f().request('GET', '/orgs/acme/teams/search?q=admins', as('root'));
    const adminTeam = res.body.data[0].id;
    res = await f().request('GET', `/teams/${adminTeam}/repos`, as('owner'));
    expect(res.body.map((r: { name: string }) => r.name)).toEqual(['other', 'secret']);
  });

  test('a team of "owner" permission gives no access; a units_map gives each unit its own mode', async () => {
    await f().user('spook');
    let res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'ghosts', permission: 'owner', units: ['repo.code', 'repo.issues'] } });
    const ghosts = res.body.id;
    expect((await f().request('PUT', `/teams/${ghosts}/repos/acme/other`, as('owner'))).status).toBe(204);
    expect((await f().request('PUT', `/teams/${ghosts}/members/spook`, as('owner'))).status).toBe(204);
    expect((await f().request('GET', '/repos/acme/other', as('spook'))).status).toBe(404);
    // Code read, issues written: the code is readable, not pushable (Gitea's push/pull follow the code unit).
    res = await f().request('PATCH', `/teams/${ghosts}`, { ...as('owner'), body: { name: 'ghosts', permission: 'write', units_map: { 'repo.code': 'read', 'repo.issues': 'write' } } });
    expect(res.body).toMatchObject({ permission: 'none', units_map: { 'repo.code': 'read', 'repo.issues': 'write' } });
    res = await f().request('GET', '/repos/acme/other', as('spook'));
    expect(res.status).toBe(200);
    expect(res.body.permissions).toEqual({ admin: false, push: false, pull: true });
    // A member assigned through the team loses the assignment on leaving it (Gitea's removeTeamMember).
    await f().request('PATCH', `/teams/${ghosts}`, { ...as('owner'), body: { name: 'ghosts', units_map: { 'repo.code': 'write', 'repo.issues': 'write', 'repo.pulls': 'write' } } });
    res = await f().request('POST', '/repos/acme/other/issues', { ...as('owner'), body: { title: 'haunt', assignees: ['spook'] } });
    expect(res.status).toBe(201);
    expect((await f().request('DELETE', `/teams/${ghosts}/members/spook`, as('owner'))).status).toBe(204);
    expect((await f().request('GET', `/repos/acme/other/issues/${res.body.number}`, as('owner'))).body.assignees).toBeNull();
    expect((await f().request('DELETE', `/teams/${ghosts}`, as('owner'))).status).toBe(204);
  });

  test("a unit team's push and pull follow its code unit, in the repository and in every list", async () => {
    await f().user('unitman');
    const team = async (name: string, units_map: Record<string, string>, repo: string) => {
      const res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name, units_map } });
      expect((await f().request('PUT', `/teams/${res.body.id}/repos/acme/${repo}`, as('owner'))).status).toBe(204);
      expect((await f().request('PUT', `/teams/${res.body.id}/members/unitman`, as('owner'))).status).toBe(204);
      return res.body.id as number;
    };
    // Code written, issues read (the team's own mode is the lowest: read); no code unit at all.
    const coders = await team('coders', { 'repo.code': 'write', 'repo.issues': 'read' }, 'other');
    const noCode = await team('nocode', { 'repo.issues': 'write', 'repo.wiki': 'write' }, 'secret');
    const expected = { other: { admin: false, push: true, pull: true }, secret: { admin: false, push: false, pull: false } };
    const perms = (list: { name: string; permissions: unknown }[]) => Object.fromEntries(list.map((r) => [r.name, r.permissions]));
    for (const name of ['other', 'secret'] as const) {
      expect((await f().request('GET', `/repos/acme/${name}`, as('unitman'))).body.permissions).toEqual(expected[name]);
    }
    expect(perms((await f().request('GET', '/user/repos', as('unitman'))).body)).toEqual(expected);
    expect(perms((await f().request('GET', '/repos/search?q=e', as('unitman'))).body.data)).toEqual(expected);
    expect(perms((await f().request('GET', '/orgs/acme/repos', as('unitman'))).body)).toEqual(expected);
    expect(perms((await f().request('GET', `/teams/${coders}/repos`, as('unitman'))).body)).toEqual({ other: expected.other });
    // Without the code unit nobody pushes or pulls through the JSON, not even a site admin.
    expect((await f().request('PATCH', '/repos/acme/secret', { ...as('owner'), body: { has_code: false } })).status).toBe(200);
    expect((await f().request('GET', '/repos/acme/secret', as('root'))).body.permissions).toEqual({ admin: true, push: false, pull: false });
    expect((await f().request('PATCH', '/repos/acme/secret', { ...as('owner'), body: { has_code: true } })).status).toBe(200);
    for (const id of [coders, noCode]) expect((await f().request('DELETE', `/teams/${id}`, as('owner'))).status).toBe(204);
  });

  test('removing a repository from a team keeps the repository', async () => {
    expect((await f().request('DELETE', `/teams/${readTeam}/repos/acme/secret`, as('owner'))).status).toBe(204);
    expect((await f().request('GET', '/repos/acme/secret', as('reader'))).status).toBe(404);
    expect((await f().request('GET', '/repos/acme/secret', as('owner'))).status).toBe(200);
    expect((await f().request('PUT', `/teams/${readTeam}/repos/acme/secret`, as('owner'))).status).toBe(204);
  });

  test('edit team: permission change takes effect at once; Owners team keeps owner', async () => {
    let res = await f().request('PATCH', `/teams/${readTeam}`, { ...as('owner'), body: { name: 'readers', permission: 'write', units: ['repo.code'] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ permission: 'none', units: ['repo.code'], units_map: { 'repo.code': 'write' }, organization: null });
    res = await f().request('GET', '/repos/acme/secret', as('reader'));
    expect(res.body.permissions.push).toBe(true);
    res = await f().request('PATCH', `/teams/${readTeam}`, { ...as('owner'), body: { name: 'readers', permission: 'read', units: ['repo.code', 'repo.issues'] } });
    expect(res.body).toMatchObject({ permission: 'none', units_map: { 'repo.code': 'read', 'repo.issues': 'read' } });
    res = await f().request('PATCH', `/teams/${ownersTeam}`, { ...as('owner'), body: { name: 'Owners', permission: 'read', can_create_org_repo: false } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ permission: 'owner', can_create_org_repo: true });
  });

  test('org permissions computed from teams', async () => {
    const perms = async (u: string) => (await f().request('GET', `/users/${u}/orgs/acme/permissions`, as('root'))).body;
    expect(await perms('owner')).toEqual({ is_owner: true, is_admin: true, can_write: true, can_read: true, can_create_repository: true });
    expect(await perms('writer')).toEqual({ is_owner: false, is_admin: false, can_write: true, can_read: true, can_create_repository: true });
    expect(await perms('reader')).toEqual({ is_owner: false, is_admin: false, can_write: false, can_read: true, can_create_repository: false });
    expect(await perms('outsider')).toEqual({ is_owner: false, is_admin: false, can_write: false, can_read: false, can_create_repository: false });
  });

  test('can_create_org_repo: team members create repositories and become their admins', async () => {
    let res = await f().request('POST', '/orgs/acme/repos', { ...as('reader'), body: { name: 'nope' } });
    expect(res.status).toBe(403);
    res = await f().request('POST', '/orgs/acme/repos', { ...as('writer'), body: { name: 'made-by-writer', private: true } });
    expect(res.status).toBe(201);
    expect(res.body.permissions).toEqual({ admin: true, push: true, pull: true });
  });

  test('org visibility: limited orgs for signed-in users, private orgs for members only', async () => {
    expect((await f().request('GET', '/orgs/limco')).status).toBe(404);
    expect((await f().request('GET', '/orgs/limco', as('outsider'))).status).toBe(200);
    expect((await f().request('GET', '/orgs/privco')).status).toBe(404);
    expect((await f().request('GET', '/orgs/privco', as('outsider'))).status).toBe(404);
    expect((await f().request('GET', '/orgs/privco', as('owner'))).status).toBe(200);
    expect((await f().request('GET', '/orgs/privco', as('root'))).status).toBe(200);
    expect((await f().request('GET', '/orgs/privco/teams', as('outsider'))).status).toBe(404);
    expect((await f().request('GET', '/users/owner/orgs/privco/permissions', as('outsider'))).status).toBe(404);
    // Public repositories of a limited org: signed-in users only.
    expect((await f().request('POST', '/orgs/limco/repos', { ...as('owner'), body: { name: 'pub' } })).status).toBe(201);
    expect((await f().request('GET', '/repos/limco/pub')).status).toBe(404);
    expect((await f().request('GET', '/repos/limco/pub', as('outsider'))).status).toBe(200);
    const res = await f().request('GET', '/orgs', as('outsider'));
    expect(res.body.map((o: { username: string }) => o.username)).toEqual(['acme', 'limco']);
  });

  test('GET /user/teams lists the caller\'s teams with their organization', async () => {
    const res = await f().request('GET', '/user/teams', as('writer'));
    expect(res.status).toBe(200);
    expect(res.body.map((t: { name: string; organization: { name: string } }) => `${t.organization.name}/${t.name}`)).toEqual(['acme/writers']);
    expect((await f().request('GET', '/user/teams', as('owner'))).body.map((t: { name: string }) => t.name)).toEqual(['Owners', 'Owners', 'Owners']);
    expect((await f().request('GET', '/user/teams')).status).toBe(401);
  });

  test('token scopes: organization scope needed for team routes', async () => {
    const repoOnly = await f().token('reader', ['read:repository']);
    let res = await f().request('GET', `/teams/${readTeam}`, { token: repoOnly });
    expect(res.status).toBe(403);
    const orgRead = await f().token('reader', ['read:organization']);
    res = await f().request('GET', `/teams/${readTeam}`, { token: orgRead });
    expect(res.status).toBe(200);
    res = await f().request('PUT', `/teams/${readTeam}/members/outsider`, { token: await f().token('owner', ['read:organization']) });
    expect(res.status).toBe(403);
    // public-only tokens: limited and private orgs are refused.
    const publicOnly = await f().token('owner', ['public-only', 'read:organization']);
    expect((await f().request('GET', '/orgs/acme/teams', { token: publicOnly })).status).toBe(200);
    res = await f().request('GET', '/orgs/limco/teams', { token: publicOnly });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('token scope is limited to public orgs');
  });

  test('delete a team: members lose access, the repositories stay', async () => {
    const res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'temp', permission: 'read', units: ['repo.code'] } });
    const id = res.body.id;
    expect((await f().request('PUT', `/teams/${id}/members/outsider`, as('owner'))).status).toBe(204);
    expect((await f().request('PUT', `/teams/${id}/repos/acme/other`, as('owner'))).status).toBe(204);
    expect((await f().request('GET', '/repos/acme/other', as('outsider'))).status).toBe(200);
    expect((await f().request('DELETE', `/teams/${id}`, as('owner'))).status).toBe(204);
    expect((await f().request('GET', '/repos/acme/other', as('outsider'))).status).toBe(404);
    expect((await f().request('GET', '/repos/acme/other', as('owner'))).status).toBe(200);
    expect((await f().request('GET', `/teams/${id}`, as('owner'))).status).toBe(404);
  });

  describe('watches follow team membership (Gitea with AUTO_WATCH_NEW_REPOS)', () => {
    const watched = async (user: string) => {
      const res = await f().request('GET', '/user/subscriptions?limit=50', as(user));
      return res.body.map((r: { full_name: string }) => r.full_name).filter((n: string) => n.startsWith('wco/')).sort();
    };
    const watchers = async (repo: string) => Number((await f().request('GET', `/repos/wco/${repo}/subscribers`, as('owner'))).headers.get('x-total-count'));
    let all: number;
    let one: number;

    beforeAll(async () => {
      await f().user('watcher');
      expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'wco', visibility: 'public' } })).status).toBe(201);
      for (const [name, priv] of [['priv', true], ['pub', false]] as const) {
        expect((await f().request('POST', '/orgs/wco/repos', { ...as('owner'), body: { name, private: priv } })).status).toBe(201);
      }
      const units = ['repo.code', 'repo.issues'];
      all = (await f().request('POST', '/orgs/wco/teams', { ...as('owner'), body: { name: 'all', permission: 'read', units, includes_all_repositories: true } })).body.id;
      one = (await f().request('POST', '/orgs/wco/teams', { ...as('owner'), body: { name: 'one', permission: 'write', units } })).body.id;
    });

    test('joining a team watches its repositories; a repository created later is watched by the members of includes-all teams', async () => {
      expect((await f().request('PUT', `/teams/${all}/members/watcher`, as('owner'))).status).toBe(204);
      expect(await watched('watcher')).toEqual(['wco/priv', 'wco/pub']);
      expect((await f().request('POST', '/orgs/wco/repos', { ...as('owner'), body: { name: 'late', private: true } })).status).toBe(201);
      expect(await watched('watcher')).toEqual(['wco/late', 'wco/priv', 'wco/pub']);
      expect(await watchers('late')).toBe(2);
      expect((await f().request('GET', '/repos/wco/late', as('owner'))).body.watchers_count).toBe(2);
    });

    test('a repository added to a team is watched by its members, even one who unwatched it', async () => {
      expect((await f().request('DELETE', '/repos/wco/pub/subscription', as('watcher'))).status).toBe(204);
      expect((await f().request('PUT', `/teams/${one}/members/watcher`, as('owner'))).status).toBe(204);
      expect((await f().request('GET', '/repos/wco/pub/subscription', as('watcher'))).status).toBe(404);
      expect((await f().request('PUT', `/teams/${one}/repos/wco/pub`, as('owner'))).status).toBe(204);
      expect((await f().request('GET', '/repos/wco/pub/subscription', as('watcher'))).body).toMatchObject({ subscribed: true, ignored: false });
      expect((await f().request('GET', '/repos/wco/pub', as('owner'))).body.watchers_count).toBe(2);
    });

    test('leaving a team unwatches what the user can no longer read, with its issue subscriptions', async () => {
      expect((await f().request('POST', '/repos/wco/priv/issues', { ...as('owner'), body: { title: 'watched issue' } })).status).toBe(201);
      // Subscribed to the issue on its own, not through the repository's watch.
      expect((await f().request('DELETE', '/repos/wco/priv/subscription', as('watcher'))).status).toBe(204);
      expect((await f().request('PUT', '/repos/wco/priv/issues/1/subscriptions/watcher', as('watcher'))).status).toBe(201);
      expect((await f().request('PUT', '/repos/wco/priv/subscription', as('watcher'))).status).toBe(200);
      expect((await f().request('DELETE', `/teams/${all}/members/watcher`, as('owner'))).status).toBe(204);
      expect(await watched('watcher')).toEqual(['wco/pub']);
      expect(await watchers('priv')).toBe(1);
      const subs = await f().request('GET', '/repos/wco/priv/issues/1/subscriptions', as('owner'));
      expect(subs.body.map((u: { login: string }) => u.login)).not.toContain('watcher');
      // A public repository leaving the team stays watched: the user still reads it.
      expect((await f().request('DELETE', `/teams/${one}/repos/wco/pub`, as('owner'))).status).toBe(204);
      expect(await watched('watcher')).toEqual(['wco/pub']);
    });

    test('a team turned includes-all is watched in full; leaving the organization unwatches all of it', async () => {
      const res = await f().request('PATCH', `/teams/${one}`, { ...as('owner'), body: { name: 'one', permission: 'write', units: ['repo.code'], includes_all_repositories: true } });
      expect(res.status).toBe(200);
      expect(await watched('watcher')).toEqual(['wco/late', 'wco/priv', 'wco/pub']);
      expect((await f().request('DELETE', '/orgs/wco/members/watcher', as('owner'))).status).toBe(204);
      expect(await watched('watcher')).toEqual([]);
      expect((await f().request('GET', '/repos/wco/pub', as('owner'))).body.watchers_count).toBe(1);
    });
  });
});
