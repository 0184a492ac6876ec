/**
 * gitea-js (Gitea's own client) drives push mirrors and merge-upstream. The push mirror's
 * target is a second forge instance (its own database and repositories folder) reached over
 * smart HTTP with a token; real `git` checks what arrived there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { giteaApi } from 'gitea-js';
import { git } from '../forge-api/test/support/git';
import { describeForge, startForge, type Forge } from '../forge-api/test/support/forge';

describeForge(
  'gitea-js: push mirrors to another forge, merge-upstream',
  (f) => {
    let work: string;
    let other: Forge;
    let alice: ReturnType<typeof giteaApi>;
    let bob: ReturnType<typeof giteaApi>;
    let aliceToken: string;
    const disk = (forge: Forge, owner: string, name: string) => path.join(forge.dataDir, 'repositories', owner, `${name}.git`);
    const refsOf = async (dir: string) => (await git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags')).stdout;

    beforeAll(async () => {
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-mirrors-js-'));
      other = await startForge(f().provider);
      await f().user('alice');
      await f().user('bob');
      await other.user('carol');
      aliceToken = await f().token('alice', ['write:repository', 'write:user']);
      alice = giteaApi(f().url, { token: aliceToken });
      bob = giteaApi(f().url, { token: await f().token('bob', ['write:repository', 'write:user']) });
      expect((await alice.user.createCurrentUserRepo({ name: 'app', auto_init: true })).status).toBe(201);
      const carol = giteaApi(other.url, { token: await other.token('carol', ['write:repository', 'write:user']) });
      expect((await carol.user.createCurrentUserRepo({ name: 'copy', private: true })).status).toBe(201);
    });
    afterAll(async () => {
      await other?.close();
      fs.rmSync(work, { recursive: true, force: true });
    });

    test('push mirrors: add, list, get, sync to another forge with a token, sync on commit, delete', async () => {
      const carolToken = await other.token('carol', ['write:repository']);
      const added = await alice.repos.repoAddPushMirror('alice', 'app', {
        remote_address: `${other.url}/carol/copy.git`,
        remote_username: 'carol',
        remote_password: carolToken,
        interval: '8h',
        sync_on_commit: true,
      });
      expect(added.status).toBe(200);
      expect(added.data).toMatchObject({ repo_name: 'app', remote_address: `${other.url}/carol/copy.git`, interval: '8h0m0s', sync_on_commit: true, last_error: '' });
      const name = added.data.remote_name!;
      const list = await alice.repos.repoListPushMirrors('alice', 'app');
      expect(list.data.map((m) => m.remote_name)).toEqual([name]);
      expect(JSON.stringify(list.data)).not.toContain(carolToken);
      expect((await alice.repos.repoGetPushMirrorByRemoteName('alice', 'app', name)).data.remote_name).toBe(name);

      expect((await alice.repos.repoPushMirrorSync('alice', 'app')).status).toBe(200);
      expect(await refsOf(disk(other, 'carol', 'copy'))).toBe(await refsOf(disk(f(), 'alice', 'app')));
      const synced = await alice.repos.repoGetPushMirrorByRemoteName('alice', 'app', name);
      expect(synced.data.last_update).not.toBe('1970-01-01T00:00:00Z');

      // A commit through the API syncs the mirror by itself (sync_on_commit).
      const file = await alice.repos.repoCreateFile('alice', 'app', 'new.txt', { content: Buffer.from('new').toString('base64') });
      expect(file.status).toBe(201);
      await f().app.services.pushMirrors.idle();
      expect((await git(disk(other, 'carol', 'copy'), 'rev-parse', 'main')).stdout.trim()).toBe(file.data.commit!.sha);
      // The other forge serves what it received.
      const raw = await fetch(`${other.url}/api/v1/repos/carol/copy/raw/new.txt`, { headers: { authorization: `token ${carolToken}` } });
      expect(await raw.text()).toBe('new');

      expect((await alice.repos.repoDeletePushMirror('alice', 'app', name)).status).toBe(204);
      expect((await alice.repos.repoListPushMirrors('alice', 'app')).data).toEqual([]);
      await expect(bob.repos.repoListPushMirrors('alice', 'app')).rejects.toMatchObject({ status: 403 });
    });

    test('merge-upstream: fast-forward, then a merge commit; a conflict is 409', async () => {
      expect((await bob.repos.createFork('alice', 'app', {})).status).toBe(202);
      const up = await alice.repos.repoCreateFile('alice', 'app', 'up.txt', { content: Buffer.from('up').toString('base64') });
      const ff = await bob.repos.repoMergeUpstream('bob', 'app', { branch: 'main' });
      expect(ff.data).toEqual({ merge_type: 'fast-forward' });
      expect((await git(disk(f(), 'bob', 'app'), 'rev-parse', 'main')).stdout.trim()).toBe(up.data.commit!.sha);

      await bob.repos.repoCreateFile('bob', 'app', 'fork.txt', { content: Buffer.from('fork').toString('base64') });
      await alice.repos.repoCreateFile('alice', 'app', 'up2.txt', { content: Buffer.from('up2').toString('base64') });
      expect((await bob.repos.repoMergeUpstream('bob', 'app', { branch: 'main' })).data).toEqual({ merge_type: 'merge' });
      const dir = path.join(work, 'fork');
      const u = new URL(`${f().url}/bob/app.git`);
      expect((await git(work, 'clone', '-q', u.toString(), dir)).exitCode).toBe(0);
      expect(fs.readdirSync(dir).sort()).toEqual(expect.arrayContaining(['fork.txt', 'up.txt', 'up2.txt']));
      expect((await git(dir, 'log', '-1', '--format=%s')).stdout.trim()).toBe('merge upstream');

      const sha = async (who: ReturnType<typeof giteaApi>, owner: string) => (await who.repos.repoGetContents(owner, 'app', 'up.txt')).data.sha!;
      await alice.repos.repoUpdateFile('alice', 'app', 'up.txt', { content: Buffer.from('alice').toString('base64'), sha: await sha(alice, 'alice') });
      await bob.repos.repoUpdateFile('bob', 'app', 'up.txt', { content: Buffer.from('bob').toString('base64'), sha: await sha(bob, 'bob') });
      const before = (await git(disk(f(), 'bob', 'app'), 'rev-parse', 'main')).stdout.trim();
      await expect(bob.repos.repoMergeUpstream('bob', 'app', { branch: 'main' })).rejects.toMatchObject({ status: 409 });
      expect((await git(disk(f(), 'bob', 'app'), 'rev-parse', 'main')).stdout.trim()).toBe(before);
    });
  },
  { migrationsAllowLocalNetworks: true },
);
