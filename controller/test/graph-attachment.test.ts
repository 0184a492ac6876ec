import { buildGraph, DEFAULT_CONTROLLER_NAME, type Graph, type HTTPRouteNode } from '../src/graph';
import { gateway, gatewayClass, http, parse, route, service } from './graph-fixtures';
import { parseManifests } from '../src/resources/parse';

const build = (...docs: object[]): Graph => buildGraph(parse(...docs).set, { controllerName: DEFAULT_CONTROLLER_NAME });
const routeNode = (g: Graph, name: string): HTTPRouteNode => {
  const r = g.routes.find((x) => x.name === name);
  if (!r) throw new Error(`route ${name} not in graph`);
  return r;
};
const accepted = (g: Graph, name: string, parent = 0) => routeNode(g, name).parents[parent].conditions.find((c) => c.type === 'Accepted');
const listener = (g: Graph, gw: string, name: string) => {
  const l = [...g.gateways, ...g.rejectedGateways].find((x) => x.name === gw)?.listeners.find((x) => x.name === name);
  if (!l) throw new Error(`listener ${gw}/${name} not in graph`);
  return l;
};

const backend = service('svc', [{ port: 80 }]);
const rule = { backendRefs: [{ name: 'svc', port: 80 }] };

describe('graph: GatewayClass and Gateway acceptance', () => {
  test('a class with our controllerName is accepted; Gateways of other classes are not ours', () => {
    const g = build(gatewayClass(), gatewayClass('other', 'example.com/other'), gateway('mine', [http('web')]), gateway('theirs', [http('web')], { className: 'other' }));
    expect(g.gatewayClasses.map((c) => [c.name, c.accepted])).toEqual([['portcullis', true]]);
    expect(g.gateways.map((x) => x.name)).toEqual(['mine']);
    expect(g.rejectedGateways).toEqual([]);
  });

  test('a Gateway whose listeners are all invalid is not accepted (ListenersNotValid)', () => {
    const g = build(gatewayClass(), gateway('gw', [{ name: 'sctp', port: 9000, protocol: 'example.com/sctp' }]));
    expect(g.gateways).toEqual([]);
    expect(g.rejectedGateways[0].conditions.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'ListenersNotValid' });
  });

  test('a Gateway with some invalid listeners is accepted with reason ListenersNotValid', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web'), { name: 'tls', port: 443, protocol: 'example.com/sctp' }]));
    expect(g.gateways[0].conditions).toEqual([expect.objectContaining({ type: 'Accepted', status: 'True', reason: 'ListenersNotValid' })]);
    expect(listener(g, 'gw', 'web').valid).toBe(true);
    expect(listener(g, 'gw', 'tls').valid).toBe(false);
  });

  test('a requested address of another type than IPAddress is unsupported', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web')], { addresses: [{ type: 'Hostname', value: 'lb.example.com' }] }));
    expect(g.rejectedGateways[0].conditions[0]).toMatchObject({ type: 'Accepted', status: 'False', reason: 'UnsupportedAddress' });
  });
});

describe('graph: listeners', () => {
  test('unsupported protocol: Accepted False UnsupportedProtocol, Programmed False', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web'), { name: 'udp', port: 53, protocol: 'example.com/sctp' }]));
    const l = listener(g, 'gw', 'udp');
    expect(l.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Accepted', status: 'False', reason: 'UnsupportedProtocol' }),
        expect.objectContaining({ type: 'Programmed', status: 'False', reason: 'Invalid' }),
      ]),
    );
    expect(l.supportedKinds).toEqual([]);
  });

  test('different protocols on one port: both ProtocolConflict (Conflicted True)', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web', 8080), { name: 'tls', port: 8080, protocol: 'TCP' }]));
    const web = listener(g, 'gw', 'web');
    expect(web.valid).toBe(false);
    expect(web.conditions.find((c) => c.type === 'Conflicted')).toMatchObject({ status: 'True', reason: 'ProtocolConflict' });
    expect(listener(g, 'gw', 'tls').conditions.find((c) => c.type === 'Conflicted')).toMatchObject({ status: 'True', reason: 'ProtocolConflict' });
  });

  test('a valid listener: Accepted, ResolvedRefs True, Conflicted False NoConflicts, supportedKinds HTTPRoute and GRPCRoute', () => {
    const l = listener(build(gatewayClass(), gateway('gw', [http('web')])), 'gw', 'web');
    expect(l.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Accepted', 'True', 'Accepted'],
      ['ResolvedRefs', 'True', 'ResolvedRefs'],
      ['Conflicted', 'False', 'NoConflicts'],
    ]);
    expect(l.supportedKinds).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
      { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
    ]);
  });

  test('allowedRoutes.kinds with an unknown kind: ResolvedRefs False InvalidRouteKinds, supportedKinds lists only valid kinds', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web', 80, { allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }, { kind: 'FooRoute' }] } })]));
    const l = listener(g, 'gw', 'web');
    expect(l.supportedKinds).toEqual([{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]);
    expect(l.conditions.find((c) => c.type === 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidRouteKinds' });
  });

  test('allowedRoutes from Selector: a valid listener', () => {
    const g = build(gatewayClass(), gateway('gw', [http('b', 81, { allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { x: 'y' } } } } })]));
    expect(listener(g, 'gw', 'b')).toMatchObject({ valid: true, allowedNamespaces: 'Selector' });
  });
});

