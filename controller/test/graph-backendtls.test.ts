/** BackendTLSPolicy: which backends it applies to, conflicts, CA references and what nginx gets. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { buildGraph, DEFAULT_CONTROLLER_NAME, type Graph } from '../src/graph';
import execa from 'execa';
import { buildModel } from '../src/model';
import { prefixLayout, renderConfig } from '../src/render';
import { ensurePrefixDirs } from '../src/apply/files';
import { defaultNginxBinary } from '../src/apply/nginx-binary';
import { computeStatuses } from '../src/status';
import { gateway, gatewayClass, GW_API, http, parse, route, service, slice } from './graph-fixtures';
import { parseManifests } from '../src/resources';

/** Documents as a file holds them, invalid ones included (graph-fixtures' parse refuses those). */
const parseAny = (...docs: object[]) => parseManifests(docs.map((doc, i) => ({ source: `doc-${i}.yaml`, doc })));

/** A self-signed CA certificate (its content is only parsed, never trusted). */
const CA = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUEPAn20EbqXWTI4uiwZwaY9H8pQswCgYIKoZIzj0EAwIw
IjEgMB4GA1UEAwwXcG9ydGN1bGxpcyB1bml0IHRlc3QgQ0EwIBcNMjYxMTI5MDc0
MzIwWhgPMjEyNjExMDUwNzQzMjBaMCIxIDAeBgNVBAMMF3BvcnRjdWxsaXMgdW5p
dCB0ZXN0IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE+KaXG0SEUaI6eW+1
kk0ZONdHqEgJR9l/bj8ExSUNI3ucOge9TJLtNiJuf9dlBcQRN/SBBM3mvh8o2SQg
p/6SCqNTMFEwHQYDVR0OBBYEFFf61hzdY+stl9JssuXMAwZ08v2AMB8GA1UdIwQY
MBaAFFf61hzdY+stl9JssuXMAwZ08v2AMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZI
zj0EAwIDSQAwRgIhANpmf2RiaJg1pxIaRdBfMCDHcxIbvKAXVisqrE3kjnX3AiEA
rgkVm9nO1qP9mDzxEnzgxjegknfec+dSzeXgTV9+hTs=
-----END CERTIFICATE-----
`;

const base = [
  gatewayClass(),
  gateway('gw', [http('web')]),
  service('svc', [{ name: 'https', port: 443 }, { name: 'admin', port: 9443 }, { name: 'plain', port: 80 }]),
  slice('svc-1', 'svc', [{ addresses: ['127.0.0.2'] }], [{ name: 'https', port: 8443 }, { name: 'admin', port: 9443 }, { name: 'plain', port: 8080 }]),
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'default' }, data: { 'ca.crt': CA } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'empty', namespace: 'default' }, data: {} },
];
const toPort = (port: number) => route('r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'svc', port }] }] });

function policy(name: string, validation: object, extra: { sectionName?: string; created?: string } = {}) {
  return {
    apiVersion: GW_API,
    kind: 'BackendTLSPolicy',
    metadata: { name, namespace: 'default', creationTimestamp: extra.created ?? '2026-01-01T00:00:00Z' },
    spec: { targetRefs: [{ group: '', kind: 'Service', name: 'svc', ...(extra.sectionName ? { sectionName: extra.sectionName } : {}) }], validation },
  };
}
const valid = { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'svc.example' };
const build = (...docs: object[]): Graph => buildGraph(parse(...base, ...docs).set, { controllerName: DEFAULT_CONTROLLER_NAME });
const conditions = (g: Graph, name: string) => g.backendTLSPolicies!.find((p) => p.name === name)!.conditions;

describe('BackendTLSPolicy: targets and precedence', () => {
  test('applies to the Service ports it targets, with its hostname and CA bundle; ancestors are the Gateways routing there', () => {
    const g = build(policy('p', valid), toPort(443));
    const b = g.routes[0].rules[0].backends[0];
    expect(b.tls).toMatchObject({ policy: 'default/p', valid: true, hostname: 'svc.example' });
    expect(b.tls!.ca!.pem).toContain('BEGIN CERTIFICATE');
    expect(g.backendTLSPolicies).toEqual([expect.objectContaining({ name: 'p', ancestors: [{ namespace: 'default', name: 'gw' }] })]);
    expect(conditions(g, 'p').map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Accepted', 'True', 'Accepted'],
      ['ResolvedRefs', 'True', 'ResolvedRefs'],
    ]);
  });

  test('sectionName names one port: other ports stay plain text', () => {
    const g = build(policy('p', valid, { sectionName: 'admin' }), toPort(443));
    expect(g.routes[0].rules[0].backends[0].tls).toBeUndefined();
    expect(g.backendTLSPolicies![0].ancestors).toEqual([]);
  });

  test('the oldest of two policies on one target wins, the other is Conflicted; a port-specific one beats the Service-wide one there', () => {
    const g = build(
      policy('newer', { ...valid, hostname: 'newer.example' }, { created: '2026-02-01T00:00:00Z' }),
      policy('older', valid, { created: '2026-01-01T00:00:00Z' }),
      policy('port', { ...valid, hostname: 'port.example' }, { sectionName: 'admin', created: '2026-03-01T00:00:00Z' }),
      route('r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'svc', port: 443 }] }, { backendRefs: [{ name: 'svc', port: 9443 }] }] }),
    );
    expect(g.routes[0].rules.map((r) => r.backends[0].tls?.hostname)).toEqual(['svc.example', 'port.example']);
    expect(conditions(g, 'newer')[0]).toMatchObject({ type: 'Accepted', status: 'False', reason: 'Conflicted' });
    // A Conflicted policy says so on the Gateways that route to its target.
    expect(g.backendTLSPolicies!.find((p) => p.name === 'newer')!.ancestors).toEqual([{ namespace: 'default', name: 'gw' }]);
    expect(conditions(g, 'older')[0]).toMatchObject({ status: 'True' });
    expect(conditions(g, 'port')[0]).toMatchObject({ status: 'True' });
  });

  test('appProtocol https is accepted on a port a policy applies to, and UnsupportedProtocol without one', () => {
    const svc = service('web', [{ name: 'https', port: 443, appProtocol: 'HTTPS' }]);
    const r = route('r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 443 }] }] });
    const p = { ...policy('p', valid), spec: { ...policy('p', valid).spec, targetRefs: [{ group: '', kind: 'Service', name: 'web' }] } };
    expect(build(svc, r, p).routes[0].rules[0].backends[0]).toMatchObject({ valid: true, tls: { valid: true } });
    expect(build(svc, r).routes[0].rules[0].backends[0]).toMatchObject({ valid: false, invalidReason: 'UnsupportedProtocol' });
  });
});

describe('BackendTLSPolicy: incremental builds', () => {
  test('a ConfigMap no policy names keeps the resolved rules; a change to a named one is picked up', () => {
    const set = parse(...base, policy('p', { ...valid, caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'empty' }] }), toPort(443)).set;
    const options = { controllerName: DEFAULT_CONTROLLER_NAME };
    const first = buildGraph(set, options);
    const other = parse({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unrelated', namespace: 'default' }, data: { x: 'y' } }).set.configMaps!;
    const second = buildGraph({ ...set, configMaps: [...set.configMaps!, ...other] }, options);
    expect(second.routes[0].rules).toBe(first.routes[0].rules);
    expect(first.routes[0].rules[0].backends[0].tls?.valid).toBe(false);
    const fixed = parse({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'empty', namespace: 'default' }, data: { 'ca.crt': CA } }).set.configMaps!;
    const third = buildGraph({ ...set, configMaps: [...set.configMaps!.filter((c) => c.metadata.name !== 'empty'), ...fixed] }, options);
    expect(third.routes[0].rules[0].backends[0].tls?.valid).toBe(true);
  });
});

describe('BackendTLSPolicy: what cannot be enforced fails closed', () => {
  test.each([
    ['a missing ConfigMap', { ...valid, caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'nope' }] }, 'NoValidCACertificate', 'InvalidCACertificateRef'],
    ['a ConfigMap without ca.crt', { ...valid, caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'empty' }] }, 'NoValidCACertificate', 'InvalidCACertificateRef'],
    ['an unknown kind', { ...valid, caCertificateRefs: [{ group: 'example.io', kind: 'Bundle', name: 'x' }] }, 'NoValidCACertificate', 'InvalidKind'],
    ['an unknown well-known set', { wellKnownCACertificates: 'example.com/mine', hostname: 'svc.example' }, 'Invalid', 'ResolvedRefs'],
    ['a URI subjectAltName with a space', { ...valid, subjectAltNames: [{ type: 'URI', uri: 'spiffe://x/a b' }] }, 'Invalid', 'ResolvedRefs'],
    ['a URI subjectAltName with a quote', { ...valid, subjectAltNames: [{ type: 'Hostname', hostname: 'svc.example' }, { type: 'URI', uri: 'spiffe://x/"y' }] }, 'Invalid', 'ResolvedRefs'],
    ['a URI subjectAltName with a backslash', { ...valid, subjectAltNames: [{ type: 'URI', uri: 'spiffe://x/y\\' }] }, 'Invalid', 'ResolvedRefs'],
    ['a relative URI subjectAltName', { ...valid, subjectAltNames: [{ type: 'URI', uri: 'svc.example/y' }] }, 'Invalid', 'ResolvedRefs'],
    ['a URI subjectAltName of 254 characters', { ...valid, subjectAltNames: [{ type: 'URI', uri: `spiffe://x/${'a'.repeat(243)}` }] }, 'Invalid', 'ResolvedRefs'],
    ['a Hostname subjectAltName that is no hostname', { ...valid, subjectAltNames: [{ type: 'Hostname', hostname: 'svc example;' }] }, 'Invalid', 'ResolvedRefs'],
  ])('%s: Accepted False, and the backend answers 500', (_name, validation, accepted, resolved) => {
    const g = build(policy('p', validation), toPort(443));
    const [a, r] = conditions(g, 'p');
    expect(a).toMatchObject({ type: 'Accepted', status: 'False', reason: accepted });
    expect(r).toMatchObject({ type: 'ResolvedRefs', reason: resolved });
    expect(g.routes[0].rules[0].backends[0]).toMatchObject({ valid: true, tls: { valid: false } });
    expect(buildModel(g).servers[0].ruleLocations[0].target).toEqual({ kind: 'status', code: 500 });
  });

  // A file is read without the CRD's validation: a policy that fails the schema must not leave
  // its Service spoken to in plain text.
  test.each([
    ['no hostname', { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] }, 'validation.hostname'],
    ['both CA references and a well-known set', { ...valid, wellKnownCACertificates: 'System' }, 'must not contain both'],
    ['a wildcard hostname', { ...valid, hostname: '*.svc.example' }, 'without a wildcard'],
  ])('a document that fails its schema (%s) still makes its targets fail closed, with one status naming the problem', (_name, validation, problem) => {
    const parsed = parseAny(...base, policy('p', validation), toPort(443));
    expect(parsed.invalid).toEqual([expect.objectContaining({ kind: 'BackendTLSPolicy', name: 'p', standIn: true })]);
    const g = buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
    expect(g.routes[0].rules[0].backends[0]).toMatchObject({ valid: true, tls: { policy: 'default/p', valid: false } });
    expect(buildModel(g).servers[0].ruleLocations[0].target).toEqual({ kind: 'status', code: 500 });
    const [accepted] = conditions(g, 'p');
    expect(accepted).toMatchObject({ type: 'Accepted', status: 'False', reason: 'Invalid' });
    expect(accepted.message).toContain(problem);
    const reports = computeStatuses(g, parsed, { programmed: true, addresses: [] }).filter((r) => r.kind === 'BackendTLSPolicy');
    expect(reports).toHaveLength(1);
    expect(reports[0].status).toMatchObject({ ancestors: [{ ancestorRef: { name: 'gw' }, conditions: expect.arrayContaining([expect.objectContaining({ type: 'Accepted', status: 'False', reason: 'Invalid' })]) }] });
  });

  test('an unsupported apiVersion fails closed the same way; a document naming no target is only reported', () => {
    const old = { ...policy('p', valid), apiVersion: 'gateway.networking.k8s.io/v1alpha2' };
    const g = buildGraph(parseAny(...base, old, toPort(443)).set, { controllerName: DEFAULT_CONTROLLER_NAME });
    expect(g.routes[0].rules[0].backends[0].tls).toMatchObject({ valid: false });
    const none = { ...policy('q', {}), spec: { targetRefs: 'svc' } };
    const parsed = parseAny(...base, none, toPort(443));
    expect(parsed.invalid).toEqual([expect.objectContaining({ name: 'q' })]);
    expect(parsed.invalid[0].standIn).toBeUndefined();
    expect(buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME }).routes[0].rules[0].backends[0].tls).toBeUndefined();
  });

  test('the reason names the subjectAltName and what is wrong with it', () => {
    const g = build(policy('p', { ...valid, subjectAltNames: [{ type: 'Hostname', hostname: 'svc.example' }, { type: 'URI', uri: 'spiffe://x/a b' }] }), toPort(443));
    expect(conditions(g, 'p')[0].message).toMatch(/^spec\.validation\.subjectAltNames\[1\]: "spiffe:\/\/x\/a b" holds characters a URI cannot/);
  });

  test('subjectAltNames are accepted and verified instead of the hostname (which stays the SNI); System trusts the system bundle', () => {
    const withSan = build(policy('p', { ...valid, subjectAltNames: [{ type: 'Hostname', hostname: 'other.example' }, { type: 'URI', uri: 'spiffe://x/y' }] }), toPort(443));
    expect(conditions(withSan, 'p')[0]).toMatchObject({ status: 'True' });
    expect(buildModel(withSan).servers[0].ruleLocations[0].target).toMatchObject({ kind: 'upstream', tls: { name: 'svc.example', san: ['dns:other.example', 'uri:spiffe://x/y'] } });
    const system = build(policy('p', { wellKnownCACertificates: 'System', hostname: 'svc.example' }), toPort(443));
    expect(buildModel(system).servers[0].ruleLocations[0].target).toMatchObject({ kind: 'upstream', tls: { name: 'svc.example', trusted: '/etc/ssl/certs/ca-certificates.crt' } });
  });
});

