/**
 * git over the forge's built-in SSH server, driven by the real OpenSSH client (`ssh`) under the
 * real git: user keys, deploy keys (read-only vs writable), keys of other repositories, unknown
 * keys, protected branches, archived repositories, the wiki, and the clone URL the API shows.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { freePort, PASSWORD, providers, startForge, type Forge } from './support/forge';
import { gitEnv } from '../src/services/git/run';

const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
const keysDir = fs.mkdtempSync(path.join(os.tmpdir(), 'git-ssh-keys-'));
const keyNames = ['alice', 'bob', 'carol', 'ro', 'rw', 'other', 'stranger'];
const pub: Record<string, string> = {};
beforeAll(() => {
  for (const name of keyNames) {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${name}@test`, '-f', path.join(keysDir, name)]);
    pub[name] = fs.readFileSync(path.join(keysDir, `${name}.pub`), 'utf8').trim();
  }
});
afterAll(() => fs.rmSync(keysDir, { recursive: true, force: true }));

/**
 * OpenSSH options: this key only, no agent, no config or known_hosts of the machine (or only
 * `knownHosts`, strictly checked).
 */
function sshArgs(key: string, knownHosts?: string): string[] {
  const hosts = knownHosts ? ['-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${knownHosts}`] : ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null'];
  return ['-F', '/dev/null', '-i', path.join(keysDir, key), '-o', 'IdentitiesOnly=yes', '-o', 'IdentityAgent=none', ...hosts, '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR'];
}

/** The real git with GIT_SSH_COMMAND using `key`; never throws. */
function gitAs(key: string | [string, ...string[]], cwd: string, ...args: string[]) {
  const [name, ...extra] = Array.isArray(key) ? key : [key];
  return execa('git', args, {
    cwd,
    env: gitEnv({
      GIT_SSH_COMMAND: `ssh ${[...sshArgs(name), ...extra].join(' ')}`,
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.com',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.com',
    }),
    extendEnv: false,
    reject: false,
  });
}

/** The `error:` lines the forge sent, as the git client prints them. */
function errorLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((l) => /^(remote: )?error:/.test(l) && !l.startsWith('error: failed to push'))
    .map((l) => l.trim());
}

/** Push webhook payloads posted to a receiver on 127.0.0.1. */
class PushReceiver {
  payloads: any[] = [];
  private server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.headers['x-gitea-event'] === 'push') this.payloads.push(JSON.parse(body));
      res.end('ok');
    });
  });
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hook`;
  }
  async waitFor(pred: (p: any) => boolean): Promise<any> {
    for (let i = 0; i < 200; i++) {
      const found = this.payloads.find(pred);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no matching push delivery among ${this.payloads.length}`);
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

