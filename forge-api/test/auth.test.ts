import { describeForge, PASSWORD } from './support/forge';
import { generateTotpSecret, totpCode } from '../src/services/totp';

describeForge('authentication', (f) => {
  let token: string;
  let secret: string;
  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('bob');
    const twofa = await f().user('carol');
    secret = generateTotpSecret();
    await f().app.prisma.user.update({ where: { id: twofa.id }, data: { totpSecret: secret } });
    token = await f().token('alice', ['all']);
  });

  const who = (res: { status: number; body: any }) => (res.status === 200 ? res.body.login : res.status);

  test('basic auth with the password', async () => {
    expect(who(await f().request('GET', '/user', { basic: ['alice', PASSWORD] }))).toBe('alice');
  });

  test('Authorization: token, Authorization: bearer, ?token=, ?access_token=', async () => {
    expect(who(await f().request('GET', '/user', { token }))).toBe('alice');
    expect(who(await f().request('GET', '/user', { bearer: token }))).toBe('alice');
    expect(who(await f().request('GET', '/user', { headers: { authorization: `TOKEN ${token}` } }))).toBe('alice');
    expect(who(await f().request('GET', `/user?token=${token}`))).toBe('alice');
    expect(who(await f().request('GET', `/user?access_token=${token}`))).toBe('alice');
  });

  test('a token in basic auth: as password, or as user name with an empty password / x-oauth-basic', async () => {
    expect(who(await f().request('GET', '/user', { basic: ['alice', token] }))).toBe('alice');
    expect(who(await f().request('GET', '/user', { basic: [token, ''] }))).toBe('alice');
    expect(who(await f().request('GET', '/user', { basic: [token, 'x-oauth-basic'] }))).toBe('alice');
  });

  test('bad credentials are 401 even on public routes; no credentials on a signed-in route is 401', async () => {
    for (const opts of [{ basic: ['alice', 'wrong'] as [string, string] }, { token: 'f'.repeat(40) }, { basic: ['nobody', PASSWORD] as [string, string] }]) {
      const res = await f().request('GET', '/version', opts);
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('invalid username, password or token');
    }
    expect((await f().request('GET', '/version?token=nonsense')).status).toBe(401);
    const anon = await f().request('GET', '/user');
    expect(anon.status).toBe(401);
    expect(anon.body.message).toBe('token is required');
  });

  test('two-factor: basic auth with the password needs a valid OTP header (any of the three names)', async () => {
    const basic: [string, string] = ['carol', PASSWORD];
    const missing = await f().request('GET', '/user', { basic });
    expect(missing.status).toBe(401);
    expect((await f().request('GET', '/user', { basic, headers: { 'X-Gitea-OTP': '000000' } })).status).toBe(401);
    for (const header of ['X-Portcullis-OTP', 'X-Gitea-OTP', 'X-Forgejo-OTP']) {
      expect(who(await f().request('GET', '/user', { basic, headers: { [header]: totpCode(secret) } }))).toBe('carol');
    }
    // A token made with password+OTP then works without OTP.
    const res = await f().request('POST', '/users/carol/tokens', { basic, headers: { 'X-Gitea-OTP': totpCode(secret) }, body: { name: 'ci', scopes: ['read:user'] } });
    expect(res.status).toBe(201);
    expect(who(await f().request('GET', '/user', { token: res.body.sha1 }))).toBe('carol');
  });

  test('sudo: admins act as another user by query or header; others get 403', async () => {
    const admin: [string, string] = ['root', PASSWORD];
    expect(who(await f().request('GET', '/user?sudo=bob', { basic: admin }))).toBe('bob');
    expect(who(await f().request('GET', '/user', { basic: admin, headers: { Sudo: 'bob' } }))).toBe('bob');
    const denied = await f().request('GET', '/user?sudo=bob', { basic: ['alice', PASSWORD] });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('Only administrators allowed to sudo.');
    expect((await f().request('GET', '/user?sudo=ghost1', { basic: admin })).status).toBe(404);
    // Work done under sudo belongs to the target.
    const created = await f().request('POST', '/user/repos', { basic: admin, headers: { Sudo: 'bob' }, body: { name: 'via-sudo' } });
    expect(created.status).toBe(201);
    expect(created.body.owner.login).toBe('bob');
  });

  test('prohibited, inactive and must-change-password accounts get 403', async () => {
    const u = await f().user('dave');
    const basic: [string, string] = ['dave', PASSWORD];
    await f().app.prisma.user.update({ where: { id: u.id }, data: { prohibitLogin: true } });
    let res = await f().request('GET', '/user', { basic });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/prohibited from signing in/);
    await f().app.prisma.user.update({ where: { id: u.id }, data: { prohibitLogin: false, mustChangePassword: true } });
    res = await f().request('GET', '/user', { basic });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/^You must change your password/);
  });
});

