/**
 * Gitea's JavaScript client (gitea-js) driving a listening forge on SQLite and PostgreSQL:
 * issue assignees, locks (seen from a non-collaborator's side), issue subscriptions and the
 * notifications that follow them, the issue search across repositories, user badges and
 * unadopted repositories. gitea-js 1.23 has no method for the assignee and lock routes (Gitea
 * added them later); those go through the client's own request() with its token.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ContentType, type Issue } from 'gitea-js';
import { describeForge } from '../forge-api/test/support/forge';
import { tokenClient, type GiteaClient } from './support/gitea-js';

describeForge('gitea-js issue extras and admin', (f) => {
  let lead: GiteaClient;
  let helper: GiteaClient;
  let visitor: GiteaClient;
  let boss: GiteaClient;
  const send = <T = unknown>(c: GiteaClient, method: string, p: string, body?: unknown) =>
    c.request<T>({ path: p, method, body, secure: true, type: ContentType.Json, format: body === undefined && method !== 'GET' ? undefined : 'json' });

  beforeAll(async () => {
    for (const u of ['lead', 'helper', 'visitor']) await f().user(u);
    await f().user('boss', { admin: true });
    const scopes = ['write:repository', 'write:issue', 'write:user', 'write:notification'];
    lead = await tokenClient(f().url, 'lead', scopes);
    helper = await tokenClient(f().url, 'helper', scopes);
    visitor = await tokenClient(f().url, 'visitor', scopes);
    boss = await tokenClient(f().url, 'boss', ['write:admin', 'read:user', 'read:repository']);
    await lead.user.createCurrentUserRepo({ name: 'tracker' });
    await lead.user.createCurrentUserRepo({ name: 'vault', private: true });
    await lead.repos.repoAddCollaborator('lead', 'tracker', 'helper', { permission: 'write' });
    await lead.repos.issueCreateIssue('lead', 'tracker', { title: 'Needle in the open' });
    await visitor.repos.issueCreateIssue('lead', 'tracker', { title: 'Heated thread' });
    await lead.repos.issueCreateIssue('lead', 'vault', { title: 'Needle in the vault' });
  });

  test('assignees: add (assignable users only), list, remove', async () => {
    const p = '/repos/lead/tracker/issues/1/assignees';
    const added = await send<Issue>(lead, 'POST', p, { assignees: ['helper', 'lead'] });
    expect(added.status).toBe(201);
    expect(added.data.assignees?.map((u) => u.login).sort()).toEqual(['helper', 'lead']);
    // Gitea 1.27 lets whoever reads pull requests be assigned: the visitor on the public
    // repository, not on the private one; a reader cannot assign, an unknown name is a 422.
    expect((await send(lead, 'GET', '/repos/lead/tracker/issues/1/assignees/visitor')).status).toBe(204);
    await expect(send(lead, 'GET', '/repos/lead/vault/issues/1/assignees/visitor')).rejects.toMatchObject({ status: 404 });
    await expect(send(lead, 'POST', '/repos/lead/vault/issues/1/assignees', { assignees: ['visitor'] })).rejects.toMatchObject({
      status: 403,
      error: { message: expect.stringContaining("user doesn't have access to repo") },
    });
    await expect(send(visitor, 'POST', p, { assignees: ['visitor'] })).rejects.toMatchObject({ status: 403 });
    await expect(send(lead, 'POST', p, { assignees: ['nobody'] })).rejects.toMatchObject({ status: 422 });
    expect((await lead.repos.repoGetAssignees('lead', 'tracker')).data.map((u) => u.login).sort()).toEqual(['helper', 'lead']);
    const removed = await send<Issue>(lead, 'DELETE', p, { assignees: ['helper'] });
    expect(removed.status).toBe(200);
    expect(removed.data.assignees?.map((u) => u.login)).toEqual(['lead']);
    expect((await visitor.repos.issueGetIssue('lead', 'tracker', 1)).data.assignee?.login).toBe('lead');
  });

  test('a locked issue refuses comments from non-collaborators; unlocking lets them in again', async () => {
    const p = '/repos/lead/tracker/issues/2/lock';
    expect((await send(lead, 'PUT', p, { lock_reason: 'too heated' })).status).toBe(204);
    expect((await visitor.repos.issueGetIssue('lead', 'tracker', 2)).data.is_locked).toBe(true);
    // The visitor opened the issue, yet cannot comment on it now, nor unlock it.
    await expect(visitor.repos.issueCreateComment('lead', 'tracker', 2, { body: 'but...' })).rejects.toMatchObject({ status: 403 });
    await expect(send(visitor, 'DELETE', p)).rejects.toMatchObject({ status: 403 });
    expect((await helper.repos.issueCreateComment('lead', 'tracker', 2, { body: 'calm down' })).status).toBe(201);
    expect((await send(lead, 'DELETE', p)).status).toBe(204);
    expect((await visitor.repos.issueGetIssue('lead', 'tracker', 2)).data.is_locked).toBe(false);
    expect((await visitor.repos.issueCreateComment('lead', 'tracker', 2, { body: 'thanks' })).status).toBe(201);
  });

  test('issue subscriptions: subscribe, check, list; a new comment notifies the subscriber; unsubscribe', async () => {
    expect((await visitor.repos.issueCheckSubscription('lead', 'tracker', 1)).data.subscribed).toBe(false);
    expect((await visitor.repos.issueAddSubscription('lead', 'tracker', 1, 'visitor')).status).toBe(201);
    expect((await visitor.repos.issueAddSubscription('lead', 'tracker', 1, 'visitor')).status).toBe(200);
    await expect(visitor.repos.issueAddSubscription('lead', 'tracker', 1, 'helper')).rejects.toMatchObject({ status: 403 });
    expect((await visitor.repos.issueCheckSubscription('lead', 'tracker', 1)).data).toMatchObject({ subscribed: true, ignored: false });
    expect((await lead.repos.issueSubscriptions('lead', 'tracker', 1)).data.map((u) => u.login)).toContain('visitor');

    await helper.repos.issueCreateComment('lead', 'tracker', 1, { body: 'news for subscribers' });
    const notified = async () => (await visitor.notifications.notifyGetList({ all: true })).data.some((n) => n.subject?.title === 'Needle in the open');
    for (let i = 0; i < 100 && !(await notified()); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await notified()).toBe(true);

    expect((await visitor.repos.issueDeleteSubscription('lead', 'tracker', 1, 'visitor')).status).toBe(201);
    expect((await visitor.repos.issueCheckSubscription('lead', 'tracker', 1)).data.subscribed).toBe(false);
    expect((await lead.repos.issueSubscriptions('lead', 'tracker', 1)).data.map((u) => u.login)).not.toContain('visitor');
  });

  test('the issue search spans the repositories the caller reads, with filters and paging headers', async () => {
    const titles = (r: { data: Issue[] }) => r.data.map((i) => i.title).sort();
    expect(titles(await visitor.repos.issueSearchIssues({ q: 'Needle' }))).toEqual(['Needle in the open']);
    const mine = await lead.repos.issueSearchIssues({ q: 'Needle' });
    expect(titles(mine)).toEqual(['Needle in the open', 'Needle in the vault']);
    expect(mine.headers.get('x-total-count')).toBe('2');
    expect(mine.data.find((i) => i.title === 'Needle in the vault')?.repository?.full_name).toBe('lead/vault');
    const paged = await lead.repos.issueSearchIssues({ owner: 'lead', limit: 1 });
    expect(paged.data).toHaveLength(1);
    expect(paged.headers.get('x-total-count')).toBe('3');
    expect(paged.headers.get('link')).toContain('rel="next"');
    await lead.repos.issueEditIssue('lead', 'vault', 1, { state: 'closed' });
    expect(titles(await lead.repos.issueSearchIssues({ q: 'Needle', state: 'closed' }))).toEqual(['Needle in the vault']);
    expect(titles(await lead.repos.issueSearchIssues({ q: 'Needle', type: 'pulls' }))).toEqual([]);
    expect(titles(await lead.repos.issueSearchIssues({ assigned: true }))).toEqual(['Needle in the open']);
  });

  test('user badges: a site admin adds, lists and deletes them; others are refused', async () => {
    await f().app.services.badges.create({ slug: 'helpful', description: 'Helps out', imageUrl: 'https://example.com/helpful.png' });
    expect((await boss.admin.adminAddUserBadges('helper', { badge_slugs: ['helpful'] })).status).toBe(204);
    const badges = await boss.admin.adminListUserBadges('helper');
    // Gitea answers its database record here (Go field names), not the lower-case Badge that
    // gitea-js types it as.
    expect(badges.data).toEqual([{ ID: expect.any(Number), Slug: 'helpful', Description: 'Helps out', ImageURL: 'https://example.com/helpful.png' }]);
    expect(badges.headers.get('x-total-count')).toBe('1');
    await expect(lead.admin.adminListUserBadges('helper')).rejects.toMatchObject({ status: 403 });
    await expect(lead.admin.adminAddUserBadges('lead', { badge_slugs: ['helpful'] })).rejects.toMatchObject({ status: 403 });
    expect((await boss.admin.adminDeleteUserBadges('helper', { badge_slugs: ['helpful'] })).status).toBe(204);
    expect((await boss.admin.adminListUserBadges('helper')).data).toEqual([]);
  });

  test('unadopted repositories: listed, adopted as a private repository, or deleted from disk', async () => {
    const owned = path.join(f().dataDir, 'repositories', 'lead');
    const work = fs.mkdtempSync(path.join(f().dataDir, 'work-'));
    execFileSync('git', ['init', '-q', '-b', 'trunk', work]);
    execFileSync('git', ['-C', work, '-c', 'user.name=a', '-c', 'user.email=a@example.com', 'commit', '-q', '--allow-empty', '-m', 'found']);
    for (const name of ['stray', 'junk']) execFileSync('git', ['clone', '-q', '--bare', work, path.join(owned, `${name}.git`)]);
    expect((await boss.admin.adminUnadoptedList()).data.sort()).toEqual(['lead/junk', 'lead/stray']);
    await expect(lead.admin.adminAdoptRepository('lead', 'stray')).rejects.toMatchObject({ status: 403 });
    expect((await boss.admin.adminAdoptRepository('lead', 'stray')).status).toBe(204);
    expect((await lead.repos.repoGet('lead', 'stray')).data).toMatchObject({ private: true, default_branch: 'trunk', empty: false });
    await expect(boss.admin.adminDeleteUnadoptedRepository('lead', 'stray')).rejects.toMatchObject({ status: 404 });
    expect((await boss.admin.adminDeleteUnadoptedRepository('lead', 'junk')).status).toBe(204);
    expect(fs.existsSync(path.join(owned, 'junk.git'))).toBe(false);
    expect((await boss.admin.adminUnadoptedList()).data).toEqual([]);
  });
});