for (const provider of providers()) {
  describe(`git over SSH [${provider}]`, () => {
    let f: Forge;
    let sshPort = 0;
    const hooks = new PushReceiver();
    let cloneStarted = 0;
    let work: string;
    let url: (repo: string) => string;
    const ids: Record<string, number> = {};

    beforeAll(async () => {
      sshPort = await freePort();
      f = await startForge(provider, {
        startSshServer: true,
        sshListenHost: '127.0.0.1',
        sshListenPort: sshPort,
        sshPort,
        sshDomain: '127.0.0.1',
        sshBuiltinServerUser: 'git',
        sshUser: 'git',
        webhookAllowedHostList: 'loopback',
      });
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'git-ssh-work-'));
      url = (repo) => `ssh://git@127.0.0.1:${sshPort}/${repo}.git`;
      await f.user('alice');
      await f.user('bob');
      await f.user('carol');
      for (const [user, title] of [['alice', 'alice'], ['bob', 'bob'], ['carol', 'carol']]) {
        const res = await f.request('POST', '/user/keys', { ...as(user), body: { title, key: pub[user] } });
        expect(res.status).toBe(201);
        ids[title] = res.body.id;
      }
      for (const name of ['one', 'two', 'arch']) {
        expect((await f.request('POST', '/user/repos', { ...as('alice'), body: { name, private: true, auto_init: true, default_branch: 'main' } })).status).toBe(201);
      }
      for (const [repo, title, key, readOnly] of [['one', 'ro', 'ro', true], ['one', 'rw', 'rw', false], ['two', 'other', 'other', false]] as const) {
        const res = await f.request('POST', `/repos/alice/${repo}/keys`, { ...as('alice'), body: { title, key: pub[key], read_only: readOnly } });
        expect(res.status).toBe(201);
        ids[title] = res.body.key_id;
      }
      const hookUrl = await hooks.start();
      const hook = await f.request('POST', '/repos/alice/one/hooks', { ...as('alice'), body: { type: 'gitea', active: true, events: ['push'], config: { url: hookUrl, content_type: 'json' } } });
      expect(hook.status).toBe(201);
      // carol reads alice/one (collaborator with read access)
      expect((await f.request('PUT', '/repos/alice/one/collaborators/carol', { ...as('alice'), body: { permission: 'read' } })).status).toBe(204);
    });
    afterAll(async () => {
      await hooks.stop();
      await f?.close();
      if (work) fs.rmSync(work, { recursive: true, force: true });
    });

    test("the repository JSON shows Gitea's ssh_url for a non-22 port; the host key is kept under the data directory", async () => {
      const repo = await f.request('GET', '/repos/alice/one', as('alice'));
      expect(repo.body.ssh_url).toBe(`ssh://git@127.0.0.1:${sshPort}/alice/one.git`);
      expect(repo.body.clone_url).toBe(`${f.url}/alice/one.git`);
      // The host key the server shows is the one generated under the data directory.
      const hostKey = fs.readFileSync(path.join(f.dataDir, 'ssh', 'forge.ed25519.pub'), 'utf8').trim();
      const knownHosts = path.join(work, 'known_hosts');
      fs.writeFileSync(knownHosts, `[127.0.0.1]:${sshPort} ${hostKey}\n`);
      const strict = await execa('ssh', [...sshArgs('alice', knownHosts), '-p', String(sshPort), '-T', 'git@127.0.0.1'], { reject: false });
      expect(strict.stderr).toContain("You've successfully authenticated");
      expect(strict.exitCode).toBe(0);
    });

    test('a user key clones a private repository and pushes; the push is processed as over HTTP', async () => {
      const dir = path.join(work, 'alice-one');
      cloneStarted = Date.now();
      const clone = await gitAs('alice', work, 'clone', '-q', url('alice/one'), dir);
      expect(clone.stderr).toBe('');
      expect(clone.exitCode).toBe(0);
      expect(fs.readFileSync(path.join(dir, 'README.md'), 'utf8')).toContain('one');
      await gitAs('alice', dir, 'checkout', '-q', '-b', 'feature');
      fs.writeFileSync(path.join(dir, 'a.txt'), 'from alice over ssh\n');
      await gitAs('alice', dir, 'add', 'a.txt');
      await gitAs('alice', dir, 'commit', '-q', '-m', 'over ssh');
      const push = await gitAs('alice', dir, 'push', '-q', 'origin', 'feature');
      expect(push.exitCode).toBe(0);
      const sha = (await gitAs('alice', dir, 'rev-parse', 'HEAD')).stdout.trim();
      const branch = await f.request('GET', '/repos/alice/one/branches/feature', as('alice'));
      expect(branch.body.commit.id).toBe(sha);
      // The push was processed as over HTTP: branch count refreshed, push webhook sent (its
      // repository carries the SSH clone URL).
      expect((await f.request('GET', '/repos/alice/one', as('alice'))).body.branch_count).toBe(2);
      const delivered = await hooks.waitFor((p) => p.ref === 'refs/heads/feature');
      expect(delivered).toMatchObject({ after: sha, pusher: { login: 'alice' }, repository: { full_name: 'alice/one', ssh_url: url('alice/one') } });
      expect(delivered.commits.map((c: { message: string }) => c.message.trim())).toEqual(['over ssh']);
      // Without the .git suffix and with a leading '/' as some clients send it.
      const again = await gitAs(['alice', '-p', String(sshPort)], work, 'clone', '-q', 'git@127.0.0.1:/alice/one', path.join(work, 'alice-one-2'));
      expect(again.exitCode).toBe(0);
    });

    test('last_used_at of a key moves when it is used (user keys and deploy keys)', async () => {
      const row = await f.app.prisma.publicKey.findUniqueOrThrow({ where: { id: ids.alice } });
      const keys = await f.request('GET', '/user/keys', as('alice'));
      expect(keys.body.find((k: { id: number }) => k.id === ids.alice).last_used_at).toBe(row.updatedAt.toISOString().replace(/\.\d+Z$/, 'Z'));
      expect(row.updatedAt.getTime()).toBeGreaterThanOrEqual(cloneStarted);
    });

    test("a user without access is refused with Gitea's text; a reader's push is refused in pre-receive", async () => {
      const bob = await gitAs('bob', work, 'clone', '-q', url('alice/one'), path.join(work, 'bob-one'));
      expect(bob.exitCode).not.toBe(0);
      expect(errorLines(bob.stderr)).toEqual(['error:', `error: User: ${(await f.app.services.users.findByName('bob'))!.id}:bob with Key: ${ids.bob}:bob is not authorized to read alice/one.`, 'error:']);
      expect(bob.stderr).toContain('fatal: Could not read from remote repository.');

      const dir = path.join(work, 'carol-one');
      expect((await gitAs('carol', work, 'clone', '-q', url('alice/one'), dir)).exitCode).toBe(0);
      fs.writeFileSync(path.join(dir, 'c.txt'), 'carol\n');
      await gitAs('carol', dir, 'add', 'c.txt');
      await gitAs('carol', dir, 'commit', '-q', '-m', 'carol');
      const push = await gitAs('carol', dir, 'push', 'origin', 'main');
      expect(push.exitCode).not.toBe(0);
      expect(errorLines(push.stderr)).toEqual(['remote: error:', 'remote: error: User permission denied for writing.', 'remote: error:']);
    });

    test('a read-only deploy key clones but may not push; a writable one pushes', async () => {
      const dir = path.join(work, 'ro-one');
      const clone = await gitAs('ro', work, 'clone', '-q', url('alice/one'), dir);
      expect(clone.exitCode).toBe(0);
      fs.writeFileSync(path.join(dir, 'ro.txt'), 'ro\n');
      await gitAs('ro', dir, 'add', 'ro.txt');
      await gitAs('ro', dir, 'commit', '-q', '-m', 'ro');
      const push = await gitAs('ro', dir, 'push', 'origin', 'HEAD:deploy-ro');
      expect(push.exitCode).not.toBe(0);
      expect(errorLines(push.stderr)).toEqual(['error:', `error: Deploy Key: ${ids.ro}:ro is not authorized to write to alice/one.`, 'error:']);

      const rw = await gitAs('rw', dir, 'push', '-q', `${url('alice/one')}`, 'HEAD:deploy-rw');
      expect(rw.exitCode).toBe(0);
      const branch = await f.request('GET', '/repos/alice/one/branches/deploy-rw', as('alice'));
      expect(branch.status).toBe(200);
      expect(branch.body.commit.message.trim()).toBe('ro');
      // Gitea names the repository's owner as the pusher of a deploy key's push.
      expect(await hooks.waitFor((p) => p.ref === 'refs/heads/deploy-rw')).toMatchObject({ pusher: { login: 'alice' } });
      expect(hooks.payloads.some((p) => p.ref === 'refs/heads/deploy-ro')).toBe(false);
      const grant = await f.app.prisma.deployKey.findFirstOrThrow({ where: { keyId: ids.rw } });
      expect(grant.updatedAt.getTime()).toBeGreaterThanOrEqual(cloneStarted);
    });

    test('a deploy key reaches only its own repository; an unknown key and another login name are refused', async () => {
      const other = await gitAs('other', work, 'clone', '-q', url('alice/one'), path.join(work, 'other-one'));
      expect(other.exitCode).not.toBe(0);
      expect(errorLines(other.stderr)).toContain(`error: Public (Deploy) Key: ${ids.other}:other is not authorized to read alice/one.`);
      expect((await gitAs('other', work, 'clone', '-q', url('alice/two'), path.join(work, 'other-two'))).exitCode).toBe(0);

      const stranger = await gitAs('stranger', work, 'clone', '-q', url('alice/one'), path.join(work, 'stranger-one'));
      expect(stranger.exitCode).not.toBe(0);
      expect(stranger.stderr).toContain('Permission denied (publickey)');

      const wrongUser = await gitAs('alice', work, 'clone', '-q', `ssh://alice@127.0.0.1:${sshPort}/alice/one.git`, path.join(work, 'wrong-user'));
      expect(wrongUser.exitCode).not.toBe(0);
      expect(wrongUser.stderr).toContain('Permission denied (publickey)');

      const missing = await gitAs('alice', work, 'clone', '-q', url('alice/nope'), path.join(work, 'nope'));
      expect(errorLines(missing.stderr)).toContain('error: Cannot find repository: alice/nope');
      const badCommand = await execa('ssh', [...sshArgs('alice'), '-p', String(sshPort), 'git@127.0.0.1', 'rm -rf /'], { reject: false });
      expect(badCommand.exitCode).toBe(1);
      expect(errorLines(badCommand.stderr)).toContain('error: Invalid repository path');
    });

    test("a protected branch refuses an SSH push with Gitea's text, for users and deploy keys", async () => {
      const rule = await f.request('POST', '/repos/alice/one/branch_protections', { ...as('alice'), body: { rule_name: 'main' } });
      expect(rule.status).toBe(201);
      const dir = path.join(work, 'alice-one');
      await gitAs('alice', dir, 'checkout', '-q', 'main');
      fs.writeFileSync(path.join(dir, 'p.txt'), 'protected\n');
      await gitAs('alice', dir, 'add', 'p.txt');
      await gitAs('alice', dir, 'commit', '-q', '-m', 'to main');
      const push = await gitAs('alice', dir, 'push', 'origin', 'main');
      expect(push.exitCode).not.toBe(0);
      expect(errorLines(push.stderr)).toEqual(['remote: error:', 'remote: error: Not allowed to push to protected branch main', 'remote: error:']);
      const deploy = await gitAs('rw', dir, 'push', url('alice/one'), 'main');
      expect(errorLines(deploy.stderr)).toContain('remote: error: Not allowed to push to protected branch main');
      // A rule that lets writers push but keeps deploy keys out of its allow-list.
      await f.request('PATCH', '/repos/alice/one/branch_protections/main', { ...as('alice'), body: { enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: ['alice'] } });
      expect((await gitAs('rw', dir, 'push', url('alice/one'), 'main')).exitCode).not.toBe(0);
      expect((await gitAs('alice', dir, 'push', '-q', 'origin', 'main')).exitCode).toBe(0);
    });

    test('an archived repository refuses pushes but can be cloned', async () => {
      expect((await f.request('PATCH', '/repos/alice/arch', { ...as('alice'), body: { archived: true } })).status).toBe(200);
      const dir = path.join(work, 'arch');
      expect((await gitAs('alice', work, 'clone', '-q', url('alice/arch'), dir)).exitCode).toBe(0);
      fs.writeFileSync(path.join(dir, 'x.txt'), 'x\n');
      await gitAs('alice', dir, 'add', 'x.txt');
      await gitAs('alice', dir, 'commit', '-q', '-m', 'x');
      const push = await gitAs('alice', dir, 'push', 'origin', 'main');
      expect(errorLines(push.stderr)).toContain('error: Repo: alice/arch is archived.');
    });

    test('the wiki: pushed and cloned over SSH, read through the API', async () => {
      const dir = path.join(work, 'wiki');
      fs.mkdirSync(dir);
      await gitAs('alice', dir, 'init', '-q', '-b', 'main');
      fs.writeFileSync(path.join(dir, 'Home.md'), '# Welcome over SSH\n');
      await gitAs('alice', dir, 'add', 'Home.md');
      await gitAs('alice', dir, 'commit', '-q', '-m', 'wiki home');
      const push = await gitAs('alice', dir, 'push', '-q', url('alice/one.wiki'), 'main');
      expect(push.stderr).toBe('');
      expect(push.exitCode).toBe(0);
      const page = await f.request('GET', '/repos/alice/one/wiki/page/Home', as('alice'));
      expect(page.status).toBe(200);
      expect(Buffer.from(page.body.content_base64, 'base64').toString()).toBe('# Welcome over SSH\n');
      // A reader clones the wiki and may not push to it.
      const carol = path.join(work, 'carol-wiki');
      expect((await gitAs('carol', work, 'clone', '-q', url('alice/one.wiki'), carol)).exitCode).toBe(0);
      expect(fs.readFileSync(path.join(carol, 'Home.md'), 'utf8')).toBe('# Welcome over SSH\n');
      const refused = await gitAs('carol', carol, 'push', 'origin', 'main:other');
      expect(errorLines(refused.stderr)).toContain(`error: User: ${(await f.app.services.users.findByName('carol'))!.id}:carol with Key: ${ids.carol}:carol is not authorized to write to alice/one.wiki.`);
    });

    test('git archive --remote over SSH (git-upload-archive) with read access', async () => {
      const tarFile = path.join(work, 'one.tar');
      const archive = await gitAs('ro', work, 'archive', `--remote=${url('alice/one')}`, '--output', tarFile, 'main', 'README.md');
      expect(archive.stderr).toBe('');
      expect(archive.exitCode).toBe(0);
      expect(execFileSync('tar', ['-tf', tarFile], { encoding: 'utf8' }).trim()).toBe('README.md');
      const refused = await gitAs('bob', work, 'archive', `--remote=${url('alice/one')}`, 'main');
      expect(errorLines(refused.stderr)).toContain(`error: User: ${(await f.app.services.users.findByName('bob'))!.id}:bob with Key: ${ids.bob}:bob is not authorized to read alice/one.`);
    });

    test('ssh without a command greets the key owner and gives no shell', async () => {
      const res = await execa('ssh', [...sshArgs('alice'), '-p', String(sshPort), '-T', 'git@127.0.0.1'], { reject: false });
      expect(res.exitCode).toBe(0);
      expect(res.stderr).toContain("Hi there, alice! You've successfully authenticated with the key named alice, but");
      const deploy = await execa('ssh', [...sshArgs('ro'), '-p', String(sshPort), '-T', 'git@127.0.0.1'], { reject: false });
      expect(deploy.stderr).toContain("You've successfully authenticated with the deploy key named ro");
    });
  });
}
