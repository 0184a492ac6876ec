/**
 * Gitea's own JavaScript client (gitea-js, generated from Gitea's swagger) against a real
 * listening forge: proves the paths, methods, bodies and shapes match what clients expect.
 */
import { giteaApi } from 'gitea-js';
import { describeForge, PASSWORD } from '../forge-api/test/support/forge';
import { generateTotpSecret, totpCode } from '../forge-api/src/services/totp';

const basic = (user: string, pass: string) => ({ headers: { Authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` } });

describeForge('gitea-js client', (f) => {
  let token: string;
  beforeAll(async () => {
    await f().user('boss', { admin: true });
    await f().user('dev');
  });

  test('version, then a token through basic auth, then the token as the client credential', async () => {
    const anon = giteaApi(f().url, { customFetch: fetch });
    const version = await anon.version.getVersion();
    expect(version.data.version).toMatch(/^\d+\.\d+\.\d+$/);

    const created = await anon.users.userCreateToken('dev', { name: 'client', scopes: ['write:repository', 'write:user', 'write:organization'] }, basic('dev', PASSWORD));
    expect(created.status).toBe(201);
    token = created.data.sha1 as string;
    expect(token).toMatch(/^[0-9a-f]{40}$/);

    const api = giteaApi(f().url, { token, customFetch: fetch });
    const me = await api.user.userGetCurrent();
    expect(me.data.login).toBe('dev');
    const tokens = await anon.users.userGetTokens('dev', {}, basic('dev', PASSWORD));
    expect(tokens.data.map((t) => t.name)).toEqual(['client']);
    expect(tokens.data[0].sha1).toBe('');
  });

  test('create, get and search repositories; errors arrive as Gitea error bodies', async () => {
    const api = giteaApi(f().url, { token, customFetch: fetch });
    const repo = await api.user.createCurrentUserRepo({ name: 'tool', auto_init: true, description: 'a tool', license: 'MIT', private: false });
    expect(repo.status).toBe(201);
    expect(repo.data.full_name).toBe('dev/tool');
    expect(repo.data.empty).toBe(false);

    const got = await api.repos.repoGet('dev', 'tool');
    expect(got.data.permissions).toEqual({ admin: true, push: true, pull: true });
    const found = await api.repos.repoSearch({ q: 'too', limit: 10 });
    expect(found.data.ok).toBe(true);
    expect(found.data.data?.map((r) => r.full_name)).toEqual(['dev/tool']);
    expect(found.headers.get('x-total-count')).toBe('1');

    await expect(api.user.createCurrentUserRepo({ name: 'tool' })).rejects.toMatchObject({ status: 409, error: { message: 'The repository with the same name already exists.' } });
    await expect(api.repos.repoGet('dev', 'missing')).rejects.toMatchObject({ status: 404 });
  });

  test('organizations: create, repos, permissions', async () => {
    const api = giteaApi(f().url, { token, customFetch: fetch });
    const org = await api.orgs.orgCreate({ username: 'team-x', visibility: 'public' });
    expect(org.status).toBe(201);
    const repo = await api.orgs.createOrgRepo('team-x', { name: 'infra' });
    expect(repo.data.owner?.login).toBe('team-x');
    const list = await api.orgs.orgListRepos('team-x');
    expect(list.data.map((r) => r.name)).toEqual(['infra']);
    const perms = await api.users.orgGetUserPermissions('dev', 'team-x');
    expect(perms.data).toEqual({ is_owner: true, is_admin: true, can_write: true, can_read: true, can_create_repository: true });
  });

  test('admin: create and edit a user with the client types', async () => {
    const adminToken = await f().token('boss', ['write:admin']);
    const api = giteaApi(f().url, { token: adminToken, customFetch: fetch });
    const u = await api.admin.adminCreateUser({ username: 'newbie', email: 'newbie@example.com', password: 'password9', must_change_password: false });
    expect(u.status).toBe(201);
    const edited = await api.admin.adminEditUser('newbie', { login_name: 'newbie', source_id: 0, full_name: 'New Bie' });
    expect(edited.data.full_name).toBe('New Bie');
    const users = await api.admin.adminSearchUsers({ limit: 2, page: 1 });
    expect(users.data).toHaveLength(2);
    expect(users.headers.get('x-total-count')).toBe('3');
  });

  test('two-factor: the OTP header that Gitea clients send', async () => {
    const secret = generateTotpSecret();
    const dev = (await f().app.services.users.findByName('dev'))!;
    await f().app.prisma.user.update({ where: { id: dev.id }, data: { totpSecret: secret } });
    const anon = giteaApi(f().url, { customFetch: fetch });
    await expect(anon.users.userCreateToken('dev', { name: 'no-otp', scopes: ['read:user'] }, basic('dev', PASSWORD))).rejects.toMatchObject({ status: 401 });
    const ok = await anon.users.userCreateToken('dev', { name: 'with-otp', scopes: ['read:user'] }, { headers: { ...basic('dev', PASSWORD).headers, 'X-Gitea-OTP': totpCode(secret) } });
    expect(ok.status).toBe(201);
  });
});
