import { buildGraph, DEFAULT_CONTROLLER_NAME, type Graph } from '../src/graph';
import { freezeDocument, parseManifests } from '../src/resources';
import { gateway, gatewayClass, http, parse, route, service, slice } from './graph-fixtures';

const base = [gatewayClass(), gateway('gw', [http('web')])];
const build = (...docs: object[]): Graph => buildGraph(parse(...base, ...docs).set, { controllerName: DEFAULT_CONTROLLER_NAME });
const withBackends = (backendRefs: object[], extra: object = {}) => route('r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs, ...extra }] });
const parent = (g: Graph) => g.routes[0].parents[0];
const resolvedRefs = (g: Graph) => parent(g).conditions.find((c) => c.type === 'ResolvedRefs');

describe('graph: backend resolution', () => {
  test('ready endpoints of the Service port come from its EndpointSlices, by port name', () => {
    const g = build(
      service('svc', [{ name: 'http', port: 80, targetPort: 'web' }, { name: 'admin', port: 9000 }]),
      slice('svc-a', 'svc', [{ addresses: ['127.0.0.2'], conditions: { ready: true } }, { addresses: ['127.0.0.3'], conditions: { ready: false } }], [{ name: 'http', port: 8080 }, { name: 'admin', port: 9900 }]),
      slice('svc-b', 'svc', [{ addresses: ['127.0.0.4'] }], [{ name: 'http', port: 8081 }]),
      slice('other', 'not-svc', [{ addresses: ['127.0.0.9'] }], [{ name: 'http', port: 1 }]),
      withBackends([{ name: 'svc', port: 80 }]),
    );
    const b = g.routes[0].rules[0].backends[0];
    expect(b).toMatchObject({ namespace: 'default', name: 'svc', port: 80, weight: 1, valid: true });
    expect(b.endpoints).toEqual([
      { address: '127.0.0.2', port: 8080 },
      { address: '127.0.0.4', port: 8081 },
    ]);
    expect(resolvedRefs(g)).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });
  });

  test('a slice without ports uses a numeric targetPort (hand-written standalone slices)', () => {
    const g = build(service('svc', [{ port: 80, targetPort: 3000 }]), slice('s', 'svc', [{ addresses: ['127.0.0.5'] }], []), withBackends([{ name: 'svc', port: 80 }]));
    expect(g.routes[0].rules[0].backends[0].endpoints).toEqual([{ address: '127.0.0.5', port: 3000 }]);
  });

  test('a Service without ready endpoints is a valid backend with no endpoints', () => {
    const g = build(service('svc', [{ port: 80 }]), withBackends([{ name: 'svc', port: 80 }]));
    expect(g.routes[0].rules[0].backends[0]).toMatchObject({ valid: true, endpoints: [] });
  });

  const failures: [string, object[], object[], string, RegExp][] = [
    ['missing Service: BackendNotFound', [], [{ name: 'nope', port: 80 }], 'BackendNotFound', /spec.rules\[0\].backendRefs\[0\]: Service default\/nope not found/],
    ['Service without that port: BackendNotFound', [service('svc', [{ port: 80 }])], [{ name: 'svc', port: 81 }], 'BackendNotFound', /has no port 81/],
    ['non-Service kind: InvalidKind', [], [{ group: 'example.com', kind: 'Bucket', name: 'b' }], 'InvalidKind', /kind example.com\/Bucket is not supported/],
    ['Service in another namespace without ReferenceGrant: RefNotPermitted', [service('svc', [{ port: 80 }], 'other')], [{ name: 'svc', namespace: 'other', port: 80 }], 'RefNotPermitted', /another namespace/],
    ['ExternalName Service: UnsupportedValue', [service('svc', [{ port: 80 }], 'default', { type: 'ExternalName' })], [{ name: 'svc', port: 80 }], 'UnsupportedValue', /ExternalName/],
  ];
  test.each(failures)('%s; the route stays Accepted and the rule stays valid', (_name, docs, refs, reason, message) => {
    const g = build(...docs, withBackends(refs));
    const rule = g.routes[0].rules[0];
    expect(rule.valid).toBe(true);
    expect(rule.backends[0]).toMatchObject({ valid: false, invalidReason: reason });
    expect(parent(g).conditions.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'True' });
    expect(resolvedRefs(g)).toMatchObject({ status: 'False', reason, message: expect.stringMatching(message) });
  });

  const grant = (namespace: string, from: object[], to: object[]) => ({ apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'g', namespace }, spec: { from, to } });
  const fromRoutes = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default' };
  const grants: [string, object, boolean][] = [
    ['grant for all Services of the namespace', grant('other', [fromRoutes], [{ group: '', kind: 'Service' }]), true],
    ['grant naming this Service', grant('other', [fromRoutes], [{ group: '', kind: 'Service', name: 'svc' }]), true],
    ['grant naming another Service', grant('other', [fromRoutes], [{ group: '', kind: 'Service', name: 'else' }]), false],
    ['grant for routes of another namespace', grant('other', [{ ...fromRoutes, namespace: 'third' }], [{ group: '', kind: 'Service' }]), false],
    ['grant for GRPCRoutes only', grant('other', [{ ...fromRoutes, kind: 'GRPCRoute' }], [{ group: '', kind: 'Service' }]), false],
    ['grant living in the route namespace', grant('default', [fromRoutes], [{ group: '', kind: 'Service' }]), false],
  ];
  test.each(grants)('cross-namespace Service with a ReferenceGrant: %s', (_name, g, allowed) => {
    const graph = build(service('svc', [{ port: 80 }], 'other'), g, withBackends([{ name: 'svc', namespace: 'other', port: 80 }]));
    expect(graph.routes[0].rules[0].backends[0].valid).toBe(allowed);
    expect(resolvedRefs(graph)).toMatchObject(allowed ? { status: 'True' } : { status: 'False', reason: 'RefNotPermitted' });
  });

  test('one bad backend among good ones: rule keeps both with their weights, ResolvedRefs False', () => {
    const g = build(service('svc', [{ port: 80 }]), withBackends([{ name: 'svc', port: 80, weight: 3 }, { name: 'gone', port: 80, weight: 1 }]));
    expect(g.routes[0].rules[0].backends.map((b) => [b.name, b.weight, b.valid])).toEqual([
      ['svc', 3, true],
      ['gone', 1, false],
    ]);
    expect(resolvedRefs(g)).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
  });

  test('backends of dropped rules do not affect ResolvedRefs', () => {
    const g = build(
      service('svc', [{ port: 80 }]),
      route('r', {
        parentRefs: [{ name: 'gw' }],
        rules: [{ matches: [{ path: { type: 'RegularExpression', value: '(?=a)' } }], backendRefs: [{ name: 'gone', port: 80 }] }, { backendRefs: [{ name: 'svc', port: 80 }] }],
      }),
    );
    expect(resolvedRefs(g)).toMatchObject({ status: 'True' });
  });
});

