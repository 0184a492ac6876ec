/**
 * /repos/{owner}/{repo}/branches: Gitea 1.27.3's Branch JSON, paging, creation from a branch,
 * tag or commit, rename, move (PUT), delete, errors; the effects seen by real git and by the
 * repository's stats. SQLite and PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import execa from 'execa';
import { git } from './support/git';
import { gitEnv } from '../src/services/git/run';

describeForge('branches', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  let work: string;
  let first: string;
  let second: string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'branches-'));
    await f().user('owner');
    await f().user('reader');
    expect((await f().request('POST', '/user/repos', { ...as('owner'), body: { name: 'proj', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('owner'), body: { name: 'empty' } })).status).toBe(201);
    // A second commit pushed with git, so there is history to branch from.
    const u = new URL(`${f().url}/owner/proj.git`);
    u.username = 'owner';
    u.password = PASSWORD;
    const dir = path.join(work, 'proj');
    expect((await git(work, 'clone', '-q', u.toString(), dir)).exitCode).toBe(0);
    first = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
    fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    await git(dir, 'add', '.');
    // Committed in the future, so that the order by commit time does not depend on the clock.
    await execa('git', ['commit', '-q', '-m', 'second'], { cwd: dir, env: gitEnv({ GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com', GIT_COMMITTER_DATE: '2030-01-01T00:00:00Z' }), extendEnv: false });
    expect((await git(dir, 'push', '-q', 'origin', 'main')).exitCode).toBe(0);
    second = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('get: Gitea\'s Branch JSON', async () => {
    const res = await f().request('GET', '/repos/owner/proj/branches/main', as('owner'));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ['commit', 'effective_branch_protection_name', 'enable_status_check', 'name', 'protected', 'required_approvals', 'status_check_contexts', 'user_can_merge', 'user_can_push'].sort(),
    );
    expect(res.body.commit).toMatchObject({
      id: second,
      message: 'second\n',
      url: `${f().url}/owner/proj/commit/${second}`,
      author: { name: 'Dev', email: 'dev@example.com', username: '' },
      verification: { verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' },
      added: null,
      removed: null,
      modified: null,
    });
    expect(res.body.commit.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(res.body).toMatchObject({ name: 'main', protected: false, status_check_contexts: [], user_can_push: true, user_can_merge: true, effective_branch_protection_name: '' });
    // Anonymous readers of a public repository see it, without push rights.
    expect((await f().request('GET', '/repos/owner/proj/branches/main')).body).toMatchObject({ user_can_push: false, user_can_merge: false });
    expect(await f().request('GET', '/repos/owner/proj/branches/nope', as('owner'))).toMatchObject({ status: 404, body: { message: 'not found' } });
    expect((await f().request('GET', '/repos/owner/proj/branches/a..b', as('owner'))).status).toBe(404);
  });

  test('create from the default branch, a branch, a tag and a commit; names with slashes', async () => {
    const fromDefault = await f().request('POST', '/repos/owner/proj/branches', { ...as('owner'), body: { new_branch_name: 'feature/one' } });
    expect(fromDefault.status).toBe(201);
    expect(fromDefault.body).toMatchObject({ name: 'feature/one', commit: { id: second } });
    expect((await f().request('POST', '/repos/owner/proj/tags', { ...as('owner'), body: { tag_name: 'v0', target: first } })).status).toBe(201);
    expect((await f().request('POST', '/repos/owner/proj/branches', { ...as('owner'), body: { new_branch_name: 'from-tag', old_ref_name: 'v0' } })).body.commit.id).toBe(first);
    expect((await f().request('POST', '/repos/owner/proj/branches', { ...as('owner'), body: { new_branch_name: 'from-sha', old_ref_name: first.slice(0, 10) } })).body.commit.id).toBe(first);
    expect((await f().request('POST', '/repos/owner/proj/branches', { ...as('owner'), body: { new_branch_name: 'from-branch', old_branch_name: 'feature/one' } })).body.commit.id).toBe(second);
    expect((await f().request('GET', '/repos/owner/proj/branches/feature/one', as('owner'))).body.name).toBe('feature/one');
    // git sees them
    const remote = await git(work, 'ls-remote', '--heads', `${f().url}/owner/proj.git`);
    expect(remote.stdout).toContain('refs/heads/feature/one');
    expect(remote.stdout).toContain(`${first}\trefs/heads/from-tag`);
    // the repository's branch count follows
    expect((await f().request('GET', '/repos/owner/proj', as('owner'))).body.branch_count).toBe(5);
  });

  test('create: Gitea\'s errors', async () => {
    const post = (body: object, who = 'owner') => f().request('POST', '/repos/owner/proj/branches', { ...as(who), body });
    expect(await post({ new_branch_name: 'a..b' })).toMatchObject({ status: 422, body: { message: '[BranchName]: GitRefName' } });
    expect(await post({ new_branch_name: 'bad name' })).toMatchObject({ status: 422 });
    expect(await post({ new_branch_name: 'x'.repeat(101) })).toMatchObject({ status: 422 });
    expect(await post({ new_branch_name: 'feature/one' })).toMatchObject({ status: 409, body: { message: 'The branch already exists.' } });
    expect(await post({ new_branch_name: 'feature' })).toMatchObject({ status: 409, body: { message: 'The branch with the same name already exists.' } });
    expect(await post({ new_branch_name: 'feature/one/deeper' })).toMatchObject({ status: 409, body: { message: 'The branch with the same name already exists.' } });
    expect(await post({ new_branch_name: 'v0' })).toMatchObject({ status: 409, body: { message: 'The branch with the same tag already exists.' } });
    expect(await post({ new_branch_name: 'y', old_branch_name: 'nope' })).toMatchObject({ status: 404, body: { message: 'The old branch does not exist' } });
    expect((await post({ new_branch_name: 'y', old_ref_name: 'nope' })).status).toBe(404);
    expect((await post({ new_branch_name: 'y' }, 'reader')).status).toBe(403);
    expect((await f().request('POST', '/repos/owner/proj/branches', { body: { new_branch_name: 'y' } })).status).toBe(401);
    expect(await f().request('POST', '/repos/owner/empty/branches', { ...as('owner'), body: { new_branch_name: 'y' } })).toMatchObject({ status: 404, body: { message: 'Git Repository is empty.' } });
  });

  test('list: newest commit first, then by name; paging headers; q filter; empty repository', async () => {
    const all = await f().request('GET', '/repos/owner/proj/branches', as('owner'));
    expect(all.status).toBe(200);
    expect(all.headers.get('x-total-count')).toBe('5');
    expect(all.body.map((b: { name: string }) => b.name)).toEqual(['feature/one', 'from-branch', 'main', 'from-sha', 'from-tag']);
    const page = await f().request('GET', '/repos/owner/proj/branches?limit=2&page=2', as('owner'));
    expect(page.body.map((b: { name: string }) => b.name)).toEqual(['main', 'from-sha']);
    expect(page.headers.get('x-total-count')).toBe('5');
    expect(page.headers.get('link')).toContain('rel="next"');
    const q = await f().request('GET', '/repos/owner/proj/branches?q=FROM', as('owner'));
    expect(q.body.map((b: { name: string }) => b.name)).toEqual(['from-branch', 'from-sha', 'from-tag']);
    const empty = await f().request('GET', '/repos/owner/empty/branches', as('owner'));
    expect(empty.body).toEqual([]);
    expect(empty.headers.get('x-total-count')).toBe('0');
  });

  test('rename (PATCH): errors and effect', async () => {
    const patch = (from: string, name: string, who = 'owner') => f().request('PATCH', `/repos/owner/proj/branches/${from}`, { ...as(who), body: { name } });
    const same = 'Cannot rename a branch using the same name or rename to a branch that already exists.';
    expect(await patch('from-sha', 'from-sha')).toMatchObject({ status: 422, body: { message: same } });
    expect(await patch('from-sha', 'main')).toMatchObject({ status: 422, body: { message: same } });
    expect(await patch('nope', 'other')).toMatchObject({ status: 404, body: { message: "Branch doesn't exist." } });
    expect(await patch('from-sha', 'a..b')).toMatchObject({ status: 422, body: { message: '[Name]: GitRefName' } });
    expect((await patch('from-sha', 'renamed/sha')).status).toBe(204);
    expect((await f().request('GET', '/repos/owner/proj/branches/from-sha', as('owner'))).status).toBe(404);
    expect((await f().request('GET', '/repos/owner/proj/branches/renamed/sha', as('owner'))).body.commit.id).toBe(first);
  });

  test('update (PUT): fast-forward, force needs force, old_commit_id checked', async () => {
    const put = (body: object) => f().request('PUT', '/repos/owner/proj/branches/renamed/sha', { ...as('owner'), body });
    expect(await put({ new_commit_id: second, old_commit_id: second })).toMatchObject({ status: 422 });
    expect((await put({ new_commit_id: second, old_commit_id: first })).status).toBe(204);
    expect((await f().request('GET', '/repos/owner/proj/branches/renamed/sha', as('owner'))).body.commit.id).toBe(second);
    expect(await put({ new_commit_id: first })).toMatchObject({ status: 422, body: { message: 'Force push renamed/sha need a confirm force parameter' } });
    expect((await put({ new_commit_id: first, force: true })).status).toBe(204);
    expect((await put({ new_commit_id: 'nope' })).status).toBe(404);
  });

  test('delete: default branch refused, others gone for git too', async () => {
    expect(await f().request('DELETE', '/repos/owner/proj/branches/main', as('owner'))).toMatchObject({ status: 403, body: { message: 'can not delete default or pull request target branch' } });
    expect((await f().request('DELETE', '/repos/owner/proj/branches/feature/one', as('reader'))).status).toBe(403);
    expect((await f().request('DELETE', '/repos/owner/proj/branches/feature/one', as('owner'))).status).toBe(204);
    expect((await f().request('DELETE', '/repos/owner/proj/branches/feature/one', as('owner'))).status).toBe(404);
    const remote = await git(work, 'ls-remote', '--heads', `${f().url}/owner/proj.git`);
    expect(remote.stdout).not.toContain('feature/one');
    expect((await f().request('GET', '/repos/owner/proj', as('owner'))).body.branch_count).toBe(4);
  });

  test('renaming the default branch moves HEAD and the repository\'s default_branch', async () => {
    expect((await f().request('PATCH', '/repos/owner/proj/branches/main', { ...as('owner'), body: { name: 'trunk' } })).status).toBe(204);
    expect((await f().request('GET', '/repos/owner/proj', as('owner'))).body.default_branch).toBe('trunk');
    const head = await git(work, 'ls-remote', '--symref', `${f().url}/owner/proj.git`, 'HEAD');
    expect(head.stdout).toContain('ref: refs/heads/trunk\tHEAD');
  });
});
