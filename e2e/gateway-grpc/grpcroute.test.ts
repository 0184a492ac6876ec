/**
 * GRPCRoute through the real controller CLI and real nginx 1.26.3, with real gRPC clients and
 * servers (@grpc/grpc-js over h2c). The conformance cases of the Gateway API suite
 * (grpcroute-exact-method-matching, -header-matching, -listener-hostname-matching, -weight)
 * each on a hostname of their own, plus regex methods, HTTP/1.1 and gRPC on one listener,
 * HTTPRoute/GRPCRoute separation, nginx errors as gRPC statuses and the statuses.
 */
import type * as grpc from '@grpc/grpc-js';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { echoPath, ECHO_SERVICE, grpcCall, grpcClient, type GrpcEchoBackend, startGrpcEchoBackend } from '../support/grpc-echo';
import { httpRequest } from '../support/http';
import { gateway, GATEWAY_API, httpRoute, type Manifest, serviceFor } from '../support/manifests';
import { freePort } from '../support/ports';
import { condition, findStatus, readStatus } from '../support/status';
import { clientSettingsPolicy, proxySettingsPolicy, rateLimitPolicy, target } from '../gateway-policies/support';
import { promises as fs } from 'fs';
import * as path from 'path';

const UNIMPLEMENTED = 12;

function grpcRoute(name: string, spec: { hostnames?: string[]; rules: Manifest[]; parentRefs?: Manifest[]; creationTimestamp?: string }): Manifest {
  return {
    apiVersion: GATEWAY_API,
    kind: 'GRPCRoute',
    metadata: { name, ...(spec.creationTimestamp ? { creationTimestamp: spec.creationTimestamp } : {}) },
    spec: { parentRefs: spec.parentRefs ?? [{ name: 'gw' }], ...(spec.hostnames ? { hostnames: spec.hostnames } : {}), rules: spec.rules },
  };
}
const to = (name: string, weight?: number) => ({ name, port: 80, ...(weight !== undefined ? { weight } : {}) });
const exact = (method: string) => ({ method: { service: ECHO_SERVICE, method } });
const hdr = (pairs: Record<string, string>) => ({ headers: Object.entries(pairs).map(([name, value]) => ({ name, value })) });

const grpcTarget = (name: string) => target(name, 'GRPCRoute');

let gw: GatewayFixture;
let hostsPort: number;
const backends: Record<string, GrpcEchoBackend> = {};
const clients = new Map<string, grpc.Client>();

function client(authority: string, port = gw.port): grpc.Client {
  const key = `${authority}:${port}`;
  let c = clients.get(key);
  if (!c) clients.set(key, (c = grpcClient(port, authority)));
  return c;
}

/** Which backend answered (its name), or the gRPC status code. */
async function who(authority: string, path = echoPath(), metadata: Record<string, string> = {}, port = gw.port): Promise<string | number> {
  const r = await grpcCall(client(authority, port), path, metadata);
  return r.code === 0 ? r.reply!.backend : r.code;
}

