/**
 * AGit pull requests with the real git CLI, over smart HTTP and over SSH (OpenSSH): a push to
 * refs/for/<base>[/<topic>] opens a pull request (or moves the head of the open one of the same
 * pusher and topic) as Gitea 1.27 does, the client is told that refs/pull/{index}/head changed,
 * and gitea-js reads the result: the pull request, its timeline, the head a CI system fetches.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { giteaApi } from 'gitea-js';
import { freePort, PASSWORD, providers, startForge, type Forge } from '../forge-api/test/support/forge';
import { gitEnv } from '../forge-api/src/services/git/run';

for (const provider of providers()) {
  describe(`AGit flow: git push to refs/for/* opens and updates pull requests [${provider}]`, () => {
    let f: Forge;
    let work: string;
    let alice: ReturnType<typeof giteaApi>;
    const sshKey = () => path.join(work, 'id');
    const git = (cwd: string, ...args: string[]) =>
      execa('git', args, {
        cwd,
        extendEnv: false,
        reject: false,
        env: gitEnv({
          GIT_SSH_COMMAND: `ssh -F /dev/null -i ${sshKey()} -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
          GIT_AUTHOR_NAME: 'Dev',
          GIT_AUTHOR_EMAIL: 'dev@example.com',
          GIT_COMMITTER_NAME: 'Dev',
          GIT_COMMITTER_EMAIL: 'dev@example.com',
        }),
      });
    const httpUrl = (user: string) => {
      const u = new URL(`${f.url}/alice/demo.git`);
      u.username = user;
      u.password = PASSWORD;
      return u.toString();
    };
    const commit = async (dir: string, file: string, message: string) => {
      fs.appendFileSync(path.join(dir, file), `${message}\n`);
      await git(dir, 'add', file);
      expect((await git(dir, 'commit', '-qm', message)).exitCode).toBe(0);
      return (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
    };
    const timeline = async (index: number) =>
      (await alice.repos.issueGetCommentsAndTimeline('alice', 'demo', index)).data.filter((c) => c.type === 'pull_push').map((c) => JSON.parse(c.body!));

    beforeAll(async () => {
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-agit-'));
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'laptop', '-f', sshKey()]);
      const sshPort = await freePort();
      f = await startForge(provider, { startSshServer: true, sshListenHost: '127.0.0.1', sshListenPort: sshPort, sshPort, sshDomain: '127.0.0.1', sshBuiltinServerUser: 'git', sshUser: 'git' });
      await f.user('alice');
      await f.user('bob');
      alice = giteaApi(f.url, { token: await f.token('alice', ['write:repository', 'write:issue', 'write:user']) });
      await alice.user.createCurrentUserRepo({ name: 'demo', auto_init: true, default_branch: 'main' });
      await alice.user.userCurrentPostKey({ title: 'laptop', key: fs.readFileSync(`${sshKey()}.pub`, 'utf8') });
    });
    afterAll(async () => {
      await f?.close();
      if (work) fs.rmSync(work, { recursive: true, force: true });
    });

    test('over HTTP a reader opens a pull request with -o topic; the head is refs/pull/1/head, nothing lands under refs/for', async () => {
      const dir = path.join(work, 'bob');
      expect((await git(work, 'clone', '-q', httpUrl('bob'), dir)).exitCode).toBe(0);
      const sha = await commit(dir, 'feature.txt', 'Add the feature\n\nWhy it matters.');
      const push = await git(dir, 'push', 'origin', 'HEAD:refs/for/main', '-o', 'topic=feature');
      expect(push.exitCode).toBe(0);
      expect(push.stderr).toContain(`remote: Visit the existing pull request:`);
      expect(push.stderr).toContain(`remote:   ${f.url}/alice/demo/pulls/1`);
      expect(push.stderr).toMatch(/\* \[new reference\] +HEAD -> refs\/pull\/1\/head/);

      const pr = (await alice.repos.repoGetPullRequest('alice', 'demo', 1)).data;
      expect(pr).toMatchObject({ number: 1, title: 'Add the feature', body: 'Why it matters.', state: 'open', mergeable: true, user: { login: 'bob' } });
      expect(pr.base).toMatchObject({ ref: 'main', label: 'main' });
      expect(pr.head).toMatchObject({ label: '', ref: 'refs/pull/1/head', sha, repo_id: pr.base!.repo_id });
      expect(pr.head!.repo!.full_name).toBe('alice/demo');
      expect(await timeline(1)).toEqual([{ is_force_push: false, commit_ids: [sha] }]);

      const refs = (await git(dir, 'ls-remote', 'origin')).stdout;
      expect(refs).toContain(`${sha}\trefs/pull/1/head`);
      expect(refs).not.toContain('refs/for/');
      // A reader may push to refs/for/* only.
      const direct = await git(dir, 'push', 'origin', 'HEAD:main');
      expect(direct.exitCode).not.toBe(0);
      expect(direct.stderr).toContain('User permission denied for writing.');
    });

    test('pushing the topic again moves the head; a rewrite needs -o force-push; the timeline lists the pushes', async () => {
      const dir = path.join(work, 'bob');
      const first = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      const same = await git(dir, 'push', 'origin', 'HEAD:refs/for/main', '-o', 'topic=feature');
      expect(same.stderr).toContain('! [remote rejected] HEAD -> refs/for/main (new commit is same with old commit)');

      const second = await commit(dir, 'feature.txt', 'More of it');
      const update = await git(dir, 'push', 'origin', 'HEAD:refs/for/main', '-o', 'topic=feature');
      expect(update.exitCode).toBe(0);
      expect(update.stderr).toContain(`${first.slice(0, 7)}..${second.slice(0, 7)}  HEAD -> refs/pull/1/head`);
      expect((await alice.repos.repoGetPullRequest('alice', 'demo', 1)).data.head!.sha).toBe(second);

      await git(dir, 'commit', '-q', '--amend', '-m', 'More of it, reworded');
      const amended = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      const refused = await git(dir, 'push', 'origin', 'HEAD:refs/for/main', '-o', 'topic=feature');
      expect(refused.exitCode).not.toBe(0);
      expect(refused.stderr).toContain('(request `force-push` push option)');
      const forced = await git(dir, 'push', 'origin', 'HEAD:refs/for/main', '-o', 'topic=feature', '-o', 'force-push');
      expect(forced.exitCode).toBe(0);
      expect(forced.stderr).toContain(`+ ${second.slice(0, 7)}...${amended.slice(0, 7)} HEAD -> refs/pull/1/head (forced update)`);

      const pr = (await alice.repos.repoGetPullRequest('alice', 'demo', 1)).data;
      expect(pr.head!.sha).toBe(amended);
      // The force push dropped `second`: its entry is gone, the rewritten commit is listed, then the force entry.
      expect(await timeline(1)).toEqual([
        { is_force_push: false, commit_ids: [first] },
        { is_force_push: false, commit_ids: [amended] },
        { is_force_push: true, commit_ids: [second, amended] },
      ]);
      // What CI systems fetch.
      const ci = path.join(work, 'ci');
      expect((await git(work, 'clone', '-q', httpUrl('alice'), ci)).exitCode).toBe(0);
      expect((await git(ci, 'fetch', '-q', 'origin', 'refs/pull/1/head')).exitCode).toBe(0);
      expect((await git(ci, 'rev-parse', 'FETCH_HEAD')).stdout.trim()).toBe(amended);
    });

    test('refs/for/<base>/<topic> names the topic; title and description options (base64 for new lines); refusals', async () => {
      const dir = path.join(work, 'bob');
      await git(dir, 'checkout', '-q', '-b', 'other', 'origin/main');
      await commit(dir, 'other.txt', 'Other work');
      const description = Buffer.from('line one\nline two').toString('base64');
      const push = await git(dir, 'push', 'origin', 'HEAD:refs/for/main/other', '-o', 'title=Chosen title', '-o', `description={base64}${description}`);
      expect(push.exitCode).toBe(0);
      expect(push.stderr).toContain(`${f.url}/alice/demo/pulls/2`);
      const pr = (await alice.repos.repoGetPullRequest('alice', 'demo', 2)).data;
      expect(pr).toMatchObject({ title: 'Chosen title', body: 'line one\nline two', head: { ref: 'refs/pull/2/head', label: '' } });

      const noTopic = await git(dir, 'push', 'origin', 'HEAD:refs/for/main');
      expect(noTopic.stderr).toContain('! [remote rejected] HEAD -> refs/for/main (topic-branch is not set)');
      const noBase = await git(dir, 'push', 'origin', 'HEAD:refs/for/nope', '-o', 'topic=x');
      expect(noBase.stderr).toContain('! [remote rejected] HEAD -> refs/for/nope (base-branch does not exist)');
      const list = (await alice.repos.repoListPullRequests('alice', 'demo', { state: 'open' })).data;
      expect(list.map((p) => p.number)).toEqual([2, 1]);
      // An AGit pull request merges like any other: the pushed commit lands on the base.
      const head = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      expect((await alice.repos.repoMergePullRequest('alice', 'demo', 2, { Do: 'merge' })).status).toBe(200);
      const merged = (await alice.repos.repoGetPullRequest('alice', 'demo', 2)).data;
      expect(merged).toMatchObject({ merged: true, state: 'closed' });
      expect((await git(dir, 'fetch', '-q', 'origin', 'main')).exitCode).toBe(0);
      expect((await git(dir, 'rev-parse', 'FETCH_HEAD^2')).stdout.trim()).toBe(head);
    });

    test('over SSH the repository owner opens and updates a pull request the same way', async () => {
      const repo = (await alice.repos.repoGet('alice', 'demo')).data;
      const dir = path.join(work, 'alice-ssh');
      expect((await git(work, 'clone', '-q', repo.ssh_url!, dir)).exitCode).toBe(0);
      const one = await commit(dir, 'ssh.txt', 'Over SSH');
      const open = await git(dir, 'push', 'origin', 'HEAD:refs/for/main', '-o', 'topic=ssh-work');
      expect(open.exitCode).toBe(0);
      expect(open.stderr).toMatch(/\* \[new reference\] +HEAD -> refs\/pull\/3\/head/);
      const two = await commit(dir, 'ssh.txt', 'Over SSH again');
      const move = await git(dir, 'push', 'origin', 'HEAD:refs/for/main', '-o', 'topic=ssh-work');
      expect(move.exitCode).toBe(0);
      expect(move.stderr).toContain(`${one.slice(0, 7)}..${two.slice(0, 7)}  HEAD -> refs/pull/3/head`);
      const pr = (await alice.repos.repoGetPullRequest('alice', 'demo', 3)).data;
      expect(pr).toMatchObject({ title: 'Over SSH', user: { login: 'alice' }, head: { sha: two, ref: 'refs/pull/3/head' } });
      expect(await timeline(3)).toEqual([
        { is_force_push: false, commit_ids: [one] },
        { is_force_push: false, commit_ids: [two] },
      ]);
      // The same topic from another user is another pull request (heads are per pusher).
      const bob = path.join(work, 'bob');
      await git(bob, 'checkout', '-q', 'main');
      const bobs = await git(bob, 'push', 'origin', 'HEAD:refs/for/main', '-o', 'topic=ssh-work');
      expect(bobs.stderr).toMatch(/refs\/pull\/4\/head/);
    });

    test('a branch push prints the pull request hint as Gitea does, over SSH and HTTP (none for the default branch, tags or deletions)', async () => {
      const dir = path.join(work, 'alice-ssh');
      const hint = (branch: string) => `remote: \nremote: Create a new pull request for '${branch}':\nremote:   ${f.url}/alice/demo/pulls/new/${branch}\nremote: \n`;
      await git(dir, 'checkout', '-q', '-b', 'topic/hint', 'origin/main');
      await commit(dir, 'hint.txt', 'Hinted');
      const ssh = await git(dir, 'push', 'origin', 'HEAD:refs/heads/topic/hint');
      expect(ssh.exitCode).toBe(0);
      expect(ssh.stderr.replace(/ +\n/g, '\n').replace(/remote:\n/g, 'remote: \n')).toContain(hint('topic/hint'));

      const opened = (await alice.repos.repoCreatePullRequest('alice', 'demo', { head: 'topic/hint', base: 'main', title: 'Hint' })).data;
      await commit(dir, 'hint.txt', 'Hinted again');
      const http = await git(dir, 'push', httpUrl('alice'), 'HEAD:refs/heads/topic/hint', 'HEAD:refs/heads/second');
      expect(http.exitCode).toBe(0);
      const lines = http.stderr.split('\n').filter((l) => l.startsWith('remote:')).map((l) => l.trimEnd());
      expect(lines).toEqual([
        'remote:',
        'remote: Visit the existing pull request:',
        `remote:   ${f.url}/alice/demo/pulls/${opened.number}`,
        'remote:',
        'remote:',
        "remote: Create a new pull request for 'second':",
        `remote:   ${f.url}/alice/demo/pulls/new/second`,
        'remote:',
      ]);
      await git(dir, 'tag', 'v-hint');
      for (const quiet of [['HEAD:refs/heads/main'], [':refs/heads/second'], ['v-hint']]) {
        const push = await git(dir, 'push', 'origin', ...quiet);
        expect(push.exitCode).toBe(0);
        expect(push.stderr).not.toContain('remote:');
      }
    });
  });
}
