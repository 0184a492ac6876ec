/**
 * HTTPS listeners through the real controller and nginx, with certificates made by openssl and
 * a real TLS client sending SNI: one certificate per listener hostname, cross-namespace Secrets
 * through ReferenceGrant, the listener conditions for bad certificate references, HTTP -> HTTPS
 * redirect, and the certificate files kept private.
 */
import * as fs from 'fs';
import * as https from 'https';
import * as path from 'path';
import * as tls from 'tls';
import execa from 'execa';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { eventually } from '../support/http';
import { GATEWAY_API, httpRoute, Manifest } from '../support/manifests';
import { freePort } from '../support/ports';
import { condition, findStatus, readStatus } from '../support/status';
import { makeTempDir, removeDir } from '../support/tmp';

let gw: GatewayFixture;
let certDir: string;
let ca: string;
const pems: Record<string, { crt: string; key: string }> = {};
const ports: Record<string, number> = {};

async function openssl(args: string[]): Promise<void> {
  await execa('openssl', args, { cwd: certDir });
}

/** A CA, then a certificate signed by it for `cn` (also its subjectAltName). */
async function makeCert(name: string, cn: string): Promise<void> {
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  fs.writeFileSync(path.join(certDir, `${name}.ext`), `subjectAltName=DNS:${cn}\n`);
  await openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`]);
  pems[name] = { crt: fs.readFileSync(path.join(certDir, `${name}.crt`), 'utf8'), key: fs.readFileSync(path.join(certDir, `${name}.key`), 'utf8') };
}

function tlsSecret(name: string, cert: string, namespace?: string, type = 'kubernetes.io/tls'): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, ...(namespace ? { namespace } : {}) },
    type,
    data: { 'tls.crt': Buffer.from(pems[cert].crt).toString('base64'), 'tls.key': Buffer.from(pems[cert].key).toString('base64') },
  };
}

const certRef = (name: string, namespace?: string, kind?: string) => ({ mode: 'Terminate', certificateRefs: [{ name, ...(namespace ? { namespace } : {}), ...(kind ? { kind } : {}) }] });

/** One HTTPS request on a fresh TLS connection: the certificate the server chose and the answer. */
function httpsGet(port: number, servername: string, pathname = '/', host = servername): Promise<{ cn: string; status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: pathname, servername, ca, headers: { host }, agent: false, timeout: 5000 }, (res) => {
      const cn = (res.socket as tls.TLSSocket).getPeerCertificate().subject?.CN as string;
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ cn, status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  certDir = await makeTempDir('portcullis-certs-');
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=portcullis test CA']);
  ca = fs.readFileSync(path.join(certDir, 'ca.crt'), 'utf8');
  await makeCert('a', 'a.example');
  await makeCert('b', 'b.example');
  await makeCert('any', 'default.example');
  for (const name of ['https', 'httpsAny', 'missing', 'malformed', 'badChain', 'noGrant', 'badKind']) ports[name] = await freePort();
  gw = await startGatewayFixture({
    backends: ['app'],
    listeners: [{ name: 'http' }],
    files: {
      // HTTPS listeners on a second Gateway: the fixture gives each listener of `gw` its own port.
      'gateways.yaml': [
        {
          apiVersion: GATEWAY_API,
          kind: 'Gateway',
          metadata: { name: 'more' },
          spec: {
            gatewayClassName: 'portcullis',
            listeners: [
              { name: 'https-a', port: ports.https, protocol: 'HTTPS', hostname: 'a.example', tls: certRef('cert-a') },
              { name: 'https-b', port: ports.https, protocol: 'HTTPS', hostname: 'b.example', tls: certRef('cert-b', 'certs') },
              { name: 'https-any', port: ports.httpsAny, protocol: 'HTTPS', tls: certRef('cert-any') },
              { name: 'missing', port: ports.missing, protocol: 'HTTPS', tls: certRef('no-such-secret') },
              { name: 'malformed', port: ports.malformed, protocol: 'HTTPS', tls: certRef('malformed') },
              { name: 'bad-chain', port: ports.badChain, protocol: 'HTTPS', tls: certRef('bad-chain') },
              { name: 'no-grant', port: ports.noGrant, protocol: 'HTTPS', tls: certRef('cert-a', 'elsewhere') },
              { name: 'bad-kind', port: ports.badKind, protocol: 'HTTPS', tls: certRef('cert-a', undefined, 'ConfigMap') },
            ],
          },
        },
      ],
      'secrets.yaml': [
        tlsSecret('cert-a', 'a'),
        tlsSecret('cert-b', 'b', 'certs'),
        tlsSecret('cert-any', 'any'),
        tlsSecret('cert-a', 'a', 'elsewhere'),
        // b's certificate with a's key: not a pair.
        { ...tlsSecret('malformed', 'b'), data: { 'tls.crt': Buffer.from(pems.b.crt).toString('base64'), 'tls.key': Buffer.from(pems.a.key).toString('base64') } },
        // a's certificate and key, then a chain certificate nginx cannot read (it would refuse the whole configuration).
        { ...tlsSecret('bad-chain', 'a'), data: { 'tls.crt': Buffer.from(`${pems.a.crt}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`).toString('base64'), 'tls.key': Buffer.from(pems.a.key).toString('base64') } },
        {
          apiVersion: 'gateway.networking.k8s.io/v1beta1',
          kind: 'ReferenceGrant',
          metadata: { name: 'gateways-may-read-certs', namespace: 'certs' },
          spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default' }], to: [{ group: '', kind: 'Secret' }] },
        },
      ],
      'routes.yaml': [
        httpRoute('web', { parentRefs: [{ name: 'more', sectionName: 'https-a' }, { name: 'more', sectionName: 'https-b' }, { name: 'more', sectionName: 'https-any' }], rules: [{ backendRefs: [{ name: 'app', port: 80 }] }] }),
        httpRoute('to-https', {
          parentRefs: [{ name: 'gw', sectionName: 'http' }],
          rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: 301 } }] }],
        }),
      ],
    },
  });
}, 90000);

afterAll(async () => {
  await gw?.close();
  await removeDir(certDir);
});

test('each listener hostname is served with its own certificate, chosen by SNI', async () => {
  const a = await httpsGet(ports.https, 'a.example', '/hello');
  expect(a).toMatchObject({ cn: 'a.example', status: 200 });
  expect(a.body.backend).toBe('app');
  expect(a.body.headers['x-forwarded-proto']).toBe('https');
  // b.example's Secret lives in namespace certs; a ReferenceGrant there allows it.
  expect(await httpsGet(ports.https, 'b.example')).toMatchObject({ cn: 'b.example', status: 200 });
});

test('a Host that selects another listener than the SNI did: 421 Misdirected Request', async () => {
  expect((await httpsGet(ports.https, 'a.example', '/', 'b.example')).status).toBe(421);
  expect((await httpsGet(ports.https, 'b.example', '/', 'a.example')).status).toBe(421);
  expect((await httpsGet(ports.https, 'a.example', '/', 'a.example:443')).status).toBe(200);
});

test('a name no listener on the port holds a certificate for: the handshake is refused', async () => {
  await expect(httpsGet(ports.https, 'c.example')).rejects.toThrow();
});

test('a listener without hostname serves its certificate to any name', async () => {
  const res = await new Promise<string>((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port: ports.httpsAny, servername: 'whatever.test', ca, rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate().subject.CN as string);
      s.end();
    });
    s.on('error', reject);
  });
  expect(res).toBe('default.example');
  expect((await httpsGet(ports.httpsAny, 'default.example')).status).toBe(200);
});

test('keep-alive: several requests on one TLS connection', async () => {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<unknown>();
  for (let i = 0; i < 5; i++) {
    await new Promise<void>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: ports.https, path: `/k${i}`, servername: 'a.example', ca, headers: { host: 'a.example' }, agent }, (res) => {
        sockets.add(res.socket);
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(String(res.statusCode)))));
      });
      req.on('error', reject);
      req.end();
    });
  }
  agent.destroy();
  expect(sockets.size).toBe(1);
});

test('HTTP -> HTTPS redirect with RequestRedirect (scheme https means port 443, not written)', async () => {
  const res = await gw.request('/some/path?q=1', { host: 'a.example' });
  expect(res.status).toBe(301);
  expect(res.headers.location).toBe('https://a.example/some/path?q=1');
});

describe('listener conditions for certificate references', () => {
  const listenerStatus = async (name: string) => {
    const docs = await readStatus(gw.stateDir);
    return (findStatus(docs, 'Gateway', 'more')?.status.listeners as any[]).find((l) => l.name === name);
  };

  test.each([
    ['missing', 'InvalidCertificateRef', 'not found'],
    ['malformed', 'InvalidCertificateRef', 'does not belong'],
    ['bad-chain', 'InvalidCertificateRef', 'not a valid PEM'],
    ['bad-kind', 'InvalidCertificateRef', 'ConfigMap is not supported'],
    ['no-grant', 'RefNotPermitted', 'no ReferenceGrant'],
  ])('%s: ResolvedRefs False (%s), not programmed, not served', async (name, reason, text) => {
    const l = await listenerStatus(name);
    expect(condition(l.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason });
    expect(condition(l.conditions, 'ResolvedRefs')?.message).toContain(text);
    expect(condition(l.conditions, 'Programmed')?.status).toBe('False');
    const port = { missing: ports.missing, malformed: ports.malformed, 'bad-chain': ports.badChain, 'bad-kind': ports.badKind, 'no-grant': ports.noGrant }[name]!;
    await expect(httpsGet(port, 'a.example')).rejects.toThrow();
  });

  test('the valid listeners are Programmed', async () => {
    expect(condition((await listenerStatus('https-any')).conditions, 'Programmed')?.status).toBe('True');
    expect(condition((await listenerStatus('https-any')).conditions, 'ResolvedRefs')?.status).toBe('True');
  });

  test('fixing the Secret fixes the listener', async () => {
    await gw.write('fix.yaml', [tlsSecret('no-such-secret', 'any')]);
    await eventually(async () => condition((await listenerStatus('missing')).conditions, 'ResolvedRefs')?.status, (s) => s === 'True');
    expect((await httpsGet(ports.missing, 'default.example')).cn).toBe('default.example');
  });
});

test('certificate files are readable by the controller user only, and keys never reach the log', async () => {
  const dir = path.join(gw.stateDir, 'nginx', 'conf', 'secrets');
  const files = fs.readdirSync(dir);
  expect(files.length).toBeGreaterThanOrEqual(3);
  for (const f of files) expect(fs.statSync(path.join(dir, f)).mode & 0o777).toBe(0o600);
  const keyBody = pems.a.key.split('\n')[1];
  expect(JSON.stringify(gw.controller.logs)).not.toContain(keyBody);
  expect(gw.controller.output.join('')).not.toContain(keyBody);
  expect(fs.readFileSync(path.join(gw.stateDir, 'status.yaml'), 'utf8')).not.toContain(keyBody);
});
