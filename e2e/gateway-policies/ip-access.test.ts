/**
 * IPAccessPolicy through the real controller CLI (standalone) and real nginx: clients from
 * different loopback source addresses (127.0.0.1, .2, .3 are all this machine), a Gateway's lists
 * and a route's overriding ones, then the client address taken from trusted X-Forwarded-For hops
 * and from a PROXY protocol v1 header written by hand; the same on a TCP listener (a refused
 * connection is closed), and the request-level policies reported as not applying to a TCPRoute.
 */
import * as dgram from 'dgram';
import * as net from 'net';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { GATEWAY_API, httpRoute, rule, serviceFor, type Manifest } from '../support/manifests';
import { eventually } from '../support/http';
import { condition, findStatus, readStatus, routeParent, waitForStatus } from '../support/status';
import { ipAccessPolicy, rateLimitPolicy, target, timedRequest } from './support';

let gw: GatewayFixture;
let tcpServer: net.Server;
let udpServer: dgram.Socket;

/** The UDP echo's answer to one datagram sent from `from`; '' when none comes within 1 s (nginx dropped it). */
function udpExchange(from: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      resolve('');
    }, 1000);
    socket.on('message', (m) => {
      clearTimeout(timer);
      socket.close();
      resolve(m.toString());
    });
    socket.on('error', reject);
    socket.bind(0, from, () => socket.send('hello', gw.ports.udp, '127.0.0.1'));
  });
}

/** What the TCP echo behind the TCPRoute answers to `hello` on one connection (with `preamble` first); '' when nginx closes it. */
function tcpExchange(from: string, preamble = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: gw.ports.tcp, host: '127.0.0.1', localAddress: from });
    const chunks: Buffer[] = [];
    socket.setTimeout(10000, () => socket.destroy(new Error('no answer')));
    socket.on('connect', () => socket.write(`${preamble}hello`));
    socket.on('data', (c) => {
      chunks.push(c);
      socket.end();
    });
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? undefined : reject(e)));
  });
}

const byHeader = (value: string) => [{ path: { type: 'PathPrefix', value }, headers: [{ name: 'x-go', value: '1' }] }];
const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];

const status = async (path: string, from: string, headers?: Record<string, string>) => (await timedRequest(gw.port, path, { localAddress: from, headers })).status;

/** A raw HTTP/1.1 exchange on one connection that starts with `preamble`; '' when nginx closes without answering. */
function rawExchange(preamble: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(gw.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10000, () => socket.destroy(new Error('no answer')));
    socket.on('connect', () => socket.write(`${preamble}GET ${path} HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n`));
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(e)));
  });
}
const statusLine = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);

const gatewayPolicy = (spec: Parameters<typeof ipAccessPolicy>[2]): Manifest[] => [ipAccessPolicy('gw-ip', [target('gw', 'Gateway')], spec)];

beforeAll(async () => {
  tcpServer = net.createServer((c) => c.on('data', (d) => c.write(`tcp:${d}`)).on('error', () => {}));
  await new Promise<void>((r) => tcpServer.listen(0, '127.0.0.1', r));
  udpServer = dgram.createSocket('udp4');
  udpServer.on('message', (m, r) => udpServer.send(`udp:${m}`, r.port, r.address));
  await new Promise<void>((r) => udpServer.bind(0, '127.0.0.1', r));
  const [udpService, udpSlice] = serviceFor('udp-echo', udpServer.address().port);
  udpService.spec.ports[0].protocol = 'UDP';
  udpSlice.ports[0].protocol = 'UDP';
  const udpRoute: Manifest = {
    apiVersion: GATEWAY_API,
    kind: 'UDPRoute',
    metadata: { name: 'dns' },
    spec: { parentRefs: [{ name: 'gw', sectionName: 'udp' }], rules: [{ backendRefs: [{ name: 'udp-echo', port: 80 }] }] },
  };
  const tcpRoute: Manifest = {
    apiVersion: GATEWAY_API,
    kind: 'TCPRoute',
    metadata: { name: 'db' },
    spec: { parentRefs: [{ name: 'gw', sectionName: 'tcp' }], rules: [{ backendRefs: [{ name: 'tcp-echo', port: 80 }] }] },
  };
  const routes: Manifest[] = [
    tcpRoute,
    udpRoute,
    udpService,
    udpSlice,
    ...serviceFor('tcp-echo', (tcpServer.address() as net.AddressInfo).port),
    httpRoute('open', { rules: [rule('ok', prefix('/open')), rule('ok', byHeader('/open-dispatch'))] }),
    httpRoute('guarded', { rules: [rule('ok', prefix('/guarded'))] }),
  ];
  gw = await startGatewayFixture({
    backends: ['ok'],
    listeners: [{ name: 'http' }, { name: 'tcp', protocol: 'TCP' }, { name: 'udp', protocol: 'UDP' }],
    files: {
      'routes.yaml': routes,
      // The route's deny replaces the Gateway's deny; the Gateway's allow still applies to it.
      'route-policy.yaml': [
        ipAccessPolicy('guarded-ip', [target('guarded')], { deny: ['127.0.0.3'] }),
        ipAccessPolicy('db-ip', [target('db', 'TCPRoute')], { deny: ['127.0.0.3'] }),
        rateLimitPolicy('db-rate', [target('db', 'TCPRoute')], [{ rate: '1r/s' }]),
      ],
      'gw-policy.yaml': gatewayPolicy({ allow: ['127.0.0.0/8', '::1/128'], deny: ['127.0.0.2/32'] }),
    },
  });
  await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'IPAccessPolicy', 'guarded-ip'));
}, 60000);