beforeAll(async () => {
  for (const name of ['v1', 'v2', 'v3']) backends[name] = await startGrpcEchoBackend(`grpc-infra-backend-${name}`);
  hostsPort = await freePort();
  const deadPort = await freePort();
  const services: Manifest[] = [
    ...Object.entries(backends).flatMap(([n, b]) => serviceFor(`grpc-${n}`, b.port)),
    ...serviceFor('grpc-dead', deadPort),
  ];
  const hostListeners = [
    { name: 'listener-1', port: hostsPort, hostname: 'bar.com' },
    { name: 'listener-2', port: hostsPort, hostname: 'foo.bar.com' },
    { name: 'listener-3', port: hostsPort, hostname: '*.bar.com' },
    { name: 'listener-4', port: hostsPort, hostname: '*.foo.com' },
  ];
  gw = await startGatewayFixture({
    backends: ['web'],
    files: {
      '10-services.yaml': services,
      '20-grpc.yaml': [
        // grpcroute-exact-method-matching
        grpcRoute('exact-matching', { hostnames: ['exact.grpc'], rules: [{ matches: [exact('Echo')], backendRefs: [to('grpc-v1')] }, { matches: [exact('EchoTwo')], backendRefs: [to('grpc-v2')] }] }),
        // grpcroute-header-matching
        grpcRoute('grpc-header-matching', {
          hostnames: ['header.grpc'],
          rules: [
            { matches: [hdr({ version: 'one' })], backendRefs: [to('grpc-v1')] },
            { matches: [hdr({ version: 'two' })], backendRefs: [to('grpc-v2')] },
            { matches: [hdr({ version: 'two', color: 'orange' })], backendRefs: [to('grpc-v1')] },
            { matches: [hdr({ color: 'blue' }), hdr({ color: 'green' })], backendRefs: [to('grpc-v1')] },
            { matches: [hdr({ color: 'red' }), hdr({ color: 'yellow' })], backendRefs: [to('grpc-v2')] },
          ],
        }),
        // RegularExpression methods, service-only and method-only matches, and their precedence.
        grpcRoute('regex-matching', {
          hostnames: ['regex.grpc'],
          rules: [
            { matches: [{ method: { type: 'RegularExpression', service: 'gateway_api_conformance\\..*', method: 'Echo(Two)?' } }], backendRefs: [to('grpc-v1')] },
            { matches: [{ method: { type: 'RegularExpression', method: 'Echo[A-Z].*' } }], backendRefs: [to('grpc-v2')] },
            { matches: [{ method: { service: 'other.Service' } }], backendRefs: [to('grpc-v3')] },
            { matches: [{ method: { method: 'Ping' } }], backendRefs: [to('grpc-v3')] },
          ],
        }),
        // grpcroute-weight
        grpcRoute('weighted-backends', { hostnames: ['weight.grpc'], rules: [{ backendRefs: [to('grpc-v1', 70), to('grpc-v2', 30), to('grpc-v3', 0)] }] }),
        grpcRoute('limited-429', { hostnames: ['limited.grpc'], rules: [{ backendRefs: [to('grpc-v1')] }] }),
        grpcRoute('limited-503', { hostnames: ['limited503.grpc'], rules: [{ backendRefs: [to('grpc-v1')] }] }),
        grpcRoute('buffered', { hostnames: ['buffered.grpc'], rules: [{ backendRefs: [to('grpc-v2')] }] }),
        grpcRoute('small-body', { hostnames: ['small.grpc'], rules: [{ backendRefs: [to('grpc-v1')] }] }),
        // grpcroute-all-backends-weight-zero
        grpcRoute('all-backends-weight-zero', { hostnames: ['zero.grpc'], rules: [{ backendRefs: [to('grpc-v1', 0), to('grpc-v2', 0)] }] }),
        grpcRoute('dead-backend', { hostnames: ['dead.grpc'], rules: [{ backendRefs: [to('grpc-dead')] }] }),
        grpcRoute('missing-backend', { hostnames: ['missing.grpc'], rules: [{ backendRefs: [to('grpc-nowhere')] }] }),
        // HTTPRoute (older) and GRPCRoute on the same hostname: only the older one is accepted.
        grpcRoute('clash-grpc', { hostnames: ['clash.example'], creationTimestamp: '2024-01-02T00:00:00Z', rules: [{ backendRefs: [to('grpc-v1')] }] }),
        // grpcroute-listener-hostname-matching
        grpcRoute('backend-v1', { parentRefs: [{ name: 'hosts', sectionName: 'listener-1' }], rules: [{ backendRefs: [to('grpc-v1')] }] }),
        grpcRoute('backend-v2', { parentRefs: [{ name: 'hosts', sectionName: 'listener-2' }], rules: [{ backendRefs: [to('grpc-v2')] }] }),
        grpcRoute('backend-v3', { parentRefs: [{ name: 'hosts', sectionName: 'listener-3' }, { name: 'hosts', sectionName: 'listener-4' }], rules: [{ backendRefs: [to('grpc-v3')] }] }),
      ],
      '25-policies.yaml': [
        rateLimitPolicy('rl-grpc-429', [grpcTarget('limited-429')], [{ rate: '1r/m' }], { rejectCode: 429 }),
        rateLimitPolicy('rl-grpc-503', [grpcTarget('limited-503')], [{ rate: '1r/m' }]),
        clientSettingsPolicy('cs-grpc', grpcTarget('small-body'), '100'),
        proxySettingsPolicy('ps-grpc', [grpcTarget('buffered')], { bufferSize: '8k' }),
      ],
      '30-http.yaml': [
        gateway('hosts', hostListeners),
        httpRoute('web', { hostnames: ['web.example'], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] }),
        httpRoute('clash-http', { hostnames: ['clash.example'], creationTimestamp: '2024-01-01T00:00:00Z', rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] }),
      ],
    },
  });
}, 90000);

