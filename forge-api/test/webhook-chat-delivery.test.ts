/**
 * Slack, Discord, Matrix, Feishu and Gogs hooks on a real forge: the scenario Gitea's fixtures were recorded with
 * (support/webhook-scenario.ts) runs against the forge with a gitea, a slack and a discord hook
 * on one receiver. The forge sends the events a real Gitea sent for it, each payload with the keys
 * Gitea's had (the pull request record's too). Every event the gitea hook gets reaches the chat hooks as that service's
 * message (the converter of the forge's own payload, which webhook-payloads.test.ts checks
 * against a real Gitea), with Gitea's headers and a signature over the bytes sent; a push
 * without commits goes to the gitea hook only; a gogs hook gets what Gitea's gogs hooks got (the
 * gitea payload with Gitea's headers); the test delivery works for each type.
 */
import crypto from 'node:crypto';
import { CONVERTERS } from '../src/services/webhooks/payloads';
import { describeForge, PASSWORD } from './support/forge';
import fs from 'node:fs';
import path from 'node:path';
import { apiClient, hookConfig, record, RECORDED_EVENTS, startReceiver, type RecordedEvent } from './support/webhook-scenario';

/** What a real Gitea 1.27.3 sent for the same scenario (scripts/record-gitea-webhooks.ts). */
const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'gitea-webhook-payloads.json'), 'utf8')) as { events: RecordedEvent[] };

const TYPES = ['gitea', 'slack', 'discord', 'matrix', 'feishu', 'gogs'];
/** The chat types whose deliveries are checked (feishu's, without event headers, paired by the shape of its message). */
const CHAT = ['slack', 'discord', 'matrix', 'feishu'];
const SECRET = 'chat-secret';