describe('graph: route attachment', () => {
  test('parentRef namespace defaults to the route namespace', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web')], { namespace: 'infra' }), route('r', { parentRefs: [{ name: 'gw' }], rules: [rule] }, { namespace: 'apps' }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'False', reason: 'NoMatchingParent', message: 'Gateway apps/gw not found' });
  });

  test('sectionName selects one listener', () => {
    const g = build(gatewayClass(), backend, gateway('gw', [http('a', 80), http('b', 81)]), route('r', { parentRefs: [{ name: 'gw', sectionName: 'b' }], rules: [rule] }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(listener(g, 'gw', 'a').attachedRoutes).toBe(0);
    expect(listener(g, 'gw', 'b').attachedRoutes).toBe(1);
    expect(routeNode(g, 'r').parents[0].listeners).toEqual(['b']);
  });

  test('sectionName naming no listener: NoMatchingParent', () => {
    const g = build(gatewayClass(), backend, gateway('gw', [http('a')]), route('r', { parentRefs: [{ name: 'gw', sectionName: 'nope' }], rules: [rule] }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'False', reason: 'NoMatchingParent' });
    expect(listener(g, 'gw', 'a').attachedRoutes).toBe(0);
  });

  test('port selects listeners on that port; a port with no listener is NoMatchingParent', () => {
    const g = build(
      gatewayClass(),
      backend,
      gateway('gw', [http('a', 80), http('b', 81)]),
      route('on81', { parentRefs: [{ name: 'gw', port: 81 }], rules: [rule] }),
      route('on82', { parentRefs: [{ name: 'gw', port: 82 }], rules: [rule] }),
    );
    expect(routeNode(g, 'on81').parents[0].listeners).toEqual(['b']);
    expect(accepted(g, 'on82')).toMatchObject({ status: 'False', reason: 'NoMatchingParent' });
  });

  test('without sectionName the route attaches to every listener that allows it', () => {
    const g = build(gatewayClass(), backend, gateway('gw', [http('a', 80), http('b', 81)]), route('r', { parentRefs: [{ name: 'gw' }], rules: [rule] }));
    expect(listener(g, 'gw', 'a').attachedRoutes).toBe(1);
    expect(listener(g, 'gw', 'b').attachedRoutes).toBe(1);
  });

  test('allowedRoutes Same refuses a route from another namespace: NotAllowedByListeners', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web')], { namespace: 'infra' }), route('r', { parentRefs: [{ name: 'gw', namespace: 'infra' }] }, { namespace: 'apps' }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'False', reason: 'NotAllowedByListeners' });
    expect(listener(g, 'gw', 'web').attachedRoutes).toBe(0);
  });

  test('allowedRoutes All admits a route from another namespace', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web', 80, { allowedRoutes: { namespaces: { from: 'All' } } })], { namespace: 'infra' }), route('r', { parentRefs: [{ name: 'gw', namespace: 'infra' }] }, { namespace: 'apps' }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'True' });
    expect(listener(g, 'gw', 'web').attachedRoutes).toBe(1);
  });

  const ns = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  const selectorGateway = (selector: object) =>
    gateway('gw', [http('web', 80, { allowedRoutes: { namespaces: { from: 'Selector', selector } } })], { namespace: 'infra' });
  const selectorCases: [string, object, object[], boolean][] = [
    ['matchLabels equal', { matchLabels: { team: 'a' } }, [ns('apps', { team: 'a' })], true],
    ['matchLabels differ', { matchLabels: { team: 'a' } }, [ns('apps', { team: 'b' })], false],
    ['In', { matchExpressions: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] }, [ns('apps', { team: 'b' })], true],
    ['NotIn with the label absent', { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] }, [ns('apps', {})], true],
    ['Exists', { matchExpressions: [{ key: 'gateway-access', operator: 'Exists' }] }, [ns('apps', { 'gateway-access': '' })], true],
    ['DoesNotExist', { matchExpressions: [{ key: 'blocked', operator: 'DoesNotExist' }] }, [ns('apps', { blocked: 'yes' })], false],
    ['no Namespace document: the kubernetes.io/metadata.name label still holds', { matchLabels: { 'kubernetes.io/metadata.name': 'apps' } }, [], true],
    ['no Namespace document: other labels are absent', { matchLabels: { team: 'a' } }, [], false],
  ];
  test.each(selectorCases)('allowedRoutes Selector on the route Namespace labels: %s', (_name, selector, namespaces, allowed) => {
    const g = build(gatewayClass(), selectorGateway(selector), ...namespaces, route('r', { parentRefs: [{ name: 'gw', namespace: 'infra' }] }, { namespace: 'apps' }));
    expect(accepted(g, 'r')).toMatchObject(allowed ? { status: 'True' } : { status: 'False', reason: 'NotAllowedByListeners' });
    expect(listener(g, 'gw', 'web').attachedRoutes).toBe(allowed ? 1 : 0);
  });

  test('route hostnames that meet no listener hostname: NoMatchingListenerHostname, not counted', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web', 80, { hostname: '*.example.com' })]), route('r', { parentRefs: [{ name: 'gw' }], hostnames: ['example.com', 'a.example.net'] }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'False', reason: 'NoMatchingListenerHostname' });
    expect(listener(g, 'gw', 'web').attachedRoutes).toBe(0);
  });

  test('effective hostnames are the intersection, narrowed', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web', 80, { hostname: '*.example.com' })]), route('r', { parentRefs: [{ name: 'gw' }], hostnames: ['a.example.com', 'b.example.net'] }));
    expect(listener(g, 'gw', 'web').routes.map((a) => a.hostnames)).toEqual([['a.example.com']]);
  });

  test('a route on a listener of an unsupported protocol is not allowed', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web'), { name: 'tls', port: 443, protocol: 'example.com/sctp' }]), route('r', { parentRefs: [{ name: 'gw', sectionName: 'tls' }] }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'False', reason: 'NotAllowedByListeners' });
  });

  test('a route on a conflicted listener is accepted and counted, the listener is not rendered', () => {
    const g = build(
      gatewayClass(),
      gateway('gw', [http('other', 9090), http('web', 8080), { name: 'tls', port: 8080, protocol: 'TCP' }]),
      route('r', { parentRefs: [{ name: 'gw', sectionName: 'web' }] }),
    );
    expect(accepted(g, 'r')).toMatchObject({ status: 'True' });
    expect(listener(g, 'gw', 'web')).toMatchObject({ valid: false, attachedRoutes: 1 });
  });

  test('routes whose parentRefs name only other controllers\' Gateways or other kinds are not in the graph', () => {
    const g = build(
      gatewayClass(),
      gatewayClass('other', 'example.com/other'),
      gateway('theirs', [http('web')], { className: 'other' }),
      route('r1', { parentRefs: [{ name: 'theirs' }] }),
      route('r2', { parentRefs: [{ name: 'svc', kind: 'Service', group: '' }] }),
    );
    expect(g.routes).toEqual([]);
  });

  test('a route referencing a Gateway that is not accepted: NoMatchingParent', () => {
    const g = build(gatewayClass(), gateway('gw', [{ name: 'sctp', port: 9000, protocol: 'example.com/sctp' }]), route('r', { parentRefs: [{ name: 'gw' }] }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'False', reason: 'NoMatchingParent', message: 'Gateway default/gw is not accepted' });
  });

  test('a Gateway whose only listener has a missing certificate is not accepted, yet the listener counts the route it allows', () => {
    // the official conformance suite's GatewayWithAttachedRoutes: attachment is decided by
    // allowedRoutes and parentRefs, so the broken listener still shows attachedRoutes 1
    const tls = { mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name: 'does-not-exist' }] };
    const g = build(
      gatewayClass(),
      gateway('gw', [{ name: 'tls', port: 443, protocol: 'HTTPS', tls, allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }] } }]),
      route('r', { parentRefs: [{ name: 'gw', sectionName: 'tls' }], rules: [{ backendRefs: [{ name: 'does-not-exist', port: 8080 }] }] }),
    );
    expect(g.gateways).toEqual([]);
    expect(listener(g, 'gw', 'tls')).toMatchObject({ valid: false, attachedRoutes: 1 });
    expect(accepted(g, 'r')).toMatchObject({ status: 'False', reason: 'NoMatchingParent' });
    expect(routeNode(g, 'r').parents[0].conditions.find((c) => c.type === 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
  });

  test('attachedRoutes counts accepted routes only, once per route', () => {
    const g = build(
      gatewayClass(),
      gateway('gw', [http('web', 80, { hostname: 'a.example.com' })]),
      route('ok', { parentRefs: [{ name: 'gw' }] }),
      route('twice', { parentRefs: [{ name: 'gw', sectionName: 'web' }, { name: 'gw', port: 80 }] }),
      route('wrong-host', { parentRefs: [{ name: 'gw' }], hostnames: ['b.example.com'] }),
      route('bad-rules', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'RegularExpression', value: '(?=x)' } }] }] }),
    );
    expect(listener(g, 'gw', 'web').attachedRoutes).toBe(2);
    expect(listener(g, 'gw', 'web').routes.map((a) => a.route.name)).toEqual(['ok', 'twice']);
  });

  test('listener isolation: a hostname goes to the most specific listener on the port', () => {
    const g = build(
      gatewayClass(),
      gateway('gw', [http('any', 80), http('wild', 80, { hostname: '*.example.com' }), http('exact', 80, { hostname: 'a.example.com' })]),
      route('r', { parentRefs: [{ name: 'gw' }], hostnames: ['a.example.com', 'b.example.com', 'other.net'] }),
    );
    expect(listener(g, 'gw', 'any').routes[0].hostnames).toEqual(['other.net']);
    expect(listener(g, 'gw', 'wild').routes[0].hostnames).toEqual(['b.example.com']);
    expect(listener(g, 'gw', 'exact').routes[0].hostnames).toEqual(['a.example.com']);
    expect([listener(g, 'gw', 'any'), listener(g, 'gw', 'wild'), listener(g, 'gw', 'exact')].map((l) => l.attachedRoutes)).toEqual([1, 1, 1]);
  });

  test('routes on a listener are ordered oldest first, then namespace/name', () => {
    const g = build(
      gatewayClass(),
      gateway('gw', [http('web', 80, { allowedRoutes: { namespaces: { from: 'All' } } })]),
      route('b', { parentRefs: [{ name: 'gw', namespace: 'default' }] }, { creationTimestamp: '2026-01-02T00:00:00Z' }),
      route('a', { parentRefs: [{ name: 'gw', namespace: 'default' }] }, { creationTimestamp: '2026-01-02T00:00:00Z' }),
      route('z', { parentRefs: [{ name: 'gw', namespace: 'default' }] }, { creationTimestamp: '2026-01-01T00:00:00Z', namespace: 'zz' }),
    );
    expect(listener(g, 'gw', 'web').routes.map((a) => `${a.route.namespace}/${a.route.name}`)).toEqual(['zz/z', 'default/a', 'default/b']);
  });
});