afterAll(async () => {
  for (const c of clients.values()) c.close();
  await gw?.close();
  await Promise.all(Object.values(backends).map((b) => b.close()));
});

describe('conformance: GRPCRouteExactMethodMatching', () => {
  test('Echo -> v1, EchoTwo -> v2, EchoThree -> UNIMPLEMENTED', async () => {
    expect(await who('exact.grpc', echoPath('Echo'))).toBe('grpc-infra-backend-v1');
    expect(await who('exact.grpc', echoPath('EchoTwo'))).toBe('grpc-infra-backend-v2');
    expect(await who('exact.grpc', echoPath('EchoThree'))).toBe(UNIMPLEMENTED);
  });

  test('the backend sees the full method, the authority and the metadata', async () => {
    const r = await grpcCall(client('exact.grpc'), echoPath('Echo'), { 'x-request-id': 'abc' });
    expect(r.code).toBe(0);
    expect(r.reply).toMatchObject({ fullyQualifiedMethod: echoPath('Echo'), authority: 'exact.grpc' });
    expect(r.reply!.headers['x-request-id']).toBe('abc');
  });
});

describe('conformance: GRPCRouteHeaderMatching', () => {
  const cases: [Record<string, string>, string | number][] = [
    [{ Version: 'one' }, 'grpc-infra-backend-v1'],
    [{ Version: 'two' }, 'grpc-infra-backend-v2'],
    [{ Version: 'two', Color: 'orange' }, 'grpc-infra-backend-v1'],
    [{ Version: 'two', Color: 'blue' }, 'grpc-infra-backend-v2'],
    [{ Color: 'orange' }, UNIMPLEMENTED],
    [{ 'Some-Other-Header': 'one' }, UNIMPLEMENTED],
    [{ Color: 'blue' }, 'grpc-infra-backend-v1'],
    [{ Color: 'green' }, 'grpc-infra-backend-v1'],
    [{ Color: 'red' }, 'grpc-infra-backend-v2'],
    [{ Color: 'yellow' }, 'grpc-infra-backend-v2'],
    [{ Color: 'purple' }, UNIMPLEMENTED],
  ];
  test.each(cases)('metadata %j -> %s', async (md, expected) => {
    expect(await who('header.grpc', echoPath(), md)).toBe(expected);
  });
});

describe('RegularExpression, service-only and method-only method matches', () => {
  test('the longer service wins, then the longer method (GRPCRoute precedence)', async () => {
    // Rule 0: service regex 24 chars, method regex 10 chars: Echo and EchoTwo.
    expect(await who('regex.grpc', echoPath('Echo'))).toBe('grpc-infra-backend-v1');
    expect(await who('regex.grpc', echoPath('EchoTwo'))).toBe('grpc-infra-backend-v1');
    // EchoThree: only rule 1 (method regex, no service) matches.
    expect(await who('regex.grpc', echoPath('EchoThree'))).toBe('grpc-infra-backend-v2');
    // Service-only exact: any method of other.Service.
    expect(await who('regex.grpc', '/other.Service/Anything')).toBe(UNIMPLEMENTED); // v3 has no such method
    expect(backends.v3.calls.some((c) => c.fullyQualifiedMethod === '/other.Service/Anything')).toBe(false);
    // Method-only exact: Ping of any service (v3 does not implement it: UNIMPLEMENTED from v3 itself).
    expect(await who('regex.grpc', '/x.Y/Nope')).toBe(UNIMPLEMENTED);
  });

  test('a regex method must match the whole method name', async () => {
    expect(await who('regex.grpc', `/${ECHO_SERVICE}/EchoTwoX`)).toBe(UNIMPLEMENTED);
  });
});

