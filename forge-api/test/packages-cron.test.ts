/**
 * Packages (generic registry upload/download/delete, package records, list filters, access)
 * and the admin API (cron tasks as real scheduled jobs, user edits taking effect
 * at once), over HTTP on SQLite and PostgreSQL.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CronService } from '../src/services/cron';
import { repoStats } from '../src/services/git';
import { describeForge, PASSWORD } from './support/forge';

// Git housekeeping is off here: its start-up sweep (5 s after the server is ready) repacks
// repositories created with auto_init, and a repack landing between update_repo_size and the
// size check changes the size on disk under the test. On PostgreSQL the suite reaches that test
// at about 5 s, so it failed there now and then. Housekeeping has its own suite.
describeForge('packages, cron tasks and admin user edits', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const reg = (p: string) => `${f().url}/api/packages${p}`;
  const put = (p: string, body: string, auth: { basic?: [string, string]; token?: string } = {}) =>
    f().request('PUT', reg(p), { ...auth, raw: body, contentType: 'application/octet-stream' });

  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['pkgowner', 'dev', 'viewer', 'stranger']) await f().user(u);
    expect((await f().request('POST', '/orgs', { ...as('pkgowner'), body: { username: 'pkgorg' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs', { ...as('pkgowner'), body: { username: 'hidden', visibility: 'private' } })).status).toBe(201);
    const w = await f().request('POST', '/orgs/pkgorg/teams', { ...as('pkgowner'), body: { name: 'devs', permission: 'write', units: ['repo.packages'] } });
    const r = await f().request('POST', '/orgs/pkgorg/teams', { ...as('pkgowner'), body: { name: 'viewers', permission: 'read', units: ['repo.packages'] } });
    await f().request('PUT', `/teams/${w.body.id}/members/dev`, as('pkgowner'));
    await f().request('PUT', `/teams/${r.body.id}/members/viewer`, as('pkgowner'));
  });

  test('generic upload: 201, file stored under the data dir by sha256, download, 409 on repeat', async () => {
    const content = `binary-${crypto.randomBytes(8).toString('hex')}\n`;
    let res = await put('/pkgowner/generic/tool/1.0.0/tool.tar.gz', content, as('pkgowner'));
    expect(res.status).toBe(201);
    const sha = crypto.createHash('sha256').update(content).digest('hex');
    expect(fs.readFileSync(path.join(f().dataDir, 'packages', sha.slice(0, 2), sha.slice(2, 4), sha), 'utf8')).toBe(content);
    res = await f().request('GET', reg('/pkgowner/generic/tool/1.0.0/tool.tar.gz'));
    expect(res.status).toBe(200);
    expect(res.text).toBe(content);
    res = await put('/pkgowner/generic/tool/1.0.0/tool.tar.gz', 'again', as('pkgowner'));
    expect(res.status).toBe(409);
    expect(res.text).toBe('package file already exists');
    expect((await put('/pkgowner/generic/tool/1.0.0/README.md', '# tool', as('pkgowner'))).status).toBe(201);
    expect((await put('/pkgowner/generic/tool/2.0.0/tool.tar.gz', 'v2', as('pkgowner'))).status).toBe(201);
    expect((await put('/pkgowner/generic/other-lib/0.1/lib.zip', 'lib', as('pkgowner'))).status).toBe(201);
    expect((await f().request('GET', reg('/pkgowner/generic/tool/9.9/tool.tar.gz'))).status).toBe(404);
  });

  test('generic upload: invalid names 400, no rights 401 with a Basic challenge', async () => {
    expect((await put('/pkgowner/generic/bad%20name/1.0/f.txt', 'x', as('pkgowner'))).status).toBe(400);
    expect((await put('/pkgowner/generic/ok/%201.0/f.txt', 'x', as('pkgowner'))).status).toBe(400);
    let res = await put('/pkgowner/generic/ok/1.0/f.txt', 'x');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Gitea Package API"');
    expect((await put('/pkgowner/generic/ok/1.0/f.txt', 'x', as('stranger'))).status).toBe(401);
    res = await put('/pkgowner/generic/ok/1.0/f.txt', 'x', { basic: ['pkgowner', 'wrong'] });
    expect(res.status).toBe(401);
    // Org packages: team write may upload, team read may not.
    expect((await put('/pkgorg/generic/shared/1.0/a.bin', 'a', as('dev'))).status).toBe(201);
    expect((await put('/pkgorg/generic/shared/1.0/b.bin', 'b', as('viewer'))).status).toBe(401);
    // Token scopes: package scope needed.
    const repoToken = await f().token('dev', ['write:repository']);
    expect((await put('/pkgorg/generic/shared/1.0/c.bin', 'c', { token: repoToken })).status).toBe(401);
    const pkgToken = await f().token('dev', ['write:package']);
    expect((await put('/pkgorg/generic/shared/1.0/c.bin', 'c', { token: pkgToken })).status).toBe(201);
    // A private org's packages are invisible to outsiders.
    expect((await put('/hidden/generic/x/1.0/x.bin', 'x', as('pkgowner'))).status).toBe(201);
    expect((await f().request('GET', reg('/hidden/generic/x/1.0/x.bin'), as('stranger'))).status).toBe(404);
  });

  test('package records: list with type and q filters, paging headers, get, files', async () => {
    let res = await f().request('GET', '/packages/pkgowner', as('viewer'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('3');
    // Newest version first.
    expect(res.body.map((p: { name: string; version: string }) => `${p.name}@${p.version}`)).toEqual(['other-lib@0.1', 'tool@2.0.0', 'tool@1.0.0']);
    const p = res.body[2];
    expect(p).toMatchObject({ type: 'generic', name: 'tool', version: '1.0.0', repository: null, owner: { login: 'pkgowner' }, creator: { login: 'pkgowner' } });
    expect(p.html_url).toBe(`${f().url}/pkgowner/-/packages/generic/tool/1.0.0`);
    expect(p.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    res = await f().request('GET', '/packages/pkgowner?q=lib', as('viewer'));
    expect(res.body.map((x: { name: string }) => x.name)).toEqual(['other-lib']);
    res = await f().request('GET', '/packages/pkgowner?type=npm', as('viewer'));
    expect(res.body).toEqual([]);
    res = await f().request('GET', '/packages/pkgowner?type=nonsense', as('viewer'));
    expect(res.status).toBe(422);
    res = await f().request('GET', '/packages/pkgowner?limit=1&page=2', as('viewer'));
    expect(res.body.map((x: { version: string }) => x.version)).toEqual(['2.0.0']);
    expect(res.headers.get('link')).toContain('rel="next"');
    res = await f().request('GET', '/packages/pkgorg', as('viewer'));
    expect(res.body[0]).toMatchObject({ name: 'shared', creator: { login: 'dev' } });
    expect((await f().request('GET', '/packages/hidden', as('stranger'))).status).toBe(404);
    expect((await f().request('GET', '/packages/nobody', as('stranger'))).status).toBe(404);
    res = await f().request('GET', '/packages/pkgowner/generic/tool/1.0.0', as('viewer'));
    expect(res.body.version).toBe('1.0.0');
    res = await f().request('GET', '/packages/pkgowner/generic/tool/1.0.0/files', as('viewer'));
    expect(res.body.map((x: { name: string }) => x.name).sort()).toEqual(['README.md', 'tool.tar.gz']);
    const readme = res.body.find((x: { name: string }) => x.name === 'README.md');
    expect(readme).toMatchObject({ Size: 6, sha256: crypto.createHash('sha256').update('# tool').digest('hex'), md5: crypto.createHash('md5').update('# tool').digest('hex') });
    // Gitea's package API needs a signed-in caller even for a public owner.
    expect((await f().request('GET', '/packages/pkgowner')).status).toBe(401);
    const readToken = await f().token('viewer', ['read:repository']);
    expect((await f().request('GET', '/packages/pkgowner', { token: readToken })).status).toBe(403);
  });

  test('delete: a file, a version through the registry, a version through the API', async () => {
    expect((await f().request('DELETE', reg('/pkgowner/generic/tool/1.0.0/README.md'), as('viewer'))).status).toBe(401);
    expect((await f().request('DELETE', reg('/pkgowner/generic/tool/1.0.0/README.md'), as('pkgowner'))).status).toBe(204);
    expect((await f().request('GET', reg('/pkgowner/generic/tool/1.0.0/README.md'))).status).toBe(404);
    expect((await f().request('DELETE', reg('/pkgowner/generic/tool/2.0.0'), as('pkgowner'))).status).toBe(204);
    expect((await f().request('DELETE', '/packages/pkgowner/generic/other-lib/0.1', as('viewer'))).status).toBe(403);
    expect((await f().request('DELETE', '/packages/pkgowner/generic/other-lib/0.1', as('pkgowner'))).status).toBe(204);
    const res = await f().request('GET', '/packages/pkgowner', as('pkgowner'));
    expect(res.body.map((p: { name: string; version: string }) => `${p.name}@${p.version}`)).toEqual(['tool@1.0.0']);
  });

  test('one package: versions, latest, link to a repository, unlink, delete with every version', async () => {
    for (const v of ['1.0', '1.1', '1.2']) expect((await put(`/pkgowner/generic/linked/${v}/a.bin`, v, as('pkgowner'))).status).toBe(201);
    let res = await f().request('GET', '/packages/pkgowner/generic/linked?limit=2', as('viewer'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('3');
    expect(res.headers.get('link')).toContain('rel="next"');
    expect(res.body.map((x: { version: string }) => x.version)).toEqual(['1.2', '1.1']);
    expect((await f().request('GET', '/packages/pkgowner/generic/absent', as('viewer'))).status).toBe(404);
    res = await f().request('GET', '/packages/pkgowner/generic/linked/-/latest', as('viewer'));
    expect(res.body).toMatchObject({ name: 'linked', version: '1.2', repository: null });
    expect((await f().request('GET', '/packages/pkgowner/generic/absent/-/latest', as('viewer'))).status).toBe(404);

    expect((await f().request('POST', '/user/repos', { ...as('pkgowner'), body: { name: 'linkrepo', private: true } })).status).toBe(201);
    expect((await f().request('POST', '/packages/pkgowner/generic/linked/-/unlink', as('pkgowner'))).status).toBe(400);
    expect((await f().request('POST', '/packages/pkgowner/generic/linked/-/link/absent', as('pkgowner'))).status).toBe(404);
    expect((await f().request('POST', '/packages/pkgowner/generic/linked/-/link/linkrepo', as('viewer'))).status).toBe(403);
    expect((await f().request('POST', '/packages/pkgowner/generic/linked/-/link/linkrepo', as('pkgowner'))).status).toBe(201);
    expect((await f().request('POST', '/packages/pkgowner/generic/linked/-/link/linkrepo', as('pkgowner'))).status).toBe(400);
    // The linked repository shows to whoever may read it, and stays hidden from others.
    res = await f().request('GET', '/packages/pkgowner/generic/linked/-/latest', as('pkgowner'));
    expect(res.body.repository).toMatchObject({ full_name: 'pkgowner/linkrepo', private: true });
    res = await f().request('GET', '/packages/pkgowner/generic/linked', as('viewer'));
    expect(res.body.map((x: { repository: unknown }) => x.repository)).toEqual([null, null, null]);
    expect((await f().request('POST', '/packages/pkgowner/generic/linked/-/unlink', as('viewer'))).status).toBe(403);
    expect((await f().request('POST', '/packages/pkgowner/generic/linked/-/unlink', as('pkgowner'))).status).toBe(204);
    expect((await f().request('GET', '/packages/pkgowner/generic/linked/-/latest', as('pkgowner'))).body.repository).toBeNull();

    expect((await f().request('DELETE', '/packages/pkgowner/generic/linked', as('viewer'))).status).toBe(403);
    expect((await f().request('DELETE', '/packages/pkgowner/generic/linked', as('pkgowner'))).status).toBe(204);
    expect((await f().request('GET', '/packages/pkgowner/generic/linked', as('pkgowner'))).status).toBe(404);
    expect((await f().request('GET', reg('/pkgowner/generic/linked/1.0/a.bin'))).status).toBe(404);
    expect((await f().request('DELETE', '/packages/pkgowner/generic/linked', as('pkgowner'))).status).toBe(404);
  });

  test('GET /admin/cron lists the scheduled jobs with schedule, next, prev, exec_times', async () => {
    const res = await f().request('GET', '/admin/cron', as('root'));
    expect(res.status).toBe(200);
    const names = res.body.map((t: { name: string }) => t.name);
    expect(names).toEqual(['cleanup_hook_task_table', 'cleanup_packages', 'deliver_hooks', 'update_mirrors', 'update_repo_size']);
    const deliver = res.body.find((t: { name: string }) => t.name === 'deliver_hooks');
    expect(deliver.schedule).toBe('@every 1m');
    expect(Date.parse(deliver.next)).toBeGreaterThan(Date.now() - 5000);
    expect(res.headers.get('x-total-count')).toBe('5');
    expect((await f().request('GET', '/admin/cron', as('stranger'))).status).toBe(403);
  });

  test('POST /admin/cron/{task} runs it: repo sizes refreshed, old deliveries cleaned, runs counted', async () => {
    expect((await f().request('POST', '/user/repos', { ...as('pkgowner'), body: { name: 'sized', auto_init: true } })).status).toBe(201);
    const repo = await f().app.prisma.repository.findFirstOrThrow({ where: { lowerName: 'sized' } });
    // A stale size in the database is what the task corrects.
    await f().app.prisma.repository.update({ where: { id: repo.id }, data: { size: 999999, isEmpty: true } });
    const hook = await f().app.prisma.webhook.create({ data: { url: 'http://127.0.0.1:9/x', repoId: repo.id } });
    const old = new Date(Date.now() - 30 * 24 * 3600_000);
    await f().app.prisma.hookTask.create({ data: { hookId: hook.id, uuid: crypto.randomUUID(), event: 'push', eventType: 'push', payload: '{}', isDelivered: true, createdAt: old } });

    expect((await f().request('POST', '/admin/cron/update_repo_size', as('root'))).status).toBe(204);
    expect((await f().request('POST', '/admin/cron/cleanup_hook_task_table', as('root'))).status).toBe(204);
    expect((await f().request('POST', '/admin/cron/nope', as('root'))).status).toBe(404);
    expect((await f().request('POST', '/admin/cron/update_repo_size', as('pkgowner'))).status).toBe(403);
    const done = async () => {
      const list = (await f().request('GET', '/admin/cron', as('root'))).body as { name: string; exec_times: number; prev: string }[];
      return ['update_repo_size', 'cleanup_hook_task_table'].every((n) => list.find((t) => t.name === n)!.exec_times >= 1);
    };
    for (let i = 0; i < 100 && !(await done()); i++) await new Promise((r) => setTimeout(r, 100));
    const list = (await f().request('GET', '/admin/cron', as('root'))).body as { name: string; exec_times: number; prev: string }[];
    const sizeTask = list.find((t) => t.name === 'update_repo_size')!;
    expect(sizeTask.exec_times).toBe(1);
    expect(sizeTask.prev).not.toBe('0001-01-01T00:00:00Z');
    const stats = await repoStats(f().app.services.repos.diskPath('pkgowner', 'sized'));
    expect(await f().app.prisma.repository.findFirstOrThrow({ where: { id: repo.id } })).toMatchObject({ size: stats.sizeKiB, isEmpty: false });
    expect(await f().app.prisma.hookTask.count({ where: { hookId: hook.id } })).toBe(0);
  });

  test('the scheduler runs jobs on their schedule and records each run', async () => {
    const cron = new CronService(f().app.prisma);
    let runs = 0;
    cron.register({ name: 'test_tick', schedule: '@every 150ms', run: async () => void runs++ });
    await cron.start();
    try {
      for (let i = 0; i < 100 && runs < 2; i++) await new Promise((r) => setTimeout(r, 100));
    } finally {
      await cron.stop();
    }
    expect(runs).toBeGreaterThanOrEqual(2);
    const row = await f().app.prisma.cronTask.findUniqueOrThrow({ where: { name: 'test_tick' } });
    expect(row.execTimes).toBeGreaterThanOrEqual(2);
    expect(row.prevAt).not.toBeNull();
    await f().app.prisma.cronTask.delete({ where: { name: 'test_tick' } });
  });

  test('admin edits of a user take effect at once', async () => {
    const token = await f().token('stranger', ['all']);
    const edit = (body: Record<string, unknown>) => f().request('PATCH', '/admin/users/stranger', { ...as('root'), body: { login_name: 'stranger', source_id: 0, ...body } });
    expect((await f().request('GET', '/user', { token })).status).toBe(200);
    expect((await edit({ prohibit_login: true })).status).toBe(200);
    expect((await f().request('GET', '/user', { token })).status).toBe(403);
    expect((await edit({ prohibit_login: false, active: false })).status).toBe(200);
    expect((await f().request('GET', '/user', { token })).status).toBe(403);
    expect((await edit({ active: true, max_repo_creation: 1 })).status).toBe(200);
    expect((await f().request('POST', '/user/repos', { token, body: { name: 'one' } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { token, body: { name: 'two' } })).status).toBe(403);
    // restricted: public repositories of others are no longer visible
    expect((await f().request('GET', '/repos/pkgowner/sized', { token })).status).toBe(200);
    expect((await edit({ restricted: true })).status).toBe(200);
    expect((await f().request('GET', '/repos/pkgowner/sized', { token })).status).toBe(404);
    // visibility: a private user disappears for anonymous callers
    expect((await f().request('GET', '/users/stranger')).status).toBe(200);
    expect((await edit({ restricted: false, visibility: 'private' })).status).toBe(200);
    expect((await f().request('GET', '/users/stranger')).status).toBe(404);
  });
}, { gitHousekeepingDelayMs: -1 });
