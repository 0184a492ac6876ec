/**
 * TLSRoute, TCPRoute and UDPRoute through the real controller and nginx's stream module, with
 * real clients: TLS passthrough chosen by SNI (exact and wildcard names; the backend's own
 * certificate reaches the client), TLS terminated by the gateway with a listener certificate
 * (the backend reads plaintext), both modes on one port, TCP and UDP echo, a client's half-close,
 * weighted backends, and the statuses of routes a listener does not allow.
 */
import * as dgram from 'dgram';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import * as tls from 'tls';
import execa from 'execa';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { GATEWAY_API, Manifest, serviceFor } from '../support/manifests';
import { freePort } from '../support/ports';
import { condition, findStatus, readStatus, routeParent } from '../support/status';
import { makeTempDir, removeDir } from '../support/tmp';

let gw: GatewayFixture;
let mixedPort: number;
let certDir: string;
let ca: string;
const pems: Record<string, { crt: string; key: string }> = {};
const closers: (() => void)[] = [];

async function makeCert(name: string, cn: string): Promise<void> {
  const run = (args: string[]) => execa('openssl', args, { cwd: certDir });
  await run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  fs.writeFileSync(path.join(certDir, `${name}.ext`), `subjectAltName=DNS:${cn}\n`);
  await run(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`]);
  pems[name] = { crt: fs.readFileSync(path.join(certDir, `${name}.crt`), 'utf8'), key: fs.readFileSync(path.join(certDir, `${name}.key`), 'utf8') };
}

/** A TCP server that answers each chunk with "<name>:<chunk>". */
async function tcpEcho(name: string): Promise<number> {
  const server = net.createServer((s) => s.on('data', (d) => s.write(`${name}:${d}`)).on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

/** A TLS server (its own certificate: passthrough) that answers each chunk with "<name>:<chunk>". */
async function tlsEcho(name: string, cert: string): Promise<number> {
  const server = tls.createServer({ cert: pems[cert].crt, key: pems[cert].key }, (s) => s.on('data', (d) => s.write(`${name}:${d}`)).on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

/** A TCP server that answers only once the client has stopped sending: "got <bytes>", then closes. */
async function tcpAfterEnd(): Promise<number> {
  const server = net.createServer((s) => {
    let got = '';
    s.on('data', (d) => (got += d.toString()));
    s.on('end', () => s.end(`got ${got}`));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

/** A UDP server that answers each datagram with "<name>:<datagram>". */
async function udpEcho(name: string): Promise<number> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, from) => socket.send(`${name}:${msg}`, from.port, from.address));
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  closers.push(() => socket.close());
  return socket.address().port;
}

/** A Service on port 80 whose endpoint is the echo server's port (with the given protocol). */
function service(name: string, port: number, protocol = 'TCP'): Manifest[] {
  const [svc, slice] = serviceFor(name, port);
  svc.spec.ports[0].protocol = protocol;
  slice.ports[0].protocol = protocol;
  return [svc, slice];
}

function l4Route(kind: 'TLSRoute' | 'TCPRoute' | 'UDPRoute', name: string, sectionName: string, backends: { name: string; weight?: number }[], hostnames?: string[], gateway = 'gw'): Manifest {
  return {
    apiVersion: GATEWAY_API,
    kind,
    metadata: { name },
    spec: {
      parentRefs: [{ name: gateway, sectionName }],
      ...(hostnames ? { hostnames } : {}),
      rules: [{ backendRefs: backends.map((b) => ({ name: b.name, port: 80, ...(b.weight !== undefined ? { weight: b.weight } : {}) })) }],
    },
  };
}

/** Connects with TLS and SNI `servername`, sends "ping": the peer certificate's CN and the answer. */
function tlsExchange(port: number, servername: string): Promise<{ cn: string; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, ca, timeout: 5000 }, () => {
      const cn = socket.getPeerCertificate().subject?.CN as string;
      socket.once('data', (d) => {
        resolve({ cn, answer: d.toString() });
        socket.destroy();
      });
      socket.write('ping');
    });
    socket.on('timeout', () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
  });
}

function tcpExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, timeout: 5000 }, () => socket.write(text));
    socket.once('data', (d) => {
      resolve(d.toString());
      socket.destroy();
    });
    socket.on('timeout', () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
  });
}

function udpExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error('no UDP answer'));
    }, 2000);
    socket.once('message', (msg) => {
      clearTimeout(timer);
      socket.close();
      resolve(msg.toString());
    });
    socket.send(text, port, '127.0.0.1');
  });
}

beforeAll(async () => {
  certDir = await makeTempDir('portcullis-l4-certs-');
  await execa('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=portcullis test CA'], { cwd: certDir });
  ca = fs.readFileSync(path.join(certDir, 'ca.crt'), 'utf8');
  await makeCert('a', 'a.pass.example');
  await makeCert('w', 'x.wild.example');
  await makeCert('t', 't.term.example');
  const backends = {
    tlsA: await tlsEcho('tls-a', 'a'),
    tlsW: await tlsEcho('tls-w', 'w'),
    tcpA: await tcpEcho('tcp-a'),
    tcpB: await tcpEcho('tcp-b'),
    tcpEnd: await tcpAfterEnd(),
    udpA: await udpEcho('udp-a'),
  };
  mixedPort = await freePort();
  gw = await startGatewayFixture({
    listeners: [
      { name: 'tls', protocol: 'TLS', tls: { mode: 'Passthrough' } },
      { name: 'tls-term', protocol: 'TLS', hostname: 't.term.example', tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert-t' }] } },
      { name: 'tcp', protocol: 'TCP' },
      { name: 'tcp-weights', protocol: 'TCP' },
      { name: 'tcp-end', protocol: 'TCP' },
      { name: 'udp', protocol: 'UDP' },
    ],
    files: {
      'mixed.yaml': [
        {
          apiVersion: GATEWAY_API,
          kind: 'Gateway',
          metadata: { name: 'mixed' },
          spec: {
            gatewayClassName: 'portcullis',
            listeners: [
              { name: 'pass', port: mixedPort, protocol: 'TLS', hostname: 'a.pass.example', tls: { mode: 'Passthrough' } },
              { name: 'term', port: mixedPort, protocol: 'TLS', hostname: 't.term.example', tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert-t' }] } },
            ],
          },
        },
      ],
      'services.yaml': [
        ...service('tls-a', backends.tlsA),
        ...service('tls-w', backends.tlsW),
        ...service('tcp-a', backends.tcpA),
        ...service('tcp-b', backends.tcpB),
        ...service('tcp-end', backends.tcpEnd),
        ...service('udp-a', backends.udpA, 'UDP'),
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'cert-t' },
          type: 'kubernetes.io/tls',
          data: { 'tls.crt': Buffer.from(pems.t.crt).toString('base64'), 'tls.key': Buffer.from(pems.t.key).toString('base64') },
        },
      ],
      'routes.yaml': [
        l4Route('TLSRoute', 'pass-a', 'tls', [{ name: 'tls-a' }], ['a.pass.example']),
        l4Route('TLSRoute', 'pass-wild', 'tls', [{ name: 'tls-w' }], ['*.wild.example']),
        l4Route('TLSRoute', 'term', 'tls-term', [{ name: 'tcp-a' }], ['t.term.example']),
        l4Route('TCPRoute', 'tcp', 'tcp', [{ name: 'tcp-a' }]),
        l4Route('TCPRoute', 'tcp-weights', 'tcp-weights', [{ name: 'tcp-a', weight: 1 }, { name: 'tcp-b', weight: 1 }]),
        l4Route('TCPRoute', 'tcp-end', 'tcp-end', [{ name: 'tcp-end' }]),
        l4Route('UDPRoute', 'udp', 'udp', [{ name: 'udp-a' }]),
        // Passthrough and Terminate on one port (Mixed), on a Gateway of their own.
        l4Route('TLSRoute', 'mixed-pass', 'pass', [{ name: 'tls-a' }], ['a.pass.example'], 'mixed'),
        l4Route('TLSRoute', 'mixed-term', 'term', [{ name: 'tcp-b' }], ['t.term.example'], 'mixed'),
        // A TCPRoute on a TLS listener: not allowed there.
        l4Route('TCPRoute', 'wrong-listener', 'tls', [{ name: 'tcp-a' }]),
      ],
    },
  });
}, 60000);

afterAll(async () => {
  await gw?.close();
  for (const close of closers) close();
  if (certDir) await removeDir(certDir);
});

describe('TLSRoute Passthrough: the backend terminates TLS, chosen by the SNI', () => {
  it('an exact hostname reaches its backend, whose own certificate the client sees', async () => {
    const got = await tlsExchange(gw.ports.tls, 'a.pass.example');
    expect(got).toEqual({ cn: 'a.pass.example', answer: 'tls-a:ping' });
  });

  it('a wildcard hostname matches any name under it', async () => {
    const got = await tlsExchange(gw.ports.tls, 'x.wild.example');
    expect(got).toEqual({ cn: 'x.wild.example', answer: 'tls-w:ping' });
  });

  it('an SNI no route names is refused (the connection is closed before any handshake)', async () => {
    await expect(tlsExchange(gw.ports.tls, 'other.example')).rejects.toThrow();
  });
});

describe('TLSRoute Terminate: the gateway terminates TLS with the listener certificate', () => {
  it('the client sees the listener certificate and the backend reads plaintext', async () => {
    const got = await tlsExchange(gw.ports['tls-term'], 't.term.example');
    expect(got).toEqual({ cn: 't.term.example', answer: 'tcp-a:ping' });
  });
});

describe('TLSRoute Mixed: Passthrough and Terminate listeners on one port', () => {
  it('each name is served in its listener mode', async () => {
    // The terminating server is reached through a unix socket under the state directory, which
    // nginx's workers (nobody, under a root master) must be able to traverse.
    fs.chmodSync(gw.dir, 0o711);
    expect(await tlsExchange(mixedPort, 'a.pass.example')).toEqual({ cn: 'a.pass.example', answer: 'tls-a:ping' });
    expect(await tlsExchange(mixedPort, 't.term.example')).toEqual({ cn: 't.term.example', answer: 'tcp-b:ping' });
  });
});

describe('TCPRoute and UDPRoute', () => {
  it('a TCP listener proxies the connection to its route backend', async () => {
    expect(await tcpExchange(gw.ports.tcp, 'hello')).toBe('tcp-a:hello');
  });

  it('a client that stops sending (half-close) still reads what the backend answers afterwards', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: gw.ports['tcp-end'], allowHalfOpen: true, timeout: 5000 }, () => socket.end('request'));
      let got = '';
      socket.on('data', (d) => (got += d.toString()));
      socket.on('end', () => resolve(got));
      socket.on('timeout', () => socket.destroy(new Error('timeout')));
      socket.on('error', reject);
    });
    expect(answer).toBe('got request');
  });

  it('weighted backends both take connections', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) seen.add((await tcpExchange(gw.ports['tcp-weights'], 'x')).split(':')[0]);
    expect([...seen].sort()).toEqual(['tcp-a', 'tcp-b']);
  });

  it('a UDP listener proxies datagrams and their answers', async () => {
    expect(await udpExchange(gw.ports.udp, 'hello')).toBe('udp-a:hello');
  });
});

describe('statuses', () => {
  it('routes are Accepted on their listeners and counted there', async () => {
    const docs = await readStatus(gw.stateDir);
    for (const [kind, name] of [['TLSRoute', 'pass-a'], ['TLSRoute', 'term'], ['TCPRoute', 'tcp'], ['UDPRoute', 'udp']]) {
      const parent = routeParent(findStatus(docs, kind, name), 'gw');
      expect(condition(parent?.conditions, 'Accepted')?.status).toBe('True');
      expect(condition(parent?.conditions, 'ResolvedRefs')?.status).toBe('True');
    }
    const listeners = findStatus(docs, 'Gateway', 'gw')?.status?.listeners as { name: string; attachedRoutes: number; supportedKinds: { kind: string }[] }[];
    expect(listeners.find((l) => l.name === 'tls')).toMatchObject({ attachedRoutes: 2, supportedKinds: [{ kind: 'TLSRoute' }] });
    expect(listeners.find((l) => l.name === 'udp')).toMatchObject({ attachedRoutes: 1, supportedKinds: [{ kind: 'UDPRoute' }] });
  });

  it('a TCPRoute on a TLS listener is not allowed there', async () => {
    const docs = await readStatus(gw.stateDir);
    const accepted = condition(routeParent(findStatus(docs, 'TCPRoute', 'wrong-listener'), 'gw')?.conditions, 'Accepted');
    expect(accepted).toMatchObject({ status: 'False', reason: 'NotAllowedByListeners' });
  });
});
