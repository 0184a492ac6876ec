/**
 * Issues over HTTP on SQLite and PostgreSQL: create/get/edit/list with Gitea's shapes, codes,
 * filters and paging headers; deadline; permissions on public and private repositories; token
 * scopes; and gap-free numbers under 200 concurrent creations.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('issues', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  let aliceRepo: string;
  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['alice', 'bob', 'carl', 'dave']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'tracker', issue_labels: 'Default' } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'secret', private: true } })).status).toBe(201);
    // bob writes to alice/tracker; carl only reads it (public)
    const repo = (await f().app.services.repos.findByOwnerAndName('alice', 'tracker'))!;
    const bob = (await f().app.services.users.findByName('bob'))!;
    await f().app.prisma.collaboration.create({ data: { repoId: repo.id, userId: bob.id, mode: 2 } });
    aliceRepo = '/repos/alice/tracker';
  });

  test('create: 201 with Gitea fields; number, urls, repository, labels, milestone, assignees, due date', async () => {
    const labels = (await f().request('GET', `${aliceRepo}/labels`)).body as { id: number; name: string }[];
    const bug = labels.find((l) => l.name === 'bug')!;
    const ms = await f().request('POST', `${aliceRepo}/milestones`, { ...as('alice'), body: { title: 'v1' } });
    expect(ms.status).toBe(201);
    const res = await f().request('POST', `${aliceRepo}/issues`, {
      ...as('alice'),
      body: { title: 'First', body: 'Hello @bob', labels: [bug.id, 999999], milestone: ms.body.id, assignees: ['bob'], due_date: '2030-01-02T10:00:00Z', ref: 'main' },
    });
    expect(res.status).toBe(201);
    const base = f().url;
    expect(res.body).toMatchObject({
      number: 1,
      title: 'First',
      body: 'Hello @bob',
      ref: 'main',
      state: 'open',
      comments: 0,
      is_locked: false,
      pin_order: 0,
      closed_at: null,
      due_date: '2030-01-02T10:00:00Z',
      pull_request: null,
      url: `${base}/api/v1/repos/alice/tracker/issues/1`,
      html_url: `${base}/alice/tracker/issues/1`,
      repository: { name: 'tracker', owner: 'alice', full_name: 'alice/tracker' },
      milestone: { id: ms.body.id, title: 'v1', open_issues: 1, closed_issues: 0, state: 'open' },
      assets: [],
    });
    expect(res.body.user.login).toBe('alice');
    expect(res.body.labels.map((l: { name: string }) => l.name)).toEqual(['bug']);
    expect(res.body.labels[0].color).toMatch(/^[0-9a-f]{6}$/);
    expect(res.body.assignees.map((u: { login: string }) => u.login)).toEqual(['bob']);
    expect(res.body.assignee.login).toBe('bob');
    const got = await f().request('GET', `${aliceRepo}/issues/1`);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(res.body.id);
  });

  test('create: title required (422), unknown assignee 422, non-writers cannot set labels/milestone/assignees', async () => {
    let res = await f().request('POST', `${aliceRepo}/issues`, { ...as('alice'), body: { body: 'x' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('[Title]: Required');
    res = await f().request('POST', `${aliceRepo}/issues`, { ...as('alice'), body: { title: 'x', assignees: ['nobody'] } });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('Assignee does not exist');
    // Gitea 1.27 assigns whoever reads the pull requests: carl on the public repository, not on a private one.
    res = await f().request('POST', `${aliceRepo}/issues`, { ...as('alice'), body: { title: 'x', assignees: ['carl'] } });
    expect(res.status).toBe(201);
    expect(res.body.assignees.map((a: { login: string }) => a.login)).toEqual(['carl']);
    res = await f().request('POST', '/repos/alice/secret/issues', { ...as('alice'), body: { title: 'x', assignees: ['carl'] } });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain("doesn't have access to repo");
    const labels = (await f().request('GET', `${aliceRepo}/labels`)).body as { id: number }[];
    res = await f().request('POST', `${aliceRepo}/issues`, { ...as('carl'), body: { title: 'From a reader', labels: [labels[0].id], assignees: ['alice'], due_date: '2030-01-01T00:00:00Z' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ labels: [], assignees: null, due_date: null, milestone: null });
    expect(res.body.user.login).toBe('carl');
  });

  test('anonymous: reads public (200), cannot create (401); private repository is 404 for outsiders', async () => {
    expect((await f().request('GET', `${aliceRepo}/issues/1`)).status).toBe(200);
    expect((await f().request('POST', `${aliceRepo}/issues`, { body: { title: 'anon' } })).status).toBe(401);
    const res = await f().request('POST', '/repos/alice/secret/issues', { ...as('alice'), body: { title: 'hidden' } });
    expect(res.status).toBe(201);
    expect((await f().request('GET', '/repos/alice/secret/issues/1')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/secret/issues/1', as('carl'))).status).toBe(404);
    expect((await f().request('POST', '/repos/alice/secret/issues', { ...as('carl'), body: { title: 'x' } })).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/secret/issues', as('carl'))).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/secret/issues/1', as('root'))).status).toBe(200);
    expect((await f().request('GET', `${aliceRepo}/issues/999`)).status).toBe(404);
    expect((await f().request('GET', `${aliceRepo}/issues/abc`)).status).toBe(404);
  });

  test('token scopes: read:issue reads, write:issue needed to create (403 otherwise)', async () => {
    const readTok = await f().token('alice', ['read:issue']);
    const repoTok = await f().token('alice', ['write:repository']);
    const writeTok = await f().token('alice', ['write:issue']);
    expect((await f().request('GET', `${aliceRepo}/issues`, { token: readTok })).status).toBe(200);
    let res = await f().request('POST', `${aliceRepo}/issues`, { token: readTok, body: { title: 'x' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('required=[write:issue]');
    expect((await f().request('GET', `${aliceRepo}/issues`, { token: repoTok })).status).toBe(403);
    res = await f().request('POST', `${aliceRepo}/issues`, { token: writeTok, body: { title: 'via token' } });
    expect(res.status).toBe(201);
    const publicOnly = await f().token('alice', ['write:issue', 'public-only']);
    expect((await f().request('GET', '/repos/alice/secret/issues', { token: publicOnly })).status).toBe(403);
    expect((await f().request('GET', `${aliceRepo}/issues`, { token: publicOnly })).status).toBe(200);
  });

  test('edit: poster or writer (403 otherwise), 201, state with closed_at, unknown state 412, unset_due_date, milestone, assignees', async () => {
    const created = await f().request('POST', `${aliceRepo}/issues`, { ...as('carl'), body: { title: 'To edit' } });
    const n = created.body.number;
    expect((await f().request('PATCH', `${aliceRepo}/issues/${n}`, { ...as('dave'), body: { title: 'hijack' } })).status).toBe(403);
    let res = await f().request('PATCH', `${aliceRepo}/issues/${n}`, { ...as('carl'), body: { title: 'Edited by poster', body: 'new body' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'Edited by poster', body: 'new body' });
    res = await f().request('PATCH', `${aliceRepo}/issues/${n}`, { ...as('carl'), body: { state: 'bogus' } });
    expect(res.status).toBe(412);
    res = await f().request('PATCH', `${aliceRepo}/issues/${n}`, { ...as('bob'), body: { state: 'closed', due_date: '2031-05-06T08:00:00+02:00', assignees: ['alice', 'bob'] } });
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('closed');
    expect(res.body.closed_at).not.toBeNull();
    expect(res.body.due_date).toBe('2031-05-06T21:59:59Z');
    expect(res.body.assignees.map((u: { login: string }) => u.login).sort()).toEqual(['alice', 'bob']);
    res = await f().request('PATCH', `${aliceRepo}/issues/${n}`, { ...as('bob'), body: { state: 'open', unset_due_date: true, assignees: [] } });
    expect(res.body).toMatchObject({ state: 'open', closed_at: null, due_date: null, assignees: null });
    const ms = await f().request('POST', `${aliceRepo}/milestones`, { ...as('alice'), body: { title: 'edit-ms' } });
    res = await f().request('PATCH', `${aliceRepo}/issues/${n}`, { ...as('bob'), body: { milestone: ms.body.id } });
    expect(res.body.milestone.id).toBe(ms.body.id);
    res = await f().request('PATCH', `${aliceRepo}/issues/${n}`, { ...as('bob'), body: { milestone: 0 } });
    expect(res.body.milestone).toBeNull();
    expect((await f().request('PATCH', `${aliceRepo}/issues/${n}`, { ...as('bob'), body: { milestone: 424242 } })).status).toBe(422);
    // The repository's open issue count follows closing and reopening.
    const repo = await f().request('GET', '/repos/alice/tracker');
    const open = (await f().request('GET', `${aliceRepo}/issues?state=open&limit=1`)).headers.get('x-total-count');
    expect(String(repo.body.open_issues_count)).toBe(open);
  });

  test('deadline: writers only (403 "Not repo writer"), 201 with the end of that day', async () => {
    const res = await f().request('POST', `${aliceRepo}/issues/1/deadline`, { ...as('carl'), body: { due_date: '2032-03-04T05:06:07Z' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Not repo writer');
    const ok = await f().request('POST', `${aliceRepo}/issues/1/deadline`, { ...as('bob'), body: { due_date: '2032-03-04T05:06:07Z' } });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ due_date: '2032-03-04T23:59:59Z' });
    expect((await f().request('GET', `${aliceRepo}/issues/1`)).body.due_date).toBe('2032-03-04T23:59:59Z');
    expect((await f().request('POST', `${aliceRepo}/issues/1/deadline`, { ...as('bob'), body: {} })).status).toBe(422);
  });

  test('list: open by default, state/labels/milestones/q/created_by/assigned_by filters, paging headers', async () => {
    await f().request('POST', '/user/repos', { ...as('dave'), body: { name: 'listing' } });
    const r = '/repos/dave/listing';
    const lab = await f().request('POST', `${r}/labels`, { ...as('dave'), body: { name: 'kind/bug', color: '#ff0000' } });
    for (let i = 1; i <= 7; i++) {
      await f().request('POST', `${r}/issues`, { ...as(i % 2 ? 'dave' : 'alice'), body: { title: `Item ${i}${i === 3 ? ' needle' : ''}`, labels: i === 1 || i === 5 ? [lab.body.id] : [] } });
    }
    await f().request('PATCH', `${r}/issues/7`, { ...as('dave'), body: { state: 'closed', assignees: ['dave'] } });
    let res = await f().request('GET', `${r}/issues?limit=2&page=2`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('6');
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([4, 3]);
    const link = res.headers.get('link')!;
    expect(link).toContain('rel="next"');
    expect(link).toContain('rel="prev"');
    expect(link).toContain('page=3');
    res = await f().request('GET', `${r}/issues?state=closed`);
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([7]);
    res = await f().request('GET', `${r}/issues?state=all&labels=kind/bug`);
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([5, 1]);
    res = await f().request('GET', `${r}/issues?q=needle`);
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([3]);
    res = await f().request('GET', `${r}/issues?q=NEEDLE`);
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([3]);
    res = await f().request('GET', `${r}/issues?created_by=alice`);
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([6, 4, 2]);
    res = await f().request('GET', `${r}/issues?state=all&assigned_by=dave`);
    expect(res.body.map((i: { number: number }) => i.number)).toEqual([7]);
    res = await f().request('GET', `${r}/issues?labels=nope`);
    expect(res.body).toEqual([]);
    expect((await f().request('GET', `${r}/issues?since=notadate`)).status).toBe(422);
  });

  test('delete: repository admins only (403 for writers), 204, counts follow, number not reused', async () => {
    const created = await f().request('POST', `${aliceRepo}/issues`, { ...as('bob'), body: { title: 'doomed' } });
    const n = created.body.number;
    const before = (await f().request('GET', '/repos/alice/tracker')).body.open_issues_count;
    expect((await f().request('DELETE', `${aliceRepo}/issues/${n}`, as('bob'))).status).toBe(403);
    expect((await f().request('DELETE', `${aliceRepo}/issues/${n}`)).status).toBe(401);
    expect((await f().request('DELETE', `${aliceRepo}/issues/${n}`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', `${aliceRepo}/issues/${n}`)).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/tracker')).body.open_issues_count).toBe(before - 1);
    const next = await f().request('POST', `${aliceRepo}/issues`, { ...as('bob'), body: { title: 'after delete' } });
    expect(next.body.number).toBe(n + 1);
  });

  test('archived repository: changes answer 423', async () => {
    await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'old' } });
    await f().app.prisma.repository.updateMany({ where: { lowerName: 'old' }, data: { isArchived: true } });
    expect((await f().request('POST', '/repos/alice/old/issues', { ...as('alice'), body: { title: 'x' } })).status).toBe(423);
  });

  test('200 concurrent creations get the numbers 1..200, none lost or doubled', async () => {
    await f().request('POST', '/user/repos', { ...as('bob'), body: { name: 'race' } });
    const token = await f().token('bob', ['write:issue']);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => f().request('POST', '/repos/bob/race/issues', { token, body: { title: `race ${i}` } })),
    );
    expect(results.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
    const numbers = results.map((r) => r.body.number as number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const titles = new Set(results.map((r) => r.body.title));
    expect(titles.size).toBe(200);
    const repo = await f().request('GET', '/repos/bob/race');
    expect(repo.body.open_issues_count).toBe(200);
    const next = await f().request('POST', '/repos/bob/race/issues', { token, body: { title: 'after' } });
    expect(next.body.number).toBe(201);
    // Generous: the machine may be shared; this test is about correctness, not speed.
  }, 300000);
});
