/**
 * Managing organizations as Gitea 1.27.3 answers it, on SQLite and PostgreSQL: edit, rename
 * (the old name redirects, repositories follow), delete (refused while it owns repositories),
 * delete all repositories, membership checks (members see every membership, others are sent
 * to the public check), removing members (never the last owner), publicizing and concealing
 * memberships.
 */
import { describeForge } from './support/forge';
import { as, okRequester } from './support/requests';

describeForge('organizations: edit, rename, delete, members', (f) => {
  const ok = okRequester(f);

  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['boss', 'mate', 'stranger']) await f().user(u);
    await ok('POST', '/orgs', 'boss', { username: 'works' });
    const team = (await ok('POST', '/orgs/works/teams', 'boss', { name: 'crew', permission: 'write', units: ['repo.code'], includes_all_repositories: true })).body;
    await ok('PUT', `/teams/${team.id}/members/mate`, 'boss');
  });

  test('PATCH edits the fields given; bad e-mail or visibility is 422; only owners may', async () => {
    let res = await f().request('PATCH', '/orgs/works', { ...as('boss'), body: { full_name: 'Works Ltd', location: 'Harbour', email: 'works@example.com' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'works', full_name: 'Works Ltd', location: 'Harbour', email: 'works@example.com', visibility: 'public' });
    res = await f().request('PATCH', '/orgs/works', { ...as('boss'), body: { description: 'd' } });
    expect(res.body).toMatchObject({ full_name: 'Works Ltd', description: 'd' });
    expect((await f().request('PATCH', '/orgs/works', { ...as('boss'), body: { email: 'nope' } })).status).toBe(422);
    expect((await f().request('PATCH', '/orgs/works', { ...as('boss'), body: { visibility: 'secret' } })).status).toBe(422);
    res = await f().request('PATCH', '/orgs/works', { ...as('mate'), body: { full_name: 'x' } });
    expect(res.status).toBe(403);
    expect((await f().request('PATCH', '/orgs/works', { body: { full_name: 'x' } })).status).toBe(401);
    expect((await f().request('PATCH', '/orgs/nothing', { ...as('boss'), body: {} })).status).toBe(404);
  });

  test('membership checks: members see all, others are redirected to the public check', async () => {
    expect((await f().request('GET', '/orgs/works/members/mate', as('boss'))).status).toBe(204);
    expect((await f().request('GET', '/orgs/works/members/stranger', as('boss'))).status).toBe(404);
    expect((await f().request('GET', '/orgs/works/members/mate', as('root'))).status).toBe(204);
    let res = await f().request('GET', '/orgs/works/members/mate', as('stranger'));
    // As Gitea 1.27.3: 303 to the path of the public membership check.
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/api/v1/orgs/works/public_members/mate');
    expect((await f().request('GET', '/orgs/works/members/stranger', as('stranger'))).status).toBe(404);
    expect((await f().request('GET', '/orgs/works/members/mate')).status).toBe(401);

    expect((await f().request('GET', '/orgs/works/public_members/mate')).status).toBe(404);
    // Members publicize themselves; owners anyone; others are refused.
    expect((await f().request('PUT', '/orgs/works/public_members/mate', as('mate'))).status).toBe(204);
    expect((await f().request('GET', '/orgs/works/public_members/mate')).status).toBe(204);
    res = await f().request('DELETE', '/orgs/works/public_members/boss', as('mate'));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Cannot change member visibility');
    expect((await f().request('PUT', '/orgs/works/public_members/boss', as('stranger'))).status).toBe(403);
    expect((await f().request('DELETE', '/orgs/works/public_members/mate', as('boss'))).status).toBe(204);
    expect((await f().request('GET', '/orgs/works/public_members/mate')).status).toBe(404);
  });

  test('removing members: the member and their teams go; the last owner stays', async () => {
    await ok('POST', '/orgs/works/repos', 'boss', { name: 'yard', private: true });
    await ok('PUT', '/repos/works/yard/subscription', 'mate');
    expect((await f().request('DELETE', '/orgs/works/members/mate', as('mate'))).status).toBe(403);
    expect((await f().request('DELETE', '/orgs/works/members/mate', as('boss'))).status).toBe(204);
    expect((await f().request('GET', '/orgs/works/members/mate', as('boss'))).status).toBe(404);
    expect((await f().request('GET', '/repos/works/yard', as('mate'))).status).toBe(404);
    expect((await f().request('GET', '/repos/works/yard', as('boss'))).body.watchers_count).toBe(1);
    // Not a member: nothing to do.
    expect((await f().request('DELETE', '/orgs/works/members/stranger', as('boss'))).status).toBe(204);
    const res = await f().request('DELETE', '/orgs/works/members/boss', as('boss'));
    expect(res.status).toBe(422);
    expect((await f().request('GET', '/orgs/works/members/boss', as('boss'))).status).toBe(204);
  });

  test('rename: the old name redirects, repositories move; taken names are 422', async () => {
    await ok('POST', '/orgs', 'boss', { username: 'taken' });
    expect((await f().request('POST', '/orgs/works/rename', { ...as('boss'), body: { new_name: 'taken' } })).status).toBe(422);
    expect((await f().request('POST', '/orgs/works/rename', { ...as('mate'), body: { new_name: 'shop' } })).status).toBe(403);
    expect((await f().request('POST', '/orgs/works/rename', { ...as('boss'), body: { new_name: 'shop' } })).status).toBe(204);
    expect((await f().request('GET', '/orgs/shop', as('boss'))).body.name).toBe('shop');
    const res = await f().request('GET', '/repos/shop/yard', as('boss'));
    expect(res.status).toBe(200);
    expect(res.body.full_name).toBe('shop/yard');
    // The repository is still there on disk under the new name.
    expect((await f().request('GET', '/repos/shop/yard/branches', as('boss'))).status).toBe(200);
  });

  test('delete: refused while it owns repositories; DELETE /orgs/{org}/repos empties it first', async () => {
    let res = await f().request('DELETE', '/orgs/shop', as('boss'));
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/still has ownership of repositories/);
    expect((await f().request('DELETE', '/orgs/shop/repos', as('stranger'))).status).toBe(403);
    expect((await f().request('DELETE', '/orgs/shop/repos', as('boss'))).status).toBe(202);
    expect((await f().request('DELETE', '/orgs/shop/repos', as('boss'))).status).toBe(204);
    expect((await f().request('GET', '/repos/shop/yard', as('boss'))).status).toBe(404);
    res = await f().request('DELETE', '/orgs/shop', as('boss'));
    expect(res.status).toBe(204);
    expect((await f().request('GET', '/orgs/shop', as('boss'))).status).toBe(404);
    expect((await f().request('DELETE', '/orgs/taken', as('root'))).status).toBe(204);
  });
});
