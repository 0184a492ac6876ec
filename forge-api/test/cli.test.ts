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

    test('serve with START_SSH_SERVER: git over SSH with a key added through the API; the host key made on the first start is kept', async () => {
      const port = await freePort();
      const sshPort = await freePort();
      const root = `http://127.0.0.1:${port}/`;
      const keyFile = path.join(dataDir, 'id_root');
      await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
      const serveEnv = { ...env, FORGE_PORT: String(port), FORGE_HOST: '127.0.0.1', ROOT_URL: root, LOG_LEVEL: 'warn', START_SSH_SERVER: 'true', SSH_LISTEN_HOST: '127.0.0.1', SSH_PORT: String(sshPort), BUILTIN_SSH_SERVER_USER: 'git' };
      const start = async () => {
        server = spawn(process.execPath, [BIN, 'serve'], { env: serveEnv, stdio: 'ignore' });
        // Two cold starts of the TypeScript sources: slow on a loaded machine.
        await waitForUrl(`${root}api/v1/version`, 90_000);
      };
      const stop = async () => {
        server!.kill('SIGTERM');
        expect(await new Promise((r) => server!.once('exit', (c) => r(c)))).toBe(0);
      };
      const auth = { authorization: `Basic ${Buffer.from('root:first-secret').toString('base64')}`, 'content-type': 'application/json' };
      await start();
      expect((await fetch(`${root}api/v1/user/keys`, { method: 'POST', headers: auth, body: JSON.stringify({ title: 'cli', key: fs.readFileSync(`${keyFile}.pub`, 'utf8') }) })).status).toBe(201);
      const created = await fetch(`${root}api/v1/user/repos`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'over-ssh', auto_init: true, private: true }) });
      const repo = (await created.json()) as { ssh_url: string };
      expect(repo.ssh_url).toBe(`ssh://git@127.0.0.1:${sshPort}/root/over-ssh.git`);
      const hostKey = fs.readFileSync(path.join(dataDir, 'ssh', 'forge.ed25519.pub'), 'utf8').trim();
      const knownHosts = path.join(dataDir, 'known_hosts');
      fs.writeFileSync(knownHosts, `[127.0.0.1]:${sshPort} ${hostKey}\n`);
      const sshCommand = `ssh -F /dev/null -i ${keyFile} -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${knownHosts}`;
      const clone = (dir: string) => run('git', ['clone', '-q', repo.ssh_url, path.join(dataDir, dir)], { env: { ...process.env, GIT_SSH_COMMAND: sshCommand, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
      await clone('first');
      expect(fs.existsSync(path.join(dataDir, 'first', 'README.md'))).toBe(true);
      await stop();
      // A restart serves the same host key: the strict known_hosts entry still matches.
      await start();
      await clone('second');
      expect(fs.readFileSync(path.join(dataDir, 'ssh', 'forge.ed25519.pub'), 'utf8').trim()).toBe(hostKey);
      await stop();
    }, 240_000);

    test('usage errors exit 2', async () => {
      await expect(run(process.execPath, [BIN, 'admin', 'user', 'create', '--username', 'x'], { env })).rejects.toMatchObject({ code: 2 });
      await expect(run(process.execPath, [BIN, 'frobnicate'], { env })).rejects.toMatchObject({ code: 2 });
    });
  });
}
