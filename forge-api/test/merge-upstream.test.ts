/**
 * POST /merge-upstream against real git: a fork's branch is fast-forwarded or merged with its
 * parent's, announced like a push (webhook), and a conflict leaves the fork as it was.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('merge-upstream', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);
  const tip = async (owner: string, name: string, branch = 'main') => (await git(disk(owner, name), 'rev-parse', `refs/heads/${branch}`)).stdout.trim();
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const merge = (body: unknown, who = 'bob', repo = 'bob/up') => f().request('POST', `/repos/${repo}/merge-upstream`, { ...as(who), body });
  /** A commit through the contents API (create or update). */
  const write = async (who: string, repo: string, file: string, text: string, branch = 'main') => {
    const cur = await f().request('GET', `/repos/${repo}/contents/${file}?ref=${branch}`, as(who));
    const res = await f().request(cur.status === 200 ? 'PUT' : 'POST', `/repos/${repo}/contents/${file}`, {
      ...as(who),
      body: { content: b64(text), branch, message: `${who} ${file}`, ...(cur.status === 200 ? { sha: cur.body.sha } : {}) },
    });
    expect([res.status, res.body.message]).toEqual([cur.status === 200 ? 200 : 201, undefined]);
    return res.body.commit.sha as string;
  };
  let tmp: string;
  const pushes: { ref: string; before: string; after: string; pusher: string }[] = [];
  let receiver: http.Server;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'merge-upstream-'));
    await f().user('alice');
    await f().user('bob');
    await f().user('carol');
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'up', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/repos/alice/up/forks', { ...as('bob'), body: {} })).status).toBe(202);
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (req.headers['x-gitea-event'] === 'push') {
          const p = JSON.parse(body);
          pushes.push({ ref: p.ref, before: p.before, after: p.after, pusher: p.pusher.login });
        }
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const port = (receiver.address() as { port: number }).port;
    const hook = await f().request('POST', '/repos/bob/up/hooks', {
      ...as('bob'),
      body: { type: 'gitea', active: true, events: ['push'], config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json' } },
    });
    expect(hook.status).toBe(201);
  });
  afterAll(() => {
    receiver?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const waitForPush = async (after: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = pushes.find((p) => p.after === after);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no push webhook for ${after}; got ${JSON.stringify(pushes)}`);
      await f().app.services.deliveries.runOnce();
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  test("Gitea's answers before any merge: up-to-date, not a fork 400, missing branch 404, bad body 422", async () => {
    expect(await merge({ branch: 'main' })).toMatchObject({ status: 200, body: { merge_type: 'up-to-date' } });
    const notFork = await merge({ branch: 'main' }, 'alice', 'alice/up');
    expect(notFork.status).toBe(400);
    expect(notFork.body.message).toBe('repo is not a fork');
    const fork = await f().request('GET', '/repos/bob/up', as('bob'));
    const missing = await merge({ branch: 'nope' });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe(`branch does not exist [repo_id: ${fork.body.id} name: nope]`);
    const empty = await merge({});
    expect(empty.status).toBe(404);
    expect(empty.body.message).toBe(`branch does not exist [repo_id: ${fork.body.id} name: ]`);
    // A name git would read as a revision ("main^" is the parent of main) is only a name.
    expect((await merge({ branch: 'main^' })).status).toBe(404);
    expect((await merge({ branch: 'main', ff_only: {} })).status).toBe(422);
    expect((await merge([])).status).toBe(422);
  });

  test('who may: a writer of the fork who can still read the parent', async () => {
    expect((await f().request('POST', '/repos/bob/up/merge-upstream', { body: { branch: 'main' } })).status).toBe(401);
    const carol = await merge({ branch: 'main' }, 'carol');
    expect(carol.status).toBe(403);
    expect(carol.body.message).toBe('user should have a permission to write to a repo');
    expect((await f().request('PATCH', '/repos/alice/up', { ...as('alice'), body: { private: true } })).status).toBe(200);
    try {
      const parent = await f().request('GET', '/repos/alice/up', as('alice'));
      const res = await merge({ branch: 'main' });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(`permission denied to read base repo ${parent.body.id}`);
    } finally {
      await f().request('PATCH', '/repos/alice/up', { ...as('alice'), body: { private: false } });
    }
  });

  test('fast-forward: the fork points at the upstream commit, announced as a push by the caller', async () => {
    const before = await tip('bob', 'up');
    const upstream = await write('alice', 'alice/up', 'a.txt', 'from upstream\n');
    const res = await merge({ branch: 'main', ff_only: true });
    expect(res).toMatchObject({ status: 200, body: { merge_type: 'fast-forward' } });
    expect(await tip('bob', 'up')).toBe(upstream);
    expect(await waitForPush(upstream)).toEqual({ ref: 'refs/heads/main', before, after: upstream, pusher: 'bob' });
    expect(await merge({ branch: 'main' })).toMatchObject({ status: 200, body: { merge_type: 'up-to-date' } });
    // The fork clones with the upstream commit in it.
    const dir = path.join(tmp, 'ff');
    const u = new URL(`${f().url}/bob/up.git`);
    expect((await git(tmp, 'clone', '-q', u.toString(), 'ff')).exitCode).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('from upstream\n');
  });

  test('diverged: ff_only 400; otherwise a merge commit (fork first, upstream second) by the caller', async () => {
    const mine = await write('bob', 'bob/up', 'fork.txt', 'fork\n');
    const theirs = await write('alice', 'alice/up', 'b.txt', 'upstream b\n');
    const ff = await merge({ branch: 'main', ff_only: true });
    expect(ff.status).toBe(400);
    expect(ff.body.message).toBe('fast-forward merge not possible: branch has diverged');
    expect(await tip('bob', 'up')).toBe(mine);

    const res = await merge({ branch: 'main' });
    expect(res).toMatchObject({ status: 200, body: { merge_type: 'merge' } });
    const head = await tip('bob', 'up');
    const info = (await git(disk('bob', 'up'), 'log', '-1', '--format=%P|%an|%s', head)).stdout.trim();
    expect(info).toBe(`${mine} ${theirs}|bob|merge upstream`);
    const files = (await git(disk('bob', 'up'), 'ls-tree', '--name-only', head)).stdout.trim().split('\n');
    expect(files).toEqual(expect.arrayContaining(['README.md', 'a.txt', 'b.txt', 'fork.txt']));
    expect((await git(disk('bob', 'up'), 'fsck', '--strict', '--no-dangling')).exitCode).toBe(0);
    expect(await waitForPush(head)).toMatchObject({ ref: 'refs/heads/main', before: mine, pusher: 'bob' });
    expect(await merge({ branch: 'main' })).toMatchObject({ status: 200, body: { merge_type: 'up-to-date' } });
  });

  test('a conflict is 409 and leaves the fork untouched', async () => {
    await write('alice', 'alice/up', 'a.txt', 'upstream says 1\n');
    const mine = await write('bob', 'bob/up', 'a.txt', 'fork says 2\n');
    const refsBefore = (await git(disk('bob', 'up'), 'for-each-ref')).stdout;
    const res = await merge({ branch: 'main' });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/^Merge Conflict Error: CONFLICT \(content\): Merge conflict in a\.txt/);
    expect(await tip('bob', 'up')).toBe(mine);
    expect((await git(disk('bob', 'up'), 'for-each-ref')).stdout).toBe(refsBefore);
    const content = await f().request('GET', '/repos/bob/up/raw/a.txt', as('bob'));
    expect(content.text).toBe('fork says 2\n');
    // Resolve by taking upstream's text: then the merge is clean.
    await write('bob', 'bob/up', 'a.txt', 'upstream says 1\n');
    expect(await merge({ branch: 'main' })).toMatchObject({ status: 200, body: { merge_type: 'merge' } });
  });

  test("a branch only the fork has follows the parent's default branch; the same name follows that branch", async () => {
    expect((await f().request('POST', '/repos/bob/up/branches', { ...as('bob'), body: { new_branch_name: 'mine', old_branch_name: 'main' } })).status).toBe(201);
    expect((await f().request('POST', '/repos/alice/up/branches', { ...as('alice'), body: { new_branch_name: 'dev', old_branch_name: 'main' } })).status).toBe(201);
    expect((await f().request('POST', '/repos/bob/up/branches', { ...as('bob'), body: { new_branch_name: 'dev', old_branch_name: 'main' } })).status).toBe(201);
    const onMain = await write('alice', 'alice/up', 'c.txt', 'main only\n');
    const onDev = await write('alice', 'alice/up', 'd.txt', 'dev only\n', 'dev');
    // Both branches start from the fork's main, which has commits of its own: merges.
    expect(await merge({ branch: 'mine' })).toMatchObject({ status: 200, body: { merge_type: 'merge' } });
    const parentsOf = async (branch: string) => (await git(disk('bob', 'up'), 'log', '-1', '--format=%P', `refs/heads/${branch}`)).stdout.trim().split(' ');
    expect((await parentsOf('mine'))[1]).toBe(onMain);
    expect(await merge({ branch: 'dev' })).toMatchObject({ status: 200, body: { merge_type: 'merge' } });
    expect((await parentsOf('dev'))[1]).toBe(onDev);
  });

  test("the fork's branch protection applies to the caller (403 with the push refusal); an archived fork is 423", async () => {
    const prot = await f().request('POST', '/repos/bob/up/branch_protections', { ...as('bob'), body: { rule_name: 'main', enable_push: false } });
    expect(prot.status).toBe(201);
    await write('alice', 'alice/up', 'e.txt', 'e\n');
    const before = await tip('bob', 'up');
    const res = await merge({ branch: 'main' });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Not allowed to push to protected branch main');
    expect(await tip('bob', 'up')).toBe(before);
    expect((await f().request('DELETE', '/repos/bob/up/branch_protections/main', as('bob'))).status).toBe(204);

    expect((await f().request('PATCH', '/repos/bob/up', { ...as('bob'), body: { archived: true } })).status).toBe(200);
    expect((await merge({ branch: 'main' })).status).toBe(423);
    expect((await f().request('PATCH', '/repos/bob/up', { ...as('bob'), body: { archived: false } })).status).toBe(200);
    expect((await merge({ branch: 'main' })).body.merge_type).toBe('merge');
  });
}, { webhookAllowedHostList: 'loopback' });
