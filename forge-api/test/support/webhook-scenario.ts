/**
 * The webhook scenario shared by the recorder of a real Gitea's deliveries
 * (scripts/record-gitea-webhooks.ts) and the forge's own delivery test: a receiver on loopback,
 * the hook settings per type, the steps (issue, comment, push on a new branch, pull request,
 * branch created and deleted, release), and the recording that pairs each event's deliveries.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const RECORDED_TYPES = ['gitea', 'slack', 'discord', 'msteams', 'dingtalk', 'telegram', 'feishu', 'wechatwork', 'matrix', 'gogs', 'packagist'] as const;
export const RECORDED_EVENTS = ['create', 'delete', 'fork', 'push', 'issues', 'issue_comment', 'pull_request', 'wiki', 'release', 'status'];

/** Config each type is created with (the keys Gitea's API reads for it). */
export function hookConfig(type: string, base: string): Record<string, string> {
  const url = `${base}/${type}`;
  const common = { url, content_type: 'json' };
  switch (type) {
    case 'slack':
      return { ...common, channel: '#dev', username: 'forge-bot', icon_url: 'https://example.com/icon.png', color: '#336699' };
    case 'discord':
      return { ...common, username: 'forge-bot', icon_url: 'https://example.com/icon.png' };
    case 'matrix':
      return { ...common, homeserver_url: base, room_id: '!room:example.com', message_type: 'm.notice' };
    case 'packagist':
      return { ...common, username: 'pkg-user', api_token: 'pkg-token', package_url: 'https://packagist.org/packages/acme/hooked' };
    default:
      return common;
  }
}

