/**
 * IPAccessPolicy on ports that speak TLS, through the real controller CLI (standalone), real
 * nginx and real TLS clients from different loopback source addresses: an HTTPS listener (403
 * after the handshake), a TLSRoute Terminate and a Passthrough listener (the connection is closed
 * before any handshake). Then ports shared by several Gateways (one nginx serves them all):
 * PROXY protocol is expected on the whole port as soon as one Gateway of it asks, and the
 * client address is read as the first Gateway (by namespace/name) that sets `clientAddress` says.
 */
import * as fs from 'fs';
import * as https from 'https';
import * as net from 'net';
import * as path from 'path';
import * as tls from 'tls';
import execa from 'execa';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { freePort } from '../support/ports';
import { GATEWAY_API, gateway, httpRoute, rule, serviceFor, type Manifest } from '../support/manifests';
import { makeTempDir, removeDir } from '../support/tmp';
import { ipAccessPolicy, target, timedRequest } from './support';

let gw: GatewayFixture;
let certDir: string;
let ca: string;
let pem: { crt: string; key: string };
const closers: (() => void)[] = [];
/** Ports shared by Gateway gw and a Gateway sorted after it. */
const shared = { http: 0, pass: 0, term: 0 };

/** A TLS server with the test certificate (the passthrough backend) answering each chunk with "<name>:<chunk>". */
async function tlsEcho(name: string): Promise<number> {
  const server = tls.createServer({ cert: pem.crt, key: pem.key }, (s) => s.on('data', (d) => s.write(`${name}:${d}`)).on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

/** A TCP server (the plaintext behind a terminating listener) answering each chunk with "<name>:<chunk>". */
async function tcpEcho(name: string): Promise<number> {
  const server = net.createServer((s) => s.on('data', (d) => s.write(`${name}:${d}`)).on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

function service(name: string, port: number): Manifest[] {
  return serviceFor(name, port);
}

function tlsRoute(name: string, gateway: string, sectionName: string, hostname: string, backend: string): Manifest {
  return {
    apiVersion: GATEWAY_API,
    kind: 'TLSRoute',
    metadata: { name },
    spec: { parentRefs: [{ name: gateway, sectionName }], hostnames: [hostname], rules: [{ backendRefs: [{ name: backend, port: 80 }] }] },
  };
}

/**
 * A TLS connection from `from` with SNI `servername` (after `preamble`, e.g. a PROXY header, in
 * clear): the answer to "ping", or "" when the gateway closes the connection before the handshake
 * completes or answers nothing.
 */
function tlsExchange(port: number, servername: string, from: string, preamble = ''): Promise<string> {
  return new Promise((resolve) => {
    const raw = net.connect({ host: '127.0.0.1', port, localAddress: from });
    raw.setTimeout(5000, () => raw.destroy());
    raw.on('error', () => resolve(''));
    raw.on('close', () => resolve(''));
    raw.on('connect', () => {
      if (preamble) raw.write(preamble);
      const socket = tls.connect({ socket: raw, servername, ca }, () => socket.write('ping'));
      socket.on('data', (d) => {
        resolve(d.toString());
        socket.destroy();
      });
      socket.on('error', () => resolve(''));
    });
  });
}

/** An HTTPS request from `from` for host `h.example`: the status, or 0 when the connection is closed without one. */
function httpsStatus(port: number, from: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: '/', servername: 'h.example', headers: { host: 'h.example' }, ca, agent: false, localAddress: from, timeout: 5000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

const proxyHeader = (client: string) => `PROXY TCP4 ${client} 127.0.0.1 40000 443\r\n`;

beforeAll(async () => {
  certDir = await makeTempDir('portcullis-ipacl-tls-');
  const run = (args: string[]) => execa('openssl', args, { cwd: certDir });
  await run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=portcullis test CA']);
  // One certificate for every name: the listeners' and the passthrough backends'.
  await run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=h.example']);
  fs.writeFileSync(path.join(certDir, 'srv.ext'), 'subjectAltName=DNS:h.example,DNS:a.pass.example,DNS:b.pass.example,DNS:t.term.example,DNS:u.term.example\n');
  await run(['x509', '-req', '-in', 'srv.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.crt', '-days', '2', '-extfile', 'srv.ext']);
  ca = fs.readFileSync(path.join(certDir, 'ca.crt'), 'utf8');
  pem = { crt: fs.readFileSync(path.join(certDir, 'srv.crt'), 'utf8'), key: fs.readFileSync(path.join(certDir, 'srv.key'), 'utf8') };
  const echo = { passA: await tlsEcho('pass-a'), passB: await tlsEcho('pass-b'), term: await tcpEcho('term'), termU: await tcpEcho('term-u') };
  shared.http = await freePort();
  shared.pass = await freePort();
  shared.term = await freePort();
  const cert = [{ name: 'cert' }];
  gw = await startGatewayFixture({
    backends: ['ok'],
    listeners: [
      { name: 'https', protocol: 'HTTPS', hostname: 'h.example', tls: { mode: 'Terminate', certificateRefs: cert } },
      { name: 'term', protocol: 'TLS', hostname: 't.term.example', tls: { mode: 'Terminate', certificateRefs: cert } },
      { name: 'pass', protocol: 'TLS', tls: { mode: 'Passthrough' } },
    ],
    files: {
      'backends.yaml': [
        ...service('pass-a', echo.passA),
        ...service('pass-b', echo.passB),
        ...service('term', echo.term),
        ...service('term-u', echo.termU),
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'cert' },
          type: 'kubernetes.io/tls',
          data: { 'tls.crt': Buffer.from(pem.crt).toString('base64'), 'tls.key': Buffer.from(pem.key).toString('base64') },
        },
      ],
      // Gateway gw also listens on the shared ports, beside the Gateways sorted after it.
      'shared.yaml': [
        gateway('gw-shared', [
          { name: 'http', port: shared.http },
          { name: 'pass', port: shared.pass, protocol: 'TLS', hostname: 'a.pass.example', tls: { mode: 'Passthrough' } },
          { name: 'term', port: shared.term, protocol: 'TLS', hostname: 't.term.example', tls: { mode: 'Terminate', certificateRefs: cert } },
        ]),
        // Sorted after gw-shared: the port's default server (any other host) is both Gateways'.
        gateway('zx-forwarded', [{ name: 'http', port: shared.http, hostname: 'x.example' }]),
        // Sorted after gw-shared: other names on gw-shared's TLS ports.
        gateway('zz-proxied', [
          { name: 'pass', port: shared.pass, protocol: 'TLS', hostname: 'b.pass.example', tls: { mode: 'Passthrough' } },
          { name: 'term', port: shared.term, protocol: 'TLS', hostname: 'u.term.example', tls: { mode: 'Terminate', certificateRefs: cert } },
        ]),
      ],
      'routes.yaml': [
        httpRoute('web', { hostnames: ['h.example'], rules: [rule('ok')] }),
        tlsRoute('term', 'gw', 'term', 't.term.example', 'term'),
        tlsRoute('pass', 'gw', 'pass', 'a.pass.example', 'pass-a'),
        httpRoute('shared-web', { rules: [rule('ok', [{ path: { type: 'PathPrefix', value: '/shared' } }])] }, 'gw-shared'),
        httpRoute('forwarded-web', { hostnames: ['x.example'], rules: [rule('ok', [{ path: { type: 'PathPrefix', value: '/forwarded' } }])] }, 'zx-forwarded'),
        tlsRoute('shared-pass', 'gw-shared', 'pass', 'a.pass.example', 'pass-a'),
        tlsRoute('proxied-pass', 'zz-proxied', 'pass', 'b.pass.example', 'pass-b'),
        tlsRoute('shared-term', 'gw-shared', 'term', 't.term.example', 'term'),
        tlsRoute('proxied-term', 'zz-proxied', 'term', 'u.term.example', 'term-u'),
      ],
      'policies.yaml': [
        ipAccessPolicy('gw-ip', [target('gw', 'Gateway'), target('gw-shared', 'Gateway')], { deny: ['127.0.0.2'] }),
        ipAccessPolicy('forwarded-ip', [target('zx-forwarded', 'Gateway')], { deny: ['192.0.2.0/24'], clientAddress: { source: 'XForwardedFor', trustedCIDRs: ['127.0.0.1/32'] } }),
        ipAccessPolicy('proxied-ip', [target('zz-proxied', 'Gateway')], { deny: ['127.0.0.3'], clientAddress: { source: 'ProxyProtocol', trustedCIDRs: ['127.0.0.1/32'] } }),
      ],
    },
  });
}, 60000);

afterAll(async () => {
  await gw?.close();
  for (const close of closers) close();
  if (certDir) await removeDir(certDir);
});

describe("IPAccessPolicy on a Gateway's TLS ports: a refused client is turned away, an allowed one served", () => {
  test('HTTPS listener: the handshake completes and a refused client gets 403', async () => {
    expect(await httpsStatus(gw.ports.https, '127.0.0.1')).toBe(200);
    expect(await httpsStatus(gw.ports.https, '127.0.0.2')).toBe(403);
  });

  test('TLSRoute Terminate: a refused client is closed before the handshake, an allowed one reaches the plaintext backend', async () => {
    expect(await tlsExchange(gw.ports.term, 't.term.example', '127.0.0.1')).toBe('term:ping');
    expect(await tlsExchange(gw.ports.term, 't.term.example', '127.0.0.2')).toBe('');
  });

  test("TLSRoute Passthrough: a refused client is closed before its ClientHello is read, an allowed one reaches the backend's TLS", async () => {
    expect(await tlsExchange(gw.ports.pass, 'a.pass.example', '127.0.0.1')).toBe('pass-a:ping');
    expect(await tlsExchange(gw.ports.pass, 'a.pass.example', '127.0.0.2')).toBe('');
  });
});

describe('ports shared by several Gateways', () => {
  test('a shared HTTP server reads the client address as the first Gateway that sets clientAddress says; each route keeps its Gateway\'s lists', async () => {
    const status = async (p: string, from: string, xff?: string) =>
      (await timedRequest(shared.http, p, { localAddress: from, headers: { host: p === '/forwarded' ? 'x.example' : 'y.example', ...(xff ? { 'x-forwarded-for': xff } : {}) } })).status;
    // The port's default server (host y.example) is both Gateways': gw-shared sets no
    // clientAddress, zx-forwarded does (X-Forwarded-For from 127.0.0.1), so the forwarded client
    // is the one checked, against gw-shared's lists on gw-shared's route ...
    expect(await status('/shared', '127.0.0.1', '127.0.0.2')).toBe(403);
    expect(await status('/shared', '127.0.0.1', '127.0.0.9')).toBe(200);
    expect(await status('/shared', '127.0.0.2')).toBe(403);
    // ... and against zx-forwarded's on zx-forwarded's (host x.example, its listener's own server).
    expect(await status('/forwarded', '127.0.0.1', '192.0.2.5')).toBe(403);
    expect(await status('/forwarded', '127.0.0.1', '127.0.0.2')).toBe(200);
  });

  test('a shared Passthrough port expects the PROXY header as soon as one Gateway asks, and reads the client from it', async () => {
    // Without the header: closed, for either Gateway's name.
    expect(await tlsExchange(shared.pass, 'a.pass.example', '127.0.0.1')).toBe('');
    expect(await tlsExchange(shared.pass, 'b.pass.example', '127.0.0.1')).toBe('');
    expect(await tlsExchange(shared.pass, 'a.pass.example', '127.0.0.1', proxyHeader('127.0.0.9'))).toBe('pass-a:ping');
    expect(await tlsExchange(shared.pass, 'b.pass.example', '127.0.0.1', proxyHeader('127.0.0.9'))).toBe('pass-b:ping');
    // The port's lists are the first Gateway's (gw-shared, deny 127.0.0.2), for the client the header names.
    expect(await tlsExchange(shared.pass, 'a.pass.example', '127.0.0.1', proxyHeader('127.0.0.2'))).toBe('');
  });

  test('a shared Terminate port expects the PROXY header as soon as one Gateway asks, and reads the client from it', async () => {
    expect(await tlsExchange(shared.term, 't.term.example', '127.0.0.1')).toBe('');
    expect(await tlsExchange(shared.term, 't.term.example', '127.0.0.1', proxyHeader('127.0.0.9'))).toBe('term:ping');
    expect(await tlsExchange(shared.term, 'u.term.example', '127.0.0.1', proxyHeader('127.0.0.9'))).toBe('term-u:ping');
    expect(await tlsExchange(shared.term, 't.term.example', '127.0.0.1', proxyHeader('127.0.0.2'))).toBe('');
  });
});
