import { buildGraph, DEFAULT_CONTROLLER_NAME, type DataplaneResult, type StatusReport } from '../src/graph';
import { carryTransitionTimes, computeStatuses } from '../src/status';
import { parseManifests } from '../src/resources';
import { gateway, gatewayClass, http, route, service } from './graph-fixtures';

const ok: DataplaneResult = { programmed: true, addresses: ['127.0.0.1'] };

function statuses(docs: object[], dataplane: DataplaneResult = ok): StatusReport[] {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `d${i}.yaml`, doc })));
  const graph = buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
  return computeStatuses(graph, parsed, dataplane);
}
const find = (reports: StatusReport[], kind: string, name: string) => {
  const r = reports.find((x) => x.kind === kind && x.name === name);
  if (!r) throw new Error(`no status for ${kind} ${name}`);
  return r.status as any; // eslint-disable-line @typescript-eslint/no-explicit-any
};
const summary = (conditions: { type: string; status: string; reason: string }[]) => conditions.map((c) => `${c.type}=${c.status}/${c.reason}`);

const docs = [
  gatewayClass(),
  service('svc', [{ port: 80 }]),
  gateway('gw', [http('web')], { generation: 2 }),
  route('good', { parentRefs: [{ name: 'gw', sectionName: 'web' }], rules: [{ backendRefs: [{ name: 'svc', port: 80 }] }] }, { generation: 5 }),
];

describe('status: what the conformance suite checks', () => {
  test('GatewayClass: Accepted and SupportedVersion True, observedGeneration, supportedFeatures', () => {
    const s = find(statuses(docs), 'GatewayClass', 'portcullis');
    expect(summary(s.conditions)).toEqual(['Accepted=True/Accepted', 'SupportedVersion=True/SupportedVersion']);
    expect(s.conditions.every((c: { observedGeneration: number }) => c.observedGeneration === 1)).toBe(true);
    expect(s.supportedFeatures).toContainEqual({ name: 'HTTPRoute' });
    const names = s.supportedFeatures.map((f: { name: string }) => f.name);
    expect(names).toEqual([...names].sort());
  });

  test('Gateway: addresses typed IPAddress, Accepted + Programmed, listeners with kinds, attachedRoutes and four conditions', () => {
    const reports = statuses(docs);
    const s = find(reports, 'Gateway', 'gw');
    expect(reports.find((r) => r.kind === 'Gateway')).toMatchObject({ apiVersion: 'gateway.networking.k8s.io/v1', namespace: 'default', generation: 2 });
    expect(s.addresses).toEqual([{ type: 'IPAddress', value: '127.0.0.1' }]);
    expect(summary(s.conditions)).toEqual(['Accepted=True/Accepted', 'Programmed=True/Programmed']);
    expect(s.listeners).toHaveLength(1);
    expect(s.listeners[0]).toMatchObject({
      name: 'web',
      attachedRoutes: 1,
      supportedKinds: [
        { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
        { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
      ],
    });
    expect(summary(s.listeners[0].conditions).sort()).toEqual(['Accepted=True/Accepted', 'Conflicted=False/NoConflicts', 'Programmed=True/Programmed', 'ResolvedRefs=True/ResolvedRefs']);
    for (const c of [...s.conditions, ...s.listeners[0].conditions]) expect(c.observedGeneration).toBe(2);
  });

  test('HTTPRoute: parents with explicit group/kind/namespace/name/sectionName, controllerName, Accepted + ResolvedRefs', () => {
    const s = find(statuses(docs), 'HTTPRoute', 'good');
    expect(s.parents).toEqual([
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'gw', sectionName: 'web' },
        controllerName: DEFAULT_CONTROLLER_NAME,
        conditions: [
          { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'The Route is accepted', observedGeneration: 5 },
          { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'All references are resolved', observedGeneration: 5 },
        ],
      },
    ]);
  });

  test('a route that is not accepted still reports both Accepted and ResolvedRefs', () => {
    const s = find(statuses([...docs, route('lost', { parentRefs: [{ name: 'gw', sectionName: 'nope' }] })]), 'HTTPRoute', 'lost');
    expect(summary(s.parents[0].conditions)).toEqual(['Accepted=False/NoMatchingParent', 'ResolvedRefs=True/ResolvedRefs']);
  });

  test('nginx failed to reload: Gateway and listeners Programmed False Invalid with nginx\'s message; routes stay Accepted', () => {
    const failed: DataplaneResult = { programmed: false, message: 'nginx: [emerg] unknown directive "bogus"', addresses: ['127.0.0.1'] };
    const reports = statuses(docs, failed);
    const gw = find(reports, 'Gateway', 'gw');
    expect(gw.conditions[1]).toMatchObject({
      type: 'Programmed',
      status: 'False',
      reason: 'Invalid',
      message: 'The Gateway is not programmed due to a failure to reload nginx with the configuration: nginx: [emerg] unknown directive "bogus"',
    });
    expect(gw.listeners[0].conditions.find((c: { type: string }) => c.type === 'Programmed')).toMatchObject({ status: 'False', reason: 'Invalid', message: expect.stringContaining('unknown directive') });
    expect(find(reports, 'HTTPRoute', 'good').parents[0].conditions[0]).toMatchObject({ type: 'Accepted', status: 'True' });
  });

  test('a requested address we cannot serve on: Programmed False AddressNotUsable', () => {
    const s = find(statuses([gatewayClass(), gateway('gw', [http('web')], { addresses: [{ value: '10.1.2.3' }] })]), 'Gateway', 'gw');
    expect(s.conditions[1]).toMatchObject({ type: 'Programmed', status: 'False', reason: 'AddressNotUsable' });
  });

  test('an invalid listener keeps its own Programmed False; attachedRoutes still reported', () => {
    const s = find(statuses([gatewayClass(), gateway('gw', [http('web'), { name: 'tls', port: 443, protocol: 'example.com/sctp' }])]), 'Gateway', 'gw');
    const tls = s.listeners.find((l: { name: string }) => l.name === 'tls');
    expect(tls).toMatchObject({ attachedRoutes: 0, supportedKinds: [] });
    expect(summary(tls.conditions)).toContain('Programmed=False/Invalid');
    expect(summary(tls.conditions)).toContain('Accepted=False/UnsupportedProtocol');
  });

  test('a rejected Gateway reports no address and Accepted/Programmed False', () => {
    const s = find(statuses([gatewayClass(), gateway('gw', [{ name: 'tcp', port: 9000, protocol: 'example.com/sctp' }])]), 'Gateway', 'gw');
    expect(s.addresses).toEqual([]);
    expect(summary(s.conditions)).toEqual(['Accepted=False/ListenersNotValid', 'Programmed=False/Invalid']);
  });
});

