/** A Gateway's spec.tls: the client certificate towards backends and client certificate validation. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import execa from 'execa';
import { buildGraph, DEFAULT_CONTROLLER_NAME, type Graph } from '../src/graph';
import { buildModel } from '../src/model';
import type { TargetTLS } from '../src/model';
import { gatewayClass, GW_API, http, parse, route, service, slice } from './graph-fixtures';

/** A self-signed certificate and its key, made by openssl for this run. */
let CA = '';
let KEY = '';
let docs: object[] = [];
beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-gwtls-'));
  try {
    await execa('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '2', '-subj', '/CN=test'], { cwd: dir });
    CA = fs.readFileSync(path.join(dir, 'c.pem'), 'utf8');
    KEY = fs.readFileSync(path.join(dir, 'k.pem'), 'utf8');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  docs = [
    gatewayClass(),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'default' }, data: { 'ca.crt': CA } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'other' }, data: { 'ca.crt': CA } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cert', namespace: 'default' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': CA, 'tls.key': KEY } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'opaque', namespace: 'default' }, type: 'Opaque', data: {} },
  ];
});

const https = (name: string, port: number, hostname?: string) => ({ name, port, protocol: 'HTTPS', ...(hostname ? { hostname } : {}), tls: { certificateRefs: [{ name: 'cert' }] } });
const withTls = (tls: object, listeners: object[] = [https('https', 443), http('http', 80)]) => ({
  apiVersion: GW_API,
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'default' },
  spec: { gatewayClassName: 'portcullis', listeners, tls },
});
const build = (gw: object, ...more: object[]): Graph => buildGraph(parse(...docs, gw, ...more).set, { controllerName: DEFAULT_CONTROLLER_NAME });

/** A TLS backend (a BackendTLSPolicy on its port) and routes to it from Gateways `gateways`. */
const tlsBackend = (...gateways: string[]) => [
  service('svc', [{ name: 'https', port: 443 }]),
  slice('svc-1', 'svc', [{ addresses: ['127.0.0.2'] }], [{ name: 'https', port: 8443 }]),
  {
    apiVersion: GW_API,
    kind: 'BackendTLSPolicy',
    metadata: { name: 'p', namespace: 'default' },
    spec: { targetRefs: [{ group: '', kind: 'Service', name: 'svc' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'svc.example' } },
  },
  ...gateways.map((gw) => route(`to-${gw}`, { parentRefs: [{ name: gw }], hostnames: [`${gw}.example`], rules: [{ backendRefs: [{ name: 'svc', port: 443 }] }] })),
];
/** The TLS of the targets of the rule locations, by route. */
const tlsByRoute = (g: Graph) => Object.fromEntries(buildModel(g).servers.flatMap((s) => s.ruleLocations).map((r) => [r.source.name, (r.target as { tls?: TargetTLS; upstream?: string })]));
const gwCondition = (g: Graph, type: string) => [...g.gateways, ...g.rejectedGateways][0].conditions.find((c) => c.type === type);
const listener = (g: Graph, name: string) => [...g.gateways, ...g.rejectedGateways][0].listeners.find((l) => l.name === name)!;
const caRef = (name: string, extra: object = {}) => ({ caCertificateRefs: [{ group: '', kind: 'ConfigMap', name, ...extra }] });

describe('spec.tls.backend.clientCertificateRef', () => {
  test('a valid Secret: ResolvedRefs True; the Gateway presents it to TLS backends, through upstreams of its own', () => {
    const plain = { apiVersion: GW_API, kind: 'Gateway', metadata: { name: 'plain', namespace: 'default' }, spec: { gatewayClassName: 'portcullis', listeners: [http('http', 8080)] } };
    const g = build(withTls({ backend: { clientCertificateRef: { name: 'cert' } } }), plain, ...tlsBackend('gw', 'plain'));
    expect(gwCondition(g, 'ResolvedRefs')).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });
    const targets = tlsByRoute(g);
    expect(targets['to-gw'].tls).toMatchObject({ name: 'svc.example', certificate: 'secrets/default_cert.pem' });
    // One nginx serves both Gateways here: a connection kept for one is never handed to the other.
    expect(targets['to-plain'].tls?.certificate).toBeUndefined();
    expect(targets['to-plain'].upstream).not.toBe(targets['to-gw'].upstream);
    expect(buildModel(g).secretFiles?.['secrets/default_cert.pem']).toContain('PRIVATE KEY');
  });

  test.each([
    ['missing', { name: 'nope' }, 'InvalidClientCertificateRef'],
    ['not kubernetes.io/tls', { name: 'opaque' }, 'InvalidClientCertificateRef'],
    ['another kind', { name: 'cert', kind: 'ConfigMap' }, 'InvalidClientCertificateRef'],
    ['another group', { name: 'cert', group: 'example.io' }, 'InvalidClientCertificateRef'],
    ['in another namespace without a ReferenceGrant', { name: 'cert', namespace: 'other' }, 'RefNotPermitted'],
  ])('%s: ResolvedRefs False (%s), the Gateway stays Accepted', (_n, ref, reason) => {
    const g = build(withTls({ backend: { clientCertificateRef: ref } }));
    expect(gwCondition(g, 'ResolvedRefs')).toMatchObject({ status: 'False', reason });
    expect(gwCondition(g, 'Accepted')).toMatchObject({ status: 'True' });
    expect(tlsByRoute(build(withTls({ backend: { clientCertificateRef: ref } }), ...tlsBackend('gw')))['to-gw'].tls).toMatchObject({ name: 'svc.example' });
    expect(tlsByRoute(build(withTls({ backend: { clientCertificateRef: ref } }), ...tlsBackend('gw')))['to-gw'].tls?.certificate).toBeUndefined();
  });
});

