/**
 * Reviews of pull requests and requested reviewers over HTTP, on real git, SQLite and
 * PostgreSQL, with Gitea 1.27.3's answers: reviews with line comments (diff hunk cut around the
 * line), approvals (official for writers), pending reviews seen only by their reviewer and
 * submitted later, dismissals by repository administrators, resolving and replying to line
 * comments, deleting reviews, review requests for users and organization teams and how the pull
 * request's record shows them.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('pull reviews', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const R = '/repos/alice/proj';
  const P = `${R}/pulls/1`;
  const logins = (users: { login: string }[]) => users.map((u) => u.login);
  let headSha = '';

  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carl', 'dave']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'proj', auto_init: true } })).status).toBe(201);
    expect((await f().request('PUT', `${R}/collaborators/bob`, { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
    const file = await f().request('POST', `${R}/contents/f.txt`, { ...as('alice'), body: { content: b64('one\ntwo\nthree\n'), message: 'f', branch: 'main', new_branch: 'feat' } });
    expect(file.status).toBe(201);
    headSha = file.body.commit.sha;
    expect((await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'feat', base: 'main', title: 'PR' } })).status).toBe(201);
  });

  test('a COMMENT review with a line comment: 200, the diff hunk up to the line, a timeline entry; the code comment stays off the timeline', async () => {
    const res = await f().request('POST', `${P}/reviews`, { ...as('bob'), body: { event: 'COMMENT', body: 'looks', comments: [{ path: 'f.txt', body: 'line two', new_position: 2 }] } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ['body', 'comments_count', 'commit_id', 'dismissed', 'html_url', 'id', 'official', 'pull_request_url', 'stale', 'state', 'submitted_at', 'team', 'updated_at', 'user'].sort(),
    );
    expect(res.body).toMatchObject({ state: 'COMMENT', body: 'looks', commit_id: headSha, stale: false, official: false, dismissed: false, comments_count: 1, team: null, user: { login: 'bob' } });
    expect(res.body.html_url).toBe(`${f().url}/alice/proj/pulls/1#pullrequestreview-${res.body.id}`);
    expect(res.body.pull_request_url).toBe(`${f().url}/alice/proj/pulls/1`);
    const comments = await f().request('GET', `${P}/reviews/${res.body.id}/comments`, as('bob'));
    expect(comments.status).toBe(200);
    expect(comments.body).toHaveLength(1);
    expect(comments.body[0]).toMatchObject({
      body: 'line two',
      user: { login: 'bob' },
      resolver: null,
      pull_request_review_id: res.body.id,
      path: 'f.txt',
      commit_id: headSha,
      original_commit_id: '',
      diff_hunk: '@@ -0,0 +1,3 @@\n+one\n+two',
      position: 2,
      original_position: 0,
      pull_request_url: `${f().url}/alice/proj/pulls/1`,
    });
    const timeline = await f().request('GET', `${R}/issues/1/timeline`, as('bob'));
    // The opening's pull_push entry (its commits), then the review.
    expect(timeline.body.map((e: { type: string }) => e.type)).toEqual(['pull_push', 'review']);
    expect(timeline.body[1].review_id).toBe(res.body.id);
    expect((await f().request('GET', `${R}/issues/1/comments`, as('bob'))).body).toEqual([]);
  });

  test("approvals: a writer's is official; approving or rejecting one's own pull request and a change request without body are 422", async () => {
    const res = await f().request('POST', `${P}/reviews`, { ...as('bob'), body: { event: 'APPROVED' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: 'APPROVED', official: true, body: '', comments_count: 0 });
    let bad = await f().request('POST', `${P}/reviews`, { ...as('alice'), body: { event: 'APPROVED' } });
    expect([bad.status, bad.body.message]).toEqual([422, 'approve your own pull is not allowed']);
    bad = await f().request('POST', `${P}/reviews`, { ...as('alice'), body: { event: 'REQUEST_CHANGES', body: 'x' } });
    expect([bad.status, bad.body.message]).toEqual([422, 'reject your own pull is not allowed']);
    bad = await f().request('POST', `${P}/reviews`, { ...as('bob'), body: { event: 'REQUEST_CHANGES' } });
    expect([bad.status, bad.body.message]).toEqual([422, 'review event REQUEST_CHANGES requires a body']);
    bad = await f().request('POST', `${P}/reviews`, { ...as('bob'), body: { event: 'COMMENT' } });
    expect([bad.status, bad.body.message]).toEqual([422, 'review event COMMENT requires a body or a comment']);
    expect((await f().request('POST', `${P}/reviews`, { body: { event: 'COMMENT', body: 'x' } })).status).toBe(401);
    expect((await f().request('POST', `${R}/pulls/9/reviews`, { ...as('bob'), body: { event: 'COMMENT', body: 'x' } })).status).toBe(404);
    // A public repository: anyone signed in may comment, but an outsider's approval is not official.
    const carl = await f().request('POST', `${P}/reviews`, { ...as('carl'), body: { event: 'APPROVED' } });
    expect([carl.status, carl.body.official]).toEqual([200, false]);
  });

  test('review requests: 201 with the new requests only, official for writers (their earlier verdict stops counting), Gitea refusals', async () => {
    let res = await f().request('POST', `${P}/requested_reviewers`, { ...as('alice'), body: { reviewers: ['dave'] } });
    expect(res.status).toBe(201);
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toMatchObject({ state: 'REQUEST_REVIEW', user: { login: 'dave' }, team: null, official: false, commit_id: '', html_url: '', comments_count: 0 });
    res = await f().request('POST', `${P}/requested_reviewers`, { ...as('alice'), body: { reviewers: ['dave'] } });
    expect([res.status, res.body]).toEqual([201, []]);
    res = await f().request('POST', `${P}/requested_reviewers`, { ...as('alice'), body: { reviewers: ['bob'] } });
    expect([res.status, res.body[0].official]).toEqual([201, true]);
    const list = await f().request('GET', `${P}/reviews`, as('alice'));
    expect(list.headers.get('x-total-count')).toBe(String(list.body.length));
    expect(list.headers.get('link')).toBeNull();
    const bobs = list.body.filter((r: { user: { login: string } }) => r.user.login === 'bob');
    expect(bobs.map((r: { state: string; official: boolean }) => [r.state, r.official])).toEqual([
      ['COMMENT', false],
      ['APPROVED', false],
      ['REQUEST_REVIEW', true],
    ]);
    // The record lists each reviewer's latest review or request.
    expect(logins((await f().request('GET', P, as('alice'))).body.requested_reviewers)).toEqual(['carl', 'dave', 'bob']);

    let bad = await f().request('POST', `${P}/requested_reviewers`, { ...as('alice'), body: { reviewers: ['alice'] } });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/^poster of pr can't be reviewer \[user_id: \d+, repo_id: \d+\]$/);
    bad = await f().request('POST', `${P}/requested_reviewers`, { ...as('alice'), body: { reviewers: ['nobody'] } });
    expect([bad.status, bad.body.message]).toEqual([404, "user doesn't exist: nobody"]);
    bad = await f().request('POST', `${P}/requested_reviewers`, { ...as('carl'), body: { reviewers: ['bob'] } });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/^Doer can't choose reviewer \[user_id: \d+, repo_id: \d+\]$/);
    // Team names are ignored on a personal repository.
    expect((await f().request('POST', `${P}/requested_reviewers`, { ...as('alice'), body: { team_reviewers: ['nope'] } })).status).toBe(201);
  });

  test('a requested reviewer withdraws their own request; the owner removes one: 204 and a review_request entry with removed_assignee', async () => {
    expect((await f().request('DELETE', `${P}/requested_reviewers`, { ...as('carl'), body: { reviewers: ['dave'] } })).status).toBe(422);
    expect((await f().request('DELETE', `${P}/requested_reviewers`, { ...as('dave'), body: { reviewers: ['dave'] } })).status).toBe(204);
    expect(logins((await f().request('GET', P)).body.requested_reviewers)).toEqual(['carl', 'bob']);
    const timeline = (await f().request('GET', `${R}/issues/1/timeline`, as('alice'))).body as { type: string; assignee: { login: string } | null; removed_assignee: boolean }[];
    const requests = timeline.filter((e) => e.type === 'review_request').map((e) => [e.assignee?.login, e.removed_assignee]);
    expect(requests).toEqual([
      ['dave', false],
      ['bob', false],
      ['dave', true],
    ]);
  });

  test('issue search: review_requested finds the pull requests awaiting the doer, reviewed those they reviewed (not their own)', async () => {
    const found = async (user: string, filter: string) =>
      (await f().request('GET', `/repos/issues/search?type=pulls&${filter}=true`, as(user))).body.map((i: { number: number; repository: { full_name: string } }) => `${i.repository.full_name}#${i.number}`);
    // bob's latest is a request (made after his approval); carl's is his approval, so nothing
    // awaits him; dave withdrew his; alice opened the pull request.
    expect(await found('bob', 'review_requested')).toEqual(['alice/proj#1']);
    expect(await found('carl', 'review_requested')).toEqual([]);
    expect(await found('dave', 'review_requested')).toEqual([]);
    expect(await found('alice', 'review_requested')).toEqual([]);
    expect(await found('bob', 'reviewed')).toEqual(['alice/proj#1']);
    expect(await found('carl', 'reviewed')).toEqual(['alice/proj#1']);
    expect(await found('dave', 'reviewed')).toEqual([]);
    expect(await found('alice', 'reviewed')).toEqual([]);
  });

  test("pending reviews: seen only by their reviewer (their body is on the timeline, as Gitea writes it); submitting one answers the reviewer's request", async () => {
    const reviewEntries = async () =>
      ((await f().request('GET', `${R}/issues/1/timeline?limit=100`, as('carl'))).body as { type: string; body: string }[]).filter((e) => e.type === 'review').map((e) => e.body);
    const before = await reviewEntries();
    let bad = await f().request('POST', `${P}/reviews`, { ...as('bob'), body: { event: 'PENDING', comments: [{ path: 'f.txt', body: 'x', new_position: 1 }] } });
    expect([bad.status, bad.body.message]).toEqual([422, 'review event PENDING requires a body']);
    const res = await f().request('POST', `${P}/reviews`, { ...as('bob'), body: { event: 'PENDING', body: 'draft', comments: [{ path: 'f.txt', body: 'old side?', old_position: 0, new_position: 1 }] } });
    expect([res.status, res.body.state, res.body.body, res.body.html_url, res.body.comments_count]).toEqual([200, 'PENDING', 'draft', '', 1]);
    const id = res.body.id;
    expect((await f().request('GET', `${P}/reviews/${id}`, as('carl'))).status).toBe(404);
    expect((await f().request('GET', `${P}/reviews/${id}`, as('bob'))).status).toBe(200);
    const carlSees = (await f().request('GET', `${P}/reviews`, as('carl'))).body.map((r: { id: number }) => r.id);
    expect(carlSees).not.toContain(id);
    // Each creation of a review, a pending one's too, writes its body as a timeline entry; so does the submission.
    expect(await reviewEntries()).toEqual([...before, 'draft']);
    bad = await f().request('POST', `${P}/reviews/${id}`, { ...as('bob'), body: { event: 'PENDING', body: 'still' } });
    expect([bad.status, bad.body.message]).toEqual([422, 'review stay pending']);
    const sub = await f().request('POST', `${P}/reviews/${id}`, { ...as('bob'), body: { event: 'REQUEST_CHANGES', body: 'fix it' } });
    expect(sub.status).toBe(200);
    expect(sub.body).toMatchObject({ id, state: 'REQUEST_CHANGES', body: 'fix it', official: true, comments_count: 1 });
    expect(sub.body.html_url).toContain(`#pullrequestreview-${id}`);
    expect(await reviewEntries()).toEqual([...before, 'draft', 'fix it']);
    bad = await f().request('POST', `${P}/reviews/${id}`, { ...as('bob'), body: { event: 'COMMENT', body: 'again' } });
    expect([bad.status, bad.body.message]).toEqual([422, 'only a pending review can be submitted']);
    const states = (await f().request('GET', `${P}/reviews`, as('bob'))).body.filter((r: { user: { login: string } }) => r.user.login === 'bob').map((r: { state: string }) => r.state);
    expect(states).not.toContain('REQUEST_REVIEW');
    expect((await f().request('GET', `${P}/reviews/99999`, as('bob'))).status).toBe(404);
  });

  test("dismissals: repository administrators only, approvals and change requests only; undismissal; the record falls back to the reviewer's latest undismissed review", async () => {
    const reviews = (await f().request('GET', `${P}/reviews`, as('alice'))).body as { id: number; state: string; user: { login: string } }[];
    const rejection = reviews.find((r) => r.state === 'REQUEST_CHANGES')!;
    const comment = reviews.find((r) => r.state === 'COMMENT')!;
    let res = await f().request('POST', `${P}/reviews/${rejection.id}/dismissals`, { ...as('bob'), body: { message: 'no' } });
    expect([res.status, res.body.message]).toEqual([403, 'Must be repo admin']);
    res = await f().request('POST', `${P}/reviews/${comment.id}/dismissals`, { ...as('alice'), body: {} });
    expect([res.status, res.body.message]).toEqual([403, "not need to dismiss this review because it's type is not Approve or change request"]);
    res = await f().request('POST', `${P}/reviews/${rejection.id}/dismissals`, { ...as('alice'), body: { message: 'outdated' } });
    expect([res.status, res.body.dismissed, res.body.state]).toEqual([200, true, 'REQUEST_CHANGES']);
    // The record shows each reviewer's latest undismissed review: bob's earlier approval again.
    expect(logins((await f().request('GET', P)).body.requested_reviewers)).toEqual(['bob', 'carl']);
    const timeline = (await f().request('GET', `${R}/issues/1/timeline`, as('alice'))).body as { type: string; body: string }[];
    expect(timeline.filter((e) => e.type === 'dismiss_review').map((e) => e.body)).toEqual(['outdated']);
    res = await f().request('POST', `${P}/reviews/${rejection.id}/undismissals`, as('alice'));
    expect([res.status, res.body.dismissed]).toEqual([200, false]);
  });

  test('line comments: resolve and unresolve (poster of the pull request or writers), replies in the same review; 400 for a plain comment', async () => {
    const first = (await f().request('GET', `${P}/reviews`, as('alice'))).body[0];
    const [code] = (await f().request('GET', `${P}/reviews/${first.id}/comments`, as('alice'))).body;
    let res = await f().request('POST', `${R}/pulls/comments/${code.id}/resolve`, as('carl'));
    expect([res.status, res.body.message]).toEqual([403, 'user should have permission to resolve comment']);
    expect((await f().request('POST', `${R}/pulls/comments/${code.id}/resolve`, as('bob'))).status).toBe(204);
    expect((await f().request('GET', `${P}/reviews/${first.id}/comments`, as('alice'))).body[0].resolver.login).toBe('bob');
    expect((await f().request('POST', `${R}/pulls/comments/${code.id}/resolve`, as('alice'))).status).toBe(204);
    expect((await f().request('POST', `${R}/pulls/comments/${code.id}/unresolve`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', `${P}/reviews/${first.id}/comments`, as('alice'))).body[0].resolver).toBeNull();
    const plain = await f().request('POST', `${R}/issues/1/comments`, { ...as('alice'), body: { body: 'plain' } });
    res = await f().request('POST', `${R}/pulls/comments/${plain.body.id}/resolve`, as('alice'));
    expect([res.status, res.body.message]).toEqual([400, 'comment is not a review comment']);
    expect((await f().request('POST', `${R}/pulls/comments/999999/resolve`, as('alice'))).status).toBe(404);

    res = await f().request('POST', `${P}/comments/${code.id}/replies`, { ...as('alice'), body: { body: 'done' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ body: 'done', user: { login: 'alice' }, path: 'f.txt', position: 2, pull_request_review_id: first.id, diff_hunk: code.diff_hunk });
    expect((await f().request('GET', `${P}/reviews/${first.id}/comments`, as('alice'))).body.map((c: { body: string }) => c.body)).toEqual(['line two', 'done']);
  });

  test('delete a review: its reviewer or a site administrator (403 otherwise); its comments go with it', async () => {
    const first = (await f().request('GET', `${P}/reviews`, as('alice'))).body[0];
    let res = await f().request('DELETE', `${P}/reviews/${first.id}`, as('alice'));
    expect([res.status, res.body.message]).toEqual([403, 'no permission to delete comment']);
    expect((await f().request('DELETE', `${P}/reviews/${first.id}`, as('bob'))).status).toBe(204);
    expect((await f().request('GET', `${P}/reviews/${first.id}`, as('bob'))).status).toBe(404);
    const timeline = (await f().request('GET', `${R}/issues/1/timeline`, as('alice'))).body as { review_id: number }[];
    expect(timeline.some((e) => e.review_id === first.id)).toBe(false);
  });

  test("organization teams: requested as reviewers (organization in the pull request's record, not in the review), answered by a member's review", async () => {
    const org = await f().request('POST', '/orgs', { ...as('alice'), body: { username: 'acme' } });
    expect(org.status).toBe(201);
    const team = await f().request('POST', '/orgs/acme/teams', { ...as('alice'), body: { name: 'devs', permission: 'write', units: ['repo.code', 'repo.pulls'], includes_all_repositories: true } });
    expect(team.status).toBe(201);
    expect((await f().request('PUT', `/teams/${team.body.id}/members/bob`, as('alice'))).status).toBe(204);
    expect((await f().request('POST', '/orgs/acme/repos', { ...as('alice'), body: { name: 'lib', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/repos/acme/lib/contents/f.txt', { ...as('alice'), body: { content: b64('x\n'), message: 'f', branch: 'main', new_branch: 'feat' } })).status).toBe(201);
    expect((await f().request('POST', '/repos/acme/lib/pulls', { ...as('alice'), body: { head: 'feat', base: 'main', title: 'PR' } })).status).toBe(201);
    const L = '/repos/acme/lib/pulls/1';
    let res = await f().request('POST', `${L}/requested_reviewers`, { ...as('alice'), body: { team_reviewers: ['devs'] } });
    expect([res.status, res.body.message]).toEqual([201, undefined]);
    expect(res.body[0]).toMatchObject({ state: 'REQUEST_REVIEW', user: null, team: { name: 'devs', organization: null }, official: false });
    res = await f().request('POST', `${L}/requested_reviewers`, { ...as('alice'), body: { team_reviewers: ['nope'] } });
    expect([res.status, res.body.message]).toEqual([404, "team doesn't exist: nope"]);
    let pr = (await f().request('GET', L)).body;
    expect(pr.requested_reviewers_teams.map((t: { name: string; organization: { username: string } }) => [t.name, t.organization.username])).toEqual([['devs', 'acme']]);
    expect((await f().request('POST', `${L}/reviews`, { ...as('bob'), body: { event: 'APPROVED' } })).status).toBe(200);
    pr = (await f().request('GET', L)).body;
    expect([pr.requested_reviewers_teams, logins(pr.requested_reviewers)]).toEqual([[], ['bob']]);
    expect((await f().request('DELETE', `${L}/requested_reviewers`, { ...as('alice'), body: { team_reviewers: ['devs'] } })).status).toBe(204);
    // The timeline names the team of the request (without its organization, as Gitea); bob's
    // review answered it, so the removal above found no request to withdraw.
    const timeline = (await f().request('GET', '/repos/acme/lib/issues/1/timeline', as('alice'))).body as { type: string; assignee: unknown; assignee_team: { name: string; organization: unknown } | null; removed_assignee: boolean }[];
    const teamEntries = timeline.filter((e) => e.type === 'review_request' && e.assignee_team).map((e) => [e.assignee_team!.name, e.assignee_team!.organization, e.assignee, e.removed_assignee]);
    expect(teamEntries).toEqual([['devs', null, null, false]]);
  });

  test('pinned pull requests: GET /pulls/pinned lists the pinned ones in pin order, as pull request records', async () => {
    expect((await f().request('GET', `${R}/pulls/pinned`)).body).toEqual([]);
    expect((await f().request('POST', `${R}/issues/1/pin`, as('alice'))).status).toBe(204);
    const res = await f().request('GET', `${R}/pulls/pinned`);
    expect(res.status).toBe(200);
    expect(res.body.map((p: { number: number; pin_order: number; head: { ref: string } }) => [p.number, p.pin_order, p.head.ref])).toEqual([[1, 1, 'feat']]);
  });
});
