/**
 * Branch protection on merge, as Gitea 1.27.3 enforces it (answers taken from a real one), over
 * HTTP on real git, SQLite and PostgreSQL: each unmet requirement of the base branch's rule
 * (required status checks by glob, approvals counted only from official reviewers, rejected
 * reviews, official review requests, a head behind its base, changed protected files) answers
 * 405 with Gitea's message in Gitea's order; force_merge lets a repository administrator through
 * unless the rule blocks that, and the bypass allow-list; the merge allow-list; stale approvals
 * dismissed on push; official reviews re-decided when the base changes; signed commits; open dependencies; a scheduled merge that waits for an
 * approval.
 */
import { describeForge, PASSWORD } from './support/forge';
import { expectStatus } from './support/requests';

describeForge('pulls: branch protection on merge', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const R = '/repos/alice/proj';
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  let n = 0;
  /** A branch off `base` changing `file` (a new file by default) and a pull request of it into `base`. */
  const pull = async (base = 'main', file?: string) => {
    const branch = `topic-${++n}`;
    const res = await f().request('POST', `${R}/contents/${file ?? `${branch}.txt`}`, { ...as('alice'), body: { content: b64(branch), message: branch, branch: base, new_branch: branch } });
    expectStatus(res, 201);
    const pr = await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: branch, base, title: `Change ${branch}` } });
    expectStatus(pr, 201);
    return { index: pr.body.number as number, sha: pr.body.head.sha as string, branch };
  };
  const settle = async () => {
    await f().app.services.pulls.checker.idle();
    await f().app.services.pulls.autoMerge.idle();
  };
  const merge = async (index: number, who = 'alice', extra: Record<string, unknown> = {}) => {
    const res = await f().request('POST', `${R}/pulls/${index}/merge`, { ...as(who), body: { Do: 'merge', ...extra } });
    return [res.status, res.status === 200 || res.status === 201 ? '' : res.body.message];
  };
  const review = async (index: number, who: string, event: string) => {
    const res = await f().request('POST', `${R}/pulls/${index}/reviews`, { ...as(who), body: { event, body: event === 'APPROVED' ? '' : 'see' } });
    expectStatus(res, 200);
    return res.body;
  };
  const status = (sha: string, state = 'success', context = 'ci/build') => f().request('POST', `${R}/statuses/${sha}`, { ...as('alice'), body: { context, state } });
  const protect = async (body: Record<string, unknown>) => expectStatus(await f().request('POST', `${R}/branch_protections`, { ...as('alice'), body }), 201);
  const branch = async (name: string) => expectStatus(await f().request('POST', `${R}/branches`, { ...as('alice'), body: { new_branch_name: name } }), 201);

  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carol', 'dave']) await f().user(u);
    expectStatus(await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'proj', auto_init: true } }), 201);
    for (const [u, permission] of [['bob', 'write'], ['dave', 'write'], ['carol', 'read']]) {
      expectStatus(await f().request('PUT', `${R}/collaborators/${u}`, { ...as('alice'), body: { permission } }), 204);
    }
    for (const b of ['release', 'stable', 'lts', 'signed']) await branch(b);
    await protect({
      rule_name: 'main',
      enable_push: true,
      enable_status_check: true,
      status_check_contexts: ['ci/*'],
      required_approvals: 1,
      block_on_rejected_reviews: true,
      block_on_official_review_requests: true,
      block_on_outdated_branch: true,
      protected_file_patterns: '*.lock',
    });
    await protect({ rule_name: 'release', enable_push: true, required_approvals: 1, dismiss_stale_approvals: true });
    await protect({ rule_name: 'stable', required_approvals: 1, enable_merge_whitelist: true, merge_whitelist_usernames: ['dave'] });
    await protect({ rule_name: 'lts', required_approvals: 1, block_admin_merge_override: true, enable_bypass_allowlist: true, bypass_allowlist_usernames: ['bob'] });
    await protect({ rule_name: 'signed', require_signed_commits: true });
  });

  test('each unmet requirement answers 405 with Gitea message, in Gitea order; force_merge for the administrator only', async () => {
    const { index, sha } = await pull();
    await settle();
    expect(await merge(index)).toEqual([405, 'Not all required status checks successful']);
    expect(await merge(index, 'carol')).toEqual([405, 'User not allowed to merge PR']);
    await status(sha, 'success', 'lint'); // not a required context
    expect(await merge(index)).toEqual([405, 'Not all required status checks successful']);
    await status(sha);
    expect(await merge(index)).toEqual([405, 'Does not have enough approvals']);
    expect(await review(index, 'carol', 'APPROVED')).toMatchObject({ official: false }); // read access: does not count
    expect(await merge(index)).toEqual([405, 'Does not have enough approvals']);
    expect(await review(index, 'bob', 'REQUEST_CHANGES')).toMatchObject({ official: true });
    await review(index, 'dave', 'APPROVED');
    expect(await merge(index)).toEqual([405, 'There are requested changes']);
    await review(index, 'bob', 'APPROVED'); // bob's change request no longer counts
    expectStatus(await f().request('POST', `${R}/pulls/${index}/requested_reviewers`, { ...as('alice'), body: { reviewers: ['bob'] } }), 201);
    expect(await merge(index)).toEqual([405, 'There are official review requests']);
    await review(index, 'bob', 'APPROVED');
    const ahead = await f().request('POST', `${R}/contents/later.txt`, { ...as('alice'), body: { content: b64('later'), message: 'later', branch: 'main' } });
    expectStatus(ahead, 201);
    await settle();
    expect(await merge(index)).toEqual([405, 'The head branch is behind the base branch']);
    expect(await merge(index, 'bob', { force_merge: true })).toEqual([405, 'The head branch is behind the base branch']);
    expect(await merge(index, 'alice', { force_merge: true })).toEqual([200, '']);
    expect((await f().request('GET', `${R}/pulls/${index}`, as('alice'))).body).toMatchObject({ merged: true, merged_by: { login: 'alice' } });
  });

  test('changed protected files block the merge', async () => {
    const { index, sha } = await pull('main', 'deps.lock');
    await status(sha);
    await review(index, 'bob', 'APPROVED');
    await settle();
    expect(await merge(index)).toEqual([405, 'Changed protected files']);
  });

  test('a scheduled merge waits for the approval the rule requires, then merges', async () => {
    const { index, sha } = await pull();
    await status(sha);
    await settle();
    expect(await merge(index, 'alice', { merge_when_checks_succeed: true })).toEqual([201, '']);
    await settle();
    expect((await f().request('GET', `${R}/pulls/${index}`, as('alice'))).body.merged).toBe(false);
    await review(index, 'bob', 'APPROVED');
    await settle();
    expect((await f().request('GET', `${R}/pulls/${index}`, as('alice'))).body).toMatchObject({ merged: true, merged_by: { login: 'alice' } });
  });

  test('a push to the head dismisses the approvals when the rule says so', async () => {
    const { index, branch } = await pull('release');
    await review(index, 'bob', 'APPROVED');
    await settle();
    const push = await f().request('POST', `${R}/contents/more.txt`, { ...as('alice'), body: { content: b64('more'), message: 'more', branch } });
    expectStatus(push, 201);
    await settle();
    const reviews = (await f().request('GET', `${R}/pulls/${index}/reviews`, as('alice'))).body;
    expect(reviews.map((r: { state: string; stale: boolean; dismissed: boolean }) => [r.state, r.stale, r.dismissed])).toEqual([['APPROVED', true, true]]);
    const timeline = (await f().request('GET', `${R}/issues/${index}/timeline`, as('alice'))).body;
    expect(timeline.filter((e: { type: string }) => e.type === 'dismiss_review').map((e: { body: string }) => e.body)).toEqual([
      'New commits pushed, approval review dismissed automatically according to repository settings',
    ]);
    expect(await merge(index)).toEqual([405, 'Does not have enough approvals']);
  });

  test("a new base re-decides which reviews are official: an approval given on an unprotected base does not satisfy the new base's approvers list", async () => {
    for (const b of ['dev', 'gated']) await branch(b);
    await protect({ rule_name: 'gated', required_approvals: 1, enable_approvals_whitelist: true, approvals_whitelist_username: ['dave'] });
    const { index } = await pull('dev');
    await review(index, 'bob', 'APPROVED');
    const officials = async () => (await f().request('GET', `${R}/pulls/${index}/reviews`)).body.map((r: { user: { login: string }; official: boolean }) => [r.user.login, r.official]);
    expect(await officials()).toEqual([['bob', true]]);
    expectStatus(await f().request('PATCH', `${R}/pulls/${index}`, { ...as('alice'), body: { base: 'gated' } }), 201);
    expect(await officials()).toEqual([['bob', false]]);
    await settle();
    expect(await merge(index)).toEqual([405, 'Does not have enough approvals']);
    await review(index, 'dave', 'APPROVED');
    expectStatus(await f().request('PATCH', `${R}/pulls/${index}`, { ...as('alice'), body: { base: 'dev' } }), 201);
    expect(await officials()).toEqual([['bob', true], ['dave', true]]);
  });

  test('the merge allow-list: others (the owner too, even with force_merge) are not allowed', async () => {
    const { index } = await pull('stable');
    await review(index, 'bob', 'APPROVED');
    await settle();
    expect(await merge(index, 'alice', { force_merge: true })).toEqual([405, 'User not allowed to merge PR']);
    expect(await merge(index, 'bob')).toEqual([405, 'User not allowed to merge PR']);
    expect(await merge(index, 'dave')).toEqual([200, '']);
  });

  test('block_admin_merge_override stops the administrator; the bypass allow-list lets bob force', async () => {
    const { index } = await pull('lts');
    await settle();
    expect(await merge(index, 'alice', { force_merge: true })).toEqual([405, 'Does not have enough approvals']);
    expect(await merge(index, 'bob')).toEqual([405, 'Does not have enough approvals']);
    expect(await merge(index, 'bob', { force_merge: true })).toEqual([200, '']);
  });

  test('signed commits required: no head commit is verified and no merge can be signed', async () => {
    const { index } = await pull('signed');
    await settle();
    expect(await merge(index)).toEqual([405, 'the branch requires signed commits but not all head commits are verified']);
    expect(await merge(index, 'alice', { Do: 'squash' })).toEqual([405, 'wont sign: nokey']);
  });

  test('an open dependency blocks the merge', async () => {
    const free = await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'free', auto_init: true } });
    expectStatus(free, 201);
    const file = await f().request('POST', '/repos/alice/free/contents/a.txt', { ...as('alice'), body: { content: b64('a'), message: 'a', new_branch: 'a' } });
    expectStatus(file, 201);
    const pr = await f().request('POST', '/repos/alice/free/pulls', { ...as('alice'), body: { head: 'a', base: 'main', title: 'a' } });
    const blocker = await f().request('POST', '/repos/alice/free/issues', { ...as('alice'), body: { title: 'first' } });
    const dep = await f().request('POST', `/repos/alice/free/issues/${pr.body.number}/dependencies`, { ...as('alice'), body: { owner: 'alice', repo: 'free', index: blocker.body.number } });
    expectStatus(dep, 201);
    await settle();
    const res = await f().request('POST', `/repos/alice/free/pulls/${pr.body.number}/merge`, { ...as('alice'), body: { Do: 'merge' } });
    expect([res.status, res.body.message]).toEqual([405, 'is blocked by an open dependency']);
  });
});