describeForge('token scopes', (f) => {
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('erin');
    for (const [k, scopes] of Object.entries({
      readUser: ['read:user'],
      writeUser: ['write:user'],
      readRepo: ['read:repository'],
      writeRepoUser: ['write:repository', 'write:user'],
      readRepoWriteUser: ['read:repository', 'write:user'],
      all: ['all'],
    })) {
      tokens[k] = await f().token('erin', scopes);
    }
    tokens.rootReadAdmin = await f().token('root', ['read:admin']);
    tokens.rootReadUser = await f().token('root', ['read:user']);
  });

  test('the level follows the method and write implies read', async () => {
    expect((await f().request('GET', '/user', { token: tokens.readUser })).status).toBe(200);
    expect((await f().request('GET', '/user', { token: tokens.writeUser })).status).toBe(200);
    const res = await f().request('GET', '/user', { token: tokens.readRepo });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('token does not have at least one of required scope(s), required=[read:user], token scope=read:repository');
  });

  test('routes with two categories need both (POST /user/repos: user + repository, write)', async () => {
    expect((await f().request('POST', '/user/repos', { token: tokens.readRepoWriteUser, body: { name: 'a1' } })).status).toBe(403);
    expect((await f().request('POST', '/user/repos', { token: tokens.writeUser, body: { name: 'a1' } })).status).toBe(403);
    expect((await f().request('POST', '/user/repos', { token: tokens.writeRepoUser, body: { name: 'a1' } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { token: tokens.all, body: { name: 'a2' } })).status).toBe(201);
    expect((await f().request('GET', '/repos/erin/a1', { token: tokens.readRepo })).status).toBe(200);
    expect((await f().request('DELETE', '/repos/erin/a1', { token: tokens.readRepo })).status).toBe(403);
  });

  test('admin routes need the admin scope on top of the admin account', async () => {
    expect((await f().request('GET', '/admin/users', { token: tokens.rootReadAdmin })).status).toBe(200);
    expect((await f().request('GET', '/admin/users', { token: tokens.rootReadUser })).status).toBe(403);
    expect((await f().request('POST', '/admin/users', { token: tokens.rootReadAdmin, body: { username: 'x1', email: 'x1@example.com', password: 'password1' } })).status).toBe(403);
    const notAdmin = await f().request('GET', '/admin/users', { token: tokens.all });
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body.message).toBe('user should be the site admin');
  });

  test('scope-free routes (version) accept any token; password basic auth is never scope-limited', async () => {
    expect((await f().request('GET', '/version', { token: tokens.readRepo })).status).toBe(200);
    expect((await f().request('POST', '/user/repos', { basic: ['erin', PASSWORD], body: { name: 'a3' } })).status).toBe(201);
  });

  test('public-only tokens: private repositories and non-public orgs are 403, search drops private ones', async () => {
    await f().request('POST', '/user/repos', { basic: ['erin', PASSWORD], body: { name: 'hush', private: true } });
    await f().request('POST', '/orgs', { basic: ['erin', PASSWORD], body: { username: 'erin-closed', visibility: 'limited' } });
    const t = await f().token('erin', ['public-only', 'read:repository', 'read:organization']);
    const res = await f().request('GET', '/repos/erin/hush', { token: t });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('token scope is limited to public repos');
    expect((await f().request('GET', '/repos/erin/a3', { token: t })).status).toBe(200);
    const search = await f().request('GET', '/repos/search?q=hush', { token: t });
    expect(search.body.data).toEqual([]);
    expect((await f().request('GET', '/repos/search?q=hush', { token: tokens.all })).body.data).toHaveLength(1);
    expect((await f().request('GET', '/orgs/erin-closed', { token: t })).status).toBe(403);
  });
});