describe('conformance: GRPCRouteWeight', () => {
  test('calls split 70/30, weight 0 gets none', async () => {
    const counts: Record<string, number> = {};
    for (let i = 0; i < 200; i++) {
      const b = String(await who('weight.grpc'));
      counts[b] = (counts[b] ?? 0) + 1;
    }
    expect(counts['grpc-infra-backend-v3']).toBeUndefined();
    expect((counts['grpc-infra-backend-v1'] ?? 0) + (counts['grpc-infra-backend-v2'] ?? 0)).toBe(200);
    expect(counts['grpc-infra-backend-v1'] / 200).toBeGreaterThan(0.58);
    expect(counts['grpc-infra-backend-v1'] / 200).toBeLessThan(0.82);
  });
});

describe('conformance: GRPCRouteAllBackendsWeightZero', () => {
  test('all backend weights 0: UNAVAILABLE', async () => {
    expect(await who('zero.grpc')).toBe(14);
  });
});

describe('conformance: GRPCRouteListenerHostnameMatching', () => {
  const cases: [string, string | number][] = [
    ['bar.com', 'grpc-infra-backend-v1'],
    ['foo.bar.com', 'grpc-infra-backend-v2'],
    ['baz.bar.com', 'grpc-infra-backend-v3'],
    ['boo.bar.com', 'grpc-infra-backend-v3'],
    ['multiple.prefixes.bar.com', 'grpc-infra-backend-v3'],
    ['multiple.prefixes.foo.com', 'grpc-infra-backend-v3'],
    ['foo.com', UNIMPLEMENTED],
    ['no.matching.host', UNIMPLEMENTED],
  ];
  test.each(cases)('authority %s -> %s', async (authority, expected) => {
    expect(await who(authority, echoPath(), {}, hostsPort)).toBe(expected);
  });
});

describe('one listener serves HTTP/1.1 and gRPC', () => {
  test('an HTTP/1.1 client and a gRPC client on the same port', async () => {
    const res = await httpRequest(gw.port, '/hello', { headers: { host: 'web.example' } });
    expect(res.status).toBe(200);
    expect(res.json.backend).toBe('web');
    expect(await who('exact.grpc', echoPath('Echo'))).toBe('grpc-infra-backend-v1');
  });
});

describe('nginx errors as gRPC statuses', () => {
  test('a backend that refuses connections: UNAVAILABLE (nginx 502), not an HTML page', async () => {
    const r = await grpcCall(client('dead.grpc'), echoPath());
    expect(r.code).toBe(14);
    expect(r.details).toBe('backend unavailable');
  });

  test('a rule whose backend does not exist: INTERNAL (nginx 500)', async () => {
    const r = await grpcCall(client('missing.grpc'), echoPath());
    expect(r.code).toBe(13);
  });

  test('an HTTP/1.1 client on a gRPC hostname gets a plain status', async () => {
    const res = await httpRequest(gw.port, '/nothing', { headers: { host: 'exact.grpc' } });
    expect(res.status).toBe(404);
  });
});