export interface Delivery {
  type: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface RecordedEvent {
  step: string;
  eventType: string;
  /** Gitea's own payload (the `gitea` hook's body), the input of every converter. */
  payload: unknown;
  /** Per type: the request Gitea sent (absent: Gitea sent nothing of that type for the event). */
  requests: Record<string, { method: string; path: string; headers: Record<string, string>; body: unknown }>;
}

/** Headers worth comparing (transport headers such as Content-Length and User-Agent left out). */
const KEPT_HEADERS = /^(content-type|authorization|x-gitea-.*|x-gogs-.*|x-github-.*|x-hub-signature.*)$/i;

export function startReceiver(): Promise<{ url: string; deliveries: Delivery[]; close(): Promise<void> }> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (KEPT_HEADERS.test(k) && typeof v === 'string') headers[k.toLowerCase()] = v;
      const path = req.url ?? '/';
      deliveries.push({ type: path.split('/')[1], method: req.method ?? '', path, headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      // Telegram and Matrix clients read a JSON answer; the others ignore it.
      res.end('{"ok":true}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        deliveries,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

export function apiClient(base: string, token: string): Api {
  return async (method, path, body) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed };
  };
}

export async function expectStatus(p: Promise<{ status: number; body: any }>, want: number, what: string) {
  const res = await p;
  if (res.status !== want) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Each step makes events; the recorder waits for the gitea hook's deliveries of each before the
 * next. `reviewer` is an existing user the owner's token may act as (`sudo`: the token is a site
 * administrator's): made a collaborator, asked for a review, and reviewing the pull request.
 */
export function scenario(api: Api, owner: string, repo: string, reviewer: string): Array<{ name: string; events: number; run(): Promise<unknown> }> {
  const r = `/repos/${owner}/${repo}`;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const asReviewer = `sudo=${encodeURIComponent(reviewer)}`;
  let milestoneId = 0;
  let commentId = 0;
  let releaseId = 0;
  const json = async (p: Promise<{ status: number; body: any }>, want: number, what: string) => expectStatus(p, want, what);
  return [
    { name: 'issue opened', events: 1, run: () => expectStatus(api('POST', `${r}/issues`, { title: 'Crash <on> start & stop', body: 'Steps:\n1. run *it*\n2. see <b>it</b>' }), 201, 'issue') },
    { name: 'issue comment', events: 1, run: async () => (commentId = (await json(api('POST', `${r}/issues/1/comments`, { body: 'Seen it **too** & <more>' }), 201, 'comment')).id) },
    {
      name: 'file on a new branch',
      events: 2,
      run: () => expectStatus(api('POST', `${r}/contents/notes.md`, { content: b64('# Notes\n'), message: 'Add notes\n\nWith a body line.', branch: 'main', new_branch: 'feature' }), 201, 'contents'),
    },
    { name: 'pull request opened', events: 1, run: () => expectStatus(api('POST', `${r}/pulls`, { head: 'feature', base: 'main', title: 'Add <notes>', body: 'Adds **notes** & more' }), 201, 'pull') },
    { name: 'branch created', events: 2, run: () => expectStatus(api('POST', `${r}/branches`, { new_branch_name: 'gone', old_branch_name: 'main' }), 201, 'branch') },
    { name: 'branch deleted', events: 1, run: () => expectStatus(api('DELETE', `${r}/branches/gone`), 204, 'branch delete') },
    { name: 'release published', events: 3, run: async () => (releaseId = (await json(api('POST', `${r}/releases`, { tag_name: 'v1.0', name: 'One', body: 'First *release*' }), 201, 'release')).id) },
    { name: 'label made', events: 0, run: () => expectStatus(api('POST', `${r}/labels`, { name: 'bug', color: '#ee0701' }), 201, 'label') },
    { name: 'pull request labelled', events: 1, run: () => expectStatus(api('POST', `${r}/issues/2/labels`, { labels: ['bug'] }), 200, 'pull labels') },
    { name: 'pull request labels cleared', events: 1, run: () => expectStatus(api('DELETE', `${r}/issues/2/labels`), 204, 'pull labels clear') },
    {
      name: 'milestone made',
      events: 0,
      run: async () => (milestoneId = (await expectStatus(api('POST', `${r}/milestones`, { title: 'v1 <first>' }), 201, 'milestone')).id),
    },
    { name: 'pull request milestoned', events: 1, run: () => expectStatus(api('PATCH', `${r}/pulls/2`, { milestone: milestoneId }), 201, 'pull milestone') },
    { name: 'reviewer made collaborator', events: 0, run: () => expectStatus(api('PUT', `${r}/collaborators/${reviewer}`, { permission: 'write' }), 204, 'collaborator') },
    { name: 'review requested', events: 1, run: () => expectStatus(api('POST', `${r}/pulls/2/requested_reviewers`, { reviewers: [reviewer] }), 201, 'review request') },
    { name: 'review request removed', events: 1, run: () => expectStatus(api('DELETE', `${r}/pulls/2/requested_reviewers`, { reviewers: [reviewer] }), 204, 'review request removal') },
    { name: 'review commented', events: 1, run: () => expectStatus(api('POST', `${r}/pulls/2/reviews?${asReviewer}`, { event: 'COMMENT', body: 'Looks *fine* & <ok>' }), 200, 'review comment') },
    { name: 'changes requested', events: 1, run: () => expectStatus(api('POST', `${r}/pulls/2/reviews?${asReviewer}`, { event: 'REQUEST_CHANGES', body: 'Please add **tests**' }), 200, 'review reject') },
    { name: 'review approved', events: 1, run: () => expectStatus(api('POST', `${r}/pulls/2/reviews?${asReviewer}`, { event: 'APPROVED', body: 'Good' }), 200, 'review approve') },
    { name: 'issue edited', events: 1, run: () => expectStatus(api('PATCH', `${r}/issues/1`, { title: 'Crash on start <again>' }), 201, 'issue edit') },
    { name: 'issue assigned', events: 1, run: () => expectStatus(api('PATCH', `${r}/issues/1`, { assignees: [owner] }), 201, 'issue assign') },
    { name: 'issue labelled', events: 1, run: () => expectStatus(api('POST', `${r}/issues/1/labels`, { labels: ['bug'] }), 200, 'issue labels') },
    { name: 'issue milestoned', events: 1, run: () => expectStatus(api('PATCH', `${r}/issues/1`, { milestone: milestoneId }), 201, 'issue milestone') },
    { name: 'issue closed', events: 1, run: () => expectStatus(api('PATCH', `${r}/issues/1`, { state: 'closed' }), 201, 'issue close') },
    { name: 'issue reopened', events: 1, run: () => expectStatus(api('PATCH', `${r}/issues/1`, { state: 'open' }), 201, 'issue reopen') },
    { name: 'comment edited', events: 1, run: () => expectStatus(api('PATCH', `${r}/issues/comments/${commentId}`, { body: 'Seen it *twice*' }), 200, 'comment edit') },
    { name: 'comment deleted', events: 1, run: () => expectStatus(api('DELETE', `${r}/issues/comments/${commentId}`), 204, 'comment delete') },
    { name: 'pull request commented', events: 1, run: () => expectStatus(api('POST', `${r}/issues/2/comments`, { body: 'A note on the <pull>' }), 201, 'pull comment') },
    { name: 'pull request edited', events: 1, run: () => expectStatus(api('PATCH', `${r}/pulls/2`, { title: 'Add notes & more' }), 201, 'pull edit') },
    { name: 'pull request assigned', events: 1, run: () => expectStatus(api('PATCH', `${r}/pulls/2`, { assignees: [owner] }), 201, 'pull assign') },
    {
      name: 'pull request head pushed',
      events: 2,
      run: () => expectStatus(api('POST', `${r}/contents/more.md`, { content: b64('More\n'), message: 'More notes', branch: 'feature' }), 201, 'contents on feature'),
    },
    {
      name: 'commit status',
      events: 1,
      run: async () => {
        const head = (await json(api('GET', `${r}/branches/feature`), 200, 'feature')).commit.id;
        return json(api('POST', `${r}/statuses/${head}`, { state: 'success', context: 'ci/build', description: 'Build <ok>', target_url: 'https://ci.example/1' }), 201, 'status');
      },
    },
    { name: 'pull request merged', events: 2, run: () => expectStatus(api('POST', `${r}/pulls/2/merge`, { Do: 'merge' }), 200, 'merge') },
    { name: 'release updated', events: 1, run: () => expectStatus(api('PATCH', `${r}/releases/${releaseId}`, { name: 'One & only' }), 200, 'release edit') },
    { name: 'release deleted', events: 1, run: () => expectStatus(api('DELETE', `${r}/releases/${releaseId}`), 204, 'release delete') },
    { name: 'wiki page created', events: 1, run: () => expectStatus(api('POST', `${r}/wiki/new`, { title: 'Home', content_base64: b64('Hello <wiki>'), message: 'Start the wiki' }), 201, 'wiki new') },
    { name: 'wiki page edited', events: 1, run: () => expectStatus(api('PATCH', `${r}/wiki/page/Home`, { title: 'Home', content_base64: b64('Hello again'), message: 'Edit the wiki' }), 200, 'wiki edit') },
    { name: 'wiki page deleted', events: 1, run: () => expectStatus(api('DELETE', `${r}/wiki/page/Home`), 204, 'wiki delete') },
    { name: 'forked', events: 1, run: () => expectStatus(api('POST', `${r}/forks?${asReviewer}`, {}), 202, 'fork') },
  ];
}

/** The event a text message without event headers reports (Feishu's shapes), if it can tell. */
function textMessageEvent(body: string): string | undefined {
  let text: unknown;
  try {
    text = (JSON.parse(body) as { content?: { text?: unknown } }).content?.text;
  } catch {
    return undefined;
  }
  if (typeof text !== 'string') return undefined;
  if (/^\[[^\]]+\] (branch|tag) \S+ created$/.test(text)) return 'create';
  if (/^\[[^\]]+\] (branch|tag) \S+ deleted$/.test(text)) return 'delete';
  if (/^\[[^\]]+\] Release /.test(text)) return 'release';
  if (/^\[[^\]:]+:[^\]]+\] /.test(text)) return 'push';
  return undefined;
}

