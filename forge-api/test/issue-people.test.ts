/**
 * Who takes part in an issue, as Gitea 1.27.3 answers it, on SQLite and PostgreSQL: assignees
 * added and removed by writers only (unknown names 422, users without access 403, users who
 * blocked the doer 403, a non-writer a bare 403), the assignable check, assignee and title
 * events in the timeline, the conversation lock (repository admins; non-writers cannot comment
 * on a locked issue), issue subscriptions (explicit rows, implicit ones of posters, commenters
 * and repository watchers, notifications follow them) and GET /repos/issues/search over every
 * readable repository with Gitea's filters.
 */
import { describeForge } from './support/forge';
import { as, okRequester } from './support/requests';

describeForge('issues: assignees, lock, subscriptions, search', (f) => {
  const ok = okRequester(f);
  const logins = (users: { login: string }[]) => users.map((u) => u.login);
  const found = (res: { body: { repository: { full_name: string }; number: number }[] }) => res.body.map((i) => `${i.repository.full_name}#${i.number}`);

  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['alice', 'bob', 'carol', 'dave', 'erin']) await f().user(u);
    await ok('POST', '/user/repos', 'alice', { name: 'r' });
    await ok('POST', '/user/repos', 'alice', { name: 'priv', private: true });
    await ok('PUT', '/repos/alice/r/collaborators/bob', 'alice', { permission: 'write' });
    await ok('POST', '/repos/alice/r/issues', 'alice', { title: 'first bug', body: 'hello @carol' });
    await ok('POST', '/repos/alice/priv/issues', 'alice', { title: 'secret bug' });
    await ok('POST', '/user/repos', 'dave', { name: 'd' });
    await ok('POST', '/repos/dave/d/issues', 'dave', { title: 'dave bug' });
  });

  test('writers add and remove assignees; each change is a timeline event', async () => {
    let res = await f().request('POST', '/repos/alice/r/issues/1/assignees', { ...as('alice'), body: { assignees: ['bob'] } });
    expect(res.status).toBe(201);
    expect(logins(res.body.assignees)).toEqual(['bob']);
    // Already assigned: skipped. A signed-in reader of a public repository may be assigned.
    res = await f().request('POST', '/repos/alice/r/issues/1/assignees', { ...as('alice'), body: { assignees: ['bob', 'carol'] } });
    expect(logins(res.body.assignees)).toEqual(['bob', 'carol']);
    res = await f().request('DELETE', '/repos/alice/r/issues/1/assignees', { ...as('bob'), body: { assignees: ['carol', 'dave'] } });
    expect(res.status).toBe(200);
    expect(logins(res.body.assignees)).toEqual(['bob']);
    expect((await f().request('POST', '/repos/alice/r/issues/1/assignees', { ...as('alice'), body: {} })).status).toBe(201);

    res = await f().request('POST', '/repos/alice/r/issues/1/assignees', { ...as('alice'), body: { assignees: ['nobody'] } });
    expect([res.status, res.body.message]).toEqual([422, 'user does not exist [uid: 0, name: nobody]']);
    res = await f().request('POST', '/repos/alice/priv/issues/1/assignees', { ...as('alice'), body: { assignees: ['carol'] } });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/^user doesn't have access to repo \[user_id: \d+, repo_name: priv\]$/);
    res = await f().request('POST', '/repos/alice/r/issues/1/assignees', { ...as('dave'), body: { assignees: ['dave'] } });
    expect([res.status, res.text]).toEqual([403, '']);
    expect((await f().request('POST', '/repos/alice/r/issues/1/assignees', { body: { assignees: ['bob'] } })).status).toBe(401);
    expect((await f().request('POST', '/repos/alice/r/issues/99/assignees', { ...as('alice'), body: { assignees: ['bob'] } })).status).toBe(404);

    // Seen from the blocker's side: erin blocks alice, so alice cannot assign erin.
    await ok('PUT', '/user/blocks/alice', 'erin');
    res = await f().request('POST', '/repos/alice/r/issues/1/assignees', { ...as('alice'), body: { assignees: ['erin'] } });
    expect([res.status, res.body.message]).toEqual([403, 'user is blocked']);

    const timeline = (await ok('GET', '/repos/alice/r/issues/1/timeline', 'alice')).body.filter((e: { type: string }) => e.type === 'assignees');
    expect(timeline.map((e: { assignee: { login: string }; removed_assignee: boolean }) => [e.assignee.login, e.removed_assignee])).toEqual([
      ['bob', false],
      ['carol', false],
      ['carol', true],
    ]);
    // The assignment reached bob (his notification thread).
    expect((await ok('GET', '/notifications', 'bob')).body.map((n: { subject: { title: string } }) => n.subject.title)).toContain('first bug');
  });

  test('edits record title changes and assignee changes (removals first)', async () => {
    const n = (await ok('POST', '/repos/alice/r/issues', 'alice', { title: 'with assignees', assignees: ['bob'] })).body.number;
    await ok('PATCH', `/repos/alice/r/issues/${n}`, 'alice', { assignees: ['carol'], title: 'renamed' });
    const events = (await ok('GET', `/repos/alice/r/issues/${n}/timeline`, 'alice')).body;
    expect(events.map((e: { type: string; assignee: { login: string } | null; removed_assignee: boolean; old_title: string; new_title: string }) => [e.type, e.assignee?.login ?? '', e.removed_assignee, e.old_title, e.new_title])).toEqual([
      ['assignees', 'bob', false, '', ''],
      ['change_title', '', false, 'with assignees', 'renamed'],
      ['assignees', 'bob', true, '', ''],
      ['assignees', 'carol', false, '', ''],
    ]);
  });

  test('the assignable check: 204, or 404 for users who cannot be assigned or do not exist', async () => {
    expect((await f().request('GET', '/repos/alice/r/issues/1/assignees/bob')).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/r/issues/1/assignees/carol', as('dave'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/priv/issues/1/assignees/carol', as('alice'))).status).toBe(404);
    const res = await f().request('GET', '/repos/alice/r/issues/1/assignees/nobody', as('dave'));
    expect([res.status, res.body.message]).toEqual([404, 'user does not exist [uid: 0, name: nobody]']);
    expect((await f().request('GET', '/repos/alice/priv/issues/1/assignees/alice', as('dave'))).status).toBe(404);
  });

  test('repository admins lock and unlock with a reason; non-writers cannot comment while locked', async () => {
    let res = await f().request('PUT', '/repos/alice/r/issues/1/lock', { ...as('bob'), body: { lock_reason: 'Too heated' } });
    expect([res.status, res.body.message]).toEqual([403, 'user should be an owner or a collaborator with admin write of a repository']);
    expect((await f().request('PUT', '/repos/alice/r/issues/1/lock', { body: {} })).status).toBe(401);
    expect((await f().request('PUT', '/repos/alice/r/issues/1/lock', { ...as('alice'), body: { lock_reason: 'Too heated' } })).status).toBe(204);
    expect((await f().request('PUT', '/repos/alice/r/issues/1/lock', { ...as('alice'), body: {} })).status).toBe(204);
    expect((await ok('GET', '/repos/alice/r/issues/1', 'dave')).body.is_locked).toBe(true);
    res = await f().request('POST', '/repos/alice/r/issues/1/comments', { ...as('dave'), body: { body: 'me too' } });
    expect([res.status, res.body.message]).toEqual([403, 'You cannot comment on a locked issue.']);
    expect((await f().request('POST', '/repos/alice/r/issues/1/comments', { ...as('bob'), body: { body: 'as writer' } })).status).toBe(201);
    expect((await f().request('DELETE', '/repos/alice/r/issues/1/lock', as('alice'))).status).toBe(204);
    expect((await f().request('DELETE', '/repos/alice/r/issues/1/lock', as('alice'))).status).toBe(204);
    expect((await f().request('PUT', '/repos/alice/r/issues/99/lock', { ...as('alice'), body: {} })).status).toBe(404);
    expect((await ok('GET', '/repos/alice/r/issues/1', 'dave')).body.is_locked).toBe(false);
    const events = (await ok('GET', '/repos/alice/r/issues/1/timeline', 'alice')).body.filter((e: { type: string }) => e.type === 'lock' || e.type === 'unlock');
    expect(events.map((e: { type: string; body: string }) => [e.type, e.body])).toEqual([['lock', 'Too heated'], ['unlock', '']]);
  });

  test('subscriptions: check, subscribe, unsubscribe, list; notifications follow them', async () => {
    const check = async (u: string) => (await ok('GET', '/repos/alice/r/issues/1/subscriptions/check', u)).body;
    const info = await check('dave');
    expect(info).toEqual({
      subscribed: false,
      ignored: true,
      reason: null,
      created_at: expect.any(String),
      url: `${f().url}/api/v1/repos/alice/r/issues/1/subscriptions`,
      repository_url: `${f().url}/api/v1/repos/alice/r`,
    });
    // The poster (and watcher) and a commenter are subscribed without a row.
    expect((await check('alice')).subscribed).toBe(true);
    expect((await check('bob')).subscribed).toBe(true);
    expect((await f().request('GET', '/repos/alice/r/issues/1/subscriptions/check')).status).toBe(401);

    expect((await f().request('PUT', '/repos/alice/r/issues/1/subscriptions/dave', as('dave'))).status).toBe(201);
    expect((await f().request('PUT', '/repos/alice/r/issues/1/subscriptions/dave', as('dave'))).status).toBe(200);
    const res = await f().request('PUT', '/repos/alice/r/issues/1/subscriptions/carol', as('dave'));
    expect([res.status, res.body.message]).toEqual([403, 'dave is not permitted to change subscriptions for carol']);
    expect((await f().request('PUT', '/repos/alice/r/issues/1/subscriptions/carol', as('root'))).status).toBe(201);
    expect((await f().request('PUT', '/repos/alice/r/issues/1/subscriptions/nobody', as('dave'))).status).toBe(404);
    expect((await f().request('PUT', '/repos/alice/r/issues/1/subscriptions/alice', as('alice'))).status).toBe(200);
    expect((await f().request('DELETE', '/repos/alice/r/issues/1/subscriptions/bob', as('bob'))).status).toBe(201);
    expect((await f().request('DELETE', '/repos/alice/r/issues/1/subscriptions/bob', as('bob'))).status).toBe(200);
    expect((await check('bob')).subscribed).toBe(false);

    let list = await ok('GET', '/repos/alice/r/issues/1/subscriptions?limit=1', 'dave');
    expect(list.headers.get('x-total-count')).toBe('2');
    expect(list.headers.get('link')).toBeNull();
    expect(logins(list.body)).toEqual(['carol']);
    list = await ok('GET', '/repos/alice/r/issues/1/subscriptions', 'dave');
    expect(logins(list.body)).toEqual(['carol', 'dave']);
    expect((await f().request('GET', '/repos/alice/priv/issues/1/subscriptions', as('dave'))).status).toBe(404);

    // A comment now reaches dave (subscribed) and not bob (unsubscribed, though a commenter).
    const threads = async (u: string) => (await ok('GET', '/notifications?all=true', u)).body.length;
    const [daveBefore, bobBefore] = [await threads('dave'), await threads('bob')];
    await ok('PUT', '/notifications', 'bob');
    await ok('POST', '/repos/alice/r/issues/1/comments', 'carol', { body: 'ping' });
    expect(await threads('dave')).toBe(daveBefore + 1);
    expect(await threads('bob')).toBe(bobBefore);
    expect((await ok('GET', '/notifications', 'bob')).body).toEqual([]);
  });

  test('search spans every readable repository, newest first, with Gitea filters and paging', async () => {
    expect(found(await ok('GET', '/repos/issues/search', 'alice'))).toEqual(['alice/r#2', 'dave/d#1', 'alice/priv#1', 'alice/r#1']);
    expect(found(await ok('GET', '/repos/issues/search', 'dave'))).toEqual(['alice/r#2', 'dave/d#1', 'alice/r#1']);
    const anon = await f().request('GET', '/repos/issues/search');
    expect(found(anon)).toEqual(['alice/r#2', 'dave/d#1', 'alice/r#1']);
    expect(found(await ok('GET', '/repos/issues/search?q=SECRET', 'alice'))).toEqual(['alice/priv#1']);
    expect(found(await ok('GET', '/repos/issues/search?q=secret', 'dave'))).toEqual([]);
    expect(found(await ok('GET', '/repos/issues/search?owner=dave', 'alice'))).toEqual(['dave/d#1']);
    expect(found(await ok('GET', '/repos/issues/search?created=true', 'dave'))).toEqual(['dave/d#1']);
    expect(found(await ok('GET', '/repos/issues/search?assigned=true', 'carol'))).toEqual(['alice/r#2']);
    expect(found(await ok('GET', '/repos/issues/search?mentioned=true', 'carol'))).toEqual(['alice/r#1']);
    expect(found(await ok('GET', '/repos/issues/search?created_by=dave&type=issues', 'alice'))).toEqual(['dave/d#1']);
    expect(found(await ok('GET', '/repos/issues/search?type=pulls', 'alice'))).toEqual([]);
    expect(found(await ok('GET', '/repos/issues/search?state=closed', 'alice'))).toEqual([]);
    // Label names that match no label filter nothing, as in Gitea.
    expect(found(await ok('GET', '/repos/issues/search?labels=nolabel', 'dave'))).toHaveLength(3);
    const page = await ok('GET', '/repos/issues/search?state=all&limit=1&page=2', 'alice');
    expect(found(page)).toEqual(['dave/d#1']);
    expect(page.headers.get('x-total-count')).toBe('4');
    expect(page.headers.get('link')).toContain('rel="next"');
    for (const [q, status, message] of [
      ['owner=nobody', 400, 'user does not exist [uid: 0, name: nobody]'],
      ['team=x', 400, 'owner organisation is required for filtering on team'],
      ['created_by=nobody', 404, 'user does not exist [uid: 0, name: nobody]'],
      ['since=bad', 422, undefined],
    ] as const) {
      const res = await f().request('GET', `/repos/issues/search?${q}`, as('alice'));
      expect(res.status).toBe(status);
      if (message) expect(res.body.message).toBe(message);
    }
    // A token limited to public things sees public repositories only.
    const token = await f().token('alice', ['read:issue', 'public-only']);
    expect(found(await f().request('GET', '/repos/issues/search', { token }))).toEqual(['alice/r#2', 'dave/d#1', 'alice/r#1']);
  });
});