describe('graph: rules', () => {
  test('a rule with an invalid regex is dropped: route Accepted with PartiallyInvalid naming the field', () => {
    const g = build(
      gatewayClass(),
      backend,
      gateway('gw', [http('web')]),
      route('r', {
        parentRefs: [{ name: 'gw' }],
        rules: [{ ...rule, matches: [{ headers: [{ name: 'x', type: 'RegularExpression', value: 'a(?=b)' }] }] }, rule],
      }),
    );
    const r = routeNode(g, 'r');
    expect(r.rules.map((x) => x.valid)).toEqual([false, true]);
    expect(r.parents[0].conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Accepted', 'True', 'Accepted'],
      ['ResolvedRefs', 'True', 'ResolvedRefs'],
      ['PartiallyInvalid', 'True', 'UnsupportedValue'],
    ]);
    expect(r.parents[0].conditions[2].message).toMatch(/^Dropped Rule\(s\): spec.rules\[0\].matches\[0\].headers\[0\].value: invalid regular expression "a\(\?=b\)"/);
  });

  test('when every rule is dropped the route is not accepted (UnsupportedValue)', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'RegularExpression', value: '/(a' } }] }] }));
    expect(accepted(g, 'r')).toMatchObject({ status: 'False', reason: 'UnsupportedValue', message: expect.stringContaining('spec.rules[0].matches[0].path.value') });
  });

  test('regex values reach the model in their PCRE form; other matches as written', () => {
    const g = build(
      gatewayClass(),
      gateway('gw', [http('web')]),
      route('r', {
        parentRefs: [{ name: 'gw' }],
        rules: [{ matches: [{ path: { type: 'RegularExpression', value: '/v[0-9]+$' }, queryParams: [{ name: 'Q', value: 'x' }], method: 'GET' }] }],
      }),
    );
    expect(routeNode(g, 'r').rules[0].matches).toEqual([
      { path: { type: 'RegularExpression', value: '/v[0-9]+\\z' }, headers: [], queryParams: [{ name: 'Q', type: 'Exact', value: 'x' }], method: 'GET' },
    ]);
  });

  test('values nginx could not read in one 4 KB parameter drop the rule, naming the field: one match\'s values together, one regex alone', () => {
    const g = build(
      gatewayClass(),
      gateway('gw', [http('web')]),
      route('r', {
        parentRefs: [{ name: 'gw' }],
        rules: [
          {},
          { matches: [{ headers: [{ name: 'X-A', value: 'a'.repeat(1500) }, { name: 'X-B', value: 'b'.repeat(1500) }] }] },
          { matches: [{ queryParams: [{ name: 'q', value: '"'.repeat(300) }] }] },
          { matches: [{ headers: [{ name: 'X-A', type: 'RegularExpression', value: '\\.'.repeat(1300) }] }] },
          { matches: [{ headers: [{ name: 'X-A', value: 'a'.repeat(2000) }] }, { headers: [{ name: 'X-A', value: 'b'.repeat(2000) }] }] },
        ],
      }),
    );
    const rules = routeNode(g, 'r').rules;
    expect(rules.map((x) => x.valid)).toEqual([true, false, false, false, true]);
    expect(rules[1].invalidMessage).toMatch(/^spec.rules\[1\].matches\[0\]: its path, header and query values take 3003 bytes as nginx reads them, more than the 2400 one match may take/);
    expect(rules[2].invalidMessage).toMatch(/^spec.rules\[2\].matches\[0\]: its path, header and query values take \d+ bytes/);
    expect(rules[3].invalidMessage).toMatch(/^spec.rules\[3\].matches\[0\].headers\[0\].value: the regular expression takes \d+ bytes as nginx reads it, more than 3800/);
  });

  test('a GRPCRoute match whose header values nginx could not read in one parameter drops its rule the same way', () => {
    const grpc = (value: string) => ({ matches: [{ method: { service: 'a.B', method: 'C' }, headers: [{ name: 'X-A', value }] }] });
    const g = build(
      gatewayClass(),
      gateway('gw', [http('web')]),
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', metadata: { name: 'g', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], rules: [grpc('a'.repeat(2000)), grpc('"'.repeat(2000))] } },
    );
    const rules = routeNode(g, 'g').rules;
    expect(rules.map((x) => x.valid)).toEqual([true, false]);
    expect(rules[1].invalidMessage).toMatch(/^spec.rules\[1\].matches\[0\]: its path, header and query values take \d+ bytes as nginx reads them/);
  });

  test('header names differing only in case: only the first counts', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ headers: [{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }] }] }] }));
    expect(routeNode(g, 'r').rules[0].matches[0].headers).toEqual([{ name: 'X-A', type: 'Exact', value: '1' }]);
  });

  test.each(['x_user', 'x.user', "x'user"])('a header name nginx cannot read (%s) drops the rule, naming the field', (name) => {
    const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{}, { matches: [{ headers: [{ name, value: '1' }] }] }] }));
    expect(routeNode(g, 'r').rules[1]).toMatchObject({ valid: false, invalidMessage: expect.stringMatching(/^spec.rules\[1\].matches\[0\].headers\[0\].name: header name .* cannot be matched by nginx/) });
    expect(routeNode(g, 'r').rules[0].valid).toBe(true);
  });

  const pathCases: [string, string, string | RegExp][] = [
    ['plain value unchanged', '/api/v1', '/api/v1'],
    ['percent-encoded space decoded (nginx matches the decoded $uri)', '/a%20b', '/a b'],
    ['encoded UTF-8 decoded', '/caf%C3%A9', '/café'],
    ['not UTF-8: dropped', '/a%FF', /does not percent-decode to UTF-8/],
    ['decodes to a dot segment: dropped', '/a/%2E%2E/b', /normalizes away/],
    ['decodes to a NUL: dropped', '/a%00', /normalizes away/],
  ];
  test.each(pathCases)('Exact/PathPrefix value: %s', (_name, value, expected) => {
    const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{}, { matches: [{ path: { type: 'Exact', value } }] }] }));
    const rule = routeNode(g, 'r').rules[1];
    if (typeof expected === 'string') expect(rule.matches[0].path.value).toBe(expected);
    else expect(rule).toMatchObject({ valid: false, invalidMessage: expect.stringMatching(expected) });
  });

  test('rule timeouts reach the model in milliseconds', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{ timeouts: { request: '1m30s', backendRequest: '500ms' } }, {}] }));
    expect(routeNode(g, 'r').rules.map((r) => r.timeouts)).toEqual([{ requestMs: 90000, backendRequestMs: 500 }, undefined]);
  });

  describe('rules[].sessionPersistence', () => {
    test('cookie and header sessions reach the model; a permanent cookie\'s absoluteTimeout is its Max-Age', () => {
      const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [
        { sessionPersistence: {} },
        { sessionPersistence: { type: 'Header', sessionName: 'X-Session' } },
        { sessionPersistence: { sessionName: 'sid', absoluteTimeout: '1h30s', cookieConfig: { lifetimeType: 'Permanent' } } },
        {},
      ] }));
      expect(routeNode(g, 'r').rules.map((r) => r.session)).toEqual([{ type: 'Cookie' }, { type: 'Header', name: 'X-Session' }, { type: 'Cookie', name: 'sid', maxAgeSeconds: 3630 }, undefined]);
      expect(accepted(g, 'r')).toMatchObject({ status: 'True', reason: 'Accepted' });
    });

    test('a name nginx cannot read and an absoluteTimeout the gateway would have to track are named in the Accepted condition', () => {
      const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [
        { sessionPersistence: { type: 'Header', sessionName: 'x_session', absoluteTimeout: '1m' } },
        { sessionPersistence: { sessionName: 'a b', absoluteTimeout: '1m' } },
      ] }));
      expect(routeNode(g, 'r').rules.map((r) => r.session)).toEqual([{ type: 'Header' }, { type: 'Cookie' }]);
      expect(accepted(g, 'r')).toMatchObject({
        status: 'True',
        reason: 'UnsupportedField',
        message: 'The following unsupported parameters were ignored: spec.rules[0].sessionPersistence.sessionName, spec.rules[0].sessionPersistence.absoluteTimeout, spec.rules[1].sessionPersistence.sessionName, spec.rules[1].sessionPersistence.absoluteTimeout',
      });
    });
  });

  describe('ExternalAuth filter', () => {
    const authRule = (externalAuth: object) => ({ filters: [{ type: 'ExternalAuth', externalAuth }], backendRefs: [{ name: 'svc', port: 80 }] });
    const docs = (...rules: object[]) => [gatewayClass(), gateway('gw', [http('web')]), service('svc', [{ port: 80 }]), service('authz', [{ port: 9000 }]), route('r', { parentRefs: [{ name: 'gw' }], rules })];

    test('HTTP: the server, path and header lists reach the model; an empty allowedResponseHeaders is named in the Accepted condition', () => {
      const g = build(...docs(authRule({ protocol: 'HTTP', backendRef: { name: 'authz', port: 9000 }, http: { path: '/check', allowedHeaders: ['X-Tenant'] } })));
      const rule = routeNode(g, 'r').rules[0];
      expect(rule.valid).toBe(true);
      expect(rule.filters?.externalAuth).toMatchObject({ backend: { name: 'authz', port: 9000, valid: true }, path: '/check', allowedHeaders: ['X-Tenant'], allowedResponseHeaders: [] });
      expect(accepted(g, 'r')).toMatchObject({ reason: 'UnsupportedField', message: expect.stringContaining('spec.rules[0].filters[0].externalAuth.http.allowedResponseHeaders') });
    });

    test('what nginx cannot ask (the ext_authz gRPC protocol, a forwarded body, a header name it cannot read) drops the rule instead of serving it unchecked', () => {
      const g = build(...docs(
        authRule({ protocol: 'GRPC', backendRef: { name: 'authz', port: 9000 }, grpc: {} }),
        authRule({ protocol: 'HTTP', backendRef: { name: 'authz', port: 9000 }, http: { allowedResponseHeaders: ['X-User'] }, forwardBody: { maxSize: 1024 } }),
        authRule({ protocol: 'HTTP', backendRef: { name: 'authz', port: 9000 }, http: { allowedHeaders: ['x_tenant'], allowedResponseHeaders: ['X-User'] } }),
      ));
      expect(routeNode(g, 'r').rules.map((r) => [r.valid, r.invalidMessage])).toEqual([
        [false, expect.stringContaining('GRPC')],
        [false, expect.stringContaining('forwardBody')],
        [false, expect.stringContaining('x_tenant')],
      ]);
    });

    test('the CRD\'s rules: protocol and its config go together', () => {
      const refused = [{ protocol: 'HTTP', backendRef: { name: 'authz', port: 9000 } }, { protocol: 'GRPC', backendRef: { name: 'authz', port: 9000 }, http: {} }].map(
        (externalAuth) => parseManifests([{ source: 'r.yaml', doc: route('r', { parentRefs: [{ name: 'gw' }], rules: [authRule(externalAuth)] }) }]).invalid.map((i) => i.message),
      );
      expect(refused).toEqual([[expect.stringContaining("http must be specified when protocol is set to 'HTTP'")], [expect.stringMatching(/grpc must be specified[^]*protocol must be 'HTTP' when http is set|protocol must be 'HTTP' when http is set[^]*grpc must be specified/)]]);
    });
  });

  describe('rules[].retry', () => {
    test('codes, attempts and connection errors reach the model; the route is Accepted', () => {
      const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{ retry: { codes: [503, 500], attempts: 3 } }, { retry: {} }, {}] }));
      expect(routeNode(g, 'r').rules.map((r) => r.retry)).toEqual([{ codes: [500, 503], attempts: 3 }, { codes: [], attempts: 1 }, undefined]);
      expect(accepted(g, 'r')).toMatchObject({ status: 'True', reason: 'Accepted' });
    });

    test('what nginx cannot do (a code it cannot retry on, a backoff, too many attempts) is named in the Accepted condition, the rest applies', () => {
      const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{ retry: { codes: [500, 418, 429], attempts: 40, backoff: '100ms' } }] }));
      expect(routeNode(g, 'r').rules[0].retry).toEqual({ codes: [429, 500], attempts: 16 });
      expect(accepted(g, 'r')).toMatchObject({
        status: 'True',
        reason: 'UnsupportedField',
        message: 'The following unsupported parameters were ignored: spec.rules[0].retry.codes[1], spec.rules[0].retry.attempts (at most 16), spec.rules[0].retry.backoff',
      });
    });

    test('codes outside 400-599, attempts below 1 or repeated codes are refused as the CRD refuses them', () => {
      const refused = [{ codes: [399] }, { codes: [600] }, { attempts: 0 }, { codes: [500, 500] }, { backoff: '1 s' }].map((retry) => {
        const doc = route('r', { parentRefs: [{ name: 'gw' }], rules: [{ retry }] });
        return parseManifests([{ source: 'r.yaml', doc }]).invalid.map((i) => i.message);
      });
      expect(refused).toEqual([
        [expect.stringContaining('spec.rules[0].retry.codes[0]')],
        [expect.stringContaining('spec.rules[0].retry.codes[0]')],
        [expect.stringContaining('spec.rules[0].retry.attempts')],
        [expect.stringContaining('duplicate status codes')],
        [expect.stringContaining('spec.rules[0].retry.backoff')],
      ]);
    });
  });

  test('an explicitly empty matches list means the default PathPrefix "/"', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [] }] }));
    expect(routeNode(g, 'r').rules[0].matches).toEqual([{ path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] }]);
  });

  test('a rule with an unsupported filter is dropped', () => {
    const g = build(gatewayClass(), gateway('gw', [http('web')]), route('r', { parentRefs: [{ name: 'gw' }], rules: [{ filters: [{ type: 'ExtensionRef', extensionRef: { group: 'x.io', kind: 'K', name: 'n' } }] }, {}] }));
    expect(routeNode(g, 'r').rules[0]).toMatchObject({ valid: false, invalidMessage: 'spec.rules[0].filters[0].extensionRef: filter ExtensionRef x.io/K n is not supported' });
  });
});