describe('status: invalid documents get a condition naming the field', () => {
  test('invalid HTTPRoute: each readable parentRef gets Accepted False UnsupportedValue with the field path', () => {
    const s = find(statuses([...docs, route('bad', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'Glob' } }] }] }, { generation: 7 })]), 'HTTPRoute', 'bad');
    expect(s.parents[0].parentRef).toEqual({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'gw' });
    expect(s.parents[0].controllerName).toBe(DEFAULT_CONTROLLER_NAME);
    expect(s.parents[0].conditions[0]).toMatchObject({ type: 'Accepted', status: 'False', reason: 'UnsupportedValue', observedGeneration: 7, message: expect.stringContaining('spec.rules[0].matches[0].path.type') });
    expect(s.parents[0].conditions[1]).toMatchObject({ type: 'ResolvedRefs', status: 'False' });
  });

  test('invalid HTTPRoute without parentRefs: the condition is at the top of its status', () => {
    const s = find(statuses([route('bad', { hostnames: ['UPPER'] })]), 'HTTPRoute', 'bad');
    expect(s.parents).toEqual([]);
    expect(s.conditions[0]).toMatchObject({ type: 'Accepted', status: 'False', message: expect.stringContaining('spec.hostnames[0]') });
  });

  test('invalid Gateway: Accepted False Invalid and Programmed False, naming the field', () => {
    const s = find(statuses([gatewayClass(), gateway('gw', [http('web', 70000)])]), 'Gateway', 'gw');
    expect(summary(s.conditions)).toEqual(['Accepted=False/Invalid', 'Programmed=False/Invalid']);
    expect(s.conditions[0].message).toContain('spec.listeners[0].port');
  });

  test('invalid Service: Accepted False Invalid', () => {
    const reports = statuses([service('svc', [{ port: 'http' }])]);
    expect(reports).toEqual([
      expect.objectContaining({ kind: 'Service', namespace: 'default', name: 'svc', status: { conditions: [expect.objectContaining({ type: 'Accepted', status: 'False', reason: 'Invalid', message: expect.stringContaining('spec.ports[0].port') })] } }),
    ]);
  });

  test('invalid GatewayClass: cluster-scoped, no namespace', () => {
    const reports = statuses([gatewayClass('bad', 'no-slash')]);
    expect(reports[0]).toMatchObject({ kind: 'GatewayClass', name: 'bad' });
    expect(reports[0]).not.toHaveProperty('namespace');
  });
});

