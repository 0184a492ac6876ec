/**
 * Stars as Gitea 1.27.3 answers them, on SQLite and PostgreSQL: PUT/GET/DELETE
 * /user/starred/{owner}/{repo} (204/404), stargazers and starred lists with X-Total-Count,
 * stars_count and starred_repos_count kept right through starring twice, unstarring, a
 * repository turning private, a deleted repository and a deleted user.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('stars', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const starsCount = async (repo: string) => (await f().request('GET', `/repos/${repo}`, as('alice'))).body.stars_count;
  const starredCount = async (user: string) => (await f().request('GET', `/users/${user}`, as('alice'))).body.starred_repos_count;

  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['alice', 'bob', 'carol', 'dave']) await f().user(u);
    for (const name of ['tools', 'docs', 'gone']) {
      expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name } })).status).toBe(201);
    }
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'secret', private: true } })).status).toBe(201);
  });

  test('PUT stars once (twice is no second star), GET checks, DELETE unstars; counters follow', async () => {
    expect((await f().request('GET', '/user/starred/alice/tools', as('bob'))).status).toBe(404);
    let res = await f().request('PUT', '/user/starred/alice/tools', as('bob'));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await f().request('PUT', '/user/starred/alice/tools', as('bob'))).status).toBe(204);
    expect((await f().request('GET', '/user/starred/alice/tools', as('bob'))).status).toBe(204);
    expect(await starsCount('alice/tools')).toBe(1);
    expect(await starredCount('bob')).toBe(1);

    for (const u of ['carol', 'dave']) expect((await f().request('PUT', '/user/starred/alice/tools', as(u))).status).toBe(204);
    expect(await starsCount('alice/tools')).toBe(3);

    res = await f().request('DELETE', '/user/starred/alice/tools', as('dave'));
    expect(res.status).toBe(204);
    expect((await f().request('DELETE', '/user/starred/alice/tools', as('dave'))).status).toBe(204);
    expect((await f().request('GET', '/user/starred/alice/tools', as('dave'))).status).toBe(404);
    expect(await starsCount('alice/tools')).toBe(2);
    expect(await starredCount('dave')).toBe(0);
  });

  test('stargazers: users in star order, paged, X-Total-Count is stars_count; anonymous may read a public repo', async () => {
    let res = await f().request('GET', '/repos/alice/tools/stargazers');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('2');
    expect(res.body.map((u: { login: string }) => u.login)).toEqual(['bob', 'carol']);
    expect(res.body[0]).toEqual(expect.objectContaining({ id: expect.any(Number), login: 'bob', avatar_url: expect.any(String) }));
    res = await f().request('GET', '/repos/alice/tools/stargazers?page=2&limit=1', as('dave'));
    expect(res.body.map((u: { login: string }) => u.login)).toEqual(['carol']);
    expect((await f().request('GET', '/repos/alice/secret/stargazers', as('bob'))).status).toBe(404);
  });

  test('starred lists: own list includes private repositories, another user sees public ones; 401 without token', async () => {
    expect((await f().request('PUT', '/user/starred/alice/docs', as('bob'))).status).toBe(204);
    expect((await f().request('PUT', '/user/starred/alice/secret', as('bob'))).status).toBe(404);
    expect((await f().request('PUT', '/user/starred/alice/secret', as('alice'))).status).toBe(204);
    expect((await f().request('PUT', '/user/starred/alice/docs', as('alice'))).status).toBe(204);

    let res = await f().request('GET', '/user/starred', as('alice'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('2');
    expect(res.body.map((r: { full_name: string }) => r.full_name).sort()).toEqual(['alice/docs', 'alice/secret']);
    expect(res.body.find((r: { name: string }) => r.name === 'secret')).toMatchObject({ private: true, permissions: { admin: true, push: true, pull: true } });

    res = await f().request('GET', '/users/alice/starred', as('bob'));
    expect(res.status).toBe(200);
    expect(res.body.map((r: { full_name: string }) => r.full_name)).toEqual(['alice/docs']);
    expect(res.headers.get('x-total-count')).toBe('2');

    res = await f().request('GET', '/user/starred?limit=1', as('bob'));
    expect(res.body).toHaveLength(1);
    expect(res.headers.get('x-total-count')).toBe('2');
    expect(res.headers.get('link')).toContain('rel="next"');

    expect((await f().request('GET', '/user/starred')).status).toBe(401);
    expect((await f().request('GET', '/users/alice/starred')).status).toBe(401);
    expect((await f().request('PUT', '/user/starred/alice/tools')).status).toBe(401);
    expect((await f().request('GET', '/users/nobody/starred', as('bob'))).status).toBe(404);
    expect((await f().request('PUT', '/user/starred/alice/nothing', as('bob'))).status).toBe(404);
  });

  test('a repository turning private loses its stars; a deleted repository or user takes theirs along', async () => {
    for (const u of ['bob', 'carol']) expect((await f().request('PUT', '/user/starred/alice/gone', as(u))).status).toBe(204);
    expect(await starredCount('carol')).toBe(2);

    expect((await f().request('PATCH', '/repos/alice/docs', { ...as('alice'), body: { private: true } })).status).toBe(200);
    expect(await starsCount('alice/docs')).toBe(0);
    expect((await f().request('GET', '/user/starred/alice/docs', as('alice'))).status).toBe(404);
    expect(await starredCount('bob')).toBe(2);

    expect((await f().request('DELETE', '/repos/alice/gone', as('alice'))).status).toBe(204);
    expect(await starredCount('bob')).toBe(1);
    expect(await starredCount('carol')).toBe(1);

    expect((await f().request('DELETE', '/admin/users/carol', as('root'))).status).toBe(204);
    expect(await starsCount('alice/tools')).toBe(1);
    const res = await f().request('GET', '/repos/alice/tools/stargazers', as('alice'));
    expect(res.body.map((u: { login: string }) => u.login)).toEqual(['bob']);
  });

  test('a token with read:user but no repository scope cannot star', async () => {
    const token = await f().token('dave', ['read:user']);
    const res = await f().request('PUT', '/user/starred/alice/tools', { token });
    expect(res.status).toBe(403);
  });
  test('starred lists come in repository order whatever the order of the stars, as Gitea 1.27.3 on SQLite answers', async () => {
    await f().user('erin');
    for (const name of ['z1', 'z2', 'z3', 'z4']) expect((await f().request('POST', '/user/repos', { ...as('erin'), body: { name } })).status).toBe(201);
    for (const name of ['z3', 'z1', 'z4', 'z2']) expect((await f().request('PUT', `/user/starred/erin/${name}`, as('dave'))).status).toBe(204);
    const names = (res: { body: { name: string }[] }) => res.body.map((r) => r.name);
    expect(names(await f().request('GET', '/user/starred', as('dave')))).toEqual(['z1', 'z2', 'z3', 'z4']);
    expect(names(await f().request('GET', '/user/starred?limit=2&page=2', as('dave')))).toEqual(['z3', 'z4']);
    expect(names(await f().request('GET', '/users/dave/starred', as('erin')))).toEqual(['z1', 'z2', 'z3', 'z4']);
    // Stargazers, by contrast, come in star order.
    for (const u of ['bob', 'alice']) expect((await f().request('PUT', '/user/starred/erin/z2', as(u))).status).toBe(204);
    expect((await f().request('GET', '/repos/erin/z2/stargazers', as('erin'))).body.map((u: { login: string }) => u.login)).toEqual(['dave', 'bob', 'alice']);
  });
  test('an empty body with a JSON content type reads as {} (Gitea): a PUT star succeeds, a create names the missing field', async () => {
    const empty = { ...as('bob'), raw: '', contentType: 'application/json' };
    expect((await f().request('PUT', '/user/starred/erin/z1', empty)).status).toBe(204);
    expect((await f().request('GET', '/user/starred/erin/z1', as('bob'))).status).toBe(204);
    const res = await f().request('POST', '/user/repos', empty);
    expect([res.status, res.body.message]).toEqual([422, '[Name]: Required']);
    expect((await f().request('POST', '/user/repos', { ...as('bob'), raw: '{"name":', contentType: 'application/json' })).status).toBe(422);
  });
});