describeForge('chat webhooks delivered', (f) => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let token: string;
  const hookIds: Record<string, number> = {};
  beforeAll(async () => {
    receiver = await startReceiver();
    // A site administrator: the scenario acts as its reviewer with `sudo`.
    await f().user('hooker', { admin: true });
    await f().user('hooker-reviewer');
    token = await f().token('hooker', ['all']);
    expect((await f().request('POST', '/user/repos', { basic: ['hooker', PASSWORD], body: { name: 'hooked', auto_init: true, default_branch: 'main' } })).status).toBe(201);
    for (const type of TYPES) {
      const res = await f().request('POST', '/repos/hooker/hooked/hooks', {
        token,
        body: { type, config: { ...hookConfig(type, receiver.url), secret: SECRET }, events: RECORDED_EVENTS, active: true },
      });
      expect(res.status).toBe(201);
      hookIds[type] = res.body.id;
    }
  });
  afterAll(async () => receiver?.close());

  // ~45 events, each delivered to five hooks and waited for: a minute on a loaded machine.
  test('each event reaches slack, discord, matrix and feishu as their message and gogs as Gitea\'s payload, signed, with Gitea headers', async () => {
    const pending = () => f().app.prisma.hookTask.count({ where: { isDelivered: false } });
    const events = await record(apiClient(f().url, token), 'hooker', 'hooked', receiver, TYPES, { lenient: true, waitMs: 8000, reviewer: 'hooker-reviewer', drained: async () => (await pending()) === 0 });
    // The forge sends each event of the scenario that Gitea sent (in any order within a step),
    // with the payload's shape Gitea gave it.
    const name = (e: RecordedEvent) => `${e.step}: ${e.eventType}`;
    expect(events.map(name).sort()).toEqual(fixture.events.map(name).sort());
    for (const e of events) {
      const theirs = fixture.events.find((g) => name(g) === name(e))!.payload as Record<string, any>;
      const ours = e.payload as Record<string, any>;
      expect([e.step, Object.keys(ours)]).toEqual([e.step, Object.keys(theirs)]);
      expect([e.step, ours.action, ours.review ?? null, typeof ours.requested_reviewer]).toEqual([e.step, theirs.action, theirs.review ?? null, typeof theirs.requested_reviewer]);
      if (theirs.pull_request) expect([e.step, Object.keys(ours.pull_request)]).toEqual([e.step, Object.keys(theirs.pull_request)]);
    }
    // Gogs hooks: what Gitea sent its gogs hook for each event is its own payload, byte for byte
    // once parsed, with the same headers as the gitea hook's; the forge's gogs hook gets the
    // forge's payload (the gitea hook's body, compared with Gitea's above), signed, with every
    // header Gitea sent (a push without commits too: Gogs' receivers want every push).
    for (const e of events) {
      const theirs = fixture.events.find((g) => name(g) === name(e))!;
      expect(theirs.requests.gogs.body).toEqual(theirs.payload);
      const sent = e.requests.gogs;
      expect([e.step, sent?.method, sent?.body]).toEqual([e.step, 'POST', e.payload]);
      expect(Object.keys(sent.headers).sort()).toEqual(Object.keys(theirs.requests.gogs.headers).sort());
      expect([sent.headers['x-gogs-event'], sent.headers['x-gogs-event-type']]).toEqual([theirs.requests.gogs.headers['x-gogs-event'], e.eventType]);
      const raw = receiver.deliveries.find((d) => d.type === 'gogs' && d.headers['x-gogs-delivery'] === sent.headers['x-gogs-delivery'])!.body;
      expect(sent.headers['x-gogs-signature']).toBe(crypto.createHmac('sha256', SECRET).update(raw).digest('hex'));
      expect(sent.headers['content-type']).toBe('application/json');
    }
    for (const e of events) {
      const withCommits = e.eventType !== 'push' || (e.payload as { commits: unknown[] }).commits.length > 0;
      for (const type of CHAT) {
        const sent = e.requests[type];
        if (!withCommits) {
          expect(sent).toBeUndefined();
          continue;
        }
        expect(sent).toBeDefined();
        const want = CONVERTERS[type](e.eventType, e.payload as Record<string, unknown>, hookConfig(type, receiver.url), `${f().url}/`);
        expect(sent.headers['content-type']).toBe('application/json');
        const raw = receiver.deliveries.find((d) => d.type === type && d.path === sent.path && JSON.stringify(JSON.parse(d.body)) === JSON.stringify(sent.body))!.body;
        if (type === 'feishu') {
          // No Gitea headers; the secret signs the body's timestamp instead.
          const { timestamp, sign, ...rest } = sent.body as { timestamp: number; sign: string };
          expect(rest).toEqual(want);
          expect(sign).toBe(crypto.createHmac('sha256', `${timestamp}\n${SECRET}`).digest('base64'));
          expect(sent.headers['x-gitea-event']).toBeUndefined();
          continue;
        }
        expect(sent.body).toEqual(want);
        expect(sent.headers['x-gitea-event-type']).toBe(e.eventType);
        expect([e.step, sent.headers['x-gitea-event']]).toEqual([e.step, fixture.events.find((g) => name(g) === name(e))!.requests[type].headers['x-gitea-event']]);
        expect(sent.headers['x-gitea-signature']).toBe(crypto.createHmac('sha256', SECRET).update(raw).digest('hex'));
        // Matrix: PUT at the room's send URL plus a transaction id, the SHA-1 of the body.
        if (type === 'matrix') expect([sent.method, sent.path]).toEqual(['PUT', `/matrix/${crypto.createHash('sha1').update(raw.trim()).digest('hex')}`]);
        else expect(sent.method).toBe('POST');
      }
    }
  });

  test('the test delivery (POST .../hooks/{id}/tests) sends each type its push message', async () => {
    for (const type of TYPES) {
      const before = receiver.deliveries.length;
      expect((await f().request('POST', `/repos/hooker/hooked/hooks/${hookIds[type]}/tests`, { token })).status).toBe(204);
      const deadline = Date.now() + 20_000;
      while (!receiver.deliveries.slice(before).some((d) => d.type === type) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const d = receiver.deliveries.slice(before).find((x) => x.type === type);
      if (type !== 'feishu') expect(d?.headers['x-gitea-event']).toBe('push');
      const body = JSON.parse(d!.body);
      if (type === 'slack') expect(body.text).toContain('pushed by');
      // Gitea's test push carries the default branch's last commit.
      if (type === 'discord') expect(body.embeds[0].title).toBe('[hooker/hooked:main] 1 new commit');
      if (type === 'gitea' || type === 'gogs') expect(body.ref).toBe('refs/heads/main');
      if (type === 'gogs') expect(d?.headers['x-gogs-event']).toBe('push');
      if (type === 'matrix') expect(body.body).toMatch(/^\[\[hooker\/hooked\]\(.*\)\] hooker pushed \d+ commits? to \[main\]/);
      if (type === 'feishu') expect(body.content.text).toMatch(/^\[hooker\/hooked:main\] \r\n\[[0-9a-f]{7}\]\(http/);
    }
  });
}, { webhookAllowedHostList: 'loopback' });
