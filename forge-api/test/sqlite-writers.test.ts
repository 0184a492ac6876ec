/**
 * SQLite with several writers: `serve --workers 2` runs two processes on one database file
 * (WAL mode, busy timeout), and many concurrent writes through both never surface SQLITE_BUSY
 * as a 500: every issue is created, with its own number.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { waitForUrl } from '../../e2e/support/ports';
import { freePort } from './support/forge';

const BIN = path.join(__dirname, '..', '..', 'bin', 'portcullis-forge.js');
const run = promisify(execFile);

describe('SQLite: concurrent writers in two worker processes', () => {
  let server: ChildProcess | undefined;
  let dataDir: string;
  let root: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-writers-'));
    const port = await freePort();
    root = `http://127.0.0.1:${port}/`;
    env = { ...process.env, FORGE_DATA_DIR: dataDir, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: root, LOG_LEVEL: 'warn', ENABLE_SWAGGER: 'false' };
    delete env.DATABASE_URL;
    await run(process.execPath, [BIN, 'admin', 'user', 'create', '--username', 'root', '--password', 'root-pass-1', '--email', 'root@example.com', '--admin'], { env });
    server = spawn(process.execPath, [BIN, 'serve', '--workers', '2'], { env, stdio: 'ignore' });
    await waitForUrl(`${root}api/v1/version`, 60000);
  }, 120000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const done = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await done;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('60 issues opened at once: all 201, numbers 1..60, journal in WAL mode', async () => {
    const basic = `Basic ${Buffer.from('root:root-pass-1').toString('base64')}`;
    const post = (p: string, body: unknown) =>
      fetch(`${root}api/v1${p}`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/user/repos', { name: 'busy' })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => post('/repos/root/busy/issues', { title: `issue ${i}` })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
    const numbers = (await Promise.all(answers.map((a) => a.json() as Promise<{ number: number }>))).map((b) => b.number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    const list = await fetch(`${root}api/v1/repos/root/busy/issues?state=all&limit=1`, { headers: { authorization: basic } });
    expect(list.headers.get('x-total-count')).toBe('60');
    // WAL is what lets readers and the other process go on while one writes.
    const db = new Database(path.join(dataDir, 'forge.db'));
    try {
      expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    } finally {
      db.close();
    }
  }, 120000);
});
