/**
 * Webhooks over HTTP with a real receiver on loopback: hook CRUD and validation at the admin,
 * org and repository paths; deliveries for repository, issue, comment and push events with
 * Gitea's headers, payloads and HMAC-SHA256 signature; a blocked receiver does not hold the
 * API request; a receiver that is down gets the delivery again once it is back, also after the
 * forge restarted. SQLite and PostgreSQL.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { describeForge, PASSWORD, providers, startForge, type Forge } from './support/forge';

interface Delivery {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1 that records deliveries; it can be held or made to fail. */
class Receiver {
  deliveries: Delivery[] = [];
  status = 200;
  private hold: Promise<void> | null = null;
  private release: (() => void) | null = null;
  private server: http.Server | null = null;
  port = 0;
  private waiters: (() => void)[] = [];

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', async () => {
        if (this.hold) await this.hold;
        this.deliveries.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        res.statusCode = this.status;
        res.end('ok');
        for (const w of this.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  block(): void {
    this.hold = new Promise((r) => (this.release = r));
  }

  unblock(): void {
    this.release?.();
    this.hold = null;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Waits until a delivery matching `pred` arrived (polling the record, no fixed sleeps). */
  async waitFor(pred: (d: Delivery) => boolean, timeoutMs = 20000): Promise<Delivery> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.deliveries.find(pred);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching delivery; got ${this.deliveries.map((d) => d.headers['x-gitea-event-type']).join(',')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

/** The JSON payload of a delivery, whatever its content type. */
function payloadOf(d: Delivery): any {
  const text = String(d.headers['content-type']).startsWith('application/x-www-form-urlencoded') ? new URLSearchParams(d.body).get('payload') ?? '' : d.body;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
const sign = (secret: string, body: string) => crypto.createHmac('sha256', secret).update(body).digest('hex');
const event = (name: string) => (d: Delivery) => d.headers['x-gitea-event-type'] === name;

describeForge(
  'webhooks',
  (f) => {
    const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
    const rx = new Receiver();

    beforeAll(async () => {
      await rx.start();
      await f().user('root', { admin: true });
      for (const u of ['owner', 'member', 'outsider']) await f().user(u);
      expect((await f().request('POST', '/orgs', { ...as('owner'), body: { username: 'hookorg' } })).status).toBe(201);
      const teams = await f().request('GET', '/orgs/hookorg/teams', as('owner'));
      const t = await f().request('POST', '/orgs/hookorg/teams', { ...as('owner'), body: { name: 'devs', permission: 'write', units: ['repo.code', 'repo.issues'], includes_all_repositories: true, can_create_org_repo: true } });
      expect(teams.status).toBe(200);
      expect((await f().request('PUT', `/teams/${t.body.id}/members/member`, as('owner'))).status).toBe(204);
    });
    afterAll(async () => {
      rx.unblock();
      await rx.stop();
    });

    test('create validates as Gitea does; active defaults to false, events to push', async () => {
      const post = (body: unknown) => f().request('POST', '/orgs/hookorg/hooks', { ...as('owner'), body });
      let res = await post({ type: 'nope', config: { url: rx.url, content_type: 'json' } });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('Invalid hook type');
      res = await post({ type: 'gitea', config: { content_type: 'json' } });
      expect(res.body.message).toBe('Missing config option: url');
      res = await post({ type: 'gitea', config: { url: rx.url } });
      expect(res.body.message).toBe('Missing config option: content_type');
      res = await post({ type: 'gitea', config: { url: rx.url, content_type: 'xml' } });
      expect(res.body.message).toBe('Invalid content type');
      res = await post({ type: 'gitea', config: { url: 'ftp://x', content_type: 'json' } });
      expect(res.body.message).toBe('Invalid url');
      res = await post({ type: 'slack', config: { url: rx.url, content_type: 'json' } });
      expect(res.body.message).toBe('Missing config option: channel');
      res = await post({ config: { url: rx.url, content_type: 'json' } });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('[Type]: Required');

      res = await post({ type: 'gitea', config: { url: rx.url, content_type: 'json', secret: 's3cret' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ type: 'gitea', active: false, events: ['push'], branch_filter: '', authorization_header: '', config: { url: rx.url, content_type: 'json' } });
      expect(res.body.config.secret).toBeUndefined();
      const id = res.body.id;
      res = await f().request('GET', `/orgs/hookorg/hooks/${id}`, as('owner'));
      expect(res.status).toBe(200);
      res = await f().request('PATCH', `/orgs/hookorg/hooks/${id}`, { ...as('owner'), body: { events: ['issues', 'create'], active: true, branch_filter: 'main' } });
      expect(res.status).toBe(200);
      expect(res.body.events).toEqual(['create', 'issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment']);
      expect(res.body).toMatchObject({ active: true, branch_filter: 'main' });
      res = await f().request('GET', '/orgs/hookorg/hooks', as('owner'));
      expect(res.headers.get('x-total-count')).toBe('1');
      expect((await f().request('DELETE', `/orgs/hookorg/hooks/${id}`, as('owner'))).status).toBe(204);
      expect((await f().request('GET', `/orgs/hookorg/hooks/${id}`, as('owner'))).status).toBe(404);
    });

    test('who may manage hooks: org owners, repo admins, site admins', async () => {
      const body = { type: 'gitea', config: { url: rx.url, content_type: 'json' } };
      expect((await f().request('GET', '/orgs/hookorg/hooks', as('member'))).status).toBe(403);
      expect((await f().request('GET', '/orgs/hookorg/hooks', as('outsider'))).status).toBe(404);
      expect((await f().request('GET', '/orgs/hookorg/hooks')).status).toBe(401);
      expect((await f().request('POST', '/admin/hooks', { ...as('owner'), body })).status).toBe(403);
      let res = await f().request('POST', '/admin/hooks', { ...as('root'), body: { ...body, config: { ...body.config, is_system_webhook: 'true' } } });
      expect(res.status).toBe(201);
      const sys = res.body.id;
      res = await f().request('POST', '/admin/hooks', { ...as('root'), body });
      const dflt = res.body.id;
      expect((await f().request('GET', '/admin/hooks', as('root'))).body.map((h: { id: number }) => h.id)).toEqual([sys]);
      expect((await f().request('GET', '/admin/hooks?type=default', as('root'))).body.map((h: { id: number }) => h.id)).toEqual([dflt]);
      expect((await f().request('GET', '/admin/hooks?type=all', as('root'))).body).toHaveLength(2);
      expect((await f().request('PATCH', `/admin/hooks/${sys}`, { ...as('root'), body: { config: { url: rx.url, content_type: 'form' } } })).body.config.content_type).toBe('form');
      for (const id of [sys, dflt]) expect((await f().request('DELETE', `/admin/hooks/${id}`, as('root'))).status).toBe(204);
      // Repository hooks: the team (write) member is not a repository admin.
      expect((await f().request('POST', '/orgs/hookorg/repos', { ...as('owner'), body: { name: 'plain' } })).status).toBe(201);
      expect((await f().request('GET', '/repos/hookorg/plain/hooks', as('member'))).status).toBe(403);
      expect((await f().request('GET', '/repos/hookorg/plain/hooks', as('outsider'))).status).toBe(403);
      res = await f().request('POST', '/repos/hookorg/plain/hooks', { ...as('owner'), body });
      expect(res.status).toBe(201);
      expect((await f().request('GET', '/repos/hookorg/plain/hooks', as('owner'))).body).toHaveLength(1);
      expect((await f().request('DELETE', `/repos/hookorg/plain/hooks/${res.body.id}`, as('owner'))).status).toBe(204);
    });

    test('repository, issue and comment events are delivered with headers, payload and signature', async () => {
      const res = await f().request('POST', '/orgs/hookorg/hooks', {
        ...as('owner'),
        body: { type: 'gitea', active: true, events: ['repository', 'issues', 'issue_comment'], authorization_header: 'Bearer rx-token', config: { url: rx.url, content_type: 'json', secret: 'topsecret' } },
      });
      expect(res.status).toBe(201);
      const hookId = res.body.id;
      expect((await f().request('POST', '/orgs/hookorg/repos', { ...as('member'), body: { name: 'tracked' } })).status).toBe(201);
      const created = await rx.waitFor((d) => event('repository')(d) && payloadOf(d)?.repository?.name === 'tracked');
      expect(created.method).toBe('POST');
      expect(created.headers['content-type']).toBe('application/json');
      expect(created.headers['x-gitea-event']).toBe('repository');
      expect(created.headers['x-gitea-delivery']).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.headers['x-gitea-signature']).toBe(sign('topsecret', created.body));
      expect(created.headers['x-hub-signature-256']).toBe(`sha256=${sign('topsecret', created.body)}`);
      expect(created.headers['x-gitea-hook-installation-target-type']).toBe('organization');
      expect(created.headers.authorization).toBe('Bearer rx-token');
      const payload = JSON.parse(created.body);
      expect(payload.action).toBe('created');
      expect(payload.repository.full_name).toBe('hookorg/tracked');
      expect(payload.organization.login).toBe('hookorg');
      expect(payload.sender.login).toBe('member');
      expect(created.body).toContain('\n  "action"'); // indented as Gitea sends it

      const issue = await f().request('POST', '/repos/hookorg/tracked/issues', { ...as('member'), body: { title: 'Broken build', body: 'fails' } });
      expect(issue.status).toBe(201);
      const opened = await rx.waitFor((d) => event('issues')(d) && payloadOf(d)?.action === 'opened');
      const ip = JSON.parse(opened.body);
      expect(opened.headers['x-gitea-event']).toBe('issues');
      expect(ip).toMatchObject({ action: 'opened', number: issue.body.number, commit_id: '' });
      expect(ip.issue.title).toBe('Broken build');
      expect(ip.repository.full_name).toBe('hookorg/tracked');
      expect(ip.sender.login).toBe('member');
      expect(opened.headers['x-gitea-signature']).toBe(sign('topsecret', opened.body));

      const comment = await f().request('POST', `/repos/hookorg/tracked/issues/${issue.body.number}/comments`, { ...as('owner'), body: { body: 'looking' } });
      expect(comment.status).toBe(201);
      const commented = await rx.waitFor(event('issue_comment'));
      const cp = JSON.parse(commented.body);
      expect(commented.headers['x-gitea-event']).toBe('issue_comment');
      expect(cp).toMatchObject({ action: 'created', is_pull: false });
      expect(cp.comment.body).toBe('looking');
      expect(cp.issue.number).toBe(issue.body.number);
      expect(cp.sender.login).toBe('owner');

      expect((await f().request('PATCH', `/repos/hookorg/tracked/issues/${issue.body.number}`, { ...as('owner'), body: { state: 'closed' } })).status).toBe(201);
      const closed = await rx.waitFor((d) => event('issues')(d) && payloadOf(d)?.action === 'closed');
      expect(JSON.parse(closed.body).issue.state).toBe('closed');

      // An inactive hook gets nothing.
      await f().request('PATCH', `/orgs/hookorg/hooks/${hookId}`, { ...as('owner'), body: { active: false, events: ['issues'] } });
      const before = rx.deliveries.length;
      await f().request('POST', '/repos/hookorg/tracked/issues', { ...as('member'), body: { title: 'quiet' } });
      const pending = await f().app.prisma.hookTask.count({ where: { hookId, isDelivered: false } });
      expect(pending).toBe(0);
      expect(rx.deliveries.slice(before).some((d) => JSON.parse(d.body).issue?.title === 'quiet')).toBe(false);
      expect((await f().request('DELETE', `/orgs/hookorg/hooks/${hookId}`, as('owner'))).status).toBe(204);
    });

    test('push, create and delete events from git over HTTP, with branch filter', async () => {
      expect((await f().request('POST', '/orgs/hookorg/repos', { ...as('owner'), body: { name: 'code', auto_init: true, default_branch: 'main' } })).status).toBe(201);
      const hook = await f().request('POST', '/repos/hookorg/code/hooks', {
        ...as('owner'),
        body: { type: 'gitea', active: true, events: ['push', 'create', 'delete'], branch_filter: '{main,feature/*}', config: { url: rx.url, content_type: 'form', secret: 'k' } },
      });
      expect(hook.status).toBe(201);
      const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hook-push-'));
      const env = { GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
      const git = (...args: string[]) => execa('git', args, { cwd: work, env, extendEnv: true });
      try {
        const remote = new URL(`${f().url}/hookorg/code.git`);
        remote.username = 'member';
        remote.password = PASSWORD;
        await git('clone', remote.toString(), '.');
        fs.writeFileSync(path.join(work, 'a.txt'), 'hello\n');
        await git('add', 'a.txt');
        await git('commit', '-m', 'add a');
        await git('push', 'origin', 'main');
        const push = await rx.waitFor((d) => event('push')(d) && d.body.includes(encodeURIComponent('refs/heads/main')));
        expect(push.headers['content-type']).toBe('application/x-www-form-urlencoded');
        const payloadText = new URLSearchParams(push.body).get('payload') as string;
        // The signature is over the JSON payload, not the form body.
        expect(push.headers['x-gitea-signature']).toBe(sign('k', payloadText));
        const p = JSON.parse(payloadText);
        expect(p.ref).toBe('refs/heads/main');
        expect(p.total_commits).toBe(1);
        expect(p.commits[0]).toMatchObject({ message: 'add a\n', added: ['a.txt'], author: { name: 'Dev', email: 'dev@example.com' } });
        expect(p.head_commit.id).toBe(p.after);
        expect(p.compare_url).toBe(`${f().url}/hookorg/code/compare/${p.before}...${p.after}`);
        expect(p.pusher.login).toBe('member');
        expect(p.repository.full_name).toBe('hookorg/code');
        expect(push.headers['x-gitea-hook-installation-target-type']).toBe('repository');

        // A branch outside the filter gets nothing; one inside gets create + push, and delete.
        await git('push', 'origin', 'main:other');
        await git('push', 'origin', 'main:feature/x');
        await rx.waitFor((d) => event('create')(d) && new URLSearchParams(d.body).get('payload')!.includes('"feature/x"'));
        await git('push', 'origin', ':feature/x');
        const del = await rx.waitFor(event('delete'));
        expect(JSON.parse(new URLSearchParams(del.body).get('payload') as string)).toMatchObject({ ref: 'feature/x', ref_type: 'branch', pusher_type: 'user' });
        expect(rx.deliveries.some((d) => d.body.includes(encodeURIComponent('"other"')) || d.body.includes(encodeURIComponent('refs/heads/other')))).toBe(false);
      } finally {
        fs.rmSync(work, { recursive: true, force: true });
      }
    });

    test('user hooks fire for the user\'s repositories; default hooks are copied into new repositories', async () => {
      let res = await f().request('POST', '/user/hooks', { ...as('outsider'), body: { type: 'gitea', active: true, events: ['repository'], config: { url: rx.url, content_type: 'json' } } });
      expect(res.status).toBe(201);
      expect((await f().request('GET', '/user/hooks', as('outsider'))).body).toHaveLength(1);
      expect((await f().request('GET', `/user/hooks/${res.body.id}`, as('member'))).status).toBe(404);
      expect((await f().request('POST', '/user/repos', { ...as('outsider'), body: { name: 'mine' } })).status).toBe(201);
      const got = await rx.waitFor((d) => d.body.includes('"outsider/mine"'));
      expect(got.headers['x-gitea-hook-installation-target-type']).toBe('user');
      expect((await f().request('DELETE', `/user/hooks/${res.body.id}`, as('outsider'))).status).toBe(204);

      res = await f().request('POST', '/admin/hooks', { ...as('root'), body: { type: 'gitea', active: true, events: ['push'], config: { url: rx.url, content_type: 'json' } } });
      expect(res.status).toBe(201);
      expect((await f().request('POST', '/user/repos', { ...as('outsider'), body: { name: 'fresh' } })).status).toBe(201);
      const copied = await f().request('GET', '/repos/outsider/fresh/hooks', as('outsider'));
      expect(copied.body).toHaveLength(1);
      expect(copied.body[0]).toMatchObject({ type: 'gitea', active: true, events: ['push'], config: { url: rx.url } });
      expect((await f().request('DELETE', `/admin/hooks/${res.body.id}`, as('root'))).status).toBe(204);
    });

    test('test delivery of a repository hook; hooks of other types get no gitea payload', async () => {
      const hook = await f().request('POST', '/repos/hookorg/plain/hooks', { ...as('owner'), body: { type: 'gitea', active: true, config: { url: rx.url, content_type: 'json' } } });
      expect((await f().request('POST', `/repos/hookorg/plain/hooks/${hook.body.id}/tests`, as('member'))).status).toBe(403);
      // An empty repository has no commit to send: Gitea answers 204 and sends nothing.
      expect((await f().request('POST', `/repos/hookorg/plain/hooks/${hook.body.id}/tests`, as('owner'))).status).toBe(204);
      expect(await f().app.prisma.hookTask.count({ where: { hookId: hook.body.id } })).toBe(0);
      const file = await f().request('POST', '/repos/hookorg/plain/contents/README.md', { ...as('owner'), body: { content: Buffer.from('hi\n').toString('base64'), message: 'first' } });
      expect(file.status).toBe(201);
      // (the real push reaches the gitea hook before the slack hook exists)
      await rx.waitFor((d) => event('push')(d) && payloadOf(d)?.after === file.body.commit.sha && payloadOf(d)?.before !== file.body.commit.sha);
      const slack = await f().request('POST', '/repos/hookorg/plain/hooks', { ...as('owner'), body: { type: 'slack', active: true, events: ['push'], config: { url: rx.url, content_type: 'json', channel: '#dev' } } });
      expect(slack.status).toBe(201);
      expect(slack.body.config).toMatchObject({ channel: '#dev', url: rx.url, content_type: 'json' });
      expect((await f().request('POST', `/repos/hookorg/plain/hooks/${hook.body.id}/tests`, as('owner'))).status).toBe(204);
      // The test push is the default branch's last commit (before = after), unlike the real push.
      const got = await rx.waitFor((d) => event('push')(d) && payloadOf(d)?.repository?.full_name === 'hookorg/plain' && payloadOf(d)?.before === file.body.commit.sha);
      expect(JSON.parse(got.body)).toMatchObject({
        ref: 'refs/heads/main',
        after: file.body.commit.sha,
        total_commits: 1,
        commits: [{ id: file.body.commit.sha, message: 'first\n' }],
        head_commit: { id: file.body.commit.sha },
        pusher: { login: 'owner' },
      });
      expect(await f().app.prisma.hookTask.count({ where: { hookId: slack.body.id } })).toBe(0);
      for (const h of [slack.body.id, hook.body.id]) expect((await f().request('DELETE', `/repos/hookorg/plain/hooks/${h}`, as('owner'))).status).toBe(204);
    });

    test('repository deleted: the org hook hears it, sent by the caller', async () => {
      const hook = await f().request('POST', '/orgs/hookorg/hooks', { ...as('owner'), body: { type: 'gitea', active: true, events: ['repository'], config: { url: rx.url, content_type: 'json' } } });
      expect((await f().request('POST', '/orgs/hookorg/repos', { ...as('owner'), body: { name: 'doomed' } })).status).toBe(201);
      expect((await f().request('DELETE', '/repos/hookorg/doomed', as('root'))).status).toBe(204);
      const got = await rx.waitFor((d) => payloadOf(d)?.action === 'deleted' && payloadOf(d)?.repository?.name === 'doomed');
      expect(payloadOf(got)).toMatchObject({ sender: { login: 'root' }, organization: { login: 'hookorg' } });
      await f().request('DELETE', `/orgs/hookorg/hooks/${hook.body.id}`, as('owner'));
    });

    test('a receiver that blocks does not hold the API request', async () => {
      const hook = await f().request('POST', '/orgs/hookorg/hooks', { ...as('owner'), body: { type: 'gitea', active: true, events: ['repository'], config: { url: rx.url, content_type: 'json' } } });
      rx.block();
      try {
        const res = await f().request('POST', '/orgs/hookorg/repos', { ...as('owner'), body: { name: 'while-blocked' } });
        // The request finished while the receiver still holds the delivery.
        expect(res.status).toBe(201);
        expect(rx.deliveries.some((d) => d.body.includes('while-blocked'))).toBe(false);
      } finally {
        rx.unblock();
      }
      await rx.waitFor((d) => d.body.includes('while-blocked'));
      await f().request('DELETE', `/orgs/hookorg/hooks/${hook.body.id}`, as('owner'));
    });

    test('a failing receiver gets the delivery again (retry with backoff)', async () => {
      const hook = await f().request('POST', '/orgs/hookorg/hooks', { ...as('owner'), body: { type: 'gitea', active: true, events: ['repository'], config: { url: rx.url, content_type: 'json' } } });
      rx.status = 503;
      try {
        await f().request('POST', '/orgs/hookorg/repos', { ...as('owner'), body: { name: 'flaky' } });
        await rx.waitFor((d) => d.body.includes('"flaky"'));
      } finally {
        rx.status = 200;
      }
      const first = rx.deliveries.find((d) => d.body.includes('"flaky"'))!;
      const again = await rx.waitFor((d) => d !== first && d.headers['x-gitea-delivery'] === first.headers['x-gitea-delivery']);
      expect(again.body).toBe(first.body);
      // The worker records the outcome right after the receiver answered.
      const uuid = String(first.headers['x-gitea-delivery']);
      let task = await f().app.prisma.hookTask.findFirstOrThrow({ where: { uuid } });
      for (let i = 0; i < 50 && !task.isDelivered; i++) {
        await new Promise((r) => setTimeout(r, 100));
        task = await f().app.prisma.hookTask.findFirstOrThrow({ where: { uuid } });
      }
      expect(task).toMatchObject({ isDelivered: true, isSucceed: true, responseStatus: 200 });
      expect(task.attempts).toBeGreaterThanOrEqual(2);
      await f().request('DELETE', `/orgs/hookorg/hooks/${hook.body.id}`, as('owner'));
    });
  },
  // The receiver listens on loopback, which the default list (`external`) refuses.
  { webhookRetryBaseMs: 100, webhookAllowedHostList: 'loopback' },
);

describe.each(providers())('webhook deliveries survive a restart [%s]', (provider) => {
  test('a delivery queued while the receiver is down arrives after the forge restarts', async () => {
    const rx = new Receiver();
    await rx.start();
    const port = rx.port;
    await rx.stop(); // the receiver is down
    let f1: Forge | null = null;
    let f2: Forge | null = null;
    try {
      f1 = await startForge(provider, { webhookRetryBaseMs: 200, webhookDeliverTimeoutMs: 2000, webhookAllowedHostList: 'loopback' });
      const admin = await f1.user('root', { admin: true });
      expect(admin.isAdmin).toBe(true);
      const as = { basic: ['root', PASSWORD] as [string, string] };
      await f1.request('POST', '/admin/hooks', { ...as, body: { type: 'gitea', active: true, events: ['repository'], config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json', is_system_webhook: 'true' } } });
      expect((await f1.request('POST', '/user/repos', { ...as, body: { name: 'survivor' } })).status).toBe(201);
      // Wait until the first attempt failed.
      for (let i = 0; i < 100; i++) {
        const t = await f1.app.prisma.hookTask.findFirst();
        if (t && t.attempts >= 1) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const task = await f1.app.prisma.hookTask.findFirstOrThrow();
      expect(task).toMatchObject({ isDelivered: false });
      expect(task.attempts).toBeGreaterThanOrEqual(1);
      await f1.app.close(); // the forge stops with the delivery pending

      await rx.start(port); // the receiver is back
      f2 = await startForge(provider, { dataDir: f1.dataDir, databaseUrl: f1.app.config.databaseUrl, webhookRetryBaseMs: 200, webhookAllowedHostList: 'loopback' });
      const got = await rx.waitFor((d) => d.headers['x-gitea-delivery'] === task.uuid);
      expect(JSON.parse(got.body)).toMatchObject({ action: 'created', repository: { full_name: 'root/survivor' } });
      expect(got.headers['x-gitea-hook-installation-target-type']).toBe('system');
    } finally {
      await rx.stop();
      await f2?.close();
      await f1?.close().catch(() => undefined);
    }
    // Two forge starts and a retry cycle: on a busy CI machine with suites in parallel workers
    // this takes longer than the default minute, which says nothing about the behaviour.
  }, 180_000);
});
