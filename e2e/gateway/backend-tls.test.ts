/**
 * TLS towards backends and client certificates, through the real controller and nginx: real
 * node HTTPS (and gRPC) backends with certificates made by openssl in the test. BackendTLSPolicy
 * (SNI and the verified name or subjectAltNames, CA bundles from ConfigMaps, what fails and how
 * its status says so), the
 * Gateway's client certificate towards backends (spec.tls.backend), and client certificate
 * validation on HTTPS listeners (spec.tls.frontend, both modes).
 */
import * as fs from 'fs';
import * as https from 'https';
import * as path from 'path';
import * as tls from 'tls';
import type { AddressInfo } from 'net';
import execa from 'execa';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { echoPath, grpcCall, grpcClient, type GrpcEchoBackend, startGrpcEchoBackend } from '../support/grpc-echo';
import { eventually } from '../support/http';
import { GATEWAY_API, httpRoute, Manifest } from '../support/manifests';
import { freePort } from '../support/ports';
import { condition, findStatus, readStatus } from '../support/status';
import { makeTempDir, removeDir } from '../support/tmp';

let gw: GatewayFixture;
let certDir: string;
let backend: https.Server;
/** One HTTPS backend per certificate of the subjectAltNames tests. */
const sanBackends: https.Server[] = [];
const grpcBackends: GrpcEchoBackend[] = [];
const pem: Record<string, string> = {};
const ports: Record<string, number> = {};

async function openssl(args: string[]): Promise<void> {
  await execa('openssl', args, { cwd: certDir });
}

async function makeCa(name: string, cn = name): Promise<void> {
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${cn}`]);
  pem[name] = fs.readFileSync(path.join(certDir, `${name}.crt`), 'utf8');
}

/** A certificate for `cn` signed by CA `ca`, with subjectAltNames `san` (default: DNS:cn; "": none). */
async function makeCert(name: string, cn: string, ca: string, san = `DNS:${cn}`): Promise<void> {
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  fs.writeFileSync(path.join(certDir, `${name}.ext`), san ? `subjectAltName=${san}\n` : 'basicConstraints=CA:FALSE\n');
  await openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`]);
  pem[name] = fs.readFileSync(path.join(certDir, `${name}.crt`), 'utf8');
  pem[`${name}.key`] = fs.readFileSync(path.join(certDir, `${name}.key`), 'utf8');
}

const caConfigMap = (name: string, ca: string | undefined): Manifest => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: ca === undefined ? {} : { 'ca.crt': pem[ca] } });
const tlsSecret = (name: string, cert: string): Manifest => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': Buffer.from(pem[cert]).toString('base64'), 'tls.key': Buffer.from(pem[`${cert}.key`]).toString('base64') },
});

/** A Service (port "https" 443) and its EndpointSlice for the TLS backend. */
function tlsService(name: string, port: number): Manifest[] {
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ name: 'https', port: 443, targetPort: port, protocol: 'TCP' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    },
  ];
}

function policy(name: string, service: string, validation: Record<string, unknown>): Manifest {
  return { apiVersion: GATEWAY_API, kind: 'BackendTLSPolicy', metadata: { name }, spec: { targetRefs: [{ group: '', kind: 'Service', name: service }], validation } };
}

const services = ['ok', 'wrong-name', 'wrong-ca', 'missing-ca', 'system', 'plain', 'schema-invalid'];
/**
 * subjectAltNames: Service -> the certificate its backend serves. The policies send the SNI
 * sni.example, a name none of these certificates carries: the listed names are what is checked.
 */
const sanServices: Record<string, string> = {
  'san-dns': 'san-dns',
  'san-wildcard': 'san-wildcard',
  'san-uri': 'san-uri',
  'san-none': 'san-dns',
  'san-cn-only': 'cn-only',
  'san-bad-value': 'san-dns',
};
const ca = [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }];
const SPIFFE = 'spiffe://cluster.example/ns/default/sa/backend';

