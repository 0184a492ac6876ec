/**
 * Races end in 4xx on both databases: concurrent deletes of one object give one 204 and 404s;
 * concurrent token creation with one name gives one 201 and 400s. And a crash during
 * repository creation leaves nothing half-made: after a kill -9 at any moment of
 * POST /user/repos with auto_init and a restart, the retry creates the repository (or finds
 * it complete), with its initial commit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, freePort, freshPgDatabase, PASSWORD, providers, type Forge } from './support/forge';
import { git } from './support/git';

jest.setTimeout(400_000);

const N = 8;

async function race(f: Forge, method: string, p: string, auth: object, body?: unknown): Promise<number[]> {
  const all = await Promise.all(Array.from({ length: N }, () => f.request(method, p, { ...auth, body })));
  for (const r of all) if (r.status >= 500) throw new Error(`${method} ${p} -> ${r.status} ${r.text}`);
  return all.map((r) => r.status).sort();
}

const oneWinner = (winner: number, loser: number) => [winner, ...Array(N - 1).fill(loser)];

describeForge('concurrent requests end in 4xx, never 5xx', (f) => {
  const as = { basic: ['racer', PASSWORD] as [string, string] };
  let token = '';
  const tok = () => ({ token });

  beforeAll(async () => {
    await f().user('racer', { admin: true });
    token = await f().token('racer', ['all']);
    expect((await f().request('POST', '/user/repos', { ...as, body: { name: 'r', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/orgs', { ...as, body: { username: 'raceorg' } })).status).toBe(201);
  });

  test('deletes of one issue, comment, label, milestone, hook, team, repository: one 204, the rest 404', async () => {
    const issue = (await f().request('POST', '/repos/racer/r/issues', { ...tok(), body: { title: 't' } })).body;
    const comment = (await f().request('POST', `/repos/racer/r/issues/${issue.number}/comments`, { ...tok(), body: { body: 'c' } })).body;
    const label = (await f().request('POST', '/repos/racer/r/labels', { ...tok(), body: { name: 'l', color: '#ff0000' } })).body;
    const milestone = (await f().request('POST', '/repos/racer/r/milestones', { ...tok(), body: { title: 'm' } })).body;
    const hook = (await f().request('POST', '/repos/racer/r/hooks', { ...tok(), body: { type: 'gitea', config: { url: 'http://127.0.0.1:9/', content_type: 'json' } } })).body;
    const team = (await f().request('POST', '/orgs/raceorg/teams', { ...tok(), body: { name: 'tm', permission: 'write', units: ['repo.code'] } })).body;
    expect((await f().request('POST', '/user/repos', { ...tok(), body: { name: 'gone' } })).status).toBe(201);

    expect(await race(f(), 'DELETE', `/repos/racer/r/issues/comments/${comment.id}`, tok())).toEqual(oneWinner(204, 404));
    expect(await race(f(), 'DELETE', `/repos/racer/r/labels/${label.id}`, tok())).toEqual(oneWinner(204, 404));
    expect(await race(f(), 'DELETE', `/repos/racer/r/milestones/${milestone.id}`, tok())).toEqual(oneWinner(204, 404));
    expect(await race(f(), 'DELETE', `/repos/racer/r/hooks/${hook.id}`, tok())).toEqual(oneWinner(204, 404));
    expect(await race(f(), 'DELETE', `/teams/${team.id}`, tok())).toEqual(oneWinner(204, 404));
    expect(await race(f(), 'DELETE', `/repos/racer/r/issues/${issue.number}`, tok())).toEqual(oneWinner(204, 404));
    expect(await race(f(), 'DELETE', '/repos/racer/gone', tok())).toEqual(oneWinner(204, 404));
  });

  test('repository creation with one name, personal or in an organization: one 201, the rest 409', async () => {
    expect(await race(f(), 'POST', '/user/repos', tok(), { name: 'twin', license: 'Apache-2.0' })).toEqual(oneWinner(201, 409));
    expect(await race(f(), 'POST', '/orgs/raceorg/repos', tok(), { name: 'twin', auto_init: true })).toEqual(oneWinner(201, 409));
    expect((await f().request('GET', '/repos/raceorg/twin/contents/README.md', tok())).status).toBe(200);
  });

  test('token creation with one name: one 201, the rest 400', async () => {
    const statuses = await race(f(), 'POST', '/users/racer/tokens', as, { name: 'same-name', scopes: ['read:user'] });
    expect(statuses).toEqual(oneWinner(201, 400));
  });

  test('edits racing a delete end in 2xx or 404', async () => {
    const label = (await f().request('POST', '/repos/racer/r/labels', { ...tok(), body: { name: 'e', color: '#00ff00' } })).body;
    const results = await Promise.all([
      ...Array.from({ length: 4 }, (_x, i) => f().request('PATCH', `/repos/racer/r/labels/${label.id}`, { ...tok(), body: { name: `e${i}` } })),
      f().request('DELETE', `/repos/racer/r/labels/${label.id}`, tok()),
    ]);
    for (const r of results) expect([200, 204, 404]).toContain(r.status);
  });
});

/** A forge server in its own process, so it can be killed with SIGKILL. */
async function startServer(dataDir: string, databaseUrl: string, port: number): Promise<ChildProcess> {
  const bin = path.join(__dirname, '..', '..', 'bin', 'portcullis-forge.js');
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, FORGE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: `http://127.0.0.1:${port}/`, LOG_LEVEL: 'fatal' },
    stdio: 'ignore',
  });
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/version`);
      if (res.ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('forge did not start');
}

describe.each(providers())('a crash during repository creation leaves nothing half-made [%s]', (provider) => {
  test('what a crash between the move into place and the commit leaves is undone at start-up', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-crash-'));
    let databaseUrl = `file:${path.join(dataDir, 'forge.db')}`;
    let drop: (() => Promise<void>) | null = null;
    if (provider === 'postgresql') {
      const db = await freshPgDatabase();
      databaseUrl = db.url;
      drop = db.drop;
    }
    const { buildApp } = await import('../src/app');
    try {
      let app = await buildApp({ config: { dataDir, databaseUrl, port: 0 } });
      await app.services.users.create({ username: 'halfway', email: 'halfway@example.com', password: PASSWORD, must_change_password: false });
      await app.close();
      // The state of a crash after the rename and before the row's commit: a complete folder,
      // its marker, no row.
      const repoDir = path.join(dataDir, 'repositories', 'halfway', 'r.git');
      fs.mkdirSync(repoDir, { recursive: true });
      fs.writeFileSync(path.join(repoDir, 'HEAD'), 'ref: refs/heads/main\n');
      const markers = path.join(dataDir, 'repositories', '.portcullis-creating', 'markers');
      fs.mkdirSync(markers, { recursive: true });
      fs.writeFileSync(path.join(markers, 'crashed'), repoDir);
      app = await buildApp({ config: { dataDir, databaseUrl, port: 0 } });
      expect(fs.existsSync(repoDir)).toBe(false);
      expect(fs.readdirSync(markers)).toEqual([]);
      await app.listen({ port: 0, host: '127.0.0.1' });
      const res = await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v1/user/repos`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`halfway:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'r', auto_init: true }),
      });
      expect(res.status).toBe(201);
      expect(((await res.json()) as { empty: boolean }).empty).toBe(false);
      await app.close();
    } finally {
      if (drop) await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('kill -9 at varying moments of POST /user/repos with auto_init; the retry always completes it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-crash-'));
    let databaseUrl = `file:${path.join(dataDir, 'forge.db')}`;
    let drop: (() => Promise<void>) | null = null;
    if (provider === 'postgresql') {
      const db = await freshPgDatabase();
      databaseUrl = db.url;
      drop = db.drop;
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/api/v1`;
    const auth = { authorization: `Basic ${Buffer.from(`crasher:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };
    let server = await startServer(dataDir, databaseUrl, port);
    try {
      // The user is created through the admin API of a first admin made by the CLI's service.
      const { buildApp } = await import('../src/app');
      const app = await buildApp({ config: { dataDir, databaseUrl, port: 0 }, skipMigrations: true });
      await app.services.users.create({ username: 'crasher', email: 'crasher@example.com', password: PASSWORD, must_change_password: false });
      await app.close();

      // Each restart costs a server start-up (seconds on a busy machine): three moments.
      const delays = [0, 40, 150];
      for (const [i, delay] of delays.entries()) {
        const name = `repo${i}`;
        const body = JSON.stringify({ name, auto_init: true, description: 'crash test' });
        const first = fetch(`${base}/user/repos`, { method: 'POST', headers: auth, body }).catch(() => null);
        await new Promise((r) => setTimeout(r, delay));
        const exited = new Promise((r) => server.once('exit', r));
        server.kill('SIGKILL');
        await exited;
        await first;
        server = await startServer(dataDir, databaseUrl, port);
        const retry = await fetch(`${base}/user/repos`, { method: 'POST', headers: auth, body });
        // 201 when the first attempt did not finish; 409 only when it had finished completely.
        expect([201, 409]).toContain(retry.status);
        const repo = await fetch(`${base}/repos/crasher/${name}`, { headers: auth });
        expect(repo.status).toBe(200);
        const json = (await repo.json()) as { empty: boolean; default_branch: string };
        expect(json.empty).toBe(false);
        const log = await git(path.join(dataDir, 'repositories', 'crasher', `${name}.git`), 'log', '--format=%s', json.default_branch);
        expect(log.stdout.trim()).toBe('Initial commit');
      }
      // Nothing is left over from the interrupted attempts.
      const leftovers = fs.readdirSync(path.join(dataDir, 'repositories', '.portcullis-creating', 'markers'));
      expect(leftovers).toEqual([]);
    } finally {
      server.kill('SIGKILL');
      if (drop) await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