afterAll(async () => {
  await gw?.close();
  tcpServer?.close();
  udpServer?.close();
});

describe('IPAccessPolicy: the client address of the connection', () => {
  test("a denied client gets 403, an allowed one is served, on inline and dispatched rules; a route's deny replaces the Gateway's", async () => {
    expect(await status('/open', '127.0.0.1')).toBe(200);
    expect(await status('/open', '127.0.0.2')).toBe(403);
    expect(await status('/open', '127.0.0.3')).toBe(200);
    expect(await status('/open-dispatch', '127.0.0.2', { 'x-go': '1' })).toBe(403);
    expect(await status('/open-dispatch', '127.0.0.1', { 'x-go': '1' })).toBe(200);
    expect(await status('/guarded', '127.0.0.2')).toBe(200);
    expect(await status('/guarded', '127.0.0.3')).toBe(403);
  });

  test('the policies are Accepted and the targets report IPAccessPolicyAffected', async () => {
    const docs = await readStatus(gw.stateDir);
    const policy = findStatus(docs, 'IPAccessPolicy', 'guarded-ip')!;
    expect(condition((policy.status as any).ancestors[0].conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(condition(routeParent(findStatus(docs, 'HTTPRoute', 'guarded'), 'gw').conditions, 'IPAccessPolicyAffected')).toMatchObject({ status: 'True', reason: 'PolicyAffected' });
    expect(condition((findStatus(docs, 'Gateway', 'gw')!.status as any).conditions, 'IPAccessPolicyAffected')).toMatchObject({ status: 'True' });
  });

  test('on a TCP listener a refused client is closed without a byte, an allowed one reaches the backend', async () => {
    expect(await tcpExchange('127.0.0.1')).toBe('tcp:hello');
    // The TCPRoute's own deny replaces the Gateway's: .2 is served there, .3 is not.
    expect(await tcpExchange('127.0.0.2')).toBe('tcp:hello');
    expect(await tcpExchange('127.0.0.3')).toBe('');
  });

  test("on a UDP listener a refused client's datagrams are dropped (the UDPRoute has no policy: the Gateway's lists)", async () => {
    expect(await udpExchange('127.0.0.1')).toBe('udp:hello');
    expect(await udpExchange('127.0.0.2')).toBe('');
  });

  test('a RateLimitPolicy on a TCPRoute is not applied, and says why', async () => {
    const docs = await readStatus(gw.stateDir);
    const c = condition((findStatus(docs, 'RateLimitPolicy', 'db-rate')!.status as any).ancestors[0].conditions, 'Accepted');
    expect(c).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(c!.message).toContain('a TCPRoute carries whole connections without HTTP');
    expect(condition(routeParent(findStatus(docs, 'TCPRoute', 'db'), 'gw').conditions, 'IPAccessPolicyAffected')).toMatchObject({ status: 'True' });
    expect(condition(routeParent(findStatus(docs, 'TCPRoute', 'db'), 'gw').conditions, 'RateLimitPolicyAffected')).toBeUndefined();
  });

  // Files are read without the CRD's validation: a broken list must not serve its targets open.
  test('a document that fails its schema (an invalid network) is Invalid, and its targets refuse every client until it is fixed', async () => {
    const accepted = (docs: Awaited<ReturnType<typeof readStatus>>, name: string) => condition((findStatus(docs, 'IPAccessPolicy', name)!.status as any).ancestors[0].conditions, 'Accepted');
    await gw.write('bad.yaml', [ipAccessPolicy('bad-ip', [target('open')], { deny: ['10.0.0.0/33'] })]);
    let docs = await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'IPAccessPolicy', 'bad-ip'));
    expect(accepted(docs, 'bad-ip')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(accepted(docs, 'bad-ip')!.message).toMatch(/spec\.deny\[0\].*until it is fixed, this target refuses every client/);
    expect(await status('/open', '127.0.0.1')).toBe(403);
    expect(await status('/open-dispatch', '127.0.0.1', { 'x-go': '1' })).toBe(403);
    expect(gw.controller.logs.find((l) => l.msg === 'policy invalid' && l.name === 'bad-ip')).toMatchObject({ error: expect.stringContaining('spec.deny[0]'), targets: 'fail closed until it is fixed' });
    expect(await status('/guarded', '127.0.0.1')).toBe(200);

    // On the Gateway: every route refuses, whatever its own lists, and so do its TCP and UDP ports.
    await gw.write('bad.yaml', [{ ...ipAccessPolicy('bad-gw-ip', [target('gw', 'Gateway')], { allow: ['127.0.0.1'] }), apiVersion: 'gateway.portcullis.dev/v1' }]);
    docs = await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'IPAccessPolicy', 'bad-gw-ip'));
    expect(accepted(docs, 'bad-gw-ip')).toMatchObject({ status: 'False', reason: 'Invalid', message: expect.stringContaining('apiVersion: gateway.portcullis.dev/v1 is not supported') });
    expect(await status('/guarded', '127.0.0.1')).toBe(403);
    expect(await status('/open', '127.0.0.1')).toBe(403);
    expect(await tcpExchange('127.0.0.1')).toBe('');
    expect(await udpExchange('127.0.0.1')).toBe('');

    await gw.remove('bad.yaml');
    await eventually(() => status('/open', '127.0.0.1'), (s) => s === 200);
    expect(await status('/guarded', '127.0.0.1')).toBe(200);
    expect(await tcpExchange('127.0.0.1')).toBe('tcp:hello');
  });
});