beforeAll(async () => {
  certDir = await makeTempDir('portcullis-btls-');
  await makeCa('backend-ca');
  await makeCa('other-ca');
  await makeCa('client-ca');
  // Another CA under the same name as client-ca (OpenSSL 3.0, as in the data-plane image, then reports a bad signature rather than an unknown issuer).
  await makeCa('impostor-ca', 'client-ca');
  await makeCert('backend', 'backend.example', 'backend-ca');
  await makeCert('gateway-client', 'gateway.example', 'client-ca');
  await makeCert('frontend', 'front.example', 'backend-ca');
  await makeCert('good-client', 'good-client', 'client-ca');
  await makeCert('stranger', 'stranger', 'other-ca');
  await makeCert('impostor', 'impostor', 'impostor-ca');
  await makeCert('san-dns', 'not-this.example', 'backend-ca', 'DNS:abc.example.com,DNS:api.example.com');
  await makeCert('san-wildcard', 'not-this.example', 'backend-ca', 'DNS:*.wild.example');
  await makeCert('san-uri', 'not-this.example', 'backend-ca', `URI:${SPIFFE},DNS:other.example`);
  // The name only as the subject's commonName, no subjectAltName: not a SAN, so no match.
  await makeCert('cn-only', 'abc.example.com', 'backend-ca', '');
  // The backend answers with what it saw of the TLS connection: SNI and the client certificate.
  backend = https.createServer({ cert: pem.backend, key: pem['backend.key'], requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as tls.TLSSocket;
    const peer = socket.getPeerCertificate();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, sni: (socket as unknown as { servername?: string }).servername ?? null, client: peer && peer.subject ? peer.subject.CN : null }));
  });
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendPort = (backend.address() as AddressInfo).port;
  const sanPorts: Record<string, number> = {};
  for (const cert of new Set(Object.values(sanServices))) {
    const server = https.createServer({ cert: pem[cert], key: pem[`${cert}.key`] }, (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ cert, path: req.url, sni: ((req.socket as tls.TLSSocket) as unknown as { servername?: string }).servername ?? null }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    sanBackends.push(server);
    sanPorts[cert] = (server.address() as AddressInfo).port;
  }
  // gRPC over TLS (grpc_ssl_verify_san): the URI certificate, and the DNS one for a mismatch.
  for (const cert of ['san-uri', 'san-dns']) grpcBackends.push(await startGrpcEchoBackend(cert, '127.0.0.1', { cert: pem[cert], key: pem[`${cert}.key`] }));
  for (const name of ['https', 'httpsFallback', 'broken', 'grpc']) ports[name] = await freePort();
  const serverCert = { mode: 'Terminate', certificateRefs: [{ name: 'frontend-cert' }] };
  gw = await startGatewayFixture({
    listeners: [{ name: 'http' }],
    files: {
      'backends.yaml': [
        ...services.flatMap((s) => tlsService(s, backendPort)),
        ...Object.entries(sanServices).flatMap(([s, cert]) => tlsService(s, sanPorts[cert])),
        ...grpcBackends.flatMap((b) => tlsService(`grpc-${b.name}`, b.port)),
      ],
      'ca.yaml': [caConfigMap('backend-ca', 'backend-ca'), caConfigMap('other-ca', 'other-ca'), caConfigMap('client-ca', 'client-ca'), tlsSecret('gateway-client', 'gateway-client'), tlsSecret('frontend-cert', 'frontend')],
      'policies.yaml': [
        policy('ok', 'ok', { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }], hostname: 'backend.example' }),
        policy('wrong-name', 'wrong-name', { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }], hostname: 'other.example' }),
        policy('wrong-ca', 'wrong-ca', { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'other-ca' }], hostname: 'backend.example' }),
        policy('missing-ca', 'missing-ca', { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'no-such-configmap' }], hostname: 'backend.example' }),
        policy('san-dns', 'san-dns', { caCertificateRefs: ca, hostname: 'sni.example', subjectAltNames: [{ type: 'URI', uri: SPIFFE }, { type: 'Hostname', hostname: 'api.example.com' }] }),
        policy('san-wildcard', 'san-wildcard', { caCertificateRefs: ca, hostname: 'sni.example', subjectAltNames: [{ type: 'Hostname', hostname: 'x.wild.example' }] }),
        policy('san-uri', 'san-uri', { caCertificateRefs: ca, hostname: 'sni.example', subjectAltNames: [{ type: 'URI', uri: SPIFFE }] }),
        policy('san-none', 'san-none', {
          caCertificateRefs: ca,
          hostname: 'abc.example.com',
          // The hostname is on the certificate, but listed names replace the check of the hostname.
          subjectAltNames: [{ type: 'Hostname', hostname: 'def.example.com' }, { type: 'URI', uri: 'spiffe://cluster.example/ns/default/sa/other' }],
        }),
        policy('san-cn-only', 'san-cn-only', { caCertificateRefs: ca, hostname: 'abc.example.com', subjectAltNames: [{ type: 'Hostname', hostname: 'abc.example.com' }] }),
        policy('san-bad-value', 'san-bad-value', { caCertificateRefs: ca, hostname: 'sni.example', subjectAltNames: [{ type: 'URI', uri: 'spiffe://x/"a b";' }] }),
        policy('grpc-san-uri', 'grpc-san-uri', { caCertificateRefs: ca, hostname: 'sni.example', subjectAltNames: [{ type: 'URI', uri: SPIFFE }] }),
        policy('grpc-san-dns', 'grpc-san-dns', { caCertificateRefs: ca, hostname: 'sni.example', subjectAltNames: [{ type: 'URI', uri: SPIFFE }] }),
        // Fails the schema (no validation.hostname): still TLS-only, failing closed.
        policy('schema-invalid', 'schema-invalid', { caCertificateRefs: ca }),
        // The test CA is not among the system's: the chain cannot be verified.
        policy('system', 'system', { wellKnownCACertificates: 'System', hostname: 'backend.example' }),
      ],
      'gateways.yaml': [
        {
          apiVersion: GATEWAY_API,
          kind: 'Gateway',
          metadata: { name: 'mtls' },
          spec: {
            gatewayClassName: 'portcullis',
            tls: {
              backend: { clientCertificateRef: { name: 'gateway-client' } },
              frontend: {
                default: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'client-ca' }] } },
                perPort: [{ port: ports.httpsFallback, tls: { validation: { mode: 'AllowInsecureFallback', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'client-ca' }] } } }],
              },
            },
            listeners: [
              { name: 'https', port: ports.https, protocol: 'HTTPS', tls: serverCert },
              { name: 'https-fallback', port: ports.httpsFallback, protocol: 'HTTPS', tls: serverCert },
            ],
          },
        },
        {
          apiVersion: GATEWAY_API,
          kind: 'Gateway',
          metadata: { name: 'broken' },
          spec: {
            gatewayClassName: 'portcullis',
            tls: {
              backend: { clientCertificateRef: { name: 'no-such-secret' } },
              frontend: { default: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'no-such-ca' }] } } },
            },
            listeners: [{ name: 'https', port: ports.broken, protocol: 'HTTPS', tls: serverCert }],
          },
        },
        // GRPCRoutes of their own: the hostless HTTPRoutes of gw would conflict with them.
        { apiVersion: GATEWAY_API, kind: 'Gateway', metadata: { name: 'grpc' }, spec: { gatewayClassName: 'portcullis', listeners: [{ name: 'http', port: ports.grpc, protocol: 'HTTP' }] } },
      ],
      'routes.yaml': [
        httpRoute('to-tls', {
          rules: services.map((s) => ({ matches: [{ path: { type: 'PathPrefix', value: `/${s}` } }], backendRefs: [{ name: s, port: 443 }] })),
        }),
        httpRoute('to-san', {
          rules: Object.keys(sanServices).map((s) => ({ matches: [{ path: { type: 'PathPrefix', value: `/${s}` } }], backendRefs: [{ name: s, port: 443 }] })),
        }),
        {
          apiVersion: GATEWAY_API,
          kind: 'GRPCRoute',
          metadata: { name: 'grpc-san' },
          spec: {
            parentRefs: [{ name: 'grpc' }],
            rules: grpcBackends.map((b) => ({ matches: [{ headers: [{ name: 'x-backend', value: b.name }] }], backendRefs: [{ name: `grpc-${b.name}`, port: 443 }] })),
          },
        },
        httpRoute('mtls', { parentRefs: [{ name: 'mtls' }], rules: [{ backendRefs: [{ name: 'ok', port: 443 }] }] }),
      ],
    },
  });
}, 90000);

