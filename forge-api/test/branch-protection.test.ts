/**
 * Branch and tag protections: the API (Gitea 1.27.3's shapes, statuses and messages) and their
 * enforcement on real `git push` over smart HTTP (what the git client prints), on SQLite and
 * PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('branch protections', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  let work: string;
  const remote = (user: string) => {
    const u = new URL(`${f().url}/acme/app.git`);
    u.username = user;
    u.password = PASSWORD;
    return u.toString();
  };
  const clone = async (user: string) => {
    const dir = path.join(work, `${user}-${Math.random().toString(36).slice(2, 8)}`);
    const r = await git(work, 'clone', '-q', remote(user), dir);
    expect(r.exitCode).toBe(0);
    return dir;
  };
  const commit = async (dir: string, file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
    await git(dir, 'add', '-A');
    expect((await git(dir, 'commit', '-q', '-m', `change ${file}`)).exitCode).toBe(0);
  };
  /** The lines git prints from the server ("remote: ..."), trailing padding removed. */
  const remoteLines = (stderr: string) =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('remote:'))
      .map((l) => l.replace(/\s+$/, ''));

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'branch-protection-'));
    await f().user('alice');
    for (const u of ['bob', 'carol', 'dave']) await f().user(u);
    expect((await f().request('POST', '/orgs', { ...as('alice'), body: { username: 'acme' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs/acme/repos', { ...as('alice'), body: { name: 'app', auto_init: true } })).status).toBe(201);
    const team = async (name: string, members: string[]) => {
      const res = await f().request('POST', '/orgs/acme/teams', { ...as('alice'), body: { name, permission: 'write', units: ['repo.code'] } });
      expect(res.status).toBe(201);
      for (const m of members) expect((await f().request('PUT', `/teams/${res.body.id}/members/${m}`, as('alice'))).status).toBe(204);
      expect((await f().request('PUT', `/teams/${res.body.id}/repos/acme/app`, as('alice'))).status).toBe(204);
    };
    await team('devs', ['bob', 'carol']);
    await team('leads', ['carol']);
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('create, read, list, edit and delete a rule with Gitea shapes and errors', async () => {
    const created = await f().request('POST', '/repos/acme/app/branch_protections', {
      ...as('alice'),
      body: { rule_name: 'main', enable_push: true, enable_push_whitelist: true, push_whitelist_teams: ['leads'], required_approvals: 2, enable_status_check: true, status_check_contexts: ['ci/build'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      branch_name: 'main',
      rule_name: 'main',
      priority: 1,
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: [],
      push_whitelist_teams: ['leads'],
      enable_force_push: false,
      required_approvals: 2,
      enable_status_check: true,
      status_check_contexts: ['ci/build'],
      protected_file_patterns: '',
    });
    expect(typeof created.body.created_at).toBe('string');

    // A glob rule: branch_name is empty, the rule is found by its name (slashes and all).
    const glob = await f().request('POST', '/repos/acme/app/branch_protections', { ...as('alice'), body: { rule_name: 'release/*', push_whitelist_usernames: ['bob'], enable_push: true, enable_push_whitelist: true } });
    expect(glob.status).toBe(201);
    expect(glob.body.branch_name).toBe('');
    expect(glob.body.priority).toBe(2);
    expect(glob.body.status_check_contexts).toBeNull();
    const got = await f().request('GET', '/repos/acme/app/branch_protections/release/*', as('alice'));
    expect(got.status).toBe(200);
    expect(got.body.push_whitelist_usernames).toEqual(['bob']);

    const list = await f().request('GET', '/repos/acme/app/branch_protections', as('alice'));
    expect(list.body.map((r: { rule_name: string }) => r.rule_name)).toEqual(['main', 'release/*']);

    // Errors as Gitea answers them.
    expect(await f().request('POST', '/repos/acme/app/branch_protections', { ...as('alice'), body: { rule_name: 'main' } })).toMatchObject({ status: 403, body: { message: 'Branch protection already exist' } });
    expect(await f().request('POST', '/repos/acme/app/branch_protections', { ...as('alice'), body: {} })).toMatchObject({ status: 400, body: { message: 'both rule_name and branch_name are empty' } });
    expect(await f().request('POST', '/repos/acme/app/branch_protections', { ...as('alice'), body: { rule_name: 'x', push_whitelist_usernames: ['ghost'] } })).toMatchObject({
      status: 422,
      body: { message: 'user does not exist [uid: 0, name: ghost]' },
    });
    expect((await f().request('GET', '/repos/acme/app/branch_protections/nope', as('alice'))).status).toBe(404);
    // Repository admins only (bob writes code but does not administer the repository).
    expect((await f().request('GET', '/repos/acme/app/branch_protections', as('bob'))).status).toBe(403);
    expect((await f().request('GET', '/repos/acme/app/branch_protections')).status).toBe(401);

    // Edit changes only what is sent; an unknown rule is 404.
    const edited = await f().request('PATCH', '/repos/acme/app/branch_protections/release/*', { ...as('alice'), body: { required_approvals: 1 } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ required_approvals: 1, push_whitelist_usernames: ['bob'], enable_push_whitelist: true });
    expect((await f().request('PATCH', '/repos/acme/app/branch_protections/nope', { ...as('alice'), body: {} })).status).toBe(404);

    // Priorities: the ids in the order given become 1, 2, ...
    const ids = async () => (await f().request('GET', '/repos/acme/app/branch_protections', as('alice'))).body.map((r: { rule_name: string; priority: number }) => `${r.rule_name}:${r.priority}`);
    const tmp = await f().request('POST', '/repos/acme/app/branch_protections', { ...as('alice'), body: { rule_name: 'tmp' } });
    expect(tmp.status).toBe(201);
    expect(await ids()).toEqual(['main:1', 'release/*:2', 'tmp:3']);
    expect((await f().request('DELETE', '/repos/acme/app/branch_protections/tmp', as('alice'))).status).toBe(204);
    expect((await f().request('DELETE', '/repos/acme/app/branch_protections/tmp', as('alice'))).status).toBe(404);
  });

  test('the branch shows its protection and what the caller may do', async () => {
    const asCarol = await f().request('GET', '/repos/acme/app/branches/main', as('carol'));
    expect(asCarol.body).toMatchObject({ protected: true, required_approvals: 2, enable_status_check: true, status_check_contexts: ['ci/build'], user_can_push: true, user_can_merge: true, effective_branch_protection_name: '' });
    const asBob = await f().request('GET', '/repos/acme/app/branches/main', as('bob'));
    expect(asBob.body).toMatchObject({ protected: true, user_can_push: false, user_can_merge: true });
    // Only repository admins learn which rule applies.
    expect((await f().request('GET', '/repos/acme/app/branches/main', as('alice'))).body.effective_branch_protection_name).toBe('main');
  });

  test('git push to a protected branch: refused with Gitea\'s message unless allow-listed', async () => {
    const bob = await clone('bob');
    await commit(bob, 'bob.txt', 'from bob\n');
    const refused = await git(bob, 'push', 'origin', 'main');
    expect(refused.exitCode).not.toBe(0);
    expect(remoteLines(refused.stderr)).toEqual(['remote:', 'remote: error:', 'remote: error: Not allowed to push to protected branch main', 'remote: error:']);
    expect(refused.stderr).toContain('! [remote rejected] main -> main (pre-receive hook declined)');

    const carol = await clone('carol');
    await commit(carol, 'carol.txt', 'from carol\n');
    const accepted = await git(carol, 'push', 'origin', 'main');
    expect(accepted.exitCode).toBe(0);
    const branch = await f().request('GET', '/repos/acme/app/branches/main', as('carol'));
    expect(branch.body.commit.message).toBe('change carol.txt\n');
    // bob's refused commit never reached the repository
    expect((await git(carol, 'ls-remote', 'origin', 'main')).stdout.split('\t')[0]).toBe(branch.body.commit.id);
  });

  test('force push refused unless the rule allows it; deletion always refused', async () => {
    const carol = await clone('carol');
    await git(carol, 'reset', '-q', '--hard', 'HEAD~1');
    await commit(carol, 'rewrite.txt', 'history rewritten\n');
    const forced = await git(carol, 'push', '--force', 'origin', 'main');
    expect(forced.exitCode).not.toBe(0);
    expect(remoteLines(forced.stderr)).toContain('remote: error: branch main is protected from force push');

    const deleted = await git(carol, 'push', 'origin', ':main');
    expect(deleted.exitCode).not.toBe(0);
    expect(remoteLines(deleted.stderr)).toContain('remote: error: branch main is the default branch and cannot be deleted');

    // A protected branch that is not the default one.
    // Creating a branch under a rule is a push to it: alice is not on release/*'s list, bob is.
    expect(await f().request('POST', '/repos/acme/app/branches', { ...as('alice'), body: { new_branch_name: 'release/1' } })).toMatchObject({ status: 403, body: { message: 'Not allowed to push to protected branch release/1' } });
    expect((await f().request('POST', '/repos/acme/app/branches', { ...as('bob'), body: { new_branch_name: 'release/1' } })).status).toBe(201);
    await git(carol, 'fetch', '-q', 'origin');
    const delRelease = await git(carol, 'push', 'origin', ':release/1');
    expect(delRelease.exitCode).not.toBe(0);
    expect(remoteLines(delRelease.stderr)).toContain('remote: error: branch release/1 is protected from deletion');

    // With force pushes allowed for the leads, carol's rewrite goes in.
    const allow = await f().request('PATCH', '/repos/acme/app/branch_protections/main', { ...as('alice'), body: { enable_force_push: true, enable_force_push_allowlist: true, force_push_allowlist_teams: ['leads'] } });
    expect(allow.status).toBe(200);
    expect(allow.body).toMatchObject({ enable_force_push: true, enable_force_push_allowlist: true, force_push_allowlist_teams: ['leads'] });
    expect((await git(carol, 'push', '--force', 'origin', 'main')).exitCode).toBe(0);
    expect((await f().request('GET', '/repos/acme/app/branches/main', as('carol'))).body.commit.message).toBe('change rewrite.txt\n');
  });

  test('user allow-list on a glob rule; protected file patterns', async () => {
    const bob = await clone('bob');
    await git(bob, 'checkout', '-q', 'release/1');
    await commit(bob, 'fix.txt', 'fix\n');
    expect((await git(bob, 'push', 'origin', 'release/1')).exitCode).toBe(0); // bob is on release/*'s list
    const carol = await clone('carol');
    await git(carol, 'checkout', '-q', 'release/1');
    await commit(carol, 'fix2.txt', 'fix\n');
    const refused = await git(carol, 'push', 'origin', 'release/1');
    expect(remoteLines(refused.stderr)).toContain('remote: error: Not allowed to push to protected branch release/1');

    expect((await f().request('PATCH', '/repos/acme/app/branch_protections/release/*', { ...as('alice'), body: { protected_file_patterns: '*.lock;secrets/**' } })).status).toBe(200);
    await git(bob, 'pull', '-q', 'origin', 'release/1');
    await commit(bob, 'secrets/key.txt', 'k\n');
    const guarded = await git(bob, 'push', 'origin', 'release/1');
    expect(guarded.exitCode).not.toBe(0);
    expect(remoteLines(guarded.stderr)).toContain('remote: error: branch release/1 is protected from changing file secrets/key.txt');
  });

  test('the API applies the same rules as a push', async () => {
    expect(await f().request('DELETE', '/repos/acme/app/branches/release/1', as('alice'))).toMatchObject({ status: 403, body: { message: 'branch protected' } });
    const head = (await f().request('GET', '/repos/acme/app/branches/main', as('alice'))).body.commit.id;
    expect((await f().request('POST', '/repos/acme/app/branches', { ...as('bob'), body: { new_branch_name: 'bob-work' } })).status).toBe(201);
    const carol = await clone('carol');
    await git(carol, 'checkout', '-q', '-b', 'ahead');
    await commit(carol, 'ahead.txt', 'ahead\n');
    expect((await git(carol, 'push', '-q', 'origin', 'ahead')).exitCode).toBe(0);
    const ahead = (await f().request('GET', '/repos/acme/app/branches/ahead', as('carol'))).body.commit.id;
    expect(ahead).not.toBe(head);
    // bob may not move main (not on the push allow-list); carol may (fast-forward).
    expect(await f().request('PUT', '/repos/acme/app/branches/main', { ...as('bob'), body: { new_commit_id: ahead } })).toMatchObject({ status: 403, body: { message: 'Not allowed to push to protected branch main' } });
    expect((await f().request('PUT', '/repos/acme/app/branches/main', { ...as('carol'), body: { new_commit_id: ahead } })).status).toBe(204);
    expect((await f().request('GET', '/repos/acme/app/branches/main', as('carol'))).body.commit.id).toBe(ahead);
    // A commit through /contents is a push too (Gitea's VerifyBranchProtection).
    const file = { content: Buffer.from('hello\n').toString('base64'), message: 'via api' };
    expect(await f().request('POST', '/repos/acme/app/contents/api.txt', { ...as('bob'), body: file })).toMatchObject({ status: 403, body: { message: 'user cannot commit to repo [user: bob]' } });
    expect((await f().request('POST', '/repos/acme/app/contents/api.txt', { ...as('carol'), body: file })).status).toBe(201);
  });

  test('tag protections: API shapes, enforced on push and on the API', async () => {
    const pt = await f().request('POST', '/repos/acme/app/tag_protections', { ...as('alice'), body: { name_pattern: '/^v[0-9]+$/', whitelist_teams: ['leads'] } });
    expect(pt.status).toBe(201);
    expect(pt.body).toMatchObject({ name_pattern: '/^v[0-9]+$/', whitelist_usernames: [], whitelist_teams: ['leads'] });
    expect(await f().request('POST', '/repos/acme/app/tag_protections', { ...as('alice'), body: { name_pattern: 'x' } })).toMatchObject({
      status: 400,
      body: { message: 'both whitelist_usernames and whitelist_teams are empty' },
    });
    expect(await f().request('POST', '/repos/acme/app/tag_protections', { ...as('alice'), body: { name_pattern: '/^v[0-9]+$/', whitelist_usernames: ['bob'] } })).toMatchObject({ status: 403 });
    // A regular expression that does not compile is refused, never a 500.
    expect((await f().request('POST', '/repos/acme/app/tag_protections', { ...as('alice'), body: { name_pattern: '/(unclosed/', whitelist_usernames: ['bob'] } })).status).toBe(422);
    expect((await f().request('GET', `/repos/acme/app/tag_protections/${pt.body.id}`, as('alice'))).body.name_pattern).toBe('/^v[0-9]+$/');
    expect((await f().request('GET', '/repos/acme/app/tag_protections/999999', as('alice'))).status).toBe(404);

    const bob = await clone('bob');
    await git(bob, 'tag', 'v1');
    const refused = await git(bob, 'push', 'origin', 'v1');
    expect(refused.exitCode).not.toBe(0);
    expect(remoteLines(refused.stderr)).toContain('remote: error: Tag v1 is protected');
    await git(bob, 'tag', 'v1-rc');
    expect((await git(bob, 'push', 'origin', 'v1-rc')).exitCode).toBe(0); // not matched by the pattern
    const carol = await clone('carol');
    await git(carol, 'tag', 'v1');
    expect((await git(carol, 'push', 'origin', 'v1')).exitCode).toBe(0);

    expect(await f().request('POST', '/repos/acme/app/tags', { ...as('bob'), body: { tag_name: 'v2' } })).toMatchObject({ status: 422, body: { message: 'user not allowed to create protected tag' } });
    expect(await f().request('DELETE', '/repos/acme/app/tags/v1', as('bob'))).toMatchObject({ status: 422, body: { message: 'user not allowed to delete protected tag' } });
    expect((await f().request('DELETE', '/repos/acme/app/tags/v1', as('carol'))).status).toBe(204);

    const edited = await f().request('PATCH', `/repos/acme/app/tag_protections/${pt.body.id}`, { ...as('alice'), body: { name_pattern: 'v*' } });
    expect(edited.body.name_pattern).toBe('v*');
    expect((await f().request('DELETE', `/repos/acme/app/tag_protections/${pt.body.id}`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/acme/app/tag_protections', as('alice'))).body).toEqual([]);
  });
});
