/**
 * Pull request events through the one notifier, SQLite and PostgreSQL: webhook deliveries with
 * Gitea 1.27.3's headers and PullRequestPayload for opened, edited (with what changed),
 * assigned / unassigned, synchronized (a push to the head, with before/after), closed, reopened
 * and merged (`closed` with merged set), and the notification an assignee gets.
 */
import http from 'node:http';
import { describeForge, PASSWORD } from './support/forge';

interface Delivery {
  event: string;
  type: string;
  body: any;
}

describeForge('pulls: events', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const R = '/repos/alice/proj';
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const deliveries: Delivery[] = [];
  let server: http.Server;

  /** Waits (polling, no fixed sleep) for `n` deliveries, and returns them. */
  const received = async (n: number) => {
    const deadline = Date.now() + 20000;
    while (deliveries.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return deliveries.map((d) => `${d.event} ${d.type} ${d.body.action}`);
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        deliveries.push({ event: String(req.headers['x-gitea-event']), type: String(req.headers['x-gitea-event-type']), body: JSON.parse(body) });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await f().user('alice');
    await f().user('bob');
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'proj', auto_init: true } })).status).toBe(201);
    expect((await f().request('PUT', `${R}/collaborators/bob`, { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    const hook = await f().request('POST', `${R}/hooks`, { ...as('alice'), body: { type: 'gitea', config: { url, content_type: 'json' }, events: ['pull_request'], active: true } });
    expect(hook.status).toBe(201);
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test('opened, edited, assigned, unassigned, synchronized, closed, reopened, merged: Gitea headers and payloads; the assignee is notified', async () => {
    const made = await f().request('POST', `${R}/contents/a.txt`, { ...as('alice'), body: { content: b64('a'), message: 'a', new_branch: 'topic' } });
    expect(made.status).toBe(201);
    const pr = await f().request('POST', `${R}/pulls`, { ...as('alice'), body: { head: 'topic', base: 'main', title: 'Topic' } });
    expect(pr.status).toBe(201);
    const n = pr.body.number;
    expect(await received(1)).toEqual(['pull_request pull_request opened']);
    const opened = deliveries[0].body;
    expect(Object.keys(opened)).toEqual(['action', 'number', 'pull_request', 'requested_reviewer', 'repository', 'sender', 'commit_id', 'review']);
    expect(opened).toMatchObject({ number: n, pull_request: { number: n, title: 'Topic', state: 'open', head: { ref: 'topic' } }, requested_reviewer: null, review: null, commit_id: '', sender: { login: 'alice' } });

    expect((await f().request('PATCH', `${R}/pulls/${n}`, { ...as('alice'), body: { title: 'Topic 2' } })).status).toBe(201);
    expect((await received(2))[1]).toBe('pull_request pull_request edited');
    const edited = deliveries[1].body;
    expect(Object.keys(edited).slice(0, 4)).toEqual(['action', 'number', 'changes', 'pull_request']);
    expect(edited).toMatchObject({ changes: { title: { from: 'Topic' }, added_labels: null, removed_labels: null }, pull_request: { title: 'Topic 2' } });

    expect((await f().request('PATCH', `${R}/pulls/${n}`, { ...as('alice'), body: { assignees: ['bob'] } })).status).toBe(201);
    expect((await received(3))[2]).toBe('pull_request pull_request_assign assigned');
    expect(deliveries[2].body.pull_request.assignees.map((u: { login: string }) => u.login)).toEqual(['bob']);
    // Dropped from the list: one unassigned (Gitea's IssueChangeAssignee), then bob again.
    expect((await f().request('PATCH', `${R}/pulls/${n}`, { ...as('alice'), body: { assignees: [] } })).status).toBe(201);
    expect((await f().request('PATCH', `${R}/pulls/${n}`, { ...as('alice'), body: { assignees: ['bob'] } })).status).toBe(201);
    expect((await received(5)).slice(3)).toEqual(['pull_request pull_request_assign unassigned', 'pull_request pull_request_assign assigned']);
    deliveries.splice(1, 4);

    const before = made.body.commit.sha;
    const pushed = await f().request('PUT', `${R}/contents/a.txt`, { ...as('alice'), body: { content: b64('b'), message: 'b', branch: 'topic', sha: made.body.content.sha } });
    expect(pushed.status).toBe(200);
    expect((await received(2))[1]).toBe('pull_request pull_request_sync synchronized');
    const sync = deliveries[1].body;
    expect(Object.keys(sync).slice(0, 4)).toEqual(['action', 'before', 'after', 'number']);
    expect(sync).toMatchObject({ before, after: pushed.body.commit.sha, pull_request: { head: { sha: pushed.body.commit.sha } } });

    expect((await f().request('PATCH', `${R}/pulls/${n}`, { ...as('alice'), body: { state: 'closed' } })).status).toBe(201);
    expect((await f().request('PATCH', `${R}/pulls/${n}`, { ...as('alice'), body: { state: 'open' } })).status).toBe(201);
    await f().app.services.pulls.checker.idle();
    expect((await f().request('POST', `${R}/pulls/${n}/merge`, { ...as('alice'), body: { Do: 'merge' } })).status).toBe(200);
    expect((await received(5)).slice(2)).toEqual(['pull_request pull_request closed', 'pull_request pull_request reopened', 'pull_request pull_request closed']);
    expect(deliveries[2].body.pull_request).toMatchObject({ state: 'closed', merged: false });
    expect(deliveries[4].body.pull_request).toMatchObject({ state: 'closed', merged: true, merged_by: { login: 'alice' } });

    const threads = (await f().request('GET', '/notifications?all=true', as('bob'))).body;
    expect(threads).toMatchObject([{ subject: { title: 'Topic 2', type: 'Pull' } }]);
  });
}, { webhookAllowedHostList: 'loopback' });