describe('spec.tls.frontend validation', () => {
  test('default and perPort: HTTPS listeners validate, HTTP listeners are left alone', () => {
    const g = build(withTls({ frontend: { default: { validation: caRef('ca') }, perPort: [{ port: 8443, tls: { validation: { ...caRef('ca'), mode: 'AllowInsecureFallback' } } }, { port: 80, tls: { validation: caRef('nope') } }] } }, [https('https', 443), https('alt', 8443, 'alt.example'), http('http', 80)]));
    expect(listener(g, 'https').clientValidation).toMatchObject({ mode: 'AllowValidOnly' });
    expect(listener(g, 'alt').clientValidation).toMatchObject({ mode: 'AllowInsecureFallback' });
    expect(listener(g, 'http')).toMatchObject({ valid: true });
    expect(listener(g, 'http').clientValidation).toBeUndefined();
    expect(gwCondition(g, 'InsecureFrontendValidationMode')).toMatchObject({ status: 'True', reason: 'ConfigurationChanged' });
    const servers = buildModel(g).servers;
    expect(servers.find((s) => s.port === 443)?.tls).toMatchObject({ clientValidation: { required: true } });
    expect(servers.find((s) => s.port === 8443 && s.serverNames[0] === 'alt.example')?.tls).toMatchObject({ clientValidation: { required: false } });
    expect(servers.find((s) => s.port === 80)?.tls).toBeUndefined();
  });

  test.each([
    ['missing ConfigMap', caRef('nope'), 'InvalidCACertificateRef'],
    ['unsupported kind', { caCertificateRefs: [{ group: '', kind: 'Service', name: 'x' }] }, 'InvalidCACertificateKind'],
    ['another namespace without a ReferenceGrant', caRef('ca', { namespace: 'other' }), 'RefNotPermitted'],
  ])('%s: the listener is not Accepted (NoValidCACertificate) nor served', (_n, validation, reason) => {
    const g = build(withTls({ frontend: { default: { validation } } }));
    const l = listener(g, 'https');
    expect(l.valid).toBe(false);
    expect(l.conditions.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'NoValidCACertificate' });
    expect(l.conditions.find((c) => c.type === 'ResolvedRefs')).toMatchObject({ status: 'False', reason });
    expect(l.conditions.find((c) => c.type === 'Programmed')).toMatchObject({ status: 'False' });
    expect(listener(g, 'http').valid).toBe(true);
    expect(buildModel(g).servers.every((s) => s.port !== 443)).toBe(true);
  });
});
