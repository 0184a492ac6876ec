import { describeForge, PASSWORD } from './support/forge';

describeForge('access tokens', (f) => {
  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('bob');
  });
  const alice = { basic: ['alice', PASSWORD] as [string, string] };

  test('create shows the secret once; the database keeps only a salted hash', async () => {
    const res = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'deploy', scopes: ['read:repository', 'write:repository', 'read:user'] } });
    expect(res.status).toBe(201);
    expect(res.body.sha1).toMatch(/^[0-9a-f]{40}$/);
    expect(res.body.token_last_eight).toBe(res.body.sha1.slice(-8));
    expect(res.body.scopes).toEqual(['write:repository', 'read:user']);
    expect(res.body.name).toBe('deploy');
    const row = await f().app.prisma.accessToken.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.tokenHash).not.toContain(res.body.sha1);
    expect(row.tokenSalt.length).toBe(10);
    expect(JSON.stringify(row)).not.toContain(res.body.sha1);

    const list = await f().request('GET', '/users/alice/tokens', alice);
    expect(list.status).toBe(200);
    const listed = list.body.find((t: { id: number }) => t.id === res.body.id);
    expect(listed).toMatchObject({ name: 'deploy', sha1: '', token_last_eight: res.body.sha1.slice(-8), scopes: ['write:repository', 'read:user'] });
    expect(list.headers.get('x-total-count')).toBe(String(list.body.length));
  });

  test('all write scopes collapse to all', async () => {
    const scopes = ['activitypub', 'admin', 'misc', 'notification', 'organization', 'package', 'issue', 'repository', 'user'].map((c) => `write:${c}`);
    const res = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'everything', scopes } });
    expect(res.body.scopes).toEqual(['all']);
  });

  test('duplicate name, invalid scope and no scope are 400; missing name 422', async () => {
    let res = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'dup', scopes: ['read:user'] } });
    expect(res.status).toBe(201);
    res = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'dup', scopes: ['read:user'] } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('access token name has been used already');
    res = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'bad', scopes: ['repo'] } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/invalid access token scope/);
    res = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'none', scopes: [] } });
    expect(res.status).toBe(400);
    res = await f().request('POST', '/users/alice/tokens', { ...alice, body: { scopes: ['all'] } });
    expect(res.status).toBe(422);
  });

  test('token routes need basic auth: a token in the header is refused with 401', async () => {
    const t = await f().token('alice', ['all']);
    const res = await f().request('GET', '/users/alice/tokens', { token: t });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('auth required');
    expect((await f().request('GET', '/users/alice/tokens')).status).toBe(401);
  });

  test("another user's tokens: 403, unless site admin", async () => {
    expect((await f().request('GET', '/users/alice/tokens', { basic: ['bob', PASSWORD] })).status).toBe(403);
    expect((await f().request('GET', '/users/alice/tokens', { basic: ['root', PASSWORD] })).status).toBe(200);
  });

  test('delete by id and by name; a deleted token stops working at once', async () => {
    const a = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'gone-by-id', scopes: ['read:user'] } });
    const b = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'gone-by-name', scopes: ['read:user'] } });
    expect((await f().request('GET', '/user', { token: a.body.sha1 })).status).toBe(200);
    expect((await f().request('DELETE', `/users/alice/tokens/${a.body.id}`, alice)).status).toBe(204);
    expect((await f().request('DELETE', '/users/alice/tokens/gone-by-name', alice)).status).toBe(204);
    expect((await f().request('GET', '/user', { token: a.body.sha1 })).status).toBe(401);
    expect((await f().request('GET', '/user', { token: b.body.sha1 })).status).toBe(401);
    expect((await f().request('DELETE', '/users/alice/tokens/gone-by-name', alice)).status).toBe(404);
  });

  test('GET /token shows the token of the request; DELETE /token revokes it; other credentials are 404', async () => {
    const token = await f().token('alice', ['read:issue']);
    for (const scheme of ['token', 'Bearer']) {
      const res = await f().request('GET', '/token', { headers: { Authorization: `${scheme} ${token}` } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: expect.any(Number), name: expect.any(String), scopes: ['read:issue'], created_at: expect.any(String), last_used_at: expect.any(String), user: { id: expect.any(Number), login: 'alice' } });
    }
    for (const other of [alice, { basic: ['alice', token] as [string, string] }]) {
      const res = await f().request('GET', '/token', other);
      expect([res.status, res.body.message]).toEqual([404, 'invalid access token']);
    }
    expect((await f().request('GET', `/token?token=${token}`)).status).toBe(404);
    expect((await f().request('GET', '/token')).status).toBe(401);
    expect((await f().request('DELETE', '/token', alice)).status).toBe(404);
    expect((await f().request('DELETE', '/token', { token })).status).toBe(204);
    const after = await f().request('GET', '/token', { token });
    expect([after.status, after.body.message]).toEqual([401, 'invalid username, password or token']);
  });

  test('last_used_at follows use', async () => {
    const t = await f().request('POST', '/users/alice/tokens', { ...alice, body: { name: 'used', scopes: ['read:user'] } });
    await f().request('GET', '/user', { token: t.body.sha1 });
    await new Promise((r) => setTimeout(r, 100));
    const list = await f().request('GET', '/users/alice/tokens', alice);
    const listed = list.body.find((x: { id: number }) => x.id === t.body.id);
    expect(listed.last_used_at).not.toBe('1970-01-01T00:00:00Z');
  });

  test('an admin edit of the owner takes effect on the next token request', async () => {
    await f().user('gina');
    const t = await f().token('gina', ['read:user']);
    expect((await f().request('GET', '/user', { token: t })).status).toBe(200);
    const edit = await f().request('PATCH', '/admin/users/gina', { basic: ['root', PASSWORD], body: { login_name: 'gina', prohibit_login: true } });
    expect(edit.status).toBe(200);
    expect((await f().request('GET', '/user', { token: t })).status).toBe(403);
  });
});