describe('status: parameters a data plane could not use (InvalidParameters)', () => {
  const parsed = () => parseManifests(docs.map((doc, i) => ({ source: `d${i}.yaml`, doc })));
  test('a Gateway whose infrastructure.parametersRef is unusable is Accepted False, InvalidParameters; its listeners keep their conditions', () => {
    const p = parsed();
    const graph = buildGraph(p.set, { controllerName: DEFAULT_CONTROLLER_NAME });
    const reports = computeStatuses(graph, p, { ...ok, invalidParameters: 'ConfigMap default/p not found' });
    const s = find(reports, 'Gateway', 'gw');
    expect(s.conditions.find((c: { type: string }) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'InvalidParameters', message: 'ConfigMap default/p not found', observedGeneration: 2 });
    expect(summary(s.listeners[0].conditions)).toContain('Programmed=True/Programmed');
  });

  test("a GatewayClass's verdict replaces its Accepted condition; no verdict leaves it as the graph says", () => {
    const p = parsed();
    const graph = buildGraph(p.set, { controllerName: DEFAULT_CONTROLLER_NAME });
    const cls = (verdict: Parameters<typeof computeStatuses>[3]) => find(computeStatuses(graph, p, ok, verdict), 'GatewayClass', 'portcullis');
    expect(summary(cls({ classParameters: () => ({ valid: false, message: 'bad key' }) }).conditions)).toEqual(['Accepted=False/InvalidParameters', 'SupportedVersion=True/SupportedVersion']);
    expect(summary(cls({ classParameters: () => ({ valid: true }) }).conditions)).toEqual(['Accepted=True/Accepted', 'SupportedVersion=True/SupportedVersion']);
    expect(summary(cls({ classParameters: () => undefined }).conditions)).toEqual(['Accepted=True/Accepted', 'SupportedVersion=True/SupportedVersion']);
  });
});

describe('status: a reconcile on the same graph reuses the route reports', () => {
  test("an agent's report (same graph, new dataplane result) changes the Gateway's report only; each route keeps its report object through carryTransitionTimes", () => {
    const parsed = parseManifests(docs.map((doc, i) => ({ source: `d${i}.yaml`, doc })));
    const graph = buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
    const pending: DataplaneResult = { programmed: false, reason: 'Pending', message: 'waiting', addresses: [] };
    const route = (reports: StatusReport[]) => reports.find((r) => r.kind === 'HTTPRoute' && r.name === 'good')!;
    const computed = [computeStatuses(graph, parsed, pending), computeStatuses(graph, parsed, ok)];
    // Not built again: no new objects for carryTransitionTimes to compare field by field.
    expect(route(computed[1])).toBe(route(computed[0]));
    const first = carryTransitionTimes([], computed[0], '2026-01-01T00:00:00Z');
    const second = carryTransitionTimes(first, computed[1], '2026-01-01T00:00:05Z');
    const gw = (reports: StatusReport[]) => reports.find((r) => r.kind === 'Gateway')!;
    // The status writers skip an object whose report is the one they last settled (identity).
    expect(route(second)).toBe(route(first));
    expect(gw(second)).not.toBe(gw(first));
    expect(summary((gw(second).status as { conditions: { type: string; status: string; reason: string }[] }).conditions)).toContain('Programmed=True/Programmed');
    // A rebuilt graph (a changed document) gives an equal report: its times are kept.
    const again = parseManifests(docs.map((doc, i) => ({ source: `d${i}.yaml`, doc })));
    const third = carryTransitionTimes(second, computeStatuses(buildGraph(again.set, { controllerName: DEFAULT_CONTROLLER_NAME }), again, ok), '2026-01-01T00:00:09Z');
    expect(route(third)).toEqual(route(first));
    expect((route(third).status as { parents: { conditions: { lastTransitionTime: string }[] }[] }).parents[0].conditions[0].lastTransitionTime).toBe('2026-01-01T00:00:00Z');
  });
});
