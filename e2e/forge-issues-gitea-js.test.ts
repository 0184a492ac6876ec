/**
 * Gitea's JavaScript client (gitea-js) driving the issue tracker of a listening forge on SQLite
 * and PostgreSQL: issues, comments, labels, milestones, reactions, dependencies, attachments
 * and notifications through the client's own paths, methods and bodies.
 */
import { describeForge } from '../forge-api/test/support/forge';
import { tokenClient, type GiteaClient } from './support/gitea-js';

describeForge('gitea-js issue tracker', (f) => {
  let owner: GiteaClient;
  let reader: GiteaClient;
  beforeAll(async () => {
    await f().user('maint');
    await f().user('fan');
    const scopes = ['write:repository', 'write:issue', 'write:notification', 'write:user'];
    owner = await tokenClient(f().url, 'maint', scopes);
    reader = await tokenClient(f().url, 'fan', scopes);
    await owner.user.createCurrentUserRepo({ name: 'proj' });
  });

  test('labels, milestone, issue with both, edit to closed (201), list with headers', async () => {
    const label = await owner.repos.issueCreateLabel('maint', 'proj', { name: 'kind/bug', color: '#d73a4a', exclusive: true });
    expect(label.status).toBe(201);
    expect(label.data.color).toBe('d73a4a');
    const ms = await owner.repos.issueCreateMilestone('maint', 'proj', { title: 'v1.0' });
    const issue = await owner.repos.issueCreateIssue('maint', 'proj', { title: 'Crash on start', body: 'steps', labels: [label.data.id as number], milestone: ms.data.id });
    expect(issue.status).toBe(201);
    expect(issue.data).toMatchObject({ number: 1, state: 'open', milestone: { title: 'v1.0' } });
    expect(issue.data.labels?.map((l) => l.name)).toEqual(['kind/bug']);
    const second = await reader.repos.issueCreateIssue('maint', 'proj', { title: 'Feature idea' });
    expect(second.data.number).toBe(2);
    const edited = await owner.repos.issueEditIssue('maint', 'proj', 1, { state: 'closed' });
    expect(edited.status).toBe(201);
    expect(edited.data.state).toBe('closed');
    const list = await owner.repos.issueListIssues('maint', 'proj', { state: 'all', limit: 1 });
    expect(list.data.map((i) => i.number)).toEqual([2]);
    expect(list.headers.get('x-total-count')).toBe('2');
    expect(list.headers.get('link')).toContain('rel="next"');
    expect((await owner.repos.issueGetMilestone('maint', 'proj', String(ms.data.id))).data).toMatchObject({ open_issues: 0, closed_issues: 1 });
    const deadline = await owner.repos.issueEditIssueDeadline('maint', 'proj', 2, { due_date: '2030-02-03T04:05:06Z' });
    expect(deadline.status).toBe(201);
    expect(deadline.data.due_date).toBe('2030-02-03T23:59:59Z');
  });

  test('comments, reactions, dependencies, attachments; errors as Gitea bodies', async () => {
    const c = await reader.repos.issueCreateComment('maint', 'proj', 2, { body: 'me too' });
    expect(c.status).toBe(201);
    const edited = await reader.repos.issueEditComment('maint', 'proj', c.data.id as number, { body: 'me too!' });
    expect(edited.data.body).toBe('me too!');
    const comments = await owner.repos.issueGetComments('maint', 'proj', 2);
    expect(comments.data.map((x) => x.body)).toEqual(['me too!']);
    const reaction = await owner.repos.issuePostCommentReaction('maint', 'proj', c.data.id as number, { content: 'heart' });
    expect(reaction.status).toBe(201);
    expect((await owner.repos.issuePostCommentReaction('maint', 'proj', c.data.id as number, { content: 'heart' })).status).toBe(200);
    await expect(owner.repos.issuePostIssueReaction('maint', 'proj', 2, { content: 'nope' })).rejects.toMatchObject({ status: 403, error: { message: "'nope' is not an allowed reaction" } });
    await owner.repos.issueEditIssue('maint', 'proj', 1, { state: 'open' });
    const dep = await owner.repos.issueCreateIssueDependencies('maint', 'proj', '2', { owner: 'maint', repo: 'proj', index: 1 });
    expect(dep.status).toBe(201);
    expect((await owner.repos.issueListIssueDependencies('maint', 'proj', '2')).data.map((i) => i.number)).toEqual([1]);
    await expect(owner.repos.issueEditIssue('maint', 'proj', 2, { state: 'closed' })).rejects.toMatchObject({ status: 412 });
    const file = await owner.repos.issueCreateIssueAttachment('maint', 'proj', 2, { attachment: new Blob(['log line']) as unknown as File }, { name: 'crash.log' });
    expect(file.status).toBe(201);
    expect(file.data.name).toBe('crash.log');
    const dl = await fetch(file.data.browser_download_url as string);
    expect(await dl.text()).toBe('log line');
    await expect(reader.repos.issueCreateLabel('maint', 'proj', { name: 'x', color: 'fff' })).rejects.toMatchObject({ status: 403 });
  });

  test('notifications: the poster hears about comments; mark all answers 205', async () => {
    // fan opened issue 2 and commented on it: maint's comment reaches fan as a participant
    await owner.repos.issueCreateComment('maint', 'proj', 2, { body: 'fixed soon' });
    const threads = await reader.notifications.notifyGetList();
    expect(threads.data.map((t) => t.subject?.title)).toContain('Feature idea');
    expect((await reader.notifications.notifyNewAvailable()).data.new).toBeGreaterThan(0);
    const marked = await reader.notifications.notifyReadList({});
    expect(marked.status).toBe(205);
    expect((await reader.notifications.notifyNewAvailable()).data.new).toBe(0);
  });
});
