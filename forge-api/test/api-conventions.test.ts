import { describeForge } from './support/forge';

describeForge('API conventions', (f) => {
  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (let i = 0; i < 7; i++) await f().user(`member${i}`);
  });

  test('GET /version answers a plain semver', async () => {
    const res = await f().request('GET', '/version');
    expect(res.status).toBe(200);
    expect(res.body.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  test('GET /settings/api reports the paging limits', async () => {
    const res = await f().request('GET', '/settings/api');
    expect(res.body).toMatchObject({ max_response_items: 50, default_paging_num: 30 });
  });

  test('the OpenAPI document is generated from the routes and the UI is served', async () => {
    const doc = await f().request('GET', `${f().url}/swagger.v1.json`);
    expect(doc.status).toBe(200);
    expect(doc.body.swagger).toBe('2.0');
    expect(doc.body.basePath).toBe('/api/v1');
    expect(doc.body.paths['/repos/search'].get.operationId).toBe('repoSearch');
    expect(doc.body.paths['/users/{username}/tokens'].post.operationId).toBe('userCreateToken');
    expect(doc.body.definitions.Repository.properties.permissions).toBeDefined();
    const ui = await fetch(`${f().url}/api/swagger/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger');
  });

  test('unknown API paths get 404 in plain text, as the router of Gitea answers', async () => {
    const res = await fetch(`${f().url}/api/v1/nope/nothing`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe('404 page not found\n');
  });

  test('invalid bodies get 422 [Field]: Rule, malformed JSON 422, never 500', async () => {
    const auth = { basic: ['root', 'password1'] as [string, string] };
    let res = await f().request('POST', '/user/repos', { ...auth, body: {} });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: '[Name]: Required', url: `${f().url}/api/swagger` });
    res = await f().request('POST', '/user/repos', { ...auth, body: { name: 'has space' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('[Name]: AlphaDashDot');
    res = await f().request('POST', '/user/repos', { ...auth, body: { name: 'x', private: 'maybe' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('[Private]');
    res = await f().request('POST', '/user/repos', { ...auth, raw: '{"name":' });
    expect(res.status).toBe(422);
    res = await f().request('POST', '/admin/users', { ...auth, raw: '' });
    expect(res.status).toBeLessThan(500);
  });

  test('out-of-range ids and pages are answered, never with a 500', async () => {
    const auth = { basic: ['root', 'password1'] as [string, string] };
    const big = '99999999999999999999';
    for (const p of [`/repos/search?uid=${big}`, `/repos/search?page=${big}`, `/repos/search?priority_owner_id=${big}`, `/admin/users?source_id=${big}`, `/users/search?uid=${big}`]) {
      const res = await f().request('GET', p, auth);
      expect([p, res.status]).toEqual([p, 200]);
    }
    expect((await f().request('DELETE', `/users/root/tokens/${big}`, auth)).status).toBe(404);
    expect((await f().request('PATCH', '/admin/users/member0', { ...auth, body: { login_name: 'member0', max_repo_creation: 1e12 } })).status).toBe(422);
  });

  test('form-encoded bodies bind like JSON (curl -d), as Gitea binds forms', async () => {
    const res = await f().request('POST', '/user/repos', { basic: ['root', 'password1'], raw: 'name=from-form&private=true&description=via+form', contentType: 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'from-form', private: true, description: 'via form' });
  });

  test('paging: default 30, capped by MAX_RESPONSE_ITEMS, Link and X-Total-Count as Gitea writes them', async () => {
    const auth = { basic: ['root', 'password1'] as [string, string] };
    // 8 users: root + member0..6
    let res = await f().request('GET', '/admin/users?limit=3&page=2', auth);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(3);
    expect(res.headers.get('x-total-count')).toBe('8');
    const base = `${f().url}/api/v1/admin/users`;
    expect(res.headers.get('link')).toBe(
      `<${base}?limit=3&page=3>; rel="next",<${base}?limit=3&page=3>; rel="last",<${base}?limit=3&page=1>; rel="first",<${base}?limit=3&page=1>; rel="prev"`,
    );
    expect(res.headers.get('access-control-expose-headers')).toBe('X-Total-Count, Link');
    expect(res.body.map((u: { login: string }) => u.login)).toEqual(['member3', 'member4', 'member5']);

    res = await f().request('GET', '/admin/users?limit=1000', auth);
    expect(res.body).toHaveLength(8);
    expect(res.headers.get('link')).toBeNull();

    res = await f().request('GET', '/admin/users?limit=3', auth);
    expect(res.headers.get('link')).toBe(`<${base}?limit=3&page=2>; rel="next",<${base}?limit=3&page=3>; rel="last"`);
  });
});

describeForge(
  'MAX_RESPONSE_ITEMS caps limit',
  (f) => {
    test('limit above the cap is cut to it', async () => {
      await f().user('root', { admin: true });
      for (let i = 0; i < 4; i++) await f().user(`u${i}`);
      const res = await f().request('GET', '/admin/users?limit=50', { basic: ['root', 'password1'] });
      expect(res.body).toHaveLength(2);
      expect(res.headers.get('x-total-count')).toBe('5');
      expect(res.headers.get('link')).toContain('page=3>; rel="last"');
    });
  },
  { maxResponseItems: 2 },
);

describeForge(
  'ENABLE_SWAGGER=false',
  (f) => {
    test('neither the document nor the UI is served', async () => {
      expect((await fetch(`${f().url}/swagger.v1.json`)).status).toBe(404);
      expect((await fetch(`${f().url}/api/swagger/`)).status).toBe(404);
      expect((await f().request('GET', '/version')).status).toBe(200);
    });
  },
  { enableSwagger: false },
);
