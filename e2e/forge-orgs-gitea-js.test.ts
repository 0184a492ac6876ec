/**
 * Gitea's own JS client (gitea-js) against the forge: teams, team repositories,
 * org permissions, org webhooks with a real delivery, user keys, packages and cron tasks.
 */
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { giteaApi } from 'gitea-js';
import { describeForge, PASSWORD } from '../forge-api/test/support/forge';

describeForge('gitea-js: teams, webhooks, keys, packages, cron', (f) => {
  let owner: ReturnType<typeof giteaApi>;
  let admin: ReturnType<typeof giteaApi>;
  let dev: ReturnType<typeof giteaApi>;
  let receiver: http.Server;
  let hookUrl = '';
  const bodies: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let keyDir: string;

  beforeAll(async () => {
    keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitea-js-keys-'));
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        bodies.push({ headers: req.headers, body });
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/`;
    await f().user('jsroot', { admin: true });
    await f().user('jsowner');
    await f().user('jsdev');
    owner = giteaApi(f().url, { token: await f().token('jsowner', ['all']) });
    admin = giteaApi(f().url, { token: await f().token('jsroot', ['all']) });
    dev = giteaApi(f().url, { token: await f().token('jsdev', ['read:organization', 'read:repository', 'read:user', 'write:package']) });
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
    fs.rmSync(keyDir, { recursive: true, force: true });
  });

  test('teams through the client: create, search, members, repositories, permissions', async () => {
    await owner.orgs.orgCreate({ username: 'jsorg' });
    await owner.orgs.createOrgRepo('jsorg', { name: 'app', private: true });
    const team = (await owner.orgs.orgCreateTeam('jsorg', { name: 'devs', permission: 'write', units: ['repo.code', 'repo.issues'] } as never)).data;
    expect(team).toMatchObject({ name: 'devs', permission: 'none', units_map: { 'repo.code': 'write', 'repo.issues': 'write' } });
    await owner.teams.orgAddTeamMember(team.id!, 'jsdev');
    await owner.teams.orgAddTeamRepository(team.id!, 'jsorg', 'app');
    const found = (await dev.orgs.teamSearch('jsorg', { q: 'dev' })).data as { ok: boolean; data: { name: string }[] };
    expect(found.ok).toBe(true);
    expect(found.data.map((t) => t.name)).toEqual(['devs']);
    expect((await dev.teams.orgListTeamRepos(team.id!)).data.map((r) => r.full_name)).toEqual(['jsorg/app']);
    expect((await dev.repos.repoGet('jsorg', 'app')).data.permissions).toEqual({ admin: false, push: true, pull: true });
    const perms = (await dev.users.orgGetUserPermissions('jsdev', 'jsorg')).data;
    expect(perms).toEqual({ is_owner: false, is_admin: false, can_write: true, can_read: true, can_create_repository: false });
    await owner.teams.orgRemoveTeamRepository(team.id!, 'jsorg', 'app');
    await expect(dev.repos.repoGet('jsorg', 'app')).rejects.toMatchObject({ status: 404 });
    expect((await owner.repos.repoGet('jsorg', 'app')).data.name).toBe('app');
  });

  test('an org webhook created through the client receives a signed delivery', async () => {
    const hook = (await owner.orgs.orgCreateHook('jsorg', { type: 'gitea', active: true, events: ['repository'], config: { url: hookUrl, content_type: 'json', secret: 'js' } } as never)).data;
    expect(hook).toMatchObject({ type: 'gitea', active: true, events: ['repository'] });
    expect((await owner.orgs.orgListHooks('jsorg')).data).toHaveLength(1);
    await owner.orgs.createOrgRepo('jsorg', { name: 'hooked' });
    for (let i = 0; i < 100 && !bodies.some((b) => b.body.includes('jsorg/hooked')); i++) await new Promise((r) => setTimeout(r, 100));
    const got = bodies.find((b) => b.body.includes('jsorg/hooked'));
    expect(got).toBeDefined();
    expect(got!.headers['x-gitea-signature']).toBe(crypto.createHmac('sha256', 'js').update(got!.body).digest('hex'));
  });

  test('keys, packages and cron through the client', async () => {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(keyDir, 'k')]);
    const pub = fs.readFileSync(path.join(keyDir, 'k.pub'), 'utf8');
    const key = (await owner.user.userCurrentPostKey({ key: pub, title: 'js', read_only: true })).data;
    expect(key).toMatchObject({ title: 'js', key_type: 'user' });
    expect(key).not.toHaveProperty('read_only');
    expect(key.fingerprint).toBe(execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', path.join(keyDir, 'k.pub')]).toString().split(' ')[1]);

    const put = await fetch(`${f().url}/api/packages/jsowner/generic/cli/1.2.3/cli.bin`, {
      method: 'PUT',
      headers: { authorization: `Basic ${Buffer.from(`jsowner:${PASSWORD}`).toString('base64')}` },
      body: 'bits',
    });
    expect(put.status).toBe(201);
    const pkgs = (await dev.packages.listPackages('jsowner', { type: 'generic' } as never)).data;
    expect(pkgs.map((p) => `${p.name}@${p.version}`)).toEqual(['cli@1.2.3']);
    expect(pkgs[0].creator?.login).toBe('jsowner');

    const tasks = (await admin.admin.adminCronList()).data;
    expect(tasks.map((t) => t.name)).toContain('deliver_hooks');
    await admin.admin.adminCronRun('cleanup_packages');
    await expect(owner.admin.adminCronRun('cleanup_packages')).rejects.toMatchObject({ status: 403 });
  });
}, { webhookAllowedHostList: 'loopback' });
