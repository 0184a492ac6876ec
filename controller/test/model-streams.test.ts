/**
 * TLS, TCP and UDP listeners in the graph and the stream model: which listeners share a port,
 * how a TLSRoute's hostnames choose backends, and names derived from content (the same content
 * gets the same name in every build; other content, another name).
 */
import { buildGraph } from '../src/graph';
import { buildModel } from '../src/model';
import type { StreamModel } from '../src/model/streams';
import { computePolicies } from '../src/policies';
import { targetsFromGraph } from '../src/policies/targets';
import { parseManifests } from '../src/resources/parse';
import { gateway, gatewayClass, GW_API, parse, service, slice } from './graph-fixtures';
import { policy } from './policies/helpers';

const l4 = (kind: string, name: string, sectionName: string, backends: string[], hostnames?: string[]) => ({
  apiVersion: GW_API,
  kind,
  metadata: { name, namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { parentRefs: [{ name: 'gw', sectionName }], ...(hostnames ? { hostnames } : {}), rules: [{ backendRefs: backends.map((n) => ({ name: n, port: 80 })) }] },
});

const backend = (name: string, ip: string) => [service(name, [{ port: 80 }]), slice(`${name}-1`, name, [{ addresses: [ip], conditions: { ready: true } }], [{ port: 8000 }])];

function graphOf(...docs: object[]) {
  return buildGraph(parse(...docs).set, { controllerName: 'gateway.portcullis.dev/controller' });
}

function streamOf(...docs: object[]): StreamModel {
  const model = buildModel(graphOf(...docs));
  expect(model.servers).toEqual([]);
  return model.stream!;
}

const listeners = [
  { name: 'pass', port: 443, protocol: 'TLS', tls: { mode: 'Passthrough' } },
  { name: 'tcp', port: 5432, protocol: 'TCP' },
  { name: 'udp', port: 5432, protocol: 'UDP' },
];

describe('listeners of whole connections', () => {
  test('TCP and UDP listeners share a port number (another transport), TCP and TLS do not', () => {
    const g = graphOf(gatewayClass(), gateway('gw', [...listeners, { name: 'tls-on-tcp-port', port: 5432, protocol: 'TLS', tls: { mode: 'Passthrough' } }]));
    const byName = Object.fromEntries(g.gateways[0].listeners.map((l) => [l.name, l]));
    expect(byName.udp.valid).toBe(true);
    expect(byName.tcp.conditions.find((c) => c.type === 'Conflicted')).toMatchObject({ status: 'True', reason: 'ProtocolConflict' });
    expect(byName.pass.valid).toBe(true);
  });

  test('a TLS listener needs tls; its supported kind is TLSRoute', () => {
    const bad = parseManifests([{ source: 'x', doc: gateway('gw', [{ name: 'tls', port: 443, protocol: 'TLS' }]) }]);
    expect(bad.invalid[0].message).toContain('tls must be specified');
    const g = graphOf(gatewayClass(), gateway('gw', listeners));
    expect(g.gateways[0].listeners.map((l) => l.supportedKinds.map((k) => k.kind))).toEqual([['TLSRoute'], ['TCPRoute'], ['UDPRoute']]);
  });

  test('a TLSRoute needs at least one hostname', () => {
    const bad = parseManifests([{ source: 'x', doc: l4('TLSRoute', 'r', 'pass', ['a']) }]);
    expect(bad.invalid[0]).toMatchObject({ kind: 'TLSRoute', name: 'r' });
  });
});

describe('the stream model', () => {
  const docs = [
    gatewayClass(),
    gateway('gw', listeners),
    ...backend('a', '10.0.0.1'),
    ...backend('b', '10.0.0.2'),
    l4('TLSRoute', 'pass', 'pass', ['a'], ['a.example.com', '*.wild.example.com']),
    l4('TCPRoute', 'tcp', 'tcp', ['b']),
    l4('UDPRoute', 'udp', 'udp', ['a']),
  ];

  test('a passthrough port maps each SNI name to its route backends; TCP and UDP proxy to theirs', () => {
    const s = streamOf(...docs);
    const up = (ip: string) => s.upstreams.find((u) => u.servers[0].address === ip)!.name;
    expect(s.maps).toEqual([{ variable: expect.stringMatching(/^\$pcs_sni_/), entries: [{ name: 'a.example.com', value: up('10.0.0.1') }, { name: '*.wild.example.com', value: up('10.0.0.1') }] }]);
    expect(s.servers.map((x) => [x.port, x.udp ?? false, x.preread ?? false, x.target])).toEqual([
      [443, false, true, s.maps[0].variable],
      [5432, false, false, up('10.0.0.2')],
      [5432, true, false, up('10.0.0.1')],
    ]);
  });

  test('names come from content: equal in every build, different when the endpoints differ', () => {
    const first = streamOf(...docs);
    const again = streamOf(...docs);
    expect(again).toEqual(first);
    const moved = streamOf(...docs.map((d) => ((d as { metadata: { name: string } }).metadata.name === 'b-1' ? backend('b', '10.0.0.9')[1] : d)));
    expect(moved.upstreams.map((u) => u.name)).not.toEqual(first.upstreams.map((u) => u.name));
    expect(moved.upstreams.find((u) => u.servers[0].address === '10.0.0.1')!.name).toBe(first.upstreams.find((u) => u.servers[0].address === '10.0.0.1')!.name);
  });

  test('a route whose backend is missing closes connections ("" target), and says so', () => {
    const g = graphOf(gatewayClass(), gateway('gw', listeners), l4('TCPRoute', 'tcp', 'tcp', ['nope']));
    expect(g.routes[0].parents[0].conditions.find((c) => c.type === 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    expect(buildModel(g).stream!.servers[0].target).toBe('');
  });
});

describe('IPAccessPolicy on a TLS port several Gateways share (the address is checked before the server name is read)', () => {
  const pass = (name: string, hostname: string) => ({ name, port: 443, protocol: 'TLS', hostname, tls: { mode: 'Passthrough' } });
  const gwRef = (name: string) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name });
  const ip = (name: string, gw: string, spec: Record<string, unknown>) => policy('IPAccessPolicy', name, { targetRefs: [gwRef(gw)], ...spec });
  const portOf = (policies: ReturnType<typeof ip>[]) => {
    const gws = ['a', 'b', 'c'].map((x) => gateway(`${x}-gw`, [pass('p', `${x}.example.com`)]));
    const routes = ['a', 'b', 'c'].map((x) => ({ ...l4('TLSRoute', x, 'p', ['a'], [`${x}.example.com`]), spec: { parentRefs: [{ name: `${x}-gw` }], hostnames: [`${x}.example.com`], rules: [{ backendRefs: [{ name: 'a', port: 80 }] }] } }));
    const g = graphOf(gatewayClass(), ...gws, ...backend('a', '10.0.0.1'), ...routes);
    const result = computePolicies({ policies, targets: targetsFromGraph(g) });
    return buildModel(g, result.effective).stream!.servers.find((s) => s.port === 443)!;
  };

  test("the lists are the first Gateway's (by namespace/name) that has any", () => {
    const server = portOf([ip('b', 'b-gw', { deny: ['10.0.0.0/8'] }), ip('c', 'c-gw', { deny: ['192.0.2.0/24'] })]);
    expect(server.access?.rules.map((r) => r.network)).toEqual(['10.0.0.0/8']);
  });

  test('PROXY protocol as soon as one Gateway asks; the trusted proxies of the first Gateway that sets clientAddress', () => {
    const later = portOf([ip('c', 'c-gw', { clientAddress: { source: 'ProxyProtocol', trustedCIDRs: ['10.1.0.0/16'] } })]);
    expect(later.proxyProtocol).toEqual({ trusted: ['10.1.0.0/16'] });
    // b-gw reads the connection's peer: the header is still expected (c-gw asks), its address is not used.
    const peer = portOf([ip('b', 'b-gw', { clientAddress: { source: 'Connection' } }), ip('c', 'c-gw', { clientAddress: { source: 'ProxyProtocol', trustedCIDRs: ['10.1.0.0/16'] } })]);
    expect(peer.proxyProtocol).toEqual({ trusted: [] });
    expect(portOf([]).proxyProtocol).toBeUndefined();
  });
});
