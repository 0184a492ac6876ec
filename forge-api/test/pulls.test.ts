/**
 * Pull requests over HTTP on real git, SQLite and PostgreSQL: create from a branch of the same
 * repository and from a fork (refs/pull/{index}/head written, mergeability and merge base
 * checked), Gitea's refusals, list filters / sorts / paging headers, get by number and by base
 * and head, edit, a pull request as an issue, the background check after pushes, private
 * repositories and token scopes.
 */
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('pulls', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);
  const rev = async (owner: string, name: string, ref: string) => (await git(disk(owner, name), 'rev-parse', '--verify', '--quiet', ref).catch(() => ({ stdout: '' }))).stdout.trim();
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  /** A commit through the contents API: a new file, or a new version of one, on `branch` (made from `from`). */
  const write = async (who: string, repo: string, file: string, text: string, branch: string, from?: string) => {
    const cur = await f().request('GET', `/repos/${repo}/contents/${file}?ref=${from ?? branch}`, as(who));
    const body = { content: b64(text), message: `${who} ${file}`, ...(from ? { branch: from, new_branch: branch } : { branch }), ...(cur.status === 200 ? { sha: cur.body.sha } : {}) };
    const res = await f().request(cur.status === 200 ? 'PUT' : 'POST', `/repos/${repo}/contents/${file}`, { ...as(who), body });
    expect([res.status, res.body.message]).toEqual([cur.status === 200 ? 200 : 201, undefined]);
    return res.body.commit.sha as string;
  };
  const settle = () => f().app.services.pulls.checker.idle();
  const R = '/repos/alice/proj';

  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carl']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'proj', auto_init: true, issue_labels: 'Default' } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'hidden', auto_init: true, private: true } })).status).toBe(201);
    // An issue first: pull requests share the repository's one number sequence.
    expect((await f().request('POST', `${R}/issues`, { ...as('alice'), body: { title: 'an issue' } })).body.number).toBe(1);
    await write('alice', 'alice/proj', 'feature.txt', 'one\ntwo\n', 'feature', 'main');
    await write('alice', 'alice/proj', 'README.md', 'changed on main\n', 'main');
    // clash starts before main's README change and changes the README otherwise.
    await write('alice', 'alice/proj', 'README.md', 'changed on the branch\n', 'clash', 'feature');
    expect((await f().request('POST', `${R}/forks`, { ...as('bob'), body: {} })).status).toBe(202);
    await write('bob', 'bob/proj', 'bob.txt', 'from bob\n', 'bobs', 'main');
    await write('alice', 'alice/hidden', 'x.txt', 'x\n', 'topic', 'main');
  });

  test('create from a branch: 201, next number, head/base, refs/pull/{n}/head, merge base, mergeable, diff size', async () => {
    const res = await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'feature', base: 'main', title: 'Add feature', body: 'please' } });
    expect(res.status).toBe(201);
    const featureTip = await rev('alice', 'proj', 'refs/heads/feature');
    const mainTip = await rev('alice', 'proj', 'refs/heads/main');
    expect(res.body).toMatchObject({
      number: 2,
      title: 'Add feature',
      body: 'please',
      state: 'open',
      draft: false,
      merged: false,
      merged_at: null,
      merge_commit_sha: null,
      merged_by: null,
      mergeable: true,
      assignees: [],
      requested_reviewers: [],
      requested_reviewers_teams: [],
      additions: 2,
      deletions: 0,
      changed_files: 1,
      html_url: `${f().url}/alice/proj/pulls/2`,
      url: `${f().url}/alice/proj/pulls/2`,
      diff_url: `${f().url}/alice/proj/pulls/2.diff`,
      patch_url: `${f().url}/alice/proj/pulls/2.patch`,
      base: { label: 'main', ref: 'main', sha: mainTip, repo: { full_name: 'alice/proj' } },
      head: { label: 'feature', ref: 'feature', sha: featureTip, repo: { full_name: 'alice/proj' } },
    });
    expect(res.body.user.login).toBe('alice');
    expect(res.body.merge_base).toBe(await rev('alice', 'proj', 'refs/heads/feature~1'));
    expect(await rev('alice', 'proj', 'refs/pull/2/head')).toBe(featureTip);
    // A pull request is an issue: same number through the issue routes, with pull_request set.
    const issue = await f().request('GET', `${R}/issues/2`);
    expect(issue.body.pull_request).toEqual({ merged: false, merged_at: null, draft: false, html_url: `${f().url}/alice/proj/pulls/2` });
    expect((await f().request('GET', `${R}/issues/1`)).body.pull_request).toBeNull();
    const repo = await f().request('GET', R);
    expect(repo.body.open_pr_counter).toBe(1);
    expect(repo.body.open_issues_count).toBe(1);
  });

  test("refusals: head == base 422, an open pull request for the pair 409, unknown branch or fork 404, outsider's branch 403", async () => {
    let res = await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'main', base: 'main', title: 't' } });
    expect([res.status, res.body.message]).toEqual([422, 'Invalid PullRequest: There are no changes between the head and the base']);
    res = await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'feature', base: 'main', title: 'again' } });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/^pull request already exists for these targets \[id: \d+, issue_id: 2, head_repo_id: \d+, base_repo_id: \d+, head_branch: feature, base_branch: main\]$/);
    const missing = await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'nope', base: 'main', title: 't' } });
    expect([missing.status, missing.body.message]).toEqual([404, 'ref "nope" does not exist']);
    expect((await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'carl:main', base: 'main', title: 't' } })).status).toBe(404);
    expect((await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'feature', base: 'main' } })).status).toBe(422);
    // carl neither collaborates on alice/proj nor writes to it: he cannot open a pull request from alice's branch.
    res = await f().request('POST', `${R}/pulls`, { ...as('carl'), body: { head: 'clash', base: 'main', title: 'from carl' } });
    expect(res.status).toBe(403);
    expect((await f().request('POST', `${R}/pulls`, { body: { head: 'clash', base: 'main', title: 'anonymous' } })).status).toBe(401);
  });

  test('create from a fork (owner:branch): the head commits reach the base repository at refs/pull/{n}/head', async () => {
    const res = await f().request('POST', `${R}/pulls`, { ...as('bob'), body: { head: 'bob:bobs', base: 'main', title: 'From the fork', allow_maintainer_edit: true } });
    expect(res.status).toBe(201);
    const tip = await rev('bob', 'proj', 'refs/heads/bobs');
    expect(res.body).toMatchObject({ number: 3, mergeable: true, allow_maintainer_edit: true, head: { label: 'bobs', ref: 'bobs', sha: tip, repo: { full_name: 'bob/proj', fork: true } }, base: { repo: { full_name: 'alice/proj' } } });
    expect(res.body.head.repo_id).not.toBe(res.body.base.repo_id);
    expect(await rev('alice', 'proj', 'refs/pull/3/head')).toBe(tip);
    expect((await git(disk('alice', 'proj'), 'cat-file', '-t', tip)).stdout.trim()).toBe('commit');
    // owner/repo:branch names the same head.
    const byName = await f().request('GET', `${R}/pulls/main/bob/proj:bobs`);
    expect([byName.status, byName.body.number]).toEqual([200, 3]);
  });

  test('a conflicting branch is created but not mergeable', async () => {
    const res = await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'clash', base: 'main', title: 'Clash' } });
    expect(res.status).toBe(201);
    expect(res.body.mergeable).toBe(false);
    const row = await f().app.prisma.pullRequest.findFirst({ where: { index: res.body.number } });
    expect([row!.status, JSON.parse(row!.conflictedFiles)]).toEqual([0, ['README.md']]);
  });

  test('get by number (an issue number is 404) and by base/head', async () => {
    let res = await f().request('GET', `${R}/pulls/2`);
    expect([res.status, res.body.number, res.body.head.ref]).toEqual([200, 2, 'feature']);
    expect((await f().request('GET', `${R}/pulls/1`)).status).toBe(404);
    expect((await f().request('GET', `${R}/pulls/999`)).status).toBe(404);
    res = await f().request('GET', `${R}/pulls/main/feature`);
    expect([res.status, res.body.number]).toEqual([200, 2]);
    res = await f().request('GET', `${R}/pulls/main/bob:bobs`);
    expect([res.status, res.body.number]).toEqual([200, 3]);
    expect((await f().request('GET', `${R}/pulls/main/nothing`)).status).toBe(404);
  });

  test('list: state, sort (oldest, recentupdate), poster, labels, milestone; paging with Link and X-Total-Count; /issues?type=pulls', async () => {
    let res = await f().request('GET', `${R}/pulls?state=open`);
    expect(res.status).toBe(200);
    expect(res.body.map((p: { number: number }) => p.number)).toEqual([4, 3, 2]);
    expect(res.headers.get('x-total-count')).toBe('3');
    res = await f().request('GET', `${R}/pulls?state=open&sort=oldest&limit=2&page=1`);
    expect(res.body.map((p: { number: number }) => p.number)).toEqual([2, 3]);
    expect(res.headers.get('x-total-count')).toBe('3');
    expect(res.headers.get('link')).toContain('rel="next"');
    res = await f().request('GET', `${R}/pulls?state=open&poster=bob`);
    expect(res.body.map((p: { number: number }) => p.number)).toEqual([3]);
    expect((await f().request('GET', `${R}/pulls?poster=nobody`)).status).toBe(400);
    // Another state lists them all, another sort keeps the default order (newest first), as Gitea.
    res = await f().request('GET', `${R}/pulls?state=nope&sort=nope`);
    expect([res.status, res.body.map((p: { number: number }) => p.number)]).toEqual([200, [4, 3, 2]]);
    res = await f().request('GET', `${R}/pulls?state=open&sort=constructor`);
    expect([res.status, res.body.map((p: { number: number }) => p.number)]).toEqual([200, [4, 3, 2]]);
    // A comment on #2 makes it the most recently updated.
    expect((await f().request('POST', `${R}/issues/2/comments`, { ...as('bob'), body: { body: 'looks good' } })).status).toBe(201);
    res = await f().request('GET', `${R}/pulls?state=open&sort=recentupdate`);
    expect(res.body[0].number).toBe(2);
    expect(res.body[0].comments).toBe(1);
    const labels = (await f().request('GET', `${R}/labels`)).body as { id: number; name: string }[];
    const bug = labels.find((l) => l.name === 'bug')!;
    expect((await f().request('POST', `${R}/issues/3/labels`, { ...as('alice'), body: { labels: [bug.id] } })).status).toBe(200);
    res = await f().request('GET', `${R}/pulls?state=all&labels=${bug.id}`);
    expect(res.body.map((p: { number: number }) => p.number)).toEqual([3]);
    expect(res.body[0].labels.map((l: { name: string }) => l.name)).toEqual(['bug']);
    const ms = await f().request('POST', `${R}/milestones`, { ...as('alice'), body: { title: 'v1' } });
    expect((await f().request('PATCH', `${R}/pulls/4`, { ...as('alice'), body: { milestone: ms.body.id } })).status).toBe(201);
    res = await f().request('GET', `${R}/pulls?state=all&milestone=${ms.body.id}`);
    expect(res.body.map((p: { number: number }) => p.number)).toEqual([4]);
    res = await f().request('GET', `${R}/issues?type=pulls&state=all`);
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([4, 3, 2]);
    expect(res.body.every((i: { pull_request: unknown }) => i.pull_request !== null)).toBe(true);
    res = await f().request('GET', `${R}/issues?type=issues&state=all`);
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([1]);
  });

  test('edit: title, body, assignees, due date, state (closed -> listed as closed), base; allow_maintainer_edit is the author\'s', async () => {
    let res = await f().request('PATCH', `${R}/pulls/4`, { ...as('alice'), body: { title: 'WIP: clash', body: 'b', assignees: ['bob'], due_date: '2030-05-06T12:00:00Z' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'WIP: clash', body: 'b', draft: true, mergeable: false, due_date: '2030-05-06T23:59:59Z' });
    expect(res.body.assignees.map((u: { login: string }) => u.login)).toEqual(['bob']);
    res = await f().request('PATCH', `${R}/pulls/4`, { ...as('alice'), body: { state: 'closed' } });
    expect([res.status, res.body.state]).toEqual([201, 'closed']);
    expect(res.body.closed_at).not.toBeNull();
    expect((await f().request('GET', `${R}/pulls?state=closed`)).body.map((p: { number: number }) => p.number)).toEqual([4]);
    // Closed, #4 no longer holds clash -> main: a new pull request for the pair may be opened.
    expect((await f().request('GET', R)).body.open_pr_counter).toBe(2);
    // Base: a missing branch is 404; an existing one moves the pull request and re-checks it.
    res = await f().request('PATCH', `${R}/pulls/2`, { ...as('alice'), body: { base: 'nope' } });
    expect([res.status, res.body.message]).toEqual([404, "new base 'nope' not exist"]);
    res = await f().request('PATCH', `${R}/pulls/2`, { ...as('alice'), body: { base: 'clash' } });
    expect([res.status, res.body.base.ref]).toEqual([201, 'clash']);
    expect((await f().request('GET', `${R}/pulls/clash/feature`)).body.number).toBe(2);
    res = await f().request('PATCH', `${R}/pulls/2`, { ...as('alice'), body: { base: 'main' } });
    expect(res.body.base.ref).toBe('main');
    // Only the author changes allow_maintainer_edit; others who may edit get 403.
    expect((await f().request('PATCH', `${R}/pulls/3`, { ...as('alice'), body: { allow_maintainer_edit: false } })).status).toBe(403);
    res = await f().request('PATCH', `${R}/pulls/3`, { ...as('bob'), body: { allow_maintainer_edit: false } });
    expect([res.status, res.body.allow_maintainer_edit]).toEqual([201, false]);
    // carl is neither author nor writer.
    expect((await f().request('PATCH', `${R}/pulls/3`, { ...as('carl'), body: { title: 'mine now' } })).status).toBe(403);
  });

  test('pushes: a push to the head moves refs/pull/{n}/head and re-checks; a push to the base re-checks too (in the background)', async () => {
    const before = (await f().request('GET', `${R}/pulls/2`)).body;
    const tip = await write('alice', 'alice/proj', 'feature.txt', 'one\ntwo\nthree\n', 'feature');
    await settle();
    let res = await f().request('GET', `${R}/pulls/2`);
    expect(res.body.head.sha).toBe(tip);
    expect(await rev('alice', 'proj', 'refs/pull/2/head')).toBe(tip);
    expect(res.body).toMatchObject({ additions: 3, changed_files: 1, mergeable: true, merge_base: before.merge_base });
    // A push to the base: the checker records the new divergence (the merge base stays).
    const mainTip = await write('alice', 'alice/proj', 'other.txt', 'x\n', 'main');
    await settle();
    res = await f().request('GET', `${R}/pulls/2`);
    expect(res.body.base.sha).toBe(mainTip);
    expect(res.body.mergeable).toBe(true);
    const row = await f().app.prisma.pullRequest.findFirst({ where: { index: 2, baseRepoId: res.body.base.repo_id } });
    expect([row!.commitsAhead, row!.commitsBehind, row!.headCommitId]).toEqual([2, 2, tip]);
    // The fork's branch moves too.
    const bobTip = await write('bob', 'bob/proj', 'bob.txt', 'from bob, again\n', 'bobs');
    await settle();
    expect(await rev('alice', 'proj', 'refs/pull/3/head')).toBe(bobTip);
  });

  test('commits (paged, X-Total-Count / X-HasMore), files (status, additions, deletions, changes), .diff and .patch', async () => {
    const tip = await rev('alice', 'proj', 'refs/heads/feature');
    let res = await f().request('GET', `${R}/pulls/2/commits?limit=1`);
    expect(res.status).toBe(200);
    expect(res.body.map((c: { sha: string }) => c.sha)).toEqual([tip]);
    expect(res.body[0].stats).toEqual({ total: 1, additions: 1, deletions: 0 });
    expect([res.headers.get('x-total-count'), res.headers.get('x-hasmore'), res.headers.get('x-pagecount'), res.headers.get('x-perpage')]).toEqual(['2', 'true', '2', '1']);
    res = await f().request('GET', `${R}/pulls/2/commits?page=2&limit=1`);
    expect(res.body.map((c: { sha: string }) => c.sha)).toEqual([await rev('alice', 'proj', 'refs/heads/feature~1')]);
    expect(res.headers.get('x-hasmore')).toBe('false');
    res = await f().request('GET', `${R}/pulls/2/files`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('1');
    expect(res.body).toEqual([
      {
        filename: 'feature.txt',
        status: 'added',
        additions: 3,
        deletions: 0,
        changes: 3,
        html_url: `${f().url}/alice/proj/src/commit/${tip}/feature.txt`,
        contents_url: `${f().url}/api/v1/repos/alice/proj/contents/feature.txt?ref=${tip}`,
        raw_url: `${f().url}/alice/proj/raw/commit/${tip}/feature.txt`,
      },
    ]);
    // The conflicting pull request (made from feature) changes a file that exists on both sides.
    res = await f().request('GET', `${R}/pulls/4/files`);
    expect(res.body.map((x: { filename: string; status: string }) => [x.filename, x.status])).toEqual([['README.md', 'changed'], ['feature.txt', 'added']]);
    expect(res.body[0].deletions).toBeGreaterThan(0);
    res = await f().request('GET', `${R}/pulls/2.diff`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toContain('diff --git a/feature.txt b/feature.txt');
    expect(res.text).toContain('+three');
    res = await f().request('GET', `${R}/pulls/2.patch`);
    expect(res.status).toBe(200);
    expect(res.text.startsWith(`From ${await rev('alice', 'proj', 'refs/heads/feature~1')}`)).toBe(true);
    expect(res.text.match(/^Subject: /gm)).toHaveLength(2);
    expect((await f().request('GET', `${R}/pulls/1.diff`)).status).toBe(404);
    expect((await f().request('GET', `${R}/pulls/2/files`, as('carl'))).status).toBe(200);
    // Not merged: no pull request for its head commit.
    expect((await f().request('GET', `${R}/commits/${tip}/pull`)).status).toBe(404);
  });

  test('private repositories stay 404 to outsiders; token scopes: repository for /pulls', async () => {
    const res = await f().request('POST', '/repos/alice/hidden/pulls', { ...as('alice'), body: { head: 'topic', base: 'main', title: 'secret' } });
    expect(res.status).toBe(201);
    for (const p of ['/repos/alice/hidden/pulls', '/repos/alice/hidden/pulls/1', '/repos/alice/hidden/pulls/main/topic']) {
      expect((await f().request('GET', p, as('carl'))).status).toBe(404);
      expect((await f().request('GET', p)).status).toBe(404);
    }
    expect((await f().request('PATCH', '/repos/alice/hidden/pulls/1', { ...as('carl'), body: { title: 'x' } })).status).toBe(404);
    expect((await f().request('POST', '/repos/alice/hidden/pulls', { ...as('carl'), body: { head: 'topic', base: 'main', title: 'x' } })).status).toBe(404);
    const issueOnly = await f().token('alice', ['read:issue']);
    expect((await f().request('GET', `${R}/pulls`, { token: issueOnly })).status).toBe(403);
    const repoRead = await f().token('alice', ['read:repository']);
    expect((await f().request('GET', `${R}/pulls`, { token: repoRead })).status).toBe(200);
    expect((await f().request('PATCH', `${R}/pulls/2`, { token: repoRead, body: { title: 'no' } })).status).toBe(403);
  });
});

describeForge('pulls: merge', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const disk = (owner: string, name: string) => path.join(f().dataDir, 'repositories', owner, `${name}.git`);
  const rev = async (owner: string, name: string, ref: string) => (await git(disk(owner, name), 'rev-parse', '--verify', '--quiet', ref).catch(() => ({ stdout: '' }))).stdout.trim();
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const branch = async (who: string, repo: string, file: string, text: string, name: string, from = 'main') => {
    const res = await f().request('POST', `/repos/${repo}/contents/${file}`, { ...as(who), body: { content: b64(text), message: `${who} ${file}`, branch: from, new_branch: name } });
    expect([res.status, res.body.message]).toEqual([201, undefined]);
    return res.body.commit.sha as string;
  };
  const put = async (who: string, repo: string, file: string, text: string, on: string) => {
    const cur = await f().request('GET', `/repos/${repo}/contents/${file}?ref=${on}`, as(who));
    const res = await f().request('PUT', `/repos/${repo}/contents/${file}`, { ...as(who), body: { content: b64(text), message: `${who} ${file}`, branch: on, sha: cur.body.sha } });
    expect([res.status, res.body.message]).toEqual([200, undefined]);
  };
  const open = async (who: string, head: string, title: string) => {
    const res = await f().request('POST', `${R}/pulls`, { ...as(who), body: { head, base: 'main', title } });
    expect(res.status).toBe(201);
    return res.body as { number: number; head: { sha: string }; mergeable: boolean };
  };
  const merge = (n: number, body: Record<string, unknown>, who = 'alice') => f().request('POST', `${R}/pulls/${n}/merge`, { ...as(who), body });
  const R = '/repos/alice/m';

  beforeAll(async () => {
    for (const u of ['alice', 'bob']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'm', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', `${R}/forks`, { ...as('bob'), body: {} })).status).toBe(202);
  });

  test('merge: head_commit_id checked (409), a merge commit of base and head with Gitea\'s title, merged state, branch deleted on request, 405 once merged', async () => {
    const tip = await branch('alice', 'alice/m', 'a.txt', 'a\n', 'topic-a');
    const pr = await open('alice', 'topic-a', 'Add a');
    expect(pr.mergeable).toBe(true);
    expect((await f().request('GET', `${R}/pulls/${pr.number}/merge`)).status).toBe(404);
    let res = await merge(pr.number, { Do: 'merge', head_commit_id: '0'.repeat(40) });
    expect([res.status, res.body.message]).toEqual([409, 'head out of date']);
    expect((await merge(pr.number, {})).status).toBe(422);
    const before = await rev('alice', 'm', 'refs/heads/main');
    res = await merge(pr.number, { Do: 'merge', head_commit_id: tip, delete_branch_after_merge: true });
    expect(res.status).toBe(200);
    const main = await rev('alice', 'm', 'refs/heads/main');
    expect((await git(disk('alice', 'm'), 'rev-list', '--parents', '-n1', main)).stdout.trim()).toBe(`${main} ${before} ${tip}`);
    expect((await git(disk('alice', 'm'), 'log', '-1', '--format=%s', main)).stdout.trim()).toBe("Merge pull request 'Add a' (#1) from topic-a into main");
    expect(await rev('alice', 'm', 'refs/heads/topic-a')).toBe('');
    expect((await f().request('GET', `${R}/pulls/${pr.number}/merge`)).status).toBe(204);
    const got = (await f().request('GET', `${R}/pulls/${pr.number}`)).body;
    expect(got).toMatchObject({ merged: true, merge_commit_sha: main, state: 'closed', merged_by: { login: 'alice' } });
    expect(got.merged_at).not.toBeNull();
    expect((await f().request('GET', `${R}/issues/${pr.number}`)).body.pull_request.merged).toBe(true);
    expect((await f().request('GET', `${R}/commits/${main}/pull`)).body.number).toBe(pr.number);
    res = await merge(pr.number, { Do: 'merge' });
    expect([res.status, res.body.message]).toEqual([405, 'The PR is already merged']);
    expect((await f().request('GET', R)).body.open_pr_counter).toBe(0);
  });

  test('squash from a fork: one commit authored by the poster; only writers merge (405); WIP and conflicts refused (405)', async () => {
    await branch('bob', 'bob/m', 'b.txt', 'b\n', 'from-bob');
    const pr = await open('bob', 'bob:from-bob', 'Add b');
    let res = await merge(pr.number, { Do: 'squash' }, 'bob');
    expect([res.status, res.body.message]).toEqual([405, 'User not allowed to merge PR']);
    const before = await rev('alice', 'm', 'refs/heads/main');
    res = await merge(pr.number, { Do: 'squash', merge_message_field: 'details' });
    expect(res.status).toBe(200);
    const main = await rev('alice', 'm', 'refs/heads/main');
    expect((await git(disk('alice', 'm'), 'rev-list', '--parents', '-n1', main)).stdout.trim()).toBe(`${main} ${before}`);
    expect((await git(disk('alice', 'm'), 'log', '-1', '--format=%an|%cn|%B', main)).stdout.trim()).toBe('bob|alice|Add b (#2)\n\ndetails');
    expect((await git(disk('alice', 'm'), 'cat-file', '-p', `${main}:b.txt`)).stdout.trim()).toBe('b');
    // A draft and a conflicting pull request cannot be merged.
    await branch('alice', 'alice/m', 'c.txt', 'c\n', 'wip');
    const wip = await open('alice', 'wip', 'WIP: not yet');
    res = await merge(wip.number, { Do: 'merge' });
    expect([res.status, res.body.message]).toEqual([405, 'Work in progress PRs cannot be merged']);
    // b.txt changed on a new branch and, differently, on main.
    await branch('alice', 'alice/m', 'x.txt', 'x\n', 'clash');
    await put('alice', 'alice/m', 'b.txt', 'b from clash\n', 'clash');
    await put('alice', 'alice/m', 'b.txt', 'b from main\n', 'main');
    await f().app.services.pulls.checker.idle();
    const clash = await open('alice', 'clash', 'Clash');
    expect(clash.mergeable).toBe(false);
    res = await merge(clash.number, { Do: 'merge' });
    expect([res.status, res.body.message]).toEqual([405, 'Please try again later']);
  });

  test('fast-forward-only moves the base to the head; manually-merged needs the commit on the base (409 otherwise)', async () => {
    const tip = await branch('alice', 'alice/m', 'f.txt', 'f\n', 'ff');
    const pr = await open('alice', 'ff', 'FF');
    expect((await merge(pr.number, { Do: 'fast-forward-only' })).status).toBe(200);
    expect(await rev('alice', 'm', 'refs/heads/main')).toBe(tip);
    const tip2 = await branch('alice', 'alice/m', 'g.txt', 'g\n', 'by-hand');
    const pr2 = await open('alice', 'by-hand', 'By hand');
    // Not allowed by default (allow_manual_merge false), then allowed.
    expect((await merge(pr2.number, { Do: 'manually-merged', merge_commit_id: tip2 })).status).toBe(405);
    expect((await f().request('PATCH', R, { ...as('alice'), body: { allow_manual_merge: true } })).status).toBe(200);
    let res = await merge(pr2.number, { Do: 'manually-merged', merge_commit_id: tip2 });
    expect([res.status, res.body.message]).toEqual([409, 'Wrong commit ID']);
    await git(disk('alice', 'm'), 'update-ref', 'refs/heads/main', tip2);
    res = await merge(pr2.number, { Do: 'manually-merged', merge_commit_id: tip2 });
    expect(res.status).toBe(200);
    expect((await f().request('GET', `${R}/pulls/${pr2.number}`)).body).toMatchObject({ merged: true, merge_commit_sha: tip2 });
  });

  test('two merges racing on one base: never a lost commit; a loser gets 409', async () => {
    const a = await open('alice', `${(await branch('alice', 'alice/m', 'r1.txt', '1\n', 'race-1')) && 'race-1'}`, 'Race 1');
    const b = await open('alice', `${(await branch('alice', 'alice/m', 'r2.txt', '2\n', 'race-2')) && 'race-2'}`, 'Race 2');
    const results = await Promise.all([merge(a.number, { Do: 'merge' }), merge(b.number, { Do: 'merge' })]);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    // The loser either found the base moved (409) or its pull request queued for a new check after the winner's push (405).
    expect([200, 405, 409]).toContain(statuses[1]);
    const main = await rev('alice', 'm', 'refs/heads/main');
    for (const [pr, res] of [[a, results[0]], [b, results[1]]] as const) {
      const merged = (await f().request('GET', `${R}/pulls/${pr.number}`)).body.merged;
      expect(merged).toBe(res.status === 200);
      const contained = (await git(disk('alice', 'm'), 'merge-base', '--is-ancestor', pr.head.sha, main)).exitCode === 0;
      expect(contained).toBe(res.status === 200);
    }
  });
  test('timeline: pull_push lists the commits of the opening and of each push; a base change is change_target_branch and lists them anew; merge_pull, delete_branch', async () => {
    const first = await branch('alice', 'alice/m', 't.txt', 't\n', 'topic-t');
    const pr = await open('alice', 'topic-t', 'Timeline');
    await put('alice', 'alice/m', 't.txt', 't2\n', 'topic-t');
    const second = await rev('alice', 'm', 'refs/heads/topic-t');
    await f().app.services.pulls.checker.idle();
    const entries = async () =>
      ((await f().request('GET', `${R}/issues/${pr.number}/timeline`, as('alice'))).body as { type: string; body: string; old_ref: string; new_ref: string; user: { login: string } }[])
        .filter((c) => ['pull_push', 'change_target_branch', 'merge_pull', 'delete_branch'].includes(c.type))
        .map((c) => [c.type, c.type === 'pull_push' ? JSON.parse(c.body) : c.body, c.old_ref, c.new_ref, c.user.login]);
    const pushed = (ids: string[]) => ({ is_force_push: false, commit_ids: ids });
    expect(await entries()).toEqual([
      ['pull_push', pushed([first]), '', '', 'alice'],
      ['pull_push', pushed([second]), '', '', 'alice'],
    ]);
    // A new base: the earlier entries go, one lists the commits against the new base.
    await branch('alice', 'alice/m', 'base.txt', 'b\n', 'next');
    let res = await f().request('PATCH', `${R}/pulls/${pr.number}`, { ...as('alice'), body: { base: 'next' } });
    expect([res.status, res.body.base.ref]).toEqual([201, 'next']);
    expect(await entries()).toEqual([
      ['change_target_branch', '', 'main', 'next', 'alice'],
      ['pull_push', pushed([first, second]), '', '', 'alice'],
    ]);
    res = await merge(pr.number, { Do: 'merge', delete_branch_after_merge: true });
    expect(res.status).toBe(200);
    expect((await entries()).slice(2)).toEqual([
      ['merge_pull', '', '', '', 'alice'],
      ['delete_branch', '', 'topic-t', '', 'alice'],
    ]);
  });

  test('a deleted branch: its pull requests are closed (close, delete_branch); those into it move to the default branch (change_target_branch)', async () => {
    await branch('alice', 'alice/m', 'gone.txt', 'g\n', 'gone');
    const from = await open('alice', 'gone', 'From gone');
    await branch('alice', 'alice/m', 'child.txt', 'c\n', 'child', 'gone');
    const res = await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'child', base: 'gone', title: 'Into gone' } });
    expect(res.status).toBe(201);
    expect((await f().request('DELETE', `${R}/branches/gone`, as('alice'))).status).toBe(204);
    await f().app.services.pulls.checker.idle();
    const types = async (n: number) =>
      ((await f().request('GET', `${R}/issues/${n}/timeline`, as('alice'))).body as { type: string; old_ref: string; new_ref: string }[])
        .filter((c) => c.type !== 'pull_push')
        .map((c) => [c.type, c.old_ref, c.new_ref]);
    expect((await f().request('GET', `${R}/pulls/${from.number}`)).body.state).toBe('closed');
    expect(await types(from.number)).toEqual([
      ['close', '', ''],
      ['delete_branch', 'gone', ''],
    ]);
    const moved = (await f().request('GET', `${R}/pulls/${res.body.number}`)).body;
    expect([moved.state, moved.base.ref]).toEqual(['open', 'main']);
    expect(await types(res.body.number)).toEqual([['change_target_branch', 'gone', 'main']]);
  });

  test('a list leaves out the diff size and the merger and shows empty people lists as null, as Gitea; the record of one pull request has them', async () => {
    const list = (await f().request('GET', `${R}/pulls?state=all&limit=50`)).body as Record<string, unknown>[];
    expect(list.length).toBeGreaterThan(0);
    for (const pr of list) {
      expect(Object.keys(pr)).not.toEqual(expect.arrayContaining(['additions']));
      expect(Object.keys(pr)).not.toEqual(expect.arrayContaining(['changed_files']));
      for (const key of ['assignees', 'requested_reviewers', 'requested_reviewers_teams']) expect(pr[key] === null || (pr[key] as unknown[]).length > 0).toBe(true);
    }
    const bare = list.find((pr) => pr.assignees === null && pr.requested_reviewers === null && pr.requested_reviewers_teams === null)!;
    const one = (await f().request('GET', `${R}/pulls/${bare.number}`)).body;
    expect(one).toMatchObject({ assignees: [], requested_reviewers: [], requested_reviewers_teams: [], additions: expect.any(Number), changed_files: expect.any(Number) });
    const merged = list.filter((pr) => pr.merged);
    expect(merged.length).toBeGreaterThan(0);
    expect(merged.map((pr) => pr.merged_by)).toEqual(merged.map(() => null));
    expect((await f().request('GET', `${R}/pulls/${merged[0].number}`)).body.merged_by).toMatchObject({ login: 'alice' });
  });
});