describe('graph: rebuilt with the same parsed routes (as on every reconcile)', () => {
  const docs = [
    ...base,
    service('svc', [{ name: 'http', port: 80 }]),
    slice('svc-a', 'svc', [{ addresses: ['127.0.0.2'] }], [{ name: 'http', port: 8080 }]),
    withBackends([{ name: 'svc', port: 80 }]),
  ];
  const frozen = () => parseManifests(docs.map((doc, i) => ({ source: `doc-${i}.yaml`, doc: freezeDocument(structuredClone(doc)) })));

  test('a changed Service, EndpointSlice or ReferenceGrant is seen by routes that did not change', () => {
    const first = frozen();
    const opts = { controllerName: DEFAULT_CONTROLLER_NAME };
    expect(buildGraph(first.set, opts).routes[0].rules[0].backends[0].endpoints).toEqual([{ address: '127.0.0.2', port: 8080 }]);
    expect(buildGraph(first.set, opts).routes[0].rules[0].backends[0].endpoints).toEqual([{ address: '127.0.0.2', port: 8080 }]);
    // The same route object, a new slice: new endpoints.
    const moved = { ...first.set, endpointSlices: parse(slice('svc-a', 'svc', [{ addresses: ['127.0.0.7'] }], [{ name: 'http', port: 9090 }])).set.endpointSlices };
    expect(buildGraph(moved, opts).routes[0].rules[0].backends[0].endpoints).toEqual([{ address: '127.0.0.7', port: 9090 }]);
    // The same route object, its Service gone: unresolved.
    const gone = buildGraph({ ...first.set, services: [] }, opts);
    expect(resolvedRefs(gone)).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    // And back.
    expect(resolvedRefs(buildGraph(first.set, opts))).toMatchObject({ status: 'True' });
  });

  test('a rule moved to another position or namespace is reported there', () => {
    const parsed = frozen();
    const opts = { controllerName: DEFAULT_CONTROLLER_NAME };
    const [r] = parsed.set.httpRoutes;
    const bad = parse(withBackends([{ name: 'missing', port: 80 }])).set.httpRoutes[0].spec.rules[0];
    const at = (rules: typeof r.spec.rules, namespace = 'default') =>
      buildGraph({ ...parsed.set, httpRoutes: [{ ...r, metadata: { ...r.metadata, namespace }, spec: { ...r.spec, rules } }] }, opts).routes[0].rules.map((x) => x.backends[0].invalidMessage);
    expect(at([bad])).toEqual([expect.stringMatching(/^spec\.rules\[0\]\.backendRefs\[0\]: Service default\/missing not found/)]);
    expect(at([r.spec.rules[0], bad])[1]).toMatch(/^spec\.rules\[1\]\.backendRefs\[0\]: Service default\/missing not found/);
    expect(at([bad], 'other')[0]).toMatch(/Service other\/missing not found/);
  });
});
