/**
 * Gitea's JavaScript client (gitea-js) driving the time tracker of a listening forge on SQLite
 * and PostgreSQL: tracked times on an issue (add, list with filters, delete one, reset), the
 * repository's and the user's lists, stopwatches (start, list, stop, cancel), the issue's
 * timeline and the client's view of the refusals, through the client's own paths, methods and bodies.
 */
import { describeForge } from '../forge-api/test/support/forge';
import { tokenClient, type GiteaClient } from './support/gitea-js';

describeForge('gitea-js time tracker', (f) => {
  let owner: GiteaClient;
  let reader: GiteaClient;
  beforeAll(async () => {
    await f().user('maint');
    await f().user('fan');
    const scopes = ['write:repository', 'write:issue', 'write:user'];
    owner = await tokenClient(f().url, 'maint', scopes);
    reader = await tokenClient(f().url, 'fan', scopes);
    await owner.user.createCurrentUserRepo({ name: 'proj' });
    await owner.repos.issueCreateIssue('maint', 'proj', { title: 'Slow start' });
    await reader.repos.issueCreateIssue('maint', 'proj', { title: 'Idea' });
  });

  test('tracked times: add, list, filter, delete, reset; the repository and user lists', async () => {
    const added = await owner.repos.issueAddTime('maint', 'proj', 1, { time: 5400 });
    expect(added.status).toBe(200);
    expect(added.data).toMatchObject({ time: 5400, user_name: 'maint', issue: { number: 1, title: 'Slow start' } });
    const mine = await reader.repos.issueAddTime('maint', 'proj', 2, { time: 600 });
    expect(mine.data.user_name).toBe('fan');
    await owner.repos.issueAddTime('maint', 'proj', 1, { time: 120, user_name: 'fan' });
    await expect(reader.repos.issueAddTime('maint', 'proj', 1, { time: 60 })).rejects.toMatchObject({ status: 403 });

    const list = await owner.repos.issueTrackedTimes('maint', 'proj', 1, { limit: 1 });
    expect(list.data.map((t) => t.time)).toEqual([5400]);
    expect(list.headers.get('x-total-count')).toBe('2');
    expect((await owner.repos.issueTrackedTimes('maint', 'proj', 1, { user: 'fan' })).data.map((t) => t.time)).toEqual([120]);
    expect((await owner.repos.issueTrackedTimes('maint', 'proj', 1, { since: '2999-01-01T00:00:00Z' })).data).toEqual([]);
    await expect(reader.repos.issueTrackedTimes('maint', 'proj', 1, { user: 'maint' })).rejects.toMatchObject({
      status: 403,
      error: { message: 'query by user not allowed; not enough rights' },
    });

    const repoTimes = await owner.repos.repoTrackedTimes('maint', 'proj');
    expect(repoTimes.data.map((t) => [t.issue?.number, t.user_name, t.time])).toEqual([
      [1, 'maint', 5400],
      [2, 'fan', 600],
      [1, 'fan', 120],
    ]);
    expect((await reader.repos.userTrackedTimes('maint', 'proj', 'fan')).data.map((t) => t.time)).toEqual([600, 120]);
    expect((await reader.user.userCurrentTrackedTimes()).data.map((t) => t.time)).toEqual([600, 120]);

    // Only the time's owner (or a site admin) may delete it, not the repository's owner.
    await expect(owner.repos.issueDeleteTime('maint', 'proj', 2, mine.data.id as number)).rejects.toMatchObject({ status: 403 });
    expect((await reader.repos.issueDeleteTime('maint', 'proj', 2, mine.data.id as number)).status).toBe(204);
    expect((await owner.repos.issueResetTime('maint', 'proj', 1)).status).toBe(204);
    await expect(owner.repos.issueResetTime('maint', 'proj', 1)).rejects.toMatchObject({ status: 404 });
    expect((await owner.repos.repoTrackedTimes('maint', 'proj')).data.map((t) => t.time)).toEqual([120]);
    const timeline = await reader.repos.issueGetCommentsAndTimeline('maint', 'proj', 1);
    expect(timeline.data.map((e) => [e.type, e.body, e.tracked_time?.time ?? null])).toEqual([
      ['add_time_manual', '1 hour 30 minutes', 5400],
      ['add_time_manual', '2 minutes', 120],
      ['delete_time_manual', '1 hour 30 minutes', null],
    ]);
  });

  test('stopwatches: start, list, switch, stop into a tracked time, cancel', async () => {
    expect((await owner.repos.issueStartStopWatch('maint', 'proj', 1)).status).toBe(201);
    await expect(owner.repos.issueStartStopWatch('maint', 'proj', 1)).rejects.toMatchObject({ status: 409 });
    const running = await owner.user.userGetStopWatches();
    expect(running.data).toEqual([expect.objectContaining({ issue_index: 1, issue_title: 'Slow start', repo_owner_name: 'maint', repo_name: 'proj' })]);
    expect(running.headers.get('x-total-count')).toBe('1');
    expect((await owner.repos.issueStartStopWatch('maint', 'proj', 2)).status).toBe(201);
    expect((await owner.user.userGetStopWatches()).data.map((s) => s.issue_index)).toEqual([2]);
    await expect(owner.repos.issueStopStopWatch('maint', 'proj', 1)).rejects.toMatchObject({ status: 409 });
    expect((await owner.repos.issueStopStopWatch('maint', 'proj', 2)).status).toBe(201);
    const tracked = await owner.repos.issueTrackedTimes('maint', 'proj', 2, { user: 'maint' });
    expect(tracked.data).toHaveLength(1);
    expect((await owner.repos.issueStartStopWatch('maint', 'proj', 1)).status).toBe(201);
    expect((await owner.repos.issueDeleteStopWatch('maint', 'proj', 1)).status).toBe(204);
    await expect(owner.repos.issueDeleteStopWatch('maint', 'proj', 1)).rejects.toMatchObject({ status: 409 });
    expect((await owner.user.userGetStopWatches()).data).toEqual([]);
    await expect(reader.repos.issueStartStopWatch('maint', 'proj', 2)).rejects.toMatchObject({ status: 403 });
  });
});