afterAll(async () => {
  await gw?.close();
  backend?.close();
  for (const s of sanBackends) s.close();
  await Promise.all(grpcBackends.map((b) => b.close()));
  if (certDir) await removeDir(certDir);
});

describe('BackendTLSPolicy', () => {
  test('requests go out over TLS with the policy hostname as SNI, verified against the CA bundle of the ConfigMap', async () => {
    const res = await gw.request('/ok/x');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ path: '/ok/x', sni: 'backend.example', client: null });
  });

  test('a certificate that does not carry the hostname, or signed by another CA: the request fails (502)', async () => {
    expect((await gw.request('/wrong-name')).status).toBe(502);
    expect((await gw.request('/wrong-ca')).status).toBe(502);
    expect((await gw.request('/system')).status).toBe(502);
  });

  test('a Service port without a policy is spoken to in plain text (the TLS backend refuses it)', async () => {
    expect((await gw.request('/plain')).status).not.toBe(200);
  });

  test('a policy with no usable CA certificate, a subjectAltName that is no hostname or URI, or a document that fails the schema: its backend answers 500', async () => {
    expect((await gw.request('/missing-ca')).status).toBe(500);
    expect((await gw.request('/san-bad-value')).status).toBe(500);
    expect((await gw.request('/schema-invalid')).status).toBe(500);
  });

  test('status: Accepted and ResolvedRefs on each Gateway that routes to the Service', async () => {
    const docs = await readStatus(gw.stateDir);
    const conditionsOf = (name: string, gateway = 'gw') =>
      (findStatus(docs, 'BackendTLSPolicy', name)?.status.ancestors as any[]).find((a) => a.ancestorRef.name === gateway)?.conditions;
    expect(condition(conditionsOf('ok'), 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(condition(conditionsOf('ok'), 'ResolvedRefs')).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });
    expect(condition(conditionsOf('ok', 'mtls'), 'Accepted')).toMatchObject({ status: 'True' });
    expect(condition(conditionsOf('missing-ca'), 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
    expect(condition(conditionsOf('missing-ca'), 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidCACertificateRef' });
    expect(condition(conditionsOf('missing-ca'), 'ResolvedRefs')?.message).toContain('no-such-configmap not found');
    expect(condition(conditionsOf('san-bad-value'), 'Accepted')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(condition(conditionsOf('san-bad-value'), 'Accepted')?.message).toContain('subjectAltNames[0]');
    expect(condition(conditionsOf('schema-invalid'), 'Accepted')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(condition(conditionsOf('schema-invalid'), 'Accepted')?.message).toContain('validation.hostname');
    for (const name of ['san-dns', 'san-uri', 'san-none']) expect(condition(conditionsOf(name), 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(condition(conditionsOf('grpc-san-uri', 'grpc'), 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    // The route itself is fine: its references resolve.
    const route = findStatus(docs, 'HTTPRoute', 'to-tls');
    expect(condition((route?.status.parents as any[])[0].conditions, 'ResolvedRefs')).toMatchObject({ status: 'True' });
  });

  test('a fixed ConfigMap is picked up: the policy is accepted and its backend reachable', async () => {
    await gw.write('ca-fix.yaml', [caConfigMap('no-such-configmap', 'backend-ca')]);
    const res = await eventually(() => gw.request('/missing-ca'), (r) => r.status === 200);
    expect(res.json).toMatchObject({ sni: 'backend.example' });
    await gw.remove('ca-fix.yaml');
    expect((await gw.request('/missing-ca')).status).toBe(500);
  });
});

/** One HTTPS request to the mtls Gateway, with the client certificate `cert` (or none). */
function mtlsGet(port: number, cert?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/hello',
        servername: 'front.example',
        ca: pem['backend-ca'],
        ...(cert ? { cert: pem[cert], key: pem[`${cert}.key`] } : {}),
        headers: { host: 'front.example' },
        agent: false,
        timeout: 5000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

describe('BackendTLSPolicy subjectAltNames', () => {
  test('a certificate with a listed DNS name (any of the list; a wildcard covering it) is accepted though it lacks the hostname, which is still the SNI', async () => {
    expect(await gw.request('/san-dns/x')).toMatchObject({ status: 200, json: { cert: 'san-dns', path: '/san-dns/x', sni: 'sni.example' } });
    expect(await gw.request('/san-wildcard')).toMatchObject({ status: 200, json: { cert: 'san-wildcard' } });
  });

  test('a certificate with the listed URI (a SPIFFE ID) is accepted', async () => {
    expect(await gw.request('/san-uri')).toMatchObject({ status: 200, json: { cert: 'san-uri', sni: 'sni.example' } });
  });

  test('no listed name among its subjectAltNames: the request fails (502), even with the hostname on it or as its commonName', async () => {
    expect((await gw.request('/san-none')).status).toBe(502);
    expect((await gw.request('/san-cn-only')).status).toBe(502);
  });

  test('GRPCRoute: the listed URI is accepted, a certificate without it is refused (UNAVAILABLE)', async () => {
    const client = grpcClient(ports.grpc, 'grpc.example');
    try {
      const ok = await grpcCall(client, echoPath(), { 'x-backend': 'san-uri' });
      expect(ok).toMatchObject({ code: 0, reply: { backend: 'san-uri' } });
      const refused = await grpcCall(client, echoPath(), { 'x-backend': 'san-dns' });
      expect(refused.code).toBe(14);
      expect(grpcBackends.find((b) => b.name === 'san-dns')!.calls).toHaveLength(0);
    } finally {
      client.close();
    }
  });
});

describe('Gateway spec.tls', () => {
  test('backend.clientCertificateRef: the Gateway presents its certificate to a TLS backend', async () => {
    const res = await mtlsGet(ports.https, 'good-client');
    expect(res).toMatchObject({ status: 200, body: { sni: 'backend.example', client: 'gateway.example' } });
  });

  test('frontend validation AllowValidOnly: a client without a certificate the CAs vouch for gets no answer', async () => {
    await expect(mtlsGet(ports.https)).rejects.toThrow();
    await expect(mtlsGet(ports.https, 'stranger')).rejects.toThrow();
    await expect(mtlsGet(ports.https, 'impostor')).rejects.toThrow();
  });

  test('frontend validation AllowInsecureFallback (perPort): any client is served', async () => {
    expect((await mtlsGet(ports.httpsFallback, 'good-client')).status).toBe(200);
    expect((await mtlsGet(ports.httpsFallback, 'stranger')).status).toBe(200);
    expect((await mtlsGet(ports.httpsFallback, 'impostor')).status).toBe(200);
    expect((await mtlsGet(ports.httpsFallback)).status).toBe(200);
  });

  test('status: ResolvedRefs and InsecureFrontendValidationMode on the Gateway, the listener conditions for a CA that cannot be used', async () => {
    const docs = await readStatus(gw.stateDir);
    const mtls = findStatus(docs, 'Gateway', 'mtls')?.status as any;
    expect(condition(mtls.conditions, 'Accepted')).toMatchObject({ status: 'True' });
    expect(condition(mtls.conditions, 'ResolvedRefs')).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });
    expect(condition(mtls.conditions, 'InsecureFrontendValidationMode')).toMatchObject({ status: 'True', reason: 'ConfigurationChanged' });
    const broken = findStatus(docs, 'Gateway', 'broken')?.status as any;
    expect(condition(broken.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidClientCertificateRef' });
    expect(condition(broken.conditions, 'InsecureFrontendValidationMode')).toBeUndefined();
    const listener = broken.listeners[0].conditions;
    expect(condition(listener, 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
    expect(condition(listener, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidCACertificateRef' });
    expect(condition(listener, 'Programmed')).toMatchObject({ status: 'False' });
    // The listener is not served: no certificate would be checked there.
    await expect(mtlsGet(ports.broken, 'good-client')).rejects.toThrow();
  });
});
