/**
 * On Kubernetes every Gateway gets a model of its own, built with a memo of its own
 * (configserver/sources.ts), while the module-level caches of model/ and render/ serve every
 * Gateway. A memoised per-Gateway build must give the config a fresh build gives, over the
 * kind of sequence the Gateway API conformance suite runs: several Gateways with a hostless
 * port-80 listener each, routes applied and deleted test after test (one name reused with other
 * backends), weighted backends across Services of one namespace, RegularExpression paths, and
 * EndpointSlices whose endpoints become ready one Service after another.
 */
import { parseManifests } from '../src/resources/parse';
import { buildGraph } from '../src/graph/build';
import { GatewaySources } from '../src/configserver/sources';
import { clearLocationCache } from '../src/render/location-cache';

const NS = 'gateway-conformance-infra';
const CONTROLLER = 'gateway.portcullis.dev/controller';
const variant = { prefix: '/tmp/portcullis-gateway-sources-test', listenAddress: '0.0.0.0' };
const GATEWAYS = ['same-namespace', 'all-namespaces', 'backend-namespaces'];
const SERVICES = ['v1', 'v2', 'v3'];

const meta = (name: string, namespace?: string, labels?: Record<string, string>) => ({
  name,
  ...(namespace ? { namespace } : {}),
  ...(labels ? { labels } : {}),
  generation: 1,
  creationTimestamp: '2026-01-01T00:00:00Z',
});

/** Base documents, one object per document and state: unchanged documents stay the same objects, as the providers hand them out. */
const docCache = new Map<string, unknown>();
function doc(key: string, make: () => unknown): unknown {
  if (!docCache.has(key)) docCache.set(key, Object.freeze(make()));
  return docCache.get(key);
}

function world(ready: Record<string, boolean>): unknown[] {
  const docs: unknown[] = [
    doc('gc', () => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: meta('gc'), spec: { controllerName: CONTROLLER } })),
    doc('ns', () => ({ apiVersion: 'v1', kind: 'Namespace', metadata: meta(NS) })),
  ];
  for (const gw of GATEWAYS) {
    docs.push(
      doc(`gw/${gw}`, () => ({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: meta(gw, NS),
        spec: { gatewayClassName: 'gc', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: gw === 'same-namespace' ? 'Same' : 'All' } } }] },
      })),
    );
  }
  SERVICES.forEach((v, i) => {
    docs.push(doc(`svc/${v}`, () => ({ apiVersion: 'v1', kind: 'Service', metadata: meta(`infra-backend-${v}`, NS), spec: { ports: [{ port: 8080, targetPort: 3000, protocol: 'TCP' }] } })));
    docs.push(
      doc(`slice/${v}/${ready[v]}`, () => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: meta(`infra-backend-${v}-abcde`, NS, { 'kubernetes.io/service-name': `infra-backend-${v}` }),
        addressType: 'IPv4',
        ports: [{ name: '', port: 3000, protocol: 'TCP' }],
        endpoints: [{ addresses: [`10.244.0.${10 + i}`], conditions: { ready: ready[v] } }, { addresses: [`10.244.0.${20 + i}`], conditions: { ready: ready[v] } }],
      })),
    );
  });
  return docs;
}

type Rule = { path: string; regex?: boolean; backends: [string, number][] };
const route = (name: string, gateway: string, rules: Rule[]) =>
  Object.freeze({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: meta(name, NS),
    spec: {
      parentRefs: [{ name: gateway }],
      rules: rules.map((r) => ({
        matches: [{ path: { type: r.regex ? 'RegularExpression' : 'PathPrefix', value: r.path } }],
        backendRefs: r.backends.map(([v, weight]) => ({ name: `infra-backend-${v}`, port: 8080, weight })),
      })),
    },
  });

