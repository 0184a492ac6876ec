import { describeForge, PASSWORD } from './support/forge';
import { OAuth2ApplicationService } from '../src/services/oauth2/applications';
import { enabledBuiltins } from '../src/services/oauth2/builtin-applications';

describeForge('OAuth2 applications (/user/applications/oauth2)', (f) => {
  const alice = { basic: ['alice', PASSWORD] as [string, string] };
  const bob = { basic: ['bob', PASSWORD] as [string, string] };
  beforeAll(async () => {
    await f().user('alice');
    await f().user('bob');
  });

  test('create shows the client secret once; list and get show it empty; the database keeps no secret', async () => {
    const res = await f().request('POST', '/user/applications/oauth2', { ...alice, body: { name: 'ci', redirect_uris: ['https://ci.example/authorize'], confidential_client: true } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'ci', confidential_client: true, skip_secondary_authorization: false, redirect_uris: ['https://ci.example/authorize'] });
    expect(res.body.client_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.body.client_secret).toMatch(/^gto_[a-z2-7]{52}$/);
    expect(res.body.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const row = await f().app.prisma.oAuth2Application.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(JSON.stringify(row)).not.toContain(res.body.client_secret);

    const list = await f().request('GET', '/user/applications/oauth2', alice);
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total-count')).toBe(String(list.body.length));
    expect(list.body.find((a: { id: number }) => a.id === res.body.id)).toEqual({ ...res.body, client_secret: '' });
    const one = await f().request('GET', `/user/applications/oauth2/${res.body.id}`, alice);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ...res.body, client_secret: '' });
  });

  test('edit replaces the fields and regenerates the secret; omitted flags become false', async () => {
    const res = await f().request('POST', '/user/applications/oauth2', { ...alice, body: { name: 'e', redirect_uris: ['https://a.example/cb'], confidential_client: true, skip_secondary_authorization: true } });
    const edited = await f().request('PATCH', `/user/applications/oauth2/${res.body.id}`, { ...alice, body: { name: 'e2', redirect_uris: ['https://b.example/cb'] } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ id: res.body.id, client_id: res.body.client_id, name: 'e2', redirect_uris: ['https://b.example/cb'], confidential_client: false, skip_secondary_authorization: false });
    expect(edited.body.client_secret).toMatch(/^gto_/);
    expect(edited.body.client_secret).not.toBe(res.body.client_secret);
  });

  test('bad input: missing name or redirect_uris 422, a redirect URI that is no http(s) URL 400; an empty list is accepted', async () => {
    let res = await f().request('POST', '/user/applications/oauth2', { ...alice, body: { redirect_uris: ['https://a.example'] } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('[Name]: Required');
    res = await f().request('POST', '/user/applications/oauth2', { ...alice, body: { name: 'x' } });
    expect(res.status).toBe(422);
    for (const uri of ['ftp://a', 'nonsense']) {
      res = await f().request('POST', '/user/applications/oauth2', { ...alice, body: { name: 'x', redirect_uris: [uri] } });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(`invalid redirect URI: ${uri}`);
    }
    res = await f().request('POST', '/user/applications/oauth2', { ...alice, body: { name: 'x', redirect_uris: [] } });
    expect(res.status).toBe(201);
  });

  test("another user's application is 404 for get, edit and delete; anonymous 401", async () => {
    const res = await f().request('POST', '/user/applications/oauth2', { ...alice, body: { name: 'mine', redirect_uris: ['https://a.example/cb'] } });
    expect((await f().request('GET', `/user/applications/oauth2/${res.body.id}`, bob)).status).toBe(404);
    expect((await f().request('PATCH', `/user/applications/oauth2/${res.body.id}`, { ...bob, body: { name: 'x', redirect_uris: [] } })).status).toBe(404);
    expect((await f().request('DELETE', `/user/applications/oauth2/${res.body.id}`, bob)).status).toBe(404);
    expect((await f().request('GET', '/user/applications/oauth2')).status).toBe(401);
    expect((await f().request('GET', `/user/applications/oauth2/999999`, alice)).status).toBe(404);
  });

  test('the user scope guards the group: read:user may list, not create', async () => {
    const token = await f().token('alice', ['read:user']);
    expect((await f().request('GET', '/user/applications/oauth2', { token })).status).toBe(200);
    const res = await f().request('POST', '/user/applications/oauth2', { token, body: { name: 'x', redirect_uris: [] } });
    expect(res.status).toBe(403);
  });

  test('delete answers 204, then 404', async () => {
    const res = await f().request('POST', '/user/applications/oauth2', { ...alice, body: { name: 'gone', redirect_uris: [] } });
    expect((await f().request('DELETE', `/user/applications/oauth2/${res.body.id}`, alice)).status).toBe(204);
    expect((await f().request('DELETE', `/user/applications/oauth2/${res.body.id}`, alice)).status).toBe(404);
  });

  test("Gitea's built-in applications exist by default with Gitea's client ids, and follow DEFAULT_APPLICATIONS", async () => {
    const ids = {
      'git-credential-oauth': 'a4792ccc-144e-407e-86c9-5e7d8d9c3269',
      'git-credential-manager': 'e90ee53c-94e2-48ac-9358-a874fb9e0662',
      tea: 'd57cb8c4-630c-4168-8324-ec79935e18d4',
      'gitea-app': 'b757811a-05c8-4c76-8d74-a5ee3d2073f2',
    };
    for (const id of Object.values(ids)) expect(await f().app.services.oauth2Apps.findClient(id)).toMatchObject({ clientId: id, confidential: false, builtin: true });
    const onlyTea = new OAuth2ApplicationService(f().app.prisma, ['tea']);
    expect(await onlyTea.findClient(ids.tea)).not.toBeNull();
    expect(await onlyTea.findClient(ids['git-credential-oauth'])).toBeNull();
    expect(await new OAuth2ApplicationService(f().app.prisma, []).findClient(ids.tea)).toBeNull();
    expect(() => enabledBuiltins(['tea', 'nope'])).toThrow('unknown oauth2 application: "nope"');
    // Built-ins are nobody's applications: not listed, not reachable through the API.
    const list = await f().request('GET', '/user/applications/oauth2', alice);
    expect(list.body.map((a: { client_id: string }) => a.client_id)).not.toContain(ids.tea);
  });
});