describe('policies on GRPCRoutes', () => {
  test('RateLimitPolicy rejections reach the client as RESOURCE_EXHAUSTED (429) / UNAVAILABLE (503)', async () => {
    expect(await who('limited.grpc')).toBe('grpc-infra-backend-v1');
    const r429 = await grpcCall(client('limited.grpc'), echoPath());
    expect(r429).toMatchObject({ code: 8, details: 'rate limit exceeded' });
    expect(await who('limited503.grpc')).toBe('grpc-infra-backend-v1');
    expect((await grpcCall(client('limited503.grpc'), echoPath())).code).toBe(14);
  });

  test('ClientSettingsPolicy body.maxSize: a larger message is RESOURCE_EXHAUSTED (413)', async () => {
    expect((await grpcCall(client('small.grpc'), echoPath(), {}, { pad: 'x'.repeat(10) })).code).toBe(0);
    const big = await grpcCall(client('small.grpc'), echoPath(), {}, { pad: 'x'.repeat(500) });
    expect(big).toMatchObject({ code: 8, details: 'request body too large' });
  });

  test('the policies are Accepted on their GRPCRoute targets, which report <Kind>Affected', async () => {
    const docs = await readStatus(gw.stateDir);
    for (const [kind, name] of [['RateLimitPolicy', 'rl-grpc-429'], ['ClientSettingsPolicy', 'cs-grpc']]) {
      const ancestor = findStatus(docs, kind, name)!.status.ancestors[0];
      expect(ancestor.ancestorRef).toMatchObject({ kind: 'GRPCRoute' });
      expect(condition(ancestor.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    }
    const ps = findStatus(docs, 'ProxySettingsPolicy', 'ps-grpc')!.status.ancestors[0];
    expect(condition(ps.conditions, 'Accepted')?.status).toBe('True');
    expect(condition(findStatus(docs, 'GRPCRoute', 'buffered')!.status.parents[0].conditions, 'ProxySettingsPolicyAffected')?.status).toBe('True');
    const parent = findStatus(docs, 'GRPCRoute', 'limited-429')!.status.parents[0];
    expect(condition(parent.conditions, 'RateLimitPolicyAffected')).toMatchObject({ status: 'True', reason: 'PolicyAffected' });
    expect(condition(findStatus(docs, 'GRPCRoute', 'small-body')!.status.parents[0].conditions, 'ClientSettingsPolicyAffected')?.status).toBe('True');
  });
});

test('ProxySettingsPolicy bufferSize on a GRPCRoute becomes its grpc_buffer_size; calls pass', async () => {
  expect(await who('buffered.grpc')).toBe('grpc-infra-backend-v2');
  const servers = await fs.readFile(path.join(gw.stateDir, 'nginx', 'conf', 'servers.conf'), 'utf8');
  expect(servers).toMatch(/grpc_buffer_size "8k";\n\s*grpc_pass/);
});

describe('HTTPRoute and GRPCRoute are not merged', () => {
  test('the older HTTPRoute keeps clash.example; the GRPCRoute is not accepted', async () => {
    const res = await httpRequest(gw.port, '/', { headers: { host: 'clash.example' } });
    expect(res.json.backend).toBe('web');
    const docs = await readStatus(gw.stateDir);
    const parent = findStatus(docs, 'GRPCRoute', 'clash-grpc')!.status.parents[0];
    expect(condition(parent.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'HostnameConflict' });
    expect(condition(findStatus(docs, 'HTTPRoute', 'clash-http')!.status.parents[0].conditions, 'Accepted')?.status).toBe('True');
  });
});

describe('statuses', () => {
  test('GRPCRoute parents Accepted / ResolvedRefs; listener kinds and attachedRoutes; GatewayClass features', async () => {
    const docs = await readStatus(gw.stateDir);
    const exactParent = findStatus(docs, 'GRPCRoute', 'exact-matching')!.status.parents[0];
    expect(condition(exactParent.conditions, 'Accepted')?.status).toBe('True');
    expect(condition(exactParent.conditions, 'ResolvedRefs')?.status).toBe('True');
    const missing = findStatus(docs, 'GRPCRoute', 'missing-backend')!.status.parents[0];
    expect(condition(missing.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    const listener = findStatus(docs, 'Gateway', 'gw')!.status.listeners[0];
    expect(listener.supportedKinds).toEqual(expect.arrayContaining([{ group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' }, { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]));
    // 11 GRPCRoutes on gw (clash-grpc lost its hostname to clash-http) + 2 HTTPRoutes.
    expect(listener.attachedRoutes).toBe(13);
    const features = findStatus(docs, 'GatewayClass', 'portcullis')!.status.supportedFeatures.map((f: { name: string }) => f.name);
    expect(features).toContain('GRPCRoute');
  });
});
