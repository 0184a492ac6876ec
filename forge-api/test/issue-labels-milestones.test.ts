/**
 * Labels (repository and organization) and milestones over HTTP on SQLite and PostgreSQL:
 * colors with or without '#', exclusive scopes on issues, writer/owner rules, scopes, and
 * milestone open/closed counts following issue state.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('labels and milestones', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const r = '/repos/alice/board';
  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carl']) await f().user(u);
    await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'board' } });
    expect((await f().request('POST', '/orgs', { ...as('alice'), body: { username: 'acme' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs/acme/repos', { ...as('alice'), body: { name: 'site' } })).status).toBe(201);
  });

  test('repository labels: create with color forms, 201 and color without #; list, get, edit, delete', async () => {
    const colors: [string, string][] = [['#FF0000', 'ff0000'], ['00ff00', '00ff00'], ['#abc', 'aabbcc'], ['123', '112233']];
    for (const [i, [input, shown]] of colors.entries()) {
      const res = await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: `l${i}`, color: input, description: 'd' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: `l${i}`, color: shown, description: 'd', exclusive: false, is_archived: false, url: `${f().url}/api/v1/repos/alice/board/labels/${res.body.id}` });
    }
    const bad = await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'bad', color: 'zzz' } });
    expect(bad.status).toBe(422);
    expect((await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'nocolor' } })).status).toBe(422);
    // duplicates are allowed, as in Gitea
    expect((await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'l0', color: 'fff' } })).status).toBe(201);
    const list = await f().request('GET', `${r}/labels`);
    expect(list.headers.get('x-total-count')).toBe('5');
    expect(list.body.map((l: { name: string }) => l.name)).toEqual(['l0', 'l0', 'l1', 'l2', 'l3']);
    const id = list.body[2].id;
    expect((await f().request('GET', `${r}/labels/${id}`)).body.name).toBe('l1');
    const edit = await f().request('PATCH', `${r}/labels/${id}`, { ...as('alice'), body: { name: 'renamed', color: '#0000ff', exclusive: true } });
    expect(edit.status).toBe(200);
    expect(edit.body).toMatchObject({ name: 'renamed', color: '0000ff', exclusive: true });
    expect((await f().request('PATCH', `${r}/labels/${id}`, { ...as('alice'), body: { color: 'nope' } })).status).toBe(422);
    expect((await f().request('DELETE', `${r}/labels/${id}`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', `${r}/labels/${id}`)).status).toBe(404);
  });

  test('repository labels: readers 403, anonymous 401, read token cannot write', async () => {
    expect((await f().request('POST', `${r}/labels`, { ...as('carl'), body: { name: 'x', color: 'fff' } })).status).toBe(403);
    expect((await f().request('POST', `${r}/labels`, { body: { name: 'x', color: 'fff' } })).status).toBe(401);
    const tok = await f().token('alice', ['read:issue']);
    expect((await f().request('POST', `${r}/labels`, { token: tok, body: { name: 'x', color: 'fff' } })).status).toBe(403);
    expect((await f().request('GET', `${r}/labels`, { token: tok })).status).toBe(200);
  });

  test('exclusive scoped labels: an issue keeps one label per scope', async () => {
    const high = (await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'priority/high', color: 'f00', exclusive: true } })).body;
    const low = (await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'priority/low', color: '0f0', exclusive: true } })).body;
    const kind = (await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'kind/bug', color: '00f' } })).body;
    const res = await f().request('POST', `${r}/issues`, { ...as('alice'), body: { title: 'scoped', labels: [high.id, kind.id, low.id] } });
    expect(res.body.labels.map((l: { name: string }) => l.name).sort()).toEqual(['kind/bug', 'priority/low']);
  });

  test('labels on an issue: add (exclusive scope replaces), replace, remove one, clear; writers only', async () => {
    const a = (await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'area/api', color: '111', exclusive: true } })).body;
    const b = (await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'area/ui', color: '222', exclusive: true } })).body;
    const c = (await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'plain', color: '333' } })).body;
    const n = (await f().request('POST', `${r}/issues`, { ...as('carl'), body: { title: 'labelled' } })).body.number;
    let res = await f().request('POST', `${r}/issues/${n}/labels`, { ...as('alice'), body: { labels: [a.id, 'plain'] } });
    expect(res.status).toBe(200);
    expect(res.body.map((l: { name: string }) => l.name)).toEqual(['area/api', 'plain']);
    res = await f().request('POST', `${r}/issues/${n}/labels`, { ...as('alice'), body: { labels: [b.id] } });
    expect(res.body.map((l: { name: string }) => l.name)).toEqual(['area/ui', 'plain']);
    expect((await f().request('POST', `${r}/issues/${n}/labels`, { ...as('carl'), body: { labels: [c.id] } })).status).toBe(403);
    expect((await f().request('POST', `${r}/issues/${n}/labels`, { ...as('alice'), body: { labels: [987654] } })).status).toBe(422);
    res = await f().request('PUT', `${r}/issues/${n}/labels`, { ...as('alice'), body: { labels: [a.id] } });
    expect(res.body.map((l: { name: string }) => l.name)).toEqual(['area/api']);
    expect((await f().request('GET', `${r}/issues/${n}/labels`)).body.map((l: { name: string }) => l.name)).toEqual(['area/api']);
    expect((await f().request('DELETE', `${r}/issues/${n}/labels/${a.id}`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', `${r}/issues/${n}`)).body.labels).toEqual([]);
    await f().request('PUT', `${r}/issues/${n}/labels`, { ...as('alice'), body: { labels: [a.id, c.id] } });
    expect((await f().request('DELETE', `${r}/issues/${n}/labels`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', `${r}/issues/${n}/labels`)).body).toEqual([]);
  });

  test('organization labels: owners create/edit/delete; members and others 403; usable on org repositories', async () => {
    let res = await f().request('POST', '/orgs/acme/labels', { ...as('alice'), body: { name: 'org-wide', color: '#123456' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'org-wide', color: '123456', url: `${f().url}/api/v1/orgs/acme/labels/${res.body.id}` });
    const id = res.body.id;
    expect((await f().request('POST', '/orgs/acme/labels', { ...as('bob'), body: { name: 'x', color: 'fff' } })).status).toBe(403);
    expect((await f().request('POST', '/orgs/acme/labels', { ...as('alice'), body: { name: 'x', color: 'nope' } })).status).toBe(422);
    const list = await f().request('GET', '/orgs/acme/labels');
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total-count')).toBe('1');
    expect((await f().request('GET', `/orgs/acme/labels/${id}`)).status).toBe(401);
    expect((await f().request('GET', `/orgs/acme/labels/${id}`, as('bob'))).body.name).toBe('org-wide');
    expect((await f().request('PATCH', `/orgs/acme/labels/${id}`, { ...as('bob'), body: { name: 'y' } })).status).toBe(403);
    expect((await f().request('PATCH', `/orgs/acme/labels/${id}`, { ...as('alice'), body: { name: 'org-label' } })).body.name).toBe('org-label');
    const tok = await f().token('alice', ['write:issue']);
    expect((await f().request('POST', '/orgs/acme/labels', { token: tok, body: { name: 'z', color: 'fff' } })).status).toBe(403);
    const issue = await f().request('POST', '/repos/acme/site/issues', { ...as('alice'), body: { title: 'org label', labels: [id] } });
    expect(issue.body.labels.map((l: { name: string }) => l.name)).toEqual(['org-label']);
    // an org label is not one of the repository's labels
    expect((await f().request('GET', `/repos/acme/site/labels/${id}`)).status).toBe(404);
    expect((await f().request('DELETE', `/orgs/acme/labels/${id}`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/orgs/nope/labels')).status).toBe(404);
  });

  test('milestones: create (201), counts follow issues, state filter (omitted = all), by id or name, edit, delete', async () => {
    let res = await f().request('POST', `${r}/milestones`, { ...as('alice'), body: { title: 'M1', description: 'first', due_on: '2030-06-01T00:00:00Z' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'M1', description: 'first', state: 'open', open_issues: 0, closed_issues: 0, due_on: '2030-06-01T00:00:00Z', closed_at: null });
    const m1 = res.body.id;
    res = await f().request('POST', `${r}/milestones`, { ...as('alice'), body: { title: 'M2', state: 'closed' } });
    expect(res.body.state).toBe('closed');
    expect(res.body.closed_at).not.toBeNull();
    expect((await f().request('POST', `${r}/milestones`, { ...as('alice'), body: {} })).status).toBe(422);
    expect((await f().request('POST', `${r}/milestones`, { ...as('carl'), body: { title: 'x' } })).status).toBe(403);
    for (let i = 0; i < 3; i++) await f().request('POST', `${r}/issues`, { ...as('alice'), body: { title: `m ${i}`, milestone: m1 } });
    const numbers = (await f().request('GET', `${r}/issues?milestones=M1`)).body.map((i: { number: number }) => i.number);
    expect(numbers).toHaveLength(3);
    await f().request('PATCH', `${r}/issues/${numbers[0]}`, { ...as('alice'), body: { state: 'closed' } });
    res = await f().request('GET', `${r}/milestones/${m1}`);
    expect(res.body).toMatchObject({ open_issues: 2, closed_issues: 1 });
    expect((await f().request('GET', `${r}/milestones/m1`)).body.id).toBe(m1);
    expect((await f().request('GET', `${r}/milestones`)).body.map((m: { title: string }) => m.title)).toEqual(['M1', 'M2']);
    expect((await f().request('GET', `${r}/milestones?state=open`)).body.map((m: { title: string }) => m.title)).toEqual(['M1']);
    expect((await f().request('GET', `${r}/milestones?state=closed`)).body.map((m: { title: string }) => m.title)).toEqual(['M2']);
    expect((await f().request('GET', `${r}/milestones?name=m2`)).body.map((m: { title: string }) => m.title)).toEqual(['M2']);
    res = await f().request('PATCH', `${r}/milestones/${m1}`, { ...as('alice'), body: { title: 'M1b', state: 'closed' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 'M1b', state: 'closed' });
    await f().request('PATCH', `${r}/issues/${numbers[0]}`, { ...as('alice'), body: { milestone: 0 } });
    expect((await f().request('GET', `${r}/milestones/${m1}`)).body).toMatchObject({ open_issues: 2, closed_issues: 0 });
    expect((await f().request('DELETE', `${r}/milestones/${m1}`, as('carl'))).status).toBe(403);
    expect((await f().request('DELETE', `${r}/milestones/${m1}`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', `${r}/milestones/${m1}`)).status).toBe(404);
    expect((await f().request('GET', `${r}/issues/${numbers[1]}`)).body.milestone).toBeNull();
  });

  test('the timeline tells of label, milestone and deadline changes as Gitea records them', async () => {
    const bug = (await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'ev-bug', color: 'f00' } })).body;
    const ui = (await f().request('POST', `${r}/labels`, { ...as('alice'), body: { name: 'ev-ui', color: '0f0' } })).body;
    const m1 = (await f().request('POST', `${r}/milestones`, { ...as('alice'), body: { title: 'ev-1' } })).body;
    const m2 = (await f().request('POST', `${r}/milestones`, { ...as('alice'), body: { title: 'ev-2' } })).body;
    const issue = (await f().request('POST', `${r}/issues`, { ...as('alice'), body: { title: 'events', labels: [bug.id], milestone: m1.id } })).body;
    const i = `${r}/issues/${issue.number}`;
    const steps: [string, string, unknown][] = [
      ['POST', `${i}/labels`, { labels: [ui.id] }],
      ['DELETE', `${i}/labels/${bug.id}`, undefined],
      ['PATCH', i, { milestone: m2.id, due_date: '2030-01-01T00:00:00Z' }],
      ['POST', `${i}/deadline`, { due_date: '2031-02-03T00:00:00Z' }],
      ['PATCH', i, { milestone: 0, unset_due_date: true }],
      ['PUT', `${i}/labels`, { labels: [bug.id] }],
      ['DELETE', `${i}/labels`, undefined],
    ];
    for (const [method, path, body] of steps) expect((await f().request(method, path, { ...as('alice'), body })).status).toBeLessThan(300);
    const timeline = (await f().request('GET', `${i}/timeline`, as('alice'))).body as { type: string; body: string; label: { name: string } | null; milestone: { title: string } | null; old_milestone: { title: string } | null }[];
    expect(timeline.map((e) => [e.type, e.body, e.label?.name ?? null, e.old_milestone?.title ?? null, e.milestone?.title ?? null])).toEqual([
      ['milestone', '', null, null, 'ev-1'],
      ['label', '1', 'ev-bug', null, null],
      ['label', '1', 'ev-ui', null, null],
      ['label', '', 'ev-bug', null, null],
      ['added_deadline', '2030-01-01', null, null, null],
      ['milestone', '', null, 'ev-1', 'ev-2'],
      ['modified_deadline', '2031-02-03|2030-01-01', null, null, null],
      ['removed_deadline', '2031-02-03', null, null, null],
      ['milestone', '', null, 'ev-2', null],
      ['label', '1', 'ev-bug', null, null],
      ['label', '', 'ev-ui', null, null],
      ['label', '', 'ev-bug', null, null],
    ]);
    // A deleted label leaves its events, naming no label (Gitea loads it and finds none).
    expect((await f().request('DELETE', `${r}/labels/${ui.id}`, as('alice'))).status).toBe(204);
    const after = (await f().request('GET', `${i}/timeline`, as('alice'))).body as { type: string; label: unknown }[];
    expect(after.filter((e) => e.type === 'label').map((e) => e.label === null)).toEqual([false, true, false, false, true, false]);
  });
});
