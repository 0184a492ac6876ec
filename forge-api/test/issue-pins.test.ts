/**
 * Issue pins, the repository activity feed and the commit routes newly declared in OpenAPI,
 * as Gitea 1.27.3 answers them, on SQLite and PostgreSQL: pin/unpin/move with pin_order in the
 * issue JSON, the limit of 3 (400 past it, /new_pin_allowed false), 403 for non-admins; the
 * feed's events of the repository once each, with `date`; /commits/{ref}/status(es) with a
 * slash in the ref, git/commits/{sha}.diff|.patch and a dotted ref name, and their entries in
 * /swagger.v1.json.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('issue pins, repository feed, declared commit routes', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const pinned = async () => (await f().request('GET', '/repos/alice/proj/issues/pinned', as('bob'))).body.map((i: { number: number; pin_order: number }) => [i.number, i.pin_order]);

  beforeAll(async () => {
    for (const u of ['alice', 'bob']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'proj', auto_init: true } })).status).toBe(201);
    for (let i = 1; i <= 5; i++) {
      expect((await f().request('POST', '/repos/alice/proj/issues', { ...as(i === 5 ? 'bob' : 'alice'), body: { title: `issue ${i}` } })).status).toBe(201);
    }
  });

  test('pin three issues in order; the fourth is 400; /new_pin_allowed follows', async () => {
    let res = await f().request('GET', '/repos/alice/proj/new_pin_allowed', as('bob'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ issues: true, pull_requests: true });
    expect(await pinned()).toEqual([]);
    for (const n of [2, 1, 3]) {
      res = await f().request('POST', `/repos/alice/proj/issues/${n}/pin`, as('alice'));
      expect(res.status).toBe(204);
    }
    expect(await pinned()).toEqual([[2, 1], [1, 2], [3, 3]]);
    expect((await f().request('GET', '/repos/alice/proj/issues/1', as('bob'))).body.pin_order).toBe(2);
    expect((await f().request('GET', '/repos/alice/proj/issues/4', as('bob'))).body.pin_order).toBe(0);
    res = await f().request('POST', '/repos/alice/proj/issues/4/pin', as('alice'));
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('the max number of pinned issues has been readched');
    expect((await f().request('GET', '/repos/alice/proj/new_pin_allowed')).body).toEqual({ issues: false, pull_requests: true });
    // Pinning a pinned issue changes nothing.
    expect((await f().request('POST', '/repos/alice/proj/issues/2/pin', as('alice'))).status).toBe(204);
    expect(await pinned()).toEqual([[2, 1], [1, 2], [3, 3]]);
  });

  test('move shifts the others; unpin keeps the other positions; errors', async () => {
    expect((await f().request('PATCH', '/repos/alice/proj/issues/3/pin/1', as('alice'))).status).toBe(204);
    expect(await pinned()).toEqual([[3, 1], [2, 2], [1, 3]]);
    expect((await f().request('PATCH', '/repos/alice/proj/issues/3/pin/2', as('alice'))).status).toBe(204);
    expect(await pinned()).toEqual([[2, 1], [3, 2], [1, 3]]);
    expect((await f().request('DELETE', '/repos/alice/proj/issues/3/pin', as('alice'))).status).toBe(204);
    expect(await pinned()).toEqual([[2, 1], [1, 3]]);
    expect((await f().request('DELETE', '/repos/alice/proj/issues/3/pin', as('alice'))).status).toBe(204);
    expect((await f().request('POST', '/repos/alice/proj/issues/4/pin', as('alice'))).status).toBe(204);
    expect(await pinned()).toEqual([[2, 1], [1, 3], [4, 4]]);

    expect((await f().request('PATCH', '/repos/alice/proj/issues/5/pin/1', as('alice'))).status).toBe(404);
    expect((await f().request('PATCH', '/repos/alice/proj/issues/4/pin/0', as('alice'))).status).toBe(422);
    expect((await f().request('PATCH', '/repos/alice/proj/issues/4/pin/x', as('alice'))).status).toBe(422);
    expect((await f().request('POST', '/repos/alice/proj/issues/99/pin', as('alice'))).status).toBe(404);
    let res = await f().request('POST', '/repos/alice/proj/issues/5/pin', as('bob'));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');
    expect((await f().request('DELETE', '/repos/alice/proj/issues/1/pin')).status).toBe(401);
    res = await f().request('GET', '/repos/alice/proj/issues/pinned');
    expect(res.status).toBe(200);
    expect(res.body[0]).toMatchObject({ number: 2, title: 'issue 2', pin_order: 1, state: 'open' });
  });

  test('repository feed: each event once (not once per watcher feed), newest first, date filter, paging', async () => {
    let res = await f().request('GET', '/repos/alice/proj/activities/feeds', as('bob'));
    expect(res.status).toBe(200);
    const ops = res.body.map((a: { op_type: string; act_user: { login: string } }) => `${a.op_type}:${a.act_user.login}`);
    expect(ops.filter((o: string) => o === 'create_issue:alice')).toHaveLength(4);
    expect(ops.filter((o: string) => o === 'create_issue:bob')).toHaveLength(1);
    expect(ops[0]).toBe('create_issue:bob');
    expect(ops).toContain('create_repo:alice');
    const total = Number(res.headers.get('x-total-count'));
    expect(total).toBe(res.body.length);
    expect(res.body[0]).toMatchObject({ repo_id: expect.any(Number), repo: expect.objectContaining({ full_name: 'alice/proj' }), content: expect.stringContaining('issue 5') });

    res = await f().request('GET', '/repos/alice/proj/activities/feeds?limit=2&page=2');
    expect(res.body).toHaveLength(2);
    const today = new Date().toISOString().slice(0, 10);
    expect((await f().request('GET', `/repos/alice/proj/activities/feeds?date=${today}`)).body.length).toBe(total);
    expect((await f().request('GET', '/repos/alice/proj/activities/feeds?date=2001-01-01')).body).toEqual([]);
    expect((await f().request('GET', '/repos/alice/proj/activities/feeds?date=garbage')).body.length).toBe(total);
    expect((await f().request('GET', '/repos/alice/nothing/activities/feeds')).status).toBe(404);
  });

  test('commit statuses by a ref with or without a slash, commit diff/patch and a dotted ref, OpenAPI entries', async () => {
    const branch = await f().request('POST', '/repos/alice/proj/branches', { ...as('alice'), body: { new_branch_name: 'feature/x' } });
    expect(branch.status).toBe(201);
    const sha = branch.body.commit.id;
    expect((await f().request('POST', `/repos/alice/proj/statuses/${sha}`, { ...as('alice'), body: { state: 'success', context: 'ci' } })).status).toBe(201);
    for (const r of ['main', 'feature/x']) {
      let res = await f().request('GET', `/repos/alice/proj/commits/${r}/status`, as('bob'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ state: 'success', sha, total_count: 1 });
      res = await f().request('GET', `/repos/alice/proj/commits/${r}/statuses`, as('bob'));
      expect(res.status).toBe(200);
      expect(res.body).toEqual([expect.objectContaining({ status: 'success', context: 'ci' })]);
    }
    expect((await f().request('GET', '/repos/alice/proj/commits/nothing/status', as('bob'))).status).toBe(404);

    let res = await f().request('GET', `/repos/alice/proj/git/commits/${sha}.patch`, as('bob'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^From [0-9a-f]{40} /);
    res = await f().request('GET', `/repos/alice/proj/git/commits/${sha}.diff`, as('bob'));
    expect(res.status).toBe(200);
    expect((await f().request('POST', '/repos/alice/proj/tags', { ...as('alice'), body: { tag_name: 'v1.0' } })).status).toBe(201);
    res = await f().request('GET', '/repos/alice/proj/git/commits/v1.0', as('bob'));
    expect(res.status).toBe(200);
    expect(res.body.sha).toBe(sha);

    const doc = (await f().request('GET', `${f().url}/swagger.v1.json`)).body;
    const paths = Object.keys(doc.paths);
    for (const p of ['/repos/{owner}/{repo}/commits/{ref}/status', '/repos/{owner}/{repo}/commits/{ref}/statuses', '/repos/{owner}/{repo}/git/commits/{sha}.{diffType}']) {
      expect(paths).toContain(p);
    }
    expect(paths.filter((p) => p.startsWith('/repos/{owner}/{repo}/commits/{*}'))).toEqual([]);
  });
});
