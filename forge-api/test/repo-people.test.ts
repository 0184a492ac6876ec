/**
 * Assignees, reviewers and a repository's teams as Gitea 1.27.3 answers them, on SQLite and
 * PostgreSQL: who is listed (write collaborators, team members, the personal owner last), who
 * may list reviewers (403 otherwise), repository teams (Owners first, 405 on a personal
 * repository, 422 twice added or not added, 403 for a repository admin who is not an org owner
 * unless the org lets repository admins change team access), and that adding a team really
 * grants its members access.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('repository assignees, reviewers and teams', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const logins = (body: { login: string }[]) => body.map((u) => u.login);

  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['owner', 'zed', 'writer', 'reader', 'member', 'outsider', 'readteam']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('zed'), body: { name: 'mine' } })).status).toBe(201);
    expect((await f().request('PUT', '/repos/zed/mine/collaborators/writer', { ...as('zed'), body: { permission: 'write' } })).status).toBe(204);
    expect((await f().request('PUT', '/repos/zed/mine/collaborators/reader', { ...as('zed'), body: { permission: 'read' } })).status).toBe(204);

    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'acme' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs/acme/repos', { ...as('owner'), body: { name: 'app', private: true } })).status).toBe(201);
    let res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'devs', permission: 'write', units: ['repo.code', 'repo.issues', 'repo.pulls'] } });
    expect(res.status).toBe(201);
    expect((await f().request('PUT', `/teams/${res.body.id}/members/member`, as('owner'))).status).toBe(204);
    res = await f().request('POST', '/orgs/acme/teams', { ...as('owner'), body: { name: 'auditors', permission: 'read', units: ['repo.code'] } });
    expect(res.status).toBe(201);
    expect((await f().request('PUT', `/teams/${res.body.id}/members/readteam`, as('owner'))).status).toBe(204);
  });

  test('assignees of a personal repository: write collaborators by name, then the owner', async () => {
    const res = await f().request('GET', '/repos/zed/mine/assignees', as('reader'));
    expect(res.status).toBe(200);
    expect(logins(res.body)).toEqual(['writer', 'zed']);
    expect((await f().request('GET', '/repos/zed/mine/assignees')).status).toBe(401);
  });

  test('check assignee: 204 writer, 404 reader of a private-less repo without pulls access, 404 unknown, 400 organization', async () => {
    expect((await f().request('GET', '/repos/zed/mine/assignees/writer', as('reader'))).status).toBe(204);
    expect((await f().request('GET', '/repos/zed/mine/assignees/zed', as('reader'))).status).toBe(204);
    // Anyone reads a public repository's pull requests, so anyone is assignable there (Gitea's CanBeAssigned).
    expect((await f().request('GET', '/repos/zed/mine/assignees/outsider', as('reader'))).status).toBe(204);
    let res = await f().request('GET', '/repos/zed/mine/assignees/nobody', as('reader'));
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('user does not exist [uid: 0, name: nobody]');
    res = await f().request('GET', '/repos/zed/mine/assignees/acme', as('reader'));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^organization can't be added as assignee \[user_id: \d+, repo_id: \d+\]$/);
    expect((await f().request('GET', '/repos/acme/app/assignees/outsider', as('owner'))).status).toBe(404);
  });

  test('reviewers: collaborators of any mode and the owner; only the owner, collaborators or pull-request teams may ask', async () => {
    let res = await f().request('GET', '/repos/zed/mine/reviewers', as('writer'));
    expect(res.status).toBe(200);
    expect(logins(res.body)).toEqual(['reader', 'writer', 'zed']);
    res = await f().request('GET', '/repos/zed/mine/reviewers', as('outsider'));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('doer has no permission to get reviewers');
  });

  test('teams of a personal repository: 405', async () => {
    const res = await f().request('GET', '/repos/zed/mine/teams', as('zed'));
    expect(res.status).toBe(405);
    expect(res.body.message).toBe('repo is not owned by an organization');
    expect((await f().request('PUT', '/repos/zed/mine/teams/devs', as('zed'))).status).toBe(405);
  });

  test('org repository teams: list, add (grants access), 422 twice, check, remove, 404 unknown team', async () => {
    let res = await f().request('GET', '/repos/acme/app/teams', as('owner'));
    expect(res.status).toBe(200);
    expect(res.body.map((t: { name: string }) => t.name)).toEqual(['Owners']);
    expect(res.body[0]).toMatchObject({ permission: 'owner', organization: null, includes_all_repositories: true });

    expect((await f().request('GET', '/repos/acme/app', as('member'))).status).toBe(404);
    expect((await f().request('PUT', '/repos/acme/app/teams/devs', as('owner'))).status).toBe(204);
    expect((await f().request('PUT', '/repos/acme/app/teams/auditors', as('owner'))).status).toBe(204);
    expect((await f().request('GET', '/repos/acme/app', as('member'))).status).toBe(200);
    res = await f().request('PUT', '/repos/acme/app/teams/DEVS', as('owner'));
    expect(res.status).toBe(422);
    expect(res.body.message).toBe("team 'devs' is already added to repo");

    res = await f().request('GET', '/repos/acme/app/teams', as('member'));
    expect(res.body.map((t: { name: string }) => t.name)).toEqual(['Owners', 'auditors', 'devs']);
    res = await f().request('GET', '/repos/acme/app/teams/devs', as('member'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'devs', permission: 'none', units: ['repo.code', 'repo.issues', 'repo.pulls'], units_map: { 'repo.code': 'write' }, organization: null });
    res = await f().request('GET', '/repos/acme/app/teams/ghosts', as('member'));
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/^team does not exist \[org_id \d+, team_id 0, name: ghosts\]$/);
  });

  test('org repository assignees and reviewers follow the teams', async () => {
    // A team linked to the repository counts by its mode (read here) even without the issues or
    // pull request unit, as Gitea's GetTeamUserIDsWithAccessToAnyRepoUnit does.
    let res = await f().request('GET', '/repos/acme/app/assignees', as('member'));
    expect(logins(res.body)).toEqual(['member', 'owner', 'readteam']);
    res = await f().request('GET', '/repos/acme/app/reviewers', as('member'));
    expect(res.status).toBe(200);
    expect(logins(res.body)).toEqual(['member', 'owner', 'readteam']);
    // Asking needs a team that has the pull request unit.
    expect((await f().request('GET', '/repos/acme/app/reviewers', as('readteam'))).status).toBe(403);
  });

  test('changing teams: repository admin who is not an org owner gets 403 until the org allows it; reader 403', async () => {
    expect((await f().request('PUT', '/repos/acme/app/collaborators/zed', { ...as('owner'), body: { permission: 'admin' } })).status).toBe(204);
    let res = await f().request('DELETE', '/repos/acme/app/teams/devs', as('zed'));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Must be an organization owner');
    res = await f().request('DELETE', '/repos/acme/app/teams/devs', as('member'));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');

    // An organization that lets repository admins change team access.
    expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'openco', repo_admin_change_team_access: true } })).status).toBe(201);
    expect((await f().request('POST', '/orgs/openco/repos', { ...as('owner'), body: { name: 'lib', private: true } })).status).toBe(201);
    expect((await f().request('POST', '/orgs/openco/teams', { ...as('owner'), body: { name: 'devs', permission: 'write', units: ['repo.code'] } })).status).toBe(201);
    expect((await f().request('PUT', '/repos/openco/lib/collaborators/zed', { ...as('owner'), body: { permission: 'admin' } })).status).toBe(204);
    expect((await f().request('PUT', '/repos/openco/lib/teams/devs', as('zed'))).status).toBe(204);
    expect((await f().request('DELETE', '/repos/openco/lib/teams/devs', as('zed'))).status).toBe(204);

    expect((await f().request('DELETE', '/repos/acme/app/teams/devs', as('owner'))).status).toBe(204);
    res = await f().request('DELETE', '/repos/acme/app/teams/devs', as('owner'));
    expect(res.status).toBe(422);
    expect(res.body.message).toBe("team 'devs' was not added to repo");
    expect((await f().request('GET', '/repos/acme/app/teams/devs', as('owner'))).status).toBe(404);
    expect((await f().request('GET', '/repos/acme/app', as('member'))).status).toBe(404);
    // The Owners team includes every repository: removing it answers 204 and keeps it.
    expect((await f().request('DELETE', '/repos/acme/app/teams/Owners', as('owner'))).status).toBe(204);
    expect((await f().request('GET', '/repos/acme/app/teams/Owners', as('owner'))).status).toBe(200);
  });
});