describe('BackendTLSPolicy: the nginx configuration', () => {
  test('proxy_pass https (grpc_pass grpcs for a GRPCRoute) with SNI, verification and the CA file, which nginx -t accepts; the status names the Gateway', async () => {
    const grpc = { apiVersion: GW_API, kind: 'GRPCRoute', metadata: { name: 'g', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: ['grpc.example'], rules: [{ backendRefs: [{ name: 'svc', port: 443 }] }] } };
    const web = route('r', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example'], rules: [{ backendRefs: [{ name: 'svc', port: 443 }] }] });
    const g = build(policy('p', valid), web, grpc);
    const model = buildModel(g);
    const target = model.servers.flatMap((srv) => srv.ruleLocations).find((r) => r.source.name === 'r')!.target as { upstream: string; tls: { trusted: string } };
    expect(model.secretFiles?.[target.tls.trusted]).toContain('BEGIN CERTIFICATE');
    const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-btls-'));
    try {
      const { files } = renderConfig(model, { listenAddress: '127.0.0.1', prefix });
      const text = Object.values(files).join('\n');
      expect(text).toContain(`proxy_pass https://${target.upstream};`);
      expect(text).toMatch(/proxy_ssl_name "?svc\.example"?;/);
      expect(text).toContain('proxy_ssl_server_name on;');
      expect(text).toContain('proxy_ssl_verify on;');
      expect(text).toMatch(/grpc_pass grpcs:\/\/g_default__svc_443_x\w+;/);
      expect(text).toMatch(/grpc_ssl_name "?svc\.example"?;/);
      expect(text).toContain('grpc_ssl_verify on;');
      expect(text).toMatch(new RegExp(`proxy_ssl_trusted_certificate "?${target.tls.trusted.replace(/\./g, '\\.')}"?;`));
    } finally {
      fs.rmSync(prefix, { recursive: true, force: true });
    }
    const report = computeStatuses(g, parse(...base), { programmed: true, addresses: [] }).find((r) => r.kind === 'BackendTLSPolicy');
    expect(report?.status).toMatchObject({ ancestors: [{ ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'gw' }, controllerName: DEFAULT_CONTROLLER_NAME }] });
  });

  test('a RequestMirror or an ExternalAuth server on a port the policy applies to is spoken to over TLS too', () => {
    const g = build(
      policy('p', valid, { sectionName: 'https' }),
      route('r', {
        parentRefs: [{ name: 'gw' }],
        rules: [
          { matches: [{ path: { type: 'PathPrefix', value: '/m' } }], filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'svc', port: 443 } } }], backendRefs: [{ name: 'svc', port: 80 }] },
          { matches: [{ path: { type: 'PathPrefix', value: '/a' } }], filters: [{ type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: { name: 'svc', port: 443 }, http: {} } }], backendRefs: [{ name: 'svc', port: 80 }] },
        ],
      }),
    );
    const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-btls-'));
    try {
      const servers = renderConfig(buildModel(g), { listenAddress: '127.0.0.1', prefix }).files['servers.conf'];
      expect(servers).toMatch(/proxy_pass https:\/\/b_default__svc_443_x\w+\$request_uri;/);
      expect(servers).toMatch(/proxy_pass http:\/\/b_default__svc_80;/);
      const auth = servers.slice(servers.search(/location = "?\/_portcullis_auth\//));
      expect(auth).toMatch(/proxy_ssl_name "?svc\.example"?;[\s\S]*proxy_ssl_verify on;[\s\S]*proxy_pass "https:\/\/b_default__svc_443_x\w+\$\{request_uri\}";/);
    } finally {
      fs.rmSync(prefix, { recursive: true, force: true });
    }
  });

  test('a weighted rule with a TLS backend and a plain one: each backend gets a location of its own', () => {
    const g = build(
      policy('p', valid, { sectionName: 'https' }),
      route('r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'svc', port: 443, weight: 1 }, { name: 'svc', port: 80, weight: 1 }] }] }),
    );
    const rules = buildModel(g).servers[0].ruleLocations;
    expect(rules[0].target.kind).toBe('backends');
    expect(rules.slice(1).map((r) => (r.target as { tls?: { name: string } }).tls?.name)).toEqual(['svc.example', undefined]);
  });
});

