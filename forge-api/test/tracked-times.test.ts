/**
 * Tracked times and stopwatches as Gitea 1.27.3 answers them, on SQLite and PostgreSQL: who may
 * add, list, reset and delete times (bare 403s, 400/404 with a disabled tracker, the
 * `{"Message"}` body of the DELETE routes), the user filter rules of the lists, X-Total-Count
 * without a Link header, `created` echoed but not stored, the stopwatch's 201/409 answers and
 * its tracked time, a stopwatch stopped by closing the issue, and the clean-up when an issue
 * or a user is deleted.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('tracked times and stopwatches', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const R = '/repos/alice/proj';
  const add = (who: string, issue: number, body: Record<string, unknown>) => f().request('POST', `${R}/issues/${issue}/times`, { ...as(who), body });
  const times = async (who: string, path: string) => {
    const res = await f().request('GET', path, as(who));
    expect(res.status).toBe(200);
    return res.body.map((t: { time: number; user_name: string; issue: { number: number } }) => [t.issue.number, t.user_name, t.time]);
  };
  /** The time tracker's events on the issue's timeline: [type, user, body, has a tracked time]. */
  const events = async (issue: number) => {
    const res = await f().request('GET', `${R}/issues/${issue}/timeline?limit=50`, as('alice'));
    expect(res.status).toBe(200);
    const kinds = ['start_tracking', 'stop_tracking', 'add_time_manual', 'cancel_tracking', 'delete_time_manual'];
    return (res.body as { type: string; user: { login: string }; body: string; tracked_time: unknown }[])
      .filter((e) => kinds.includes(e.type))
      .map((e) => [e.type, e.user.login, e.body, e.tracked_time !== null]);
  };

  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carol']) await f().user(u);
    await f().user('root', { admin: true });
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'proj', auto_init: true } })).status).toBe(201);
    expect((await f().request('PUT', `${R}/collaborators/carol`, { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
    expect((await f().request('POST', `${R}/issues`, { ...as('alice'), body: { title: 'first' } })).status).toBe(201);
    expect((await f().request('POST', `${R}/issues`, { ...as('bob'), body: { title: 'bobs' } })).status).toBe(201);
    expect((await f().request('POST', `${R}/issues`, { ...as('alice'), body: { title: 'third' } })).status).toBe(201);
  });

  test('add time: the answer echoes `created`, lists show when it was stored; the issue is updated', async () => {
    const before = (await f().request('GET', `${R}/issues/1`, as('alice'))).body;
    await new Promise((r) => setTimeout(r, 1100));
    const res = await add('alice', 1, { time: 3600, created: '2020-01-02T03:04:05Z' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['created', 'id', 'issue', 'issue_id', 'time', 'user_id', 'user_name']);
    expect(res.body).toMatchObject({ created: '2020-01-02T03:04:05Z', time: 3600, user_name: 'alice', issue: { number: 1, title: 'first' } });
    expect(res.body.issue_id).toBe(res.body.issue.id);
    const list = await f().request('GET', `${R}/issues/1/times`, as('alice'));
    expect(list.headers.get('x-total-count')).toBe('1');
    expect(list.headers.get('link')).toBeNull();
    expect(list.body[0].id).toBe(res.body.id);
    expect(list.body[0].created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(list.body[0].created)).toBeGreaterThan(Date.parse('2026-01-01T00:00:00Z'));
    const after = (await f().request('GET', `${R}/issues/1`, as('alice'))).body;
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    expect(after.comments).toBe(before.comments);
    // Without `created`, the answer carries the current time with its fraction, as Go encodes it.
    const now = await add('alice', 1, { time: 60 });
    expect(Math.abs(Date.parse(now.body.created) - Date.now())).toBeLessThan(60_000);
    expect(await events(1)).toEqual([
      ['add_time_manual', 'alice', '1 hour', true],
      ['add_time_manual', 'alice', '1 minute', true],
    ]);
  });

  test('who may add: writers, the poster, not other readers (bare 403); user_name for admins only', async () => {
    let res = await add('bob', 1, { time: 60 });
    expect(res.status).toBe(403);
    expect(res.text).toBe('');
    res = await add('bob', 2, { time: 120, user_name: 'alice' });
    expect(res.status).toBe(200);
    expect(res.body.user_name).toBe('bob'); // not an admin: the name is ignored
    res = await add('carol', 1, { time: 45 });
    expect(res.body.user_name).toBe('carol');
    res = await add('alice', 1, { time: 30, user_name: 'bob' });
    expect(res.status).toBe(200);
    expect(res.body.user_name).toBe('bob');
    res = await add('alice', 1, { time: 30, user_name: 'nobody' });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('user does not exist [uid: 0, name: nobody]');
    res = await add('alice', 1, { time: 0 });
    expect([res.status, res.body.message]).toEqual([422, '[Time]: Required']);
    res = await add('alice', 99, { time: 5 });
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/^issue does not exist \[id: 0, repo_id: \d+, index: 99\]$/);
    res = await f().request('POST', `${R}/issues/1/times`, { body: { time: 5 } });
    expect(res.status).toBe(401);
    // A negative amount is a correction Gitea accepts.
    res = await add('carol', 1, { time: -15 });
    expect([res.status, res.body.time]).toEqual([200, -15]);
  });

  test('lists: readers see their own times only and may not ask for others; filters and paging', async () => {
    expect(await times('alice', `${R}/issues/1/times`)).toEqual([
      [1, 'alice', 3600],
      [1, 'alice', 60],
      [1, 'carol', 45],
      [1, 'bob', 30],
      [1, 'carol', -15],
    ]);
    expect(await times('bob', `${R}/issues/1/times`)).toEqual([[1, 'bob', 30]]);
    expect(await times('alice', `${R}/issues/1/times?user=carol`)).toEqual([
      [1, 'carol', 45],
      [1, 'carol', -15],
    ]);
    let res = await f().request('GET', `${R}/issues/1/times?user=alice`, as('bob'));
    expect([res.status, res.body.message]).toEqual([403, 'query by user not allowed; not enough rights']);
    res = await f().request('GET', `${R}/issues/1/times?user=nobody`, as('bob'));
    expect([res.status, res.body.message]).toEqual([404, 'user does not exist [uid: 0, name: nobody]']);
    res = await f().request('GET', `${R}/issues/1/times?since=yesterday`, as('alice'));
    expect(res.status).toBe(422);
    res = await f().request('GET', `${R}/issues/1/times?since=2020-01-01`, as('alice'));
    expect(res.status).toBe(422);
    expect(await times('alice', `${R}/issues/1/times?since=2999-01-01T00:00:00Z`)).toEqual([]);
    expect((await times('alice', `${R}/issues/1/times?before=2999-01-01T00:00:00%2B02:00&since=2000-01-01T00:00:00Z`)).length).toBe(5);
    res = await f().request('GET', `${R}/issues/1/times?limit=2&page=2`, as('alice'));
    expect(res.headers.get('x-total-count')).toBe('5');
    expect(res.body.map((t: { time: number }) => t.time)).toEqual([45, 30]);
    expect((await f().request('GET', `${R}/issues/1/times`)).status).toBe(401);

    expect(await times('alice', `${R}/times?limit=50`)).toEqual([
      [1, 'alice', 3600],
      [1, 'alice', 60],
      [2, 'bob', 120],
      [1, 'carol', 45],
      [1, 'bob', 30],
      [1, 'carol', -15],
    ]);
    expect(await times('bob', `${R}/times`)).toEqual([
      [2, 'bob', 120],
      [1, 'bob', 30],
    ]);
    res = await f().request('GET', `${R}/times?user=carol`, as('bob'));
    expect(res.status).toBe(403);
    expect(await times('bob', `${R}/times/bob`)).toEqual([
      [2, 'bob', 120],
      [1, 'bob', 30],
    ]);
    res = await f().request('GET', `${R}/times/alice`, as('bob'));
    expect([res.status, res.body.message]).toEqual([403, 'query by user not allowed; not enough rights']);
    // A writer who is not a repository admin may not read another user's times through this route.
    expect((await f().request('GET', `${R}/times/alice`, as('carol'))).status).toBe(403);
    expect(await times('root', `${R}/times/carol`)).toEqual([
      [1, 'carol', 45],
      [1, 'carol', -15],
    ]);
    res = await f().request('GET', '/user/times', as('bob'));
    expect(res.headers.get('x-total-count')).toBe('2');
    expect(res.body.map((t: { time: number }) => t.time)).toEqual([120, 30]);
  });

  test('delete one time: owner or site admin only; the event is the owner\'s; reset', async () => {
    const all = (await f().request('GET', `${R}/issues/1/times`, as('alice'))).body as { id: number; user_name: string; time: number }[];
    const bobs = all.find((t) => t.user_name === 'bob')!;
    const carols = all.find((t) => t.user_name === 'carol')!;
    let res = await f().request('DELETE', `${R}/issues/1/times/${carols.id}`, as('alice'));
    expect([res.status, res.text]).toEqual([403, '']);
    res = await f().request('DELETE', `${R}/issues/2/times/${carols.id}`, as('carol'));
    expect([res.status, res.body.message]).toEqual([404, `tracked_time does not exist [id: ${carols.id}]`]);
    res = await f().request('DELETE', `${R}/issues/1/times/abc`, as('carol'));
    expect([res.status, res.body.message]).toEqual([404, 'tracked_time does not exist']);
    expect((await f().request('DELETE', `${R}/issues/1/times/${carols.id}`, as('carol'))).status).toBe(204);
    res = await f().request('DELETE', `${R}/issues/1/times/${carols.id}`, as('carol'));
    expect([res.status, res.body.message]).toEqual([404, 'tracked time was already deleted']);
    expect((await f().request('DELETE', `${R}/issues/1/times/${bobs.id}`, as('root'))).status).toBe(204);
    expect((await events(1)).filter((e) => e[0] === 'delete_time_manual')).toEqual([
      ['delete_time_manual', 'carol', '45 seconds', false],
      ['delete_time_manual', 'bob', '30 seconds', false],
    ]);

    // Reset: the caller's remaining times on the issue, as one event with their sum.
    res = await f().request('DELETE', `${R}/issues/1/times`, as('bob'));
    expect([res.status, res.text]).toEqual([403, '']);
    expect((await f().request('DELETE', `${R}/issues/1/times`, as('alice'))).status).toBe(204);
    res = await f().request('DELETE', `${R}/issues/1/times`, as('alice'));
    expect([res.status, res.body.message]).toEqual([404, 'tracked_time does not exist']);
    expect((await events(1)).at(-1)).toEqual(['delete_time_manual', 'alice', '1 hour 1 minute', false]);
    expect(await times('alice', `${R}/issues/1/times`)).toEqual([[1, 'carol', -15]]);
  });

  test('stopwatches: start, 409s, switching issues stops the running one, stop, cancel', async () => {
    const sw = (who: string, issue: number, action: 'start' | 'stop' | 'delete') =>
      f().request(action === 'delete' ? 'DELETE' : 'POST', `${R}/issues/${issue}/stopwatch/${action}`, as(who));
    let res = await sw('alice', 1, 'start');
    expect([res.status, res.text]).toEqual([201, '']);
    res = await sw('alice', 1, 'start');
    expect([res.status, res.body.message]).toEqual([409, 'cannot start a stopwatch again if it already exists']);
    res = await f().request('GET', '/user/stopwatches', as('alice'));
    expect(res.headers.get('x-total-count')).toBe('1');
    expect(res.body).toEqual([
      { created: expect.stringMatching(/Z$/), seconds: expect.any(Number), duration: expect.any(String), issue_index: 1, issue_title: 'first', repo_owner_name: 'alice', repo_name: 'proj' },
    ]);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await sw('alice', 2, 'start')).status).toBe(201);
    res = await f().request('GET', '/user/stopwatches', as('alice'));
    expect(res.body.map((s: { issue_index: number }) => s.issue_index)).toEqual([2]);
    const switched = (await f().request('GET', `${R}/issues/1/times?user=alice`, as('alice'))).body;
    expect(switched).toHaveLength(1);
    expect(switched[0].time).toBeGreaterThanOrEqual(1);
    expect((await events(1)).slice(-2)).toEqual([
      ['start_tracking', 'alice', '', false],
      ['stop_tracking', 'alice', expect.stringMatching(/^\d+ seconds?$/), true],
    ]);
    res = await sw('alice', 1, 'stop');
    expect([res.status, res.body.message]).toEqual([409, 'cannot stop a non-existent stopwatch']);
    res = await sw('alice', 1, 'delete');
    expect([res.status, res.body.message]).toEqual([409, 'cannot cancel a non-existent stopwatch']);
    expect((await sw('alice', 2, 'stop')).status).toBe(201);
    expect((await f().request('GET', `${R}/issues/2/times?user=alice`, as('alice'))).body).toHaveLength(1);
    expect((await sw('alice', 3, 'start')).status).toBe(201);
    expect((await sw('alice', 3, 'delete')).status).toBe(204);
    expect((await f().request('GET', `${R}/issues/3/times`, as('alice'))).body).toEqual([]);
    expect((await events(3)).map((e) => e[0])).toEqual(['start_tracking', 'cancel_tracking']);
    expect((await f().request('GET', '/user/stopwatches', as('alice'))).body).toEqual([]);

    // Readers may not use stopwatches, not even on their own issue; a missing issue is 404.
    res = await sw('bob', 2, 'start');
    expect([res.status, res.text]).toEqual([403, '']);
    res = await sw('alice', 99, 'start');
    expect([res.status, res.body.message]).toEqual([404, 'not found']);
  });

  test('closing an issue stops the closer\'s stopwatch on it', async () => {
    expect((await f().request('POST', `${R}/issues/3/stopwatch/start`, as('carol'))).status).toBe(201);
    expect((await f().request('PATCH', `${R}/issues/3`, { ...as('carol'), body: { state: 'closed' } })).status).toBe(201);
    expect((await f().request('GET', '/user/stopwatches', as('carol'))).body).toEqual([]);
    expect(await times('carol', `${R}/issues/3/times`)).toEqual([[3, 'carol', expect.any(Number)]]);
    expect((await f().request('PATCH', `${R}/issues/3`, { ...as('carol'), body: { state: 'open' } })).status).toBe(201);
  });

  test('a disabled tracker: 404 for the issue list, 400 elsewhere, 403 for stopwatches', async () => {
    const off = { has_issues: true, internal_tracker: { enable_time_tracker: false, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true } };
    expect((await f().request('PATCH', R, { ...as('alice'), body: off })).status).toBe(200);
    let res = await f().request('GET', `${R}/issues/1/times`, as('alice'));
    expect([res.status, res.body.message]).toEqual([404, 'timetracker is disabled']);
    res = await add('alice', 1, { time: 5 });
    expect([res.status, res.body.message]).toEqual([400, 'time tracking disabled']);
    res = await f().request('DELETE', `${R}/issues/1/times`, as('alice'));
    expect([res.status, res.body]).toEqual([400, { Message: 'time tracking disabled' }]);
    res = await f().request('DELETE', `${R}/issues/1/times/1`, as('alice'));
    expect([res.status, res.body]).toEqual([400, { Message: 'time tracking disabled' }]);
    for (const p of [`${R}/times`, `${R}/times/alice`]) {
      res = await f().request('GET', p, as('alice'));
      expect([res.status, res.body.message]).toEqual([400, 'time tracking disabled']);
    }
    res = await f().request('POST', `${R}/issues/1/stopwatch/start`, as('alice'));
    expect([res.status, res.text]).toEqual([403, '']);
    // Anyone may track time when not only contributors may.
    const open = { has_issues: true, internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: false, enable_issue_dependencies: true } };
    expect((await f().request('PATCH', R, { ...as('alice'), body: open })).status).toBe(200);
    expect((await add('bob', 1, { time: 7 })).status).toBe(200);
  });

  test('deleted issue and user: their times go, or stay with the ghost', async () => {
    expect((await f().request('POST', `${R}/issues`, { ...as('alice'), body: { title: 'doomed' } })).status).toBe(201);
    expect((await add('bob', 4, { time: 11 })).status).toBe(200);
    expect((await f().request('GET', '/user/times', as('bob'))).body.map((t: { time: number }) => t.time)).toEqual([120, 7, 11]);
    expect((await f().request('DELETE', `${R}/issues/4`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/user/times', as('bob'))).body.map((t: { time: number }) => t.time)).toEqual([120, 7]);

    await f().user('dave');
    expect((await f().request('PUT', `${R}/collaborators/dave`, { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
    expect((await add('dave', 2, { time: 99 })).status).toBe(200);
    expect((await f().request('POST', `${R}/issues/2/stopwatch/start`, as('dave'))).status).toBe(201);
    expect((await f().request('DELETE', '/admin/users/dave', as('root'))).status).toBe(204);
    const list = (await f().request('GET', `${R}/issues/2/times`, as('alice'))).body as { user_name: string; time: number; user_id: number }[];
    expect(list.find((t) => t.time === 99)).toMatchObject({ user_name: 'Ghost' });
    expect(await f().app.services.tracker.context.prisma.stopwatch.count()).toBe(0);
  });

  test('/user/times leaves out times of repositories the caller can no longer read, but counts them', async () => {
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'secret', private: true } })).status).toBe(201);
    expect((await f().request('PUT', '/repos/alice/secret/collaborators/carol', { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
    expect((await f().request('POST', '/repos/alice/secret/issues', { ...as('alice'), body: { title: 'hidden' } })).status).toBe(201);
    expect((await f().request('POST', '/repos/alice/secret/issues/1/times', { ...as('carol'), body: { time: 5 } })).status).toBe(200);
    expect((await f().request('POST', '/repos/alice/secret/issues/1/stopwatch/start', as('carol'))).status).toBe(201);
    const before = await f().request('GET', '/user/times?limit=50', as('carol'));
    expect(before.body.some((t: { issue: { repository: { name: string } } }) => t.issue.repository.name === 'secret')).toBe(true);
    expect((await f().request('DELETE', '/repos/alice/secret/collaborators/carol', as('alice'))).status).toBe(204);
    const after = await f().request('GET', '/user/times?limit=50', as('carol'));
    expect(after.headers.get('x-total-count')).toBe(before.headers.get('x-total-count'));
    expect(after.body).toHaveLength(before.body.length - 1);
    // Losing all access to the repository also took the stopwatch running there.
    expect((await f().request('GET', '/user/stopwatches', as('carol'))).body).toEqual([]);
  });

  test('the timeline: comments and events oldest first, tracked times shown even once deleted, paged', async () => {
    expect((await f().request('POST', `${R}/issues/2/comments`, { ...as('bob'), body: { body: 'a plain comment' } })).status).toBe(201);
    const all = await f().request('GET', `${R}/issues/2/timeline`);
    expect(all.status).toBe(200);
    expect(all.headers.get('link')).toBeNull();
    const entries = all.body as { id: number; type: string; body: string; tracked_time: { time: number; user_name: string } | null; html_url: string; ref_action: string }[];
    expect(entries.map((e) => e.type)).toEqual(['add_time_manual', 'start_tracking', 'stop_tracking', 'add_time_manual', 'start_tracking', 'comment']);
    expect(entries[0]).toMatchObject({ body: '2 minutes', tracked_time: { time: 120, user_name: 'bob' }, ref_action: 'none', dependent_issue: null, label: null });
    // Dave's account is gone: his events show the ghost.
    expect((entries[3] as unknown as { user: { login: string } }).user.login).toBe('Ghost');
    // Alice reset this time on issue 1: the event that added it still shows it.
    const first = (await f().request('GET', `${R}/issues/1/timeline?limit=1`, as('alice'))).body[0];
    expect(first).toMatchObject({ type: 'add_time_manual', body: '1 hour', tracked_time: { time: 3600, user_name: 'alice' } });
    expect((await f().request('GET', `${R}/issues/1/times`, as('alice'))).body.map((t: { id: number }) => t.id)).not.toContain(first.tracked_time.id);
    expect(entries.at(-1)).toMatchObject({ body: 'a plain comment', tracked_time: null });
    expect(entries.at(-1)!.html_url).toBe(`${f().url}/alice/proj/issues/2#issuecomment-${entries.at(-1)!.id}`);
    expect(Object.keys(entries[0]).sort()).toEqual(
      ['assignee', 'assignee_team', 'body', 'created_at', 'dependent_issue', 'html_url', 'id', 'issue_url', 'label', 'milestone', 'new_ref', 'new_title', 'old_milestone', 'old_project_id', 'old_ref', 'old_title', 'project_id', 'pull_request_url', 'ref_action', 'ref_comment', 'ref_commit_sha', 'ref_issue', 'removed_assignee', 'resolve_doer', 'review_id', 'tracked_time', 'type', 'updated_at', 'user'].sort(),
    );
    const page = await f().request('GET', `${R}/issues/2/timeline?limit=3&page=2`, as('bob'));
    expect(page.body.map((e: { id: number }) => e.id)).toEqual(entries.slice(3, 6).map((e) => e.id));
    expect(page.headers.get('x-total-count')).toBe('3');
    expect((await f().request('GET', `${R}/issues/2/timeline?limit=5&page=2`, as('bob'))).headers.get('x-total-count')).toBe('1');
    expect((await f().request('GET', `${R}/issues/99/timeline`)).status).toBe(404);
    // An empty page is null, as Gitea's unfilled list.
    expect((await f().request('GET', `${R}/issues/2/timeline?since=2999-01-01T00:00:00Z`)).body).toBeNull();
  });

  test('the operations are declared in /swagger.v1.json', async () => {
    const doc = (await f().request('GET', `${f().url}/swagger.v1.json`)).body;
    const ops = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) => Object.values(p).map((o) => o.operationId));
    for (const id of ['issueTrackedTimes', 'issueAddTime', 'issueResetTime', 'issueDeleteTime', 'repoTrackedTimes', 'userTrackedTimes', 'userCurrentTrackedTimes', 'issueStartStopWatch', 'issueStopStopWatch', 'issueDeleteStopWatch', 'userGetStopWatches', 'issueGetCommentsAndTimeline']) {
      expect(ops).toContain(id);
    }
  });
}, { enableSwagger: true });