describe('IPAccessPolicy clientAddress XForwardedFor: the last address before the trusted proxies', () => {
  beforeAll(async () => {
    await gw.write('gw-policy.yaml', gatewayPolicy({ deny: ['192.0.2.0/24', '2001:db8::/32'], clientAddress: { source: 'XForwardedFor', trustedCIDRs: ['127.0.0.1/32'] } }));
  });

  test('from a trusted proxy, the forwarded client decides; trusted hops are skipped; an untrusted hop is the client', async () => {
    const xff = (v: string) => ({ 'x-forwarded-for': v });
    expect(await status('/open', '127.0.0.1', xff('192.0.2.9'))).toBe(403);
    expect(await status('/open', '127.0.0.1', xff('2001:db8::7'))).toBe(403);
    expect(await status('/open', '127.0.0.1', xff('198.51.100.1'))).toBe(200);
    // real_ip_recursive: a trusted proxy's own address in the chain is passed over.
    expect(await status('/open', '127.0.0.1', xff('192.0.2.9, 127.0.0.1'))).toBe(403);
    // The nearest untrusted address is the client, whatever it claims further left.
    expect(await status('/open', '127.0.0.1', xff('192.0.2.9, 198.51.100.1'))).toBe(200);
    expect(await status('/open', '127.0.0.1', xff('198.51.100.1, 192.0.2.9'))).toBe(403);
  });

  test('from an untrusted peer the header is ignored', async () => {
    expect(await status('/open', '127.0.0.2', { 'x-forwarded-for': '192.0.2.9' })).toBe(200);
  });
});

describe('IPAccessPolicy clientAddress ProxyProtocol: the address of a PROXY protocol header', () => {
  beforeAll(async () => {
    await gw.write('gw-policy.yaml', gatewayPolicy({ deny: ['192.0.2.0/24', '2001:db8::/32'], clientAddress: { source: 'ProxyProtocol', trustedCIDRs: ['127.0.0.0/8'] } }));
  });

  test('a PROXY v1 header naming a denied client gets 403, an allowed one is served (TCP4 and TCP6)', async () => {
    expect(statusLine(await rawExchange('PROXY TCP4 192.0.2.9 127.0.0.1 40000 80\r\n', '/open'))).toBe(403);
    expect(statusLine(await rawExchange('PROXY TCP4 198.51.100.1 127.0.0.1 40000 80\r\n', '/open'))).toBe(200);
    expect(statusLine(await rawExchange('PROXY TCP6 2001:db8::1 ::1 40000 80\r\n', '/open'))).toBe(403);
    expect(statusLine(await rawExchange('PROXY TCP6 2001:db9::1 ::1 40000 80\r\n', '/open'))).toBe(200);
  });

  test('a TCP listener reads the PROXY header too: the address it names decides', async () => {
    expect(await tcpExchange('127.0.0.1', 'PROXY TCP4 127.0.0.3 127.0.0.1 40000 80\r\n')).toBe('');
    expect(await tcpExchange('127.0.0.1', 'PROXY TCP4 127.0.0.2 127.0.0.1 40000 80\r\n')).toBe('tcp:hello');
  });

  test('a connection without the PROXY header is closed without an answer', async () => {
    expect(await rawExchange('', '/open')).toBe('');
  });
});
