/**
 * gitea-js (Gitea's own client) sets up SSH access the way a user or a CI system does (a user
 * key, a read-only deploy key, the repository's ssh_url); the real OpenSSH client under real
 * git then uses it against the forge's built-in SSH server.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { giteaApi } from 'gitea-js';
import { freePort, providers, startForge, type Forge } from '../forge-api/test/support/forge';
import { gitEnv } from '../forge-api/src/services/git/run';

for (const provider of providers()) {
  describe(`gitea-js + OpenSSH: git over SSH [${provider}]`, () => {
    let f: Forge;
    let work: string;
    let alice: ReturnType<typeof giteaApi>;
    const key = (name: string) => path.join(work, name);
    const gitWith = (keyName: string, cwd: string, ...args: string[]) =>
      execa('git', args, {
        cwd,
        extendEnv: false,
        reject: false,
        env: gitEnv({
          GIT_SSH_COMMAND: `ssh -F /dev/null -i ${key(keyName)} -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
          GIT_AUTHOR_NAME: 'Dev',
          GIT_AUTHOR_EMAIL: 'dev@example.com',
          GIT_COMMITTER_NAME: 'Dev',
          GIT_COMMITTER_EMAIL: 'dev@example.com',
        }),
      });

    beforeAll(async () => {
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-ssh-js-'));
      for (const name of ['laptop', 'ci']) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', key(name)]);
      const sshPort = await freePort();
      f = await startForge(provider, { startSshServer: true, sshListenHost: '127.0.0.1', sshListenPort: sshPort, sshPort, sshDomain: '127.0.0.1', sshBuiltinServerUser: 'git', sshUser: 'git' });
      await f.user('alice');
      alice = giteaApi(f.url, { token: await f.token('alice', ['write:repository', 'write:user']) });
    });
    afterAll(async () => {
      await f?.close();
      if (work) fs.rmSync(work, { recursive: true, force: true });
    });

    test('a user key added with userCurrentPostKey clones and pushes to the ssh_url gitea-js reads', async () => {
      const added = await alice.user.userCurrentPostKey({ title: 'laptop', key: fs.readFileSync(`${key('laptop')}.pub`, 'utf8') });
      expect(added.status).toBe(201);
      const repo = (await alice.user.createCurrentUserRepo({ name: 'service', private: true, auto_init: true, default_branch: 'main' })).data;
      expect(repo.ssh_url).toMatch(/^ssh:\/\/git@127\.0\.0\.1:\d+\/alice\/service\.git$/);
      const dir = path.join(work, 'service');
      expect((await gitWith('laptop', work, 'clone', '-q', repo.ssh_url!, dir)).exitCode).toBe(0);
      fs.writeFileSync(path.join(dir, 'deploy.sh'), 'echo deploy\n');
      await gitWith('laptop', dir, 'add', '.');
      await gitWith('laptop', dir, 'commit', '-qm', 'deploy script');
      expect((await gitWith('laptop', dir, 'push', '-q', 'origin', 'main')).exitCode).toBe(0);
      const file = await alice.repos.repoGetContents('alice', 'service', 'deploy.sh', { ref: 'main' });
      expect(Buffer.from(file.data.content!, 'base64').toString()).toBe('echo deploy\n');
      expect((await alice.user.userCurrentListKeys()).data.map((k) => k.title)).toEqual(['laptop']);
    });

    test('a read-only deploy key added with repoCreateKey fetches; its push is refused with Gitea\'s text', async () => {
      const deploy = await alice.repos.repoCreateKey('alice', 'service', { title: 'ci', key: fs.readFileSync(`${key('ci')}.pub`, 'utf8'), read_only: true });
      expect(deploy.data.read_only).toBe(true);
      const repo = (await alice.repos.repoGet('alice', 'service')).data;
      const dir = path.join(work, 'ci-clone');
      const cloned = await gitWith('ci', work, 'clone', '-q', repo.ssh_url!, dir);
      expect(cloned.stderr).toBe('');
      expect(cloned.exitCode).toBe(0);
      expect(fs.readFileSync(path.join(dir, 'deploy.sh'), 'utf8')).toBe('echo deploy\n');
      fs.writeFileSync(path.join(dir, 'tamper.txt'), 'x');
      await gitWith('ci', dir, 'add', '.');
      await gitWith('ci', dir, 'commit', '-qm', 'tamper');
      const push = await gitWith('ci', dir, 'push', 'origin', 'main');
      expect(push.exitCode).not.toBe(0);
      expect(push.stderr).toContain(`error: Deploy Key: ${deploy.data.key_id}:ci is not authorized to write to alice/service.`);
      // Deleting the deploy key with gitea-js ends its access.
      await alice.repos.repoDeleteKey('alice', 'service', deploy.data.id!);
      const again = await gitWith('ci', work, 'clone', '-q', repo.ssh_url!, path.join(work, 'ci-again'));
      expect(again.exitCode).not.toBe(0);
      expect(again.stderr).toContain('Permission denied (publickey)');
    });
  });
}