/**
 * Runs the scenario and pairs each event's deliveries. `lenient`: a step whose events do not all
 * arrive within `waitMs` records what did arrive instead of failing (the caller then checks the
 * set of event types it requires).
 */
export async function record(
  api: Api,
  owner: string,
  repo: string,
  receiver: Awaited<ReturnType<typeof startReceiver>>,
  types: readonly string[],
  opts: { lenient?: boolean; waitMs?: number; reviewer: string; drained?: () => Promise<boolean> },
): Promise<RecordedEvent[]> {
  const recorded: RecordedEvent[] = [];
  for (const step of scenario(api, owner, repo, opts.reviewer)) {
    const before = receiver.deliveries.length;
    await step.run();
    if (opts.drained) {
      // A server that can say when its queue is empty (the forge under test): no guessing.
      const until = Date.now() + (opts.waitMs ?? 30_000);
      while (!(await opts.drained()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    }
    // Wait for the gitea hook's deliveries of this step, then a little for the other types.
    const deadline = Date.now() + (opts.waitMs ?? 30_000);
    const giteaCount = () => receiver.deliveries.slice(before).filter((d) => d.type === 'gitea').length;
    while (giteaCount() < step.events && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (giteaCount() < step.events && !opts.lenient) throw new Error(`${step.name}: ${giteaCount()} of ${step.events} gitea deliveries`);
    if (!opts.drained) {
      const settle = Date.now() + 3000;
      while (Date.now() < settle && receiver.deliveries.length - before < step.events * types.length) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 300));
    }
    const mine = receiver.deliveries.slice(before);
    const paired = new Set<Delivery>();
    const ofStep: RecordedEvent[] = [];
    const parsed = (d: Delivery) => {
      paired.add(d);
      let body: unknown = d.body;
      try {
        body = JSON.parse(d.body);
      } catch {
        /* form bodies stay text */
      }
      return { method: d.method, path: d.path, headers: d.headers, body };
    };
    for (const g of mine.filter((d) => d.type === 'gitea')) {
      const eventType = g.headers['x-gitea-event-type'];
      const requests: RecordedEvent['requests'] = {};
      for (const d of mine) {
        if (d.type === 'gitea' || requests[d.type]) continue;
        // Types that send Gitea's headers are paired by event type; the others (no headers) by
        // being the only delivery of their type in a step of one event, or (Feishu's text
        // messages) by the shape of the message, whose first line tells a ref's creation, a
        // push and a release apart.
        const et = d.headers['x-gitea-event-type'] ?? (step.events === 1 ? eventType : textMessageEvent(d.body));
        if (et !== eventType || paired.has(d)) continue;
        requests[d.type] = parsed(d);
      }
      ofStep.push({ step: step.name, eventType, payload: JSON.parse(g.body), requests });
    }
    // What is left of a type that sends no headers: the one delivery left goes with the one event
    // of the step still without it (Feishu's pull request messages next to a push).
    for (const type of types) {
      const left = mine.filter((d) => d.type === type && !paired.has(d));
      const without = ofStep.filter((e) => !e.requests[type]);
      if (type !== 'gitea' && left.length === 1 && without.length === 1) without[0].requests[type] = parsed(left[0]);
    }
    recorded.push(...ofStep);
  }
  return recorded;
}

