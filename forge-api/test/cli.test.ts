/** The command line as a user runs it: bin/portcullis-forge.js with the documented environment. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, freshPgDatabase, providers } from './support/forge';
import { waitForUrl } from '../../e2e/support/ports';

const BIN = path.join(__dirname, '..', '..', 'bin', 'portcullis-forge.js');
const run = promisify(execFile);

for (const provider of providers()) {
  describe(`portcullis-forge CLI [${provider}]`, () => {
    let dataDir: string;
    let env: NodeJS.ProcessEnv;
    let server: ChildProcess | null = null;
    let drop: (() => Promise<void>) | null = null;

    beforeAll(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-cli-'));
      env = { ...process.env, FORGE_DATA_DIR: dataDir };
      delete env.DATABASE_URL;
      if (provider === 'postgresql') {
        const db = await freshPgDatabase();
        env.DATABASE_URL = db.url;
        drop = db.drop;
      }
    });
    afterAll(async () => {
      if (server && server.exitCode === null) {
        server.kill('SIGTERM');
        await new Promise((r) => server!.once('exit', r));
      }
      if (drop) await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    test('admin user create makes the first admin; a duplicate is refused with a message', async () => {
      const { stdout } = await run(process.execPath, [BIN, 'admin', 'user', 'create', '--username', 'root', '--password', 'first-secret', '--email', 'root@example.com', '--admin'], { env });
      expect(stdout).toContain("New user 'root' has been successfully created!");
      await expect(run(process.execPath, [BIN, 'admin', 'user', 'create', '--username', 'root', '--password', 'first-secret', '--email', 'r2@example.com'], { env })).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('user already exists'),
      });
      const list = await run(process.execPath, [BIN, 'admin', 'user', 'list'], { env });
      expect(list.stdout).toMatch(/1\troot\troot@example.com\ttrue\ttrue/);
    });

    test('serve listens on FORGE_PORT with ROOT_URL, and the admin can use the API', async () => {
      const port = await freePort();
      const root = `http://127.0.0.1:${port}/`;
      server = spawn(process.execPath, [BIN, 'serve'], { env: { ...env, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: root, LOG_LEVEL: 'warn' }, stdio: 'ignore' });
      await waitForUrl(`${root}api/v1/version`);
      const res = await fetch(`${root}api/v1/user`, { headers: { authorization: `Basic ${Buffer.from('root:first-secret').toString('base64')}` } });
      expect(res.status).toBe(200);
      const me = (await res.json()) as { login: string; is_admin: boolean; html_url: string };
      expect(me).toMatchObject({ login: 'root', is_admin: true, html_url: `${root}root` });
      server.kill('SIGTERM');
      const code = await new Promise((r) => server!.once('exit', (c) => r(c)));
      expect(code).toBe(0);
    });

    test('usage errors exit 2', async () => {
      await expect(run(process.execPath, [BIN, 'admin', 'user', 'create', '--username', 'x'], { env })).rejects.toMatchObject({ code: 2 });
      await expect(run(process.execPath, [BIN, 'frobnicate'], { env })).rejects.toMatchObject({ code: 2 });
    });
  });
}