function configs(sources: GatewaySources, docs: unknown[]): Record<string, string> {
  const parsed = parseManifests(docs.map((d, i) => ({ source: `doc-${i}`, doc: d })));
  const graph = buildGraph(parsed.set, { controllerName: CONTROLLER, dataplanePerGateway: true });
  const out: Record<string, string> = {};
  for (const [key, source] of sources.build(graph)) out[key] = JSON.stringify(source.render(variant));
  return out;
}

/** What a fresh process would serve: new memos, an empty location cache, documents never seen. */
function fresh(docs: unknown[]): Record<string, string> {
  clearLocationCache();
  const out = configs(new GatewaySources(), structuredClone(docs));
  clearLocationCache();
  return out;
}

/** Which Service each upstream block of a config sends to (its endpoints' addresses). */
function upstreamAddresses(config: string): Record<string, string[]> {
  const files = JSON.parse(config) as Record<string, string>;
  const out: Record<string, string[]> = {};
  for (const m of (files['upstreams.conf'] ?? '').matchAll(/upstream (\S+) \{([^}]*)\}/g)) out[m[1]] = [...m[2].matchAll(/server ([0-9.]+):/g)].map((s) => s[1]);
  return out;
}

test('per-Gateway memoised builds equal fresh ones across conformance-like steps, and each upstream holds its own Service', () => {
  const sources = new GatewaySources();
  const allReady = { v1: true, v2: true, v3: true };
  const steps: { ready: Record<string, boolean>; routes: unknown[] }[] = [
    { ready: { v1: false, v2: false, v3: false }, routes: [] },
    { ready: { v1: true, v2: false, v3: false }, routes: [route('infra-test', 'same-namespace', [{ path: '/', backends: [['v1', 1]] }])] },
    { ready: { v1: true, v2: true, v3: false }, routes: [route('infra-test', 'same-namespace', [{ path: '/', backends: [['v1', 1]] }])] },
    { ready: allReady, routes: [route('weighted', 'same-namespace', [{ path: '/', backends: [['v1', 7], ['v2', 2], ['v3', 1]] }])] },
    { ready: allReady, routes: [route('infra-test', 'same-namespace', [{ path: '/', backends: [['v2', 1]] }])] },
    {
      ready: allReady,
      routes: [
        route('matching', 'same-namespace', [{ path: '/v1', backends: [['v1', 1]] }, { path: '/v2', backends: [['v2', 1]] }, { path: '/r/[0-9]+', regex: true, backends: [['v3', 1]] }]),
        route('other', 'all-namespaces', [{ path: '/', backends: [['v3', 1]] }]),
      ],
    },
    { ready: allReady, routes: [route('matching', 'same-namespace', [{ path: '/v1', backends: [['v2', 1]] }, { path: '/v2', backends: [['v1', 1]] }]), route('backends', 'backend-namespaces', [{ path: '/', backends: [['v1', 1]] }])] },
    { ready: allReady, routes: [route('infra-test', 'same-namespace', [{ path: '/', backends: [['v1', 1]] }])] },
  ];
  const serviceOf = new Map(SERVICES.flatMap((v, i) => [[`10.244.0.${10 + i}`, v], [`10.244.0.${20 + i}`, v]]));
  let upstreams = 0;
  for (const [i, step] of steps.entries()) {
    const docs = [...world(step.ready), ...step.routes];
    const kept = configs(sources, docs);
    const expected = fresh(docs);
    expect(Object.keys(kept).sort()).toEqual(Object.keys(expected).sort());
    for (const gateway of Object.keys(expected)) {
      expect({ step: i, gateway, config: kept[gateway] }).toEqual({ step: i, gateway, config: expected[gateway] });
      for (const [name, addresses] of Object.entries(upstreamAddresses(kept[gateway]))) {
        upstreams++;
        const service = /infra_backend_(v[0-9])_/.exec(name)?.[1];
        expect({ name, services: [...new Set(addresses.map((a) => serviceOf.get(a)))] }).toEqual({ name, services: [service] });
      }
    }
  }
  expect(upstreams).toBeGreaterThan(10);
});
