/**
 * gitea-js (Gitea's own client) drives the repository group's main operations against the
 * forge; real `git` checks their effects: an archived repository refuses a push, a fork clones
 * and borrows its parent's objects, a generated repository has one fresh commit, a migrated
 * repository has the source's history, a deploy key and a transfer round-trip.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { giteaApi } from 'gitea-js';
import { git } from '../forge-api/test/support/git';
import { describeForge } from '../forge-api/test/support/forge';

describeForge(
  'gitea-js: edit, fork, generate, migrate, deploy keys, transfer',
  (f) => {
    let work: string;
    let alice: ReturnType<typeof giteaApi>;
    let bob: ReturnType<typeof giteaApi>;
    let aliceToken: string;
    let bobToken: string;
    const withToken = (url: string, user: string, token: string) => {
      const u = new URL(url);
      u.username = user;
      u.password = token;
      return u.toString();
    };
    const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);

    beforeAll(async () => {
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-repo-settings-js-'));
      await f().user('alice');
      await f().user('bob');
      aliceToken = await f().token('alice', ['write:repository', 'write:user', 'write:organization', 'write:issue']);
      bobToken = await f().token('bob', ['write:repository', 'write:user']);
      alice = giteaApi(f().url, { token: aliceToken });
      bob = giteaApi(f().url, { token: bobToken });
      const created = await alice.user.createCurrentUserRepo({ name: 'app', auto_init: true, description: 'the app' });
      expect(created.status).toBe(201);
    });
    afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

    test('repoEdit: settings and archived (a push is refused, un-archiving allows it again)', async () => {
      const edited = await alice.repos.repoEdit('alice', 'app', { website: 'https://app.example', has_wiki: false, template: true, archived: true });
      expect(edited.data).toMatchObject({ website: 'https://app.example', has_wiki: false, template: true, archived: true });
      const dir = path.join(work, 'app');
      expect((await git(work, 'clone', '-q', withToken(edited.data.clone_url!, 'alice', aliceToken), dir)).exitCode).toBe(0);
      fs.writeFileSync(path.join(dir, 'new.txt'), 'x');
      await git(dir, 'add', '.');
      await git(dir, 'commit', '-qm', 'new');
      const refused = await git(dir, 'push', 'origin', 'HEAD');
      expect(refused.exitCode).not.toBe(0);
      expect(refused.stderr).toContain('This repo is archived');
      await alice.repos.repoEdit('alice', 'app', { archived: false });
      expect((await git(dir, 'push', '-q', 'origin', 'HEAD')).exitCode).toBe(0);
      const byId = await alice.repositories.repoGetById(edited.data.id!);
      expect(byId.data.full_name).toBe('alice/app');
    });

    test('createFork / listForks: the fork clones and borrows the parent objects', async () => {
      const fork = await bob.repos.createFork('alice', 'app', { name: 'app-fork' });
      expect(fork.status).toBe(202);
      expect(fork.data).toMatchObject({ full_name: 'bob/app-fork', fork: true, parent: { full_name: 'alice/app' } });
      const forks = await alice.repos.listForks('alice', 'app');
      expect(forks.data.map((r) => r.full_name)).toEqual(['bob/app-fork']);
      expect(fs.readFileSync(path.join(disk('bob', 'app-fork'), 'objects', 'info', 'alternates'), 'utf8')).toContain('alice/app.git/objects');
      const dir = path.join(work, 'fork');
      expect((await git(work, 'clone', '-q', withToken(fork.data.clone_url!, 'bob', bobToken), dir)).exitCode).toBe(0);
      expect(fs.existsSync(path.join(dir, 'new.txt'))).toBe(true);
      await expect(bob.repos.createFork('alice', 'app', {})).rejects.toMatchObject({ status: 409 });
    });

    test('generateRepo from the template: one fresh commit', async () => {
      const gen = await bob.repos.generateRepo('alice', 'app', { owner: 'bob', name: 'fresh', git_content: true });
      expect(gen.status).toBe(201);
      const log = (await git(disk('bob', 'fresh'), 'log', '--format=%s', gen.data.default_branch!)).stdout.trim().split('\n');
      expect(log).toEqual(['Initial commit']);
      expect((await git(disk('bob', 'fresh'), 'show', `${gen.data.default_branch}:new.txt`)).stdout).toBe('x');
    });

    test('repoMigrate: the copy has the source history', async () => {
      const mig = await bob.repos.repoMigrate({ clone_addr: `${f().url}/alice/app.git`, repo_name: 'imported' });
      expect(mig.status).toBe(201);
      expect(mig.data.original_url).toBe(`${f().url}/alice/app.git`);
      const src = (await git(disk('alice', 'app'), 'rev-parse', 'HEAD')).stdout;
      expect((await git(disk('bob', 'imported'), 'rev-parse', 'HEAD')).stdout).toBe(src);
    });

    test('stars, assignees, reviewers, repository teams and issue pins through the client', async () => {
      expect((await bob.user.userCurrentPutStar('alice', 'app')).status).toBe(204);
      expect((await bob.user.userCurrentCheckStarring('alice', 'app')).status).toBe(204);
      const gazers = await alice.repos.repoListStargazers('alice', 'app');
      expect(gazers.data.map((u) => u.login)).toEqual(['bob']);
      expect(gazers.headers.get('x-total-count')).toBe('1');
      const starred = await bob.user.userCurrentListStarred();
      expect(starred.data.map((r) => [r.full_name, r.stars_count])).toEqual([['alice/app', 1]]);
      expect((await alice.users.userListStarred('bob')).data.map((r) => r.full_name)).toEqual(['alice/app']);
      expect((await bob.user.userCurrentDeleteStar('alice', 'app')).status).toBe(204);
      await expect(bob.user.userCurrentCheckStarring('alice', 'app')).rejects.toMatchObject({ status: 404 });
      expect((await alice.repos.repoGet('alice', 'app')).data.stars_count).toBe(0);

      expect((await alice.repos.repoGetAssignees('alice', 'app')).data.map((u) => u.login)).toEqual(['alice']);
      expect((await alice.repos.repoGetReviewers('alice', 'app')).data.map((u) => u.login)).toEqual(['alice']);

      expect((await alice.orgs.orgCreate({ username: 'crew' })).status).toBe(201);
      expect((await alice.orgs.createOrgRepo('crew', { name: 'lib' })).status).toBe(201);
      expect((await alice.orgs.orgCreateTeam('crew', { name: 'devs', permission: 'write', units: ['repo.code', 'repo.pulls'] } as never)).status).toBe(201);
      expect((await alice.repos.repoAddTeam('crew', 'lib', 'devs')).status).toBe(204);
      expect((await alice.repos.repoListTeams('crew', 'lib')).data.map((t) => t.name)).toEqual(['Owners', 'devs']);
      expect((await alice.repos.repoCheckTeam('crew', 'lib', 'devs')).data).toMatchObject({ name: 'devs', permission: 'none' });
      expect((await alice.repos.repoDeleteTeam('crew', 'lib', 'devs')).status).toBe(204);
      await expect(alice.repos.repoCheckTeam('crew', 'lib', 'devs')).rejects.toMatchObject({ status: 404 });

      const issue = await alice.repos.issueCreateIssue('alice', 'app', { title: 'pin me' });
      expect((await alice.repos.pinIssue('alice', 'app', issue.data.number!)).status).toBe(204);
      expect((await alice.repos.repoListPinnedIssues('alice', 'app')).data.map((i) => [i.title, i.pin_order])).toEqual([['pin me', 1]]);
      expect((await alice.repos.repoNewPinAllowed('alice', 'app')).data).toEqual({ issues: true, pull_requests: true });
      expect((await alice.repos.unpinIssue('alice', 'app', issue.data.number!)).status).toBe(204);
      const feed = await alice.repos.repoListActivityFeeds('alice', 'app');
      expect(feed.data.map((a) => a.op_type)).toContain('create_issue');
    });

    test('deploy keys and a transfer through the client', async () => {
      const keyFile = path.join(work, 'deploy');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ci', '-f', keyFile]);
      const key = fs.readFileSync(`${keyFile}.pub`, 'utf8').trim();
      const added = await alice.repos.repoCreateKey('alice', 'app', { title: 'ci', key, read_only: true });
      expect(added.status).toBe(201);
      expect(added.data).toMatchObject({ title: 'ci', read_only: true, key });
      expect((await alice.repos.repoListKeys('alice', 'app')).data.map((k) => k.title)).toEqual(['ci']);
      const pending = await alice.repos.repoTransfer('alice', 'app', { new_owner: 'bob' });
      expect(pending.status).toBe(201);
      expect(pending.data.repo_transfer?.recipient?.login).toBe('bob');
      const accepted = await bob.repos.acceptRepoTransfer('alice', 'app');
      expect(accepted.data.full_name).toBe('bob/app');
      // The fork of the moved repository still borrows from it.
      expect((await git(disk('bob', 'app-fork'), 'fsck', '--connectivity-only')).exitCode).toBe(0);
    });
  },
  { migrationsAllowLocalNetworks: true },
);
