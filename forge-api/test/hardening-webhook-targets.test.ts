/**
 * Webhooks cannot be aimed at internal addresses unless the administrator allows it (Gitea's
 * ALLOWED_HOST_LIST, default `external`). The check is made at delivery, on the address
 * connected to after DNS resolution and again on every redirect hop; a refused delivery is
 * recorded as failed with the reason, and the receiver gets nothing. Receivers listen on
 * loopback only; refused literal addresses are refused before any packet is sent.
 */
import http from 'node:http';
import { parseAllowedHostList } from '../src/services/webhooks/allowed-hosts';
import { describeForge, PASSWORD, type Forge } from './support/forge';

class Receiver {
  hits: string[] = [];
  private server: http.Server | null = null;
  port = 0;
  constructor(
    private readonly host: string,
    private readonly redirectTo?: () => string,
  ) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.hits.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        if (this.redirectTo) {
          res.statusCode = 302;
          res.setHeader('Location', this.redirectTo());
        }
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, this.host, resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  url(host = this.host): string {
    return `http://${host}:${this.port}/hook`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('ALLOWED_HOST_LIST semantics', () => {
  test.each([
    ['external', '8.8.8.8', true],
    ['external', '2606:4700::1111', true],
    ['external', '127.0.0.1', false],
    ['external', '::1', false],
    ['external', '::ffff:127.0.0.1', false],
    ['external', '10.1.2.3', false],
    ['external', '172.16.0.1', false],
    ['external', '192.168.1.1', false],
    ['external', 'fd00::1', false],
    ['external', '169.254.169.254', false],
    ['external', 'fe80::1', false],
    ['external', '0.0.0.0', false],
    ['external', '::', false],
    ['external', '100.64.0.1', false],
    ['external', '64:ff9b::a9fe:a9fe', false],
    ['external', '224.0.0.1', false],
    ['private', '10.1.2.3', true],
    ['private', 'fd00::1', true],
    ['private', '8.8.8.8', false],
    ['private', '127.0.0.1', false],
    ['loopback', '127.0.0.5', true],
    ['loopback', '::1', true],
    ['loopback', '10.0.0.1', false],
    ['*', '169.254.169.254', true],
    ['10.0.0.0/8, 192.168.0.0/16', '10.9.8.7', true],
    ['10.0.0.0/8, 192.168.0.0/16', '172.16.0.1', false],
    ['fd00::/8', 'fd12::1', true],
    ['loopback,external', '127.0.0.1', true],
  ])('%j allows %s: %s', (setting, address, expected) => {
    expect(parseAllowedHostList(setting).allowsAddress(address)).toBe(expected);
  });

  test('host name globs allow by name, whatever the name resolves to', () => {
    const list = parseAllowedHostList('*.hooks.example, ci.internal');
    expect(list.allowsHostName('a.hooks.example')).toBe(true);
    expect(list.allowsHostName('ci.internal')).toBe(true);
    expect(list.allowsHostName('hooks.example')).toBe(false);
    expect(list.allowsHostName('127.0.0.1')).toBe(false);
  });
});

async function hookFor(f: Forge, url: string): Promise<number> {
  const as = { basic: ['hooker', PASSWORD] as [string, string] };
  const res = await f.request('POST', '/repos/hooker/r/hooks', { ...as, body: { type: 'gitea', active: true, events: ['push'], config: { url, content_type: 'json' } } });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** Sends the hook's test delivery and waits until the worker has recorded its outcome. */
async function deliverTest(f: Forge, hookId: number) {
  const as = { basic: ['hooker', PASSWORD] as [string, string] };
  expect((await f.request('POST', `/repos/hooker/r/hooks/${hookId}/tests`, as)).status).toBe(204);
  for (let i = 0; i < 200; i++) {
    const task = await f.app.prisma.hookTask.findFirst({ where: { hookId }, orderBy: { id: 'desc' } });
    if (task?.isDelivered) return task;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('delivery not recorded');
}

async function setup(f: () => Forge) {
  await f().user('hooker');
  // auto_init: a test delivery sends the default branch's last commit (none in an empty repository).
  expect((await f().request('POST', '/user/repos', { basic: ['hooker', PASSWORD], body: { name: 'r', auto_init: true } })).status).toBe(201);
}

describeForge('webhook targets under the default setting (external)', (f) => {
  const rx = new Receiver('127.0.0.1');
  beforeAll(async () => {
    await rx.start();
    await setup(f);
  });
  afterAll(() => rx.stop());

  test.each([
    ['a loopback address', () => rx.url()],
    ['a name that resolves to loopback', () => rx.url('localhost')],
    ['IPv6 loopback', () => `http://[::1]:${rx.port}/hook`],
    ['an IPv4-mapped loopback address', () => `http://[::ffff:127.0.0.1]:${rx.port}/hook`],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a private address', () => 'http://10.0.0.1/'],
    ['the unspecified address', () => `http://0.0.0.0:${rx.port}/hook`],
  ])('%s is refused: recorded as failed with the reason, nothing received', async (_what, url) => {
    const id = await hookFor(f(), url());
    const task = await deliverTest(f(), id);
    expect(task).toMatchObject({ isDelivered: true, isSucceed: false, responseStatus: 0 });
    expect(task.lastError).toContain('not an allowed target');
    expect(task.lastError).toContain('ALLOWED_HOST_LIST');
    // Refused for good: no retries are scheduled for a refused target.
    expect(task.attempts).toBe(1);
    expect(rx.hits).toEqual([]);
  });
});

describeForge(
  'webhook targets when loopback is allowed',
  (f) => {
    const rx = new Receiver('127.0.0.1');
    beforeAll(async () => {
      await rx.start();
      await setup(f);
    });
    afterAll(() => rx.stop());

    test('a loopback receiver gets the delivery', async () => {
      const task = await deliverTest(f(), await hookFor(f(), rx.url()));
      expect(task).toMatchObject({ isDelivered: true, isSucceed: true, responseStatus: 200 });
      expect(rx.hits).toEqual(['POST /hook']);
    });
  },
  { webhookAllowedHostList: 'loopback' },
);

describeForge(
  'every redirect hop is checked',
  (f) => {
    // 127.0.0.2 is allowed (a CIDR entry), 127.0.0.1 is not: the allowed receiver redirects
    // the delivery to the refused one.
    const inner = new Receiver('127.0.0.1');
    const outer = new Receiver('127.0.0.2', () => inner.url());
    const hop = new Receiver('127.0.0.2', () => outer.url().replace('/hook', '/again'));
    beforeAll(async () => {
      await inner.start();
      await outer.start();
      await hop.start();
      await setup(f);
    });
    afterAll(async () => {
      await inner.stop();
      await outer.stop();
      await hop.stop();
    });

    test('a redirect to a refused address is refused, and recorded', async () => {
      const task = await deliverTest(f(), await hookFor(f(), outer.url()));
      expect(outer.hits).toEqual(['POST /hook']);
      expect(inner.hits).toEqual([]);
      expect(task).toMatchObject({ isDelivered: true, isSucceed: false });
      expect(task.lastError).toContain('127.0.0.1');
      expect(task.lastError).toContain('not an allowed target');
    });

    test('redirects between allowed addresses are followed (302 turns into GET, as Go does)', async () => {
      outer.hits = [];
      inner.hits = [];
      await deliverTest(f(), await hookFor(f(), hop.url()));
      expect(hop.hits).toEqual(['POST /hook']);
      expect(outer.hits).toEqual(['GET /again']);
      expect(inner.hits).toEqual([]);
    });
  },
  { webhookAllowedHostList: '127.0.0.2/32' },
);
