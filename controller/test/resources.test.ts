import { freezeDocument, parseManifests } from '../src/resources';
import { GW_API, gateway, http, route, service, slice } from './graph-fixtures';

const parseOne = (doc: object) => parseManifests([{ source: 'x.yaml', doc }]);

describe('resources: defaults as the Gateway API CRDs define them', () => {
  test('a rule without matches gets one PathPrefix "/" match; header/query types default to Exact; weight 1', () => {
    const { set } = parseOne(
      route('r', {
        parentRefs: [{ name: 'gw' }],
        rules: [
          { backendRefs: [{ name: 's', port: 80 }] },
          { matches: [{ headers: [{ name: 'x', value: 'y' }], queryParams: [{ name: 'q', value: '1' }] }] },
        ],
      }),
    );
    const spec = set.httpRoutes[0].spec;
    expect(spec.parentRefs[0]).toEqual({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' });
    expect(spec.rules[0].matches).toEqual([{ path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] }]);
    expect(spec.rules[0].backendRefs[0]).toMatchObject({ group: '', kind: 'Service', weight: 1 });
    expect(spec.rules[1].matches[0].path).toEqual({ type: 'PathPrefix', value: '/' });
    expect(spec.rules[1].matches[0].headers[0].type).toBe('Exact');
    expect(spec.rules[1].matches[0].queryParams[0].type).toBe('Exact');
  });

  test('a route without rules gets the default rule; metadata defaults namespace "default" and generation 1', () => {
    const { set } = parseOne({ apiVersion: GW_API, kind: 'HTTPRoute', metadata: { name: 'r' }, spec: {} });
    expect(set.httpRoutes[0].metadata).toMatchObject({ namespace: 'default', generation: 1 });
    expect(set.httpRoutes[0].spec.rules).toHaveLength(1);
    expect(set.httpRoutes[0].spec.rules[0].matches[0].path.value).toBe('/');
  });

  test('listener allowedRoutes defaults to namespaces from Same', () => {
    const { set } = parseOne(gateway('gw', [http('web')]));
    expect(set.gateways[0].spec.listeners[0].allowedRoutes).toEqual({ namespaces: { from: 'Same' }, kinds: [] });
  });

  test('provider-filled generation and creationTimestamp are kept (Date objects become ISO strings)', () => {
    const { set } = parseOne({ ...route('r', {}), metadata: { name: 'r', generation: 4, creationTimestamp: new Date('2026-03-04T05:06:07Z') } });
    expect(set.httpRoutes[0].metadata.generation).toBe(4);
    expect(set.httpRoutes[0].metadata.creationTimestamp).toBe('2026-03-04T05:06:07.000Z');
  });

  test('EndpointSlice ports default name "" and protocol TCP; Service ports protocol TCP', () => {
    const { set } = parseManifests([
      { source: 'a', doc: slice('s-1', 's', [{ addresses: ['127.0.0.1'] }], [{ port: 8080 }]) },
      { source: 'b', doc: service('s', [{ port: 80, targetPort: 8080 }]) },
    ]);
    expect(set.endpointSlices[0].ports[0]).toEqual({ name: '', port: 8080, protocol: 'TCP' });
    expect(set.endpointSlices[0].endpoints[0].conditions).toEqual({});
    expect(set.services[0].spec.ports[0].protocol).toBe('TCP');
  });
});

describe('resources: validation errors name the field', () => {
  const cases: [string, object, string][] = [
    ['unknown path type', route('r', { rules: [{ matches: [{}, { path: { type: 'Glob', value: '/x' } }] }] }), 'spec.rules[0].matches[1].path.type: Invalid option'],
    ['PathPrefix not starting with /', route('r', { rules: [{ matches: [{ path: { value: 'x' } }] }] }), "spec.rules[0].matches[0].path.value: value must be an absolute path and start with '/'"],
    ['Exact path containing //', route('r', { rules: [{ matches: [{ path: { type: 'Exact', value: '/a//b' } }] }] }), "spec.rules[0].matches[0].path.value: must not contain '//'"],
    ['path with %2F', route('r', { rules: [{ matches: [{ path: { value: '/a%2Fb' } }] }] }), "must not contain '%2F'"],
    ['path ending with /..', route('r', { rules: [{ matches: [{ path: { value: '/a/..' } }] }] }), "must not end with '/..'"],
    ['path with a space', route('r', { rules: [{ matches: [{ path: { value: '/a b' } }] }] }), 'must only contain valid characters'],
    ['header name with a colon', route('r', { rules: [{ matches: [{ headers: [{ name: ':method', value: 'GET' }] }] }] }), 'spec.rules[0].matches[0].headers[0].name: must be an HTTP token'],
    ['empty header value', route('r', { rules: [{ matches: [{ headers: [{ name: 'a', value: '' }] }] }] }), 'spec.rules[0].matches[0].headers[0].value: Too small'],
    ['duplicate header name', route('r', { rules: [{ matches: [{ headers: [{ name: 'a', value: '1' }, { name: 'a', value: '2' }] }] }] }), 'spec.rules[0].matches[0].headers[1].name: duplicate entry'],
    ['unknown method', route('r', { rules: [{ matches: [{ method: 'FETCH' }] }] }), 'spec.rules[0].matches[0].method: Invalid option'],
    ['uppercase route hostname', route('r', { hostnames: ['Foo.com'] }), 'spec.hostnames[0]: must be a lowercase RFC 1123 hostname'],
    ['wildcard not in first label', route('r', { hostnames: ['foo.*.com'] }), 'spec.hostnames[0]'],
    ['IP address as hostname', route('r', { hostnames: ['10.0.0.1'] }), 'spec.hostnames[0]: IP addresses are not allowed'],
    ['Service backend without port', route('r', { rules: [{ backendRefs: [{ name: 's' }] }] }), 'spec.rules[0].backendRefs[0].port: Must have port for Service reference'],
    ['weight above 1000000', route('r', { rules: [{ backendRefs: [{ name: 's', port: 80, weight: 1000001 }] }] }), 'spec.rules[0].backendRefs[0].weight: Too big'],
    ['two refs to one parent without sectionName', route('r', { parentRefs: [{ name: 'gw' }, { name: 'gw' }] }), 'spec.parentRefs[1]: sectionName or port must be specified'],
    ['timeout that is not a Gateway API duration', route('r', { rules: [{ timeouts: { request: '1.5s' } }] }), 'spec.rules[0].timeouts.request: must be a Gateway API duration'],
    ['backendRequest longer than request', route('r', { rules: [{ timeouts: { request: '1s', backendRequest: '2s' } }] }), 'spec.rules[0].timeouts.backendRequest: backendRequest timeout cannot be longer than request timeout'],
    ['listener port 0', gateway('gw', [http('web', 0)]), 'spec.listeners[0].port: Too small'],
    ['duplicate listener names', gateway('gw', [http('web', 80), http('web', 81)]), 'spec.listeners[1].name: Listener name must be unique'],
    ['same port/protocol/hostname twice', gateway('gw', [http('a', 80), http('b', 80)]), 'spec.listeners[1]: Combination of port, protocol and hostname must be unique'],
    ['listener hostname with uppercase', gateway('gw', [http('web', 80, { hostname: 'A.com' })]), 'spec.listeners[0].hostname'],
    ['no listeners', gateway('gw', []), 'spec.listeners: Too small'],
    ['from Selector without selector', gateway('gw', [http('web', 80, { allowedRoutes: { namespaces: { from: 'Selector' } } })]), 'spec.listeners[0].allowedRoutes.namespaces.selector'],
    ['Service port name reused', service('s', [{ name: 'a', port: 80 }, { name: 'a', port: 81 }]), 'spec.ports[1].name: duplicate port name'],
    ['EndpointSlice without addressType', { ...slice('x', 's', [], []), addressType: undefined }, 'addressType: Invalid option'],
  ];
  test.each(cases)('%s', (_name, doc, expected) => {
    const parsed = parseOne(doc);
    expect(parsed.invalid).toHaveLength(1);
    expect(parsed.invalid[0].message).toContain(expected);
    expect(parsed.set.httpRoutes.length + parsed.set.gateways.length + parsed.set.services.length + parsed.set.endpointSlices.length).toBe(0);
  });

  test('an invalid route keeps kind, namespace, name, generation and readable parentRefs for its status', () => {
    const parsed = parseOne(route('r', { parentRefs: [{ name: 'gw', sectionName: 'web' }], rules: [{ matches: [{ method: 'FETCH' }] }] }, { namespace: 'apps', generation: 3 }));
    expect(parsed.invalid[0]).toMatchObject({ kind: 'HTTPRoute', namespace: 'apps', name: 'r', generation: 3, parentRefs: [{ name: 'gw', sectionName: 'web' }] });
  });
});

describe('resources: documents that are not resources', () => {
  test('unknown kinds are ignored, unidentifiable documents are errors, empty documents are skipped', () => {
    const parsed = parseManifests([
      { source: 'a.yaml', doc: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c' } } },
      { source: 'a.yaml', doc: { apiVersion: GW_API, kind: 'HTTPRoute', metadata: {} } },
      { source: 'a.yaml', doc: 'just a string' },
      { source: 'a.yaml', doc: null },
    ]);
    expect(parsed.ignored).toEqual([{ source: 'a.yaml', apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'c' }]);
    expect(parsed.errors.map((e) => e.message)).toEqual(['HTTPRoute has no metadata.name', 'document is not an object']);
  });

  test('policy documents are left to parsePolicyDocs: neither ignored nor errors', () => {
    const parsed = parseManifests([{ source: 'p.yaml', doc: { apiVersion: 'gateway.portcullis.dev/v1alpha1', kind: 'RateLimitPolicy', metadata: { name: 'p' }, spec: {} } }]);
    expect([parsed.ignored, parsed.errors, parsed.invalid]).toEqual([[], [], []]);
  });

  test('an unsupported version of a known kind is invalid with the supported versions named', () => {
    const parsed = parseOne({ ...route('r', {}), apiVersion: 'gateway.networking.k8s.io/v1alpha2' });
    expect(parsed.invalid[0].message).toMatch(/^apiVersion: gateway.networking.k8s.io\/v1alpha2 is not supported for HTTPRoute/);
  });

  test('v1beta1 Gateway API resources are read like v1', () => {
    const parsed = parseOne({ ...route('r', {}), apiVersion: 'gateway.networking.k8s.io/v1beta1' });
    expect(parsed.set.httpRoutes).toHaveLength(1);
  });

  test('parsing again after a change sees the change; unchanged documents give equal results', () => {
    const doc = route('r', { hostnames: ['a.example.com'] });
    const first = parseManifests([{ source: 'a.yaml', doc }]);
    const again = parseManifests([{ source: 'a.yaml', doc: structuredClone(doc) }]);
    expect(again.set.httpRoutes).toEqual(first.set.httpRoutes);
    const changed = parseManifests([{ source: 'a.yaml', doc: { ...doc, spec: { hostnames: ['b.example.com'] } } }]);
    expect(changed.set.httpRoutes[0].spec.hostnames).toEqual(['b.example.com']);
    const broken = parseManifests([{ source: 'b.yaml', doc: { ...doc, spec: { hostnames: ['B'] } } }]);
    const brokenAgain = parseManifests([{ source: 'c.yaml', doc: { ...doc, spec: { hostnames: ['B'] } } }]);
    expect([broken.invalid[0].source, brokenAgain.invalid[0].source]).toEqual(['b.yaml', 'c.yaml']);
  });

  test('read-only documents (as providers hand them out) parse as mutable ones do, again and after a change', () => {
    const doc = freezeDocument(route('r', { hostnames: ['a.example.com'] }));
    const first = parseManifests([{ source: 'a.yaml', doc }]);
    expect(first.set.httpRoutes).toEqual(parseManifests([{ source: 'a.yaml', doc: structuredClone(doc) }]).set.httpRoutes);
    expect(parseManifests([{ source: 'a.yaml', doc }]).set.httpRoutes).toEqual(first.set.httpRoutes);
    const broken = freezeDocument({ ...doc, spec: { hostnames: ['B'] } });
    expect(parseManifests([{ source: 'b.yaml', doc: broken }]).invalid[0].message).toMatch(/hostnames/);
    expect(parseManifests([{ source: 'c.yaml', doc: broken }]).invalid.map((r) => r.source)).toEqual(['c.yaml']);
    const list = freezeDocument({ apiVersion: 'v1', kind: 'List', items: [route('a', {}), route('b', {})] });
    parseManifests([{ source: 'l.yaml', doc: list }]);
    expect(parseManifests([{ source: 'l.yaml', doc: list }]).set.httpRoutes.map((r) => r.metadata.name)).toEqual(['a', 'b']);
    const loop: Record<string, unknown> = route('loop', {});
    (loop.spec as Record<string, unknown>).self = loop;
    expect(parseManifests([{ source: 'x.yaml', doc: freezeDocument(loop) }]).invalid[0].message).toMatch(/cannot be read as JSON/);
  });

  test('a self-referencing document is invalid, not a crash', () => {
    const doc: Record<string, unknown> = route('r', {});
    (doc.spec as Record<string, unknown>).self = doc;
    expect(parseManifests([{ source: 'a.yaml', doc }]).invalid[0].message).toMatch(/cannot be read as JSON/);
  });

  test('kind List is flattened', () => {
    const parsed = parseOne({ apiVersion: 'v1', kind: 'List', items: [route('a', {}), route('b', {})] });
    expect(parsed.set.httpRoutes.map((r) => r.metadata.name)).toEqual(['a', 'b']);
  });

  test('a second document with the same kind/namespace/name is reported and the first one kept', () => {
    const parsed = parseManifests([
      { source: 'one.yaml', doc: route('r', { hostnames: ['one.example'] }) },
      { source: 'two.yaml', doc: route('r', { hostnames: ['two.example'] }) },
    ]);
    expect(parsed.set.httpRoutes.map((r) => r.spec.hostnames)).toEqual([['one.example']]);
    expect(parsed.errors[0]).toMatchObject({ source: 'two.yaml', message: expect.stringContaining('already defined in one.yaml') });
  });
});