describe('BackendTLSPolicy subjectAltNames: the nginx configuration', () => {
  test('proxy_ssl_verify_san / grpc_ssl_verify_san list every name, quoted as nginx reads them; nginx -t accepts it', async () => {
    // RFC 3986 lets a URI hold ; $ ' # and the like, which mean something to nginx unquoted.
    const sans = [
      { type: 'URI', uri: "spiffe://x.example/ns/a;b$c'd'#e" },
      { type: 'Hostname', hostname: '*.wild.example' },
      { type: 'Hostname', hostname: 'svc.example' },
    ];
    const grpc = { apiVersion: GW_API, kind: 'GRPCRoute', metadata: { name: 'g', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: ['grpc.example'], rules: [{ backendRefs: [{ name: 'svc', port: 443 }] }] } };
    const web = route('r', { parentRefs: [{ name: 'gw' }], hostnames: ['web.example'], rules: [{ backendRefs: [{ name: 'svc', port: 443 }] }] });
    const plain = route('p', { parentRefs: [{ name: 'gw' }], hostnames: ['plain.example'], rules: [{ backendRefs: [{ name: 'svc', port: 9443 }] }] });
    const g = build(policy('p', { ...valid, subjectAltNames: sans }, { sectionName: 'https' }), policy('q', valid, { sectionName: 'admin' }), web, grpc, plain);
    expect(conditions(g, 'p')[0]).toMatchObject({ status: 'True' });
    const model = buildModel(g);
    const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-btls-'));
    try {
      const { files } = renderConfig(model, { listenAddress: '127.0.0.1', prefix });
      const text = Object.values(files).join('\n');
      const list = ` "uri:spiffe://x.example/ns/a;b$c'd'#e" "dns:*.wild.example" "dns:svc.example";`;
      expect(text).toContain(`proxy_ssl_verify_san${list}`);
      expect(text).toContain(`grpc_ssl_verify_san${list}`);
      // The policy without subjectAltNames keeps the hostname check, and the two never share an upstream.
      expect(text.match(/_ssl_verify_san /g)).toHaveLength(2);
      const conf = path.join(prefix, 'conf');
      fs.mkdirSync(path.join(conf, 'secrets'), { recursive: true });
      ensurePrefixDirs(prefixLayout(prefix));
      for (const [name, content] of Object.entries({ ...files, ...model.secretFiles })) fs.writeFileSync(path.join(conf, name), content);
      const res = await execa(defaultNginxBinary(), ['-t', '-p', prefix + '/', '-e', 'stderr', '-c', path.join(conf, 'nginx.conf')], { reject: false, all: true });
      expect(res.all).toMatch(/test is successful/);
    } finally {
      fs.rmSync(prefix, { recursive: true, force: true });
    }
  });
});
