/**
 * Scheduled merges (merge_when_checks_succeed, Gitea's auto merge) over HTTP on real git,
 * SQLite and PostgreSQL: 201 when scheduled, 409 for a second schedule, merged in the
 * scheduler's name once the statuses the base branch's rule requires succeed (other contexts
 * and pending ones do not count), the head branch deleted when asked, DELETE cancelling (204,
 * then 404) with the timeline entries Gitea writes, and a pull request without a rule merged
 * at once after the schedule.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('pulls: scheduled merges', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const R = '/repos/alice/proj';
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  let n = 0;
  /** A branch with one new file and a pull request of it into `base`; its number and head commit. */
  const pull = async (repo = R, base = 'main') => {
    const branch = `topic-${++n}`;
    const file = await f().request('POST', `${repo}/contents/${branch}.txt`, { ...as('alice'), body: { content: b64(branch), message: branch, branch: base, new_branch: branch } });
    expect(file.status).toBe(201);
    const pr = await f().request('POST', `${repo}/pulls`, { ...as('alice'), body: { head: branch, base, title: `Change ${branch}` } });
    expect(pr.status).toBe(201);
    return { index: pr.body.number as number, sha: pr.body.head.sha as string, branch };
  };
  const status = (sha: string, context: string, state: string) => f().request('POST', `${R}/statuses/${sha}`, { ...as('alice'), body: { context, state } });
  const settle = async () => {
    await f().app.services.pulls.checker.idle();
    await f().app.services.pulls.autoMerge.idle();
  };
  const get = async (index: number, repo = R) => (await f().request('GET', `${repo}/pulls/${index}`, as('alice'))).body;
  const timeline = async (index: number, repo = R) => (await f().request('GET', `${repo}/issues/${index}/timeline`, as('alice'))).body.map((e: { type: string; user: { login: string } }) => `${e.type} ${e.user.login}`);

  beforeAll(async () => {
    await f().user('alice');
    await f().user('bob');
    for (const name of ['proj', 'free']) expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name, auto_init: true } })).status).toBe(201);
    const rule = await f().request('POST', `${R}/branch_protections`, { ...as('alice'), body: { rule_name: 'main', enable_status_check: true, status_check_contexts: ['ci/*'] } });
    expect(rule.status).toBe(201);
  });

  test('scheduled: 201, 409 again, merged by the scheduler when the required contexts succeed, branch deleted', async () => {
    const { index, sha, branch } = await pull();
    const body = { Do: 'squash', merge_when_checks_succeed: true, merge_title_field: 'squashed when green', delete_branch_after_merge: true };
    expect((await f().request('POST', `${R}/pulls/${index}/merge`, { ...as('alice'), body })).status).toBe(201);
    const again = await f().request('POST', `${R}/pulls/${index}/merge`, { ...as('alice'), body });
    expect([again.status, again.body.message]).toEqual([409, expect.stringMatching(/^pull request is already scheduled to auto merge when checks succeed \[pull_id: \d+\]$/)]);
    await status(sha, 'lint', 'success'); // not a required context
    await status(sha, 'ci/build', 'pending');
    await settle();
    expect((await get(index)).merged).toBe(false);
    await status(sha, 'ci/build', 'success');
    await settle();
    const merged = await get(index);
    expect(merged).toMatchObject({ merged: true, state: 'closed', merged_by: { login: 'alice' } });
    const commit = await f().request('GET', `${R}/git/commits/${merged.merge_commit_sha}`, as('alice'));
    expect(commit.body.commit.message).toBe('squashed when green\n');
    expect((await f().request('GET', `${R}/branches/${branch}`, as('alice'))).status).toBe(404);
    // pull_push: the commits the pull request opened with; delete_branch: the head branch the merge deleted.
    expect(await timeline(index)).toEqual(['pull_push alice', 'pull_scheduled_merge alice', 'merge_pull alice', 'delete_branch alice']);
    // Merged: nothing is scheduled any more.
    expect((await f().request('DELETE', `${R}/pulls/${index}/merge`, as('alice'))).status).toBe(404);
  });

  test('a failed required context keeps it open; DELETE cancels (204, then 404); bob without write access gets 403', async () => {
    const { index, sha } = await pull();
    expect((await f().request('POST', `${R}/pulls/${index}/merge`, { ...as('alice'), body: { Do: 'merge', merge_when_checks_succeed: true } })).status).toBe(201);
    await status(sha, 'ci/build', 'failure');
    await settle();
    expect((await get(index)).merged).toBe(false);
    expect((await f().request('DELETE', `${R}/pulls/${index}/merge`, as('bob'))).status).toBe(403);
    expect((await f().request('DELETE', `${R}/pulls/${index}/merge`, as('alice'))).status).toBe(204);
    const none = await f().request('DELETE', `${R}/pulls/${index}/merge`, as('alice'));
    expect([none.status, none.body.message]).toEqual([404, 'not found']);
    await status(sha, 'ci/build', 'success');
    await settle();
    expect((await get(index)).merged).toBe(false);
    expect(await timeline(index)).toEqual(['pull_push alice', 'pull_scheduled_merge alice', 'pull_cancel_scheduled_merge alice']);
  });

  test('no protection rule: merged right after the schedule', async () => {
    const { index } = await pull('/repos/alice/free');
    expect((await f().request('POST', `/repos/alice/free/pulls/${index}/merge`, { ...as('alice'), body: { Do: 'merge', merge_when_checks_succeed: true } })).status).toBe(201);
    await settle();
    expect(await get(index, '/repos/alice/free')).toMatchObject({ merged: true, state: 'closed' });
  });
});
