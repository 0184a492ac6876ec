/** ListenerSets: admission by allowedListeners, listener precedence, route attachment, statuses (graph/listenersets.ts). */
import { buildGraph, DEFAULT_CONTROLLER_NAME, type DataplaneResult, type StatusReport } from '../src/graph';
import { computeStatuses } from '../src/status';
import { planServers } from '../src/model/hosts';
import { GW_API, gateway, gatewayClass, http, parse, route } from './graph-fixtures';

const ok: DataplaneResult = { programmed: true, addresses: ['127.0.0.1'] };

const allowing = (gw: ReturnType<typeof gateway>, from: string, selector?: object) => ({
  ...gw,
  spec: { ...gw.spec, allowedListeners: { namespaces: { from, ...(selector ? { selector } : {}) } } },
});

const listenerSet = (name: string, listeners: object[], extra: { namespace?: string; gateway?: string; gatewayNamespace?: string; creationTimestamp?: string } = {}) => ({
  apiVersion: GW_API,
  kind: 'ListenerSet',
  metadata: { name, namespace: extra.namespace ?? 'default', generation: 2, creationTimestamp: extra.creationTimestamp ?? '2026-01-01T00:00:00Z' },
  spec: { parentRef: { name: extra.gateway ?? 'gw', ...(extra.gatewayNamespace ? { namespace: extra.gatewayNamespace } : {}) }, listeners },
});

const toSet = (name: string, sectionName?: string, namespace = 'default') => ({ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name, namespace, ...(sectionName ? { sectionName } : {}) });

function run(...docs: object[]) {
  const parsed = parse(gatewayClass(), ...docs);
  const graph = buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
  return { graph, reports: computeStatuses(graph, parsed, ok) };
}
const status = (reports: StatusReport[], kind: string, name: string) => {
  const r = reports.find((x) => x.kind === kind && x.name === name);
  if (!r) throw new Error(`no status for ${kind} ${name}`);
  return r.status as any; // eslint-disable-line @typescript-eslint/no-explicit-any
};
const summary = (conditions: { type: string; status: string; reason: string }[]) => conditions.map((c) => `${c.type}=${c.status}/${c.reason}`).sort();
const listenerOf = (s: { listeners: { name: string }[] }, name: string) => s.listeners.find((l) => l.name === name) as any; // eslint-disable-line @typescript-eslint/no-explicit-any

test('a Gateway without allowedListeners refuses every ListenerSet: NotAllowed, nothing served, attachedListenerSets 0', () => {
  const { graph, reports } = run(gateway('gw', [http('web', 80)]), listenerSet('ls', [http('extra', 80, { hostname: 'ls.example' })]));
  expect(summary(status(reports, 'ListenerSet', 'ls').conditions)).toEqual(['Accepted=False/NotAllowed', 'Programmed=False/NotAllowed']);
  expect(status(reports, 'Gateway', 'gw').attachedListenerSets).toBe(0);
  expect(graph.gateways[0].listeners.map((l) => l.name)).toEqual(['web']);
});

test('allowedListeners Same, All and Selector decide by the ListenerSet namespace and its labels', () => {
  const docs = (from: string, selector?: object) => [
    allowing(gateway('gw', [http('web', 80)]), from, selector),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels: { listeners: 'yes' } } },
    listenerSet('here', [http('a', 80, { hostname: 'a.example' })]),
    listenerSet('there', [http('b', 80, { hostname: 'b.example' })], { namespace: 'team', gatewayNamespace: 'default' }),
    listenerSet('elsewhere', [http('c', 80, { hostname: 'c.example' })], { namespace: 'other', gatewayNamespace: 'default' }),
  ];
  const accepted = (from: string, selector?: object) => {
    const { reports } = run(...docs(from, selector));
    return ['here', 'there', 'elsewhere'].filter((n) => status(reports, 'ListenerSet', n).conditions.find((c: { type: string }) => c.type === 'Accepted').status === 'True');
  };
  expect(accepted('Same')).toEqual(['here']);
  expect(accepted('All')).toEqual(['here', 'there', 'elsewhere']);
  expect(accepted('Selector', { matchLabels: { listeners: 'yes' } })).toEqual(['there']);
  expect(accepted('None')).toEqual([]);
});

test("the Gateway's listeners win conflicts, then the oldest ListenerSet; one left without valid listeners is not accepted", () => {
  const { reports } = run(
    allowing(gateway('gw', [http('web', 80, { hostname: 'gw.example' }), http('clash', 8080)]), 'All'),
    listenerSet('first', [http('own', 80, { hostname: 'first.example' }), { name: 'clash', port: 8080, protocol: 'TCP' }, http('shared', 80, { hostname: 'shared.example' })], { creationTimestamp: '2026-01-01T00:00:00Z' }),
    listenerSet('second', [http('shared', 80, { hostname: 'shared.example' })], { creationTimestamp: '2026-01-02T00:00:00Z' }),
  );
  const first = status(reports, 'ListenerSet', 'first');
  expect(summary(first.conditions)).toEqual(['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed']);
  expect(summary(listenerOf(first, 'own').conditions)).toEqual(['Accepted=True/Accepted', 'Conflicted=False/NoConflicts', 'Programmed=True/Programmed', 'ResolvedRefs=True/ResolvedRefs']);
  expect(summary(listenerOf(first, 'clash').conditions)).toContain('Conflicted=True/ProtocolConflict');
  expect(summary(listenerOf(first, 'clash').conditions)).toContain('Programmed=False/ProtocolConflict');
  expect(summary(listenerOf(first, 'shared').conditions)).toContain('Accepted=True/Accepted');
  const second = status(reports, 'ListenerSet', 'second');
  expect(summary(second.conditions)).toEqual(['Accepted=False/ListenersNotValid', 'Programmed=False/ListenersNotValid']);
  expect(summary(listenerOf(second, 'shared').conditions)).toEqual(['Accepted=False/HostnameConflict', 'Conflicted=True/HostnameConflict', 'Programmed=False/HostnameConflict', 'ResolvedRefs=True/ResolvedRefs']);
  const gw = status(reports, 'Gateway', 'gw');
  expect(gw.attachedListenerSets).toBe(1);
  // The Gateway reports its own listeners only, all still accepted.
  expect(gw.listeners.map((l: { name: string }) => l.name)).toEqual(['web', 'clash']);
  expect(summary(gw.conditions)).toContain('Accepted=True/Accepted');
});

test('routes reach Gateway listeners through a Gateway parentRef and ListenerSet listeners through a ListenerSet parentRef only', () => {
  const backend = { rules: [{ backendRefs: [] }] };
  const { graph, reports } = run(
    allowing(gateway('gw', [http('web', 80, { hostname: 'gw.example' })]), 'Same'),
    listenerSet('ls', [http('one', 80, { hostname: 'one.example' }), http('two', 80, { hostname: 'two.example' })]),
    route('to-gateway', { parentRefs: [{ name: 'gw' }], ...backend }),
    route('to-set', { parentRefs: [toSet('ls')], ...backend }),
    route('to-section', { parentRefs: [toSet('ls', 'two')], ...backend }),
    route('to-gateway-section', { parentRefs: [{ name: 'gw', sectionName: 'one' }], ...backend }),
    route('to-missing-section', { parentRefs: [toSet('ls', 'web')], ...backend }),
  );
  const ls = status(reports, 'ListenerSet', 'ls');
  expect(listenerOf(ls, 'one').attachedRoutes).toBe(1);
  expect(listenerOf(ls, 'two').attachedRoutes).toBe(2);
  expect(status(reports, 'Gateway', 'gw').listeners[0].attachedRoutes).toBe(1);
  const parent = (name: string) => status(reports, 'HTTPRoute', name).parents[0];
  expect(parent('to-set').parentRef).toMatchObject({ kind: 'ListenerSet', name: 'ls' });
  expect(parent('to-set').conditions[0]).toMatchObject({ type: 'Accepted', status: 'True' });
  expect(parent('to-gateway-section').conditions[0]).toMatchObject({ type: 'Accepted', status: 'False', reason: 'NoMatchingParent' });
  expect(parent('to-missing-section').conditions[0]).toMatchObject({ type: 'Accepted', status: 'False', reason: 'NoMatchingParent' });
  // The model serves each hostname with the routes of its own listener.
  const served = new Map(planServers(graph.gateways).map((p) => [p.name, p.routes.map((r) => r.attached.route.name).sort()]));
  expect(served.get('gw.example')).toEqual(['to-gateway']);
  expect(served.get('one.example')).toEqual(['to-set']);
  expect(served.get('two.example')).toEqual(['to-section', 'to-set']);
});

test("allowedRoutes Same on a ListenerSet listener means the ListenerSet's namespace", () => {
  const { reports } = run(
    allowing(gateway('gw', [http('web', 80)]), 'All'),
    listenerSet('ls', [http('same', 80, { hostname: 'ls.example', allowedRoutes: { namespaces: { from: 'Same' } } })], { namespace: 'team', gatewayNamespace: 'default' }),
    route('in-team', { parentRefs: [toSet('ls', undefined, 'team')], rules: [{}] }, { namespace: 'team' }),
    route('in-default', { parentRefs: [toSet('ls', undefined, 'team')], rules: [{}] }),
  );
  expect(status(reports, 'HTTPRoute', 'in-team').parents[0].conditions[0]).toMatchObject({ status: 'True' });
  expect(status(reports, 'HTTPRoute', 'in-default').parents[0].conditions[0]).toMatchObject({ status: 'False', reason: 'NotAllowedByListeners' });
});

test('a route to a ListenerSet the Gateway refuses is not accepted and not served', () => {
  const { graph, reports } = run(
    gateway('gw', [http('web', 80)]),
    listenerSet('ls', [http('one', 80, { hostname: 'one.example' })]),
    route('to-set', { parentRefs: [toSet('ls')], rules: [{}] }),
  );
  expect(status(reports, 'HTTPRoute', 'to-set').parents[0].conditions[0]).toMatchObject({ status: 'False', reason: 'NoMatchingParent' });
  expect(planServers(graph.gateways).some((p) => p.name === 'one.example')).toBe(false);
});

test('a ListenerSet certificate in another namespace needs a ReferenceGrant from kind ListenerSet', () => {
  const https = (name: string) => ({ name, port: 443, protocol: 'HTTPS', hostname: `${name}.example`, tls: { certificateRefs: [{ name: 'cert', namespace: 'certs' }] } });
  const grant = (fromKind: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name: `from-${fromKind.toLowerCase()}`, namespace: 'certs' },
    spec: { from: [{ group: 'gateway.networking.k8s.io', kind: fromKind, namespace: 'default' }], to: [{ group: '', kind: 'Secret' }] },
  });
  const resolved = (fromKind: string) => {
    const { reports } = run(allowing(gateway('gw', [http('web', 80)]), 'Same'), listenerSet('ls', [https('secure')]), grant(fromKind));
    return listenerOf(status(reports, 'ListenerSet', 'ls'), 'secure').conditions.find((c: { type: string }) => c.type === 'ResolvedRefs');
  };
  expect(resolved('Gateway')).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
  // With the grant the reference is permitted (the Secret itself is missing here: another reason).
  expect(resolved('ListenerSet').reason).not.toBe('RefNotPermitted');
});

describe('an invalid ListenerSet document', () => {
  const statusesOf = (...docs: object[]) => {
    const all = require('../src/resources').parseManifests([gatewayClass(), ...docs].map((doc, i) => ({ source: `d${i}`, doc })));
    return computeStatuses(buildGraph(all.set, { controllerName: DEFAULT_CONTROLLER_NAME }), all, ok);
  };

  test('gets Accepted False and Programmed False (both conditions every ListenerSet carries), Invalid, with the field at fault', () => {
    const report = statusesOf(gateway('gw', [http('web', 80)]), listenerSet('bad', [http('dup', 80), http('dup', 81)])).find((r) => r.kind === 'ListenerSet');
    const conditions = (report?.status as any).conditions; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(summary(conditions)).toEqual(['Accepted=False/Invalid', 'Programmed=False/Invalid']);
    expect(conditions[0].message).toContain('unique');
    expect(conditions[0].observedGeneration).toBe(2);
  });

  test("is left to the controller of its parent: no status when it names another class's Gateway or none of ours", () => {
    const bad = (gw: string) => listenerSet(`bad-${gw}`, [http('dup', 80), http('dup', 81)], { gateway: gw });
    const reports = statusesOf(gateway('gw', [http('web', 80)]), gateway('theirs', [http('web', 80)], { className: 'other' }), bad('gw'), bad('theirs'), bad('missing'));
    expect(reports.filter((r) => r.kind === 'ListenerSet').map((r) => r.name)).toEqual(['bad-gw']);
  });
});

/** Standalone mode: every Gateway on one nginx and address, so listeners of different Gateways compete for ports. */
describe('a conflict that appears after admission is reported on the later listener and never breaks the earlier one', () => {
  const dated = (gw: ReturnType<typeof gateway>, creationTimestamp: string) => ({ ...gw, metadata: { ...gw.metadata, creationTimestamp } });
  const accepted = (s: { conditions: { type: string; status: string }[] }) => s.conditions.find((c) => c.type === 'Accepted')?.status;
  const hostOwners = (graph: ReturnType<typeof run>['graph'], host: string) =>
    graph.gateways.flatMap((g) => g.listeners.filter((l) => l.valid && l.hostname === host).map((l) => `${g.name}/${l.listenerSet ? `${l.listenerSet.name}/` : ''}${l.name}`));

  test("a ListenerSet created after another Gateway took its port and hostname loses there, although its own Gateway is older", () => {
    const { graph, reports } = run(
      dated(allowing(gateway('old', [http('web', 80, { hostname: 'old.example' })]), 'Same'), '2026-01-01T00:00:00Z'),
      dated(gateway('serving', [http('web', 80, { hostname: 'shared.example' })]), '2026-01-02T00:00:00Z'),
      listenerSet('late', [http('shared', 80, { hostname: 'shared.example' })], { gateway: 'old', creationTimestamp: '2026-01-03T00:00:00Z' }),
    );
    const serving = status(reports, 'Gateway', 'serving');
    expect(summary(serving.conditions)).toContain('Accepted=True/Accepted');
    expect(summary(listenerOf(serving, 'web').conditions)).toContain('Conflicted=False/NoConflicts');
    const late = status(reports, 'ListenerSet', 'late');
    expect(summary(late.conditions)).toEqual(['Accepted=False/ListenersNotValid', 'Programmed=False/ListenersNotValid']);
    expect(summary(listenerOf(late, 'shared').conditions)).toContain('Conflicted=True/HostnameConflict');
    expect(listenerOf(late, 'shared').conditions.find((c: { type: string }) => c.type === 'Conflicted').message).toContain('listener web of Gateway default/serving');
    expect(status(reports, 'Gateway', 'old').attachedListenerSets).toBe(0);
    expect(summary(status(reports, 'Gateway', 'old').conditions)).toContain('Accepted=True/Accepted');
    expect(hostOwners(graph, 'shared.example')).toEqual(['serving/web']);
  });

  test('a Gateway created after a ListenerSet took a port loses there; the ListenerSet keeps serving', () => {
    const { graph, reports } = run(
      dated(allowing(gateway('old', [http('web', 80, { hostname: 'old.example' })]), 'Same'), '2026-01-01T00:00:00Z'),
      listenerSet('early', [http('shared', 80, { hostname: 'shared.example' }), http('other', 8080, { hostname: 'early.example' })], { gateway: 'old', creationTimestamp: '2026-01-02T00:00:00Z' }),
      dated(gateway('late', [http('web', 80, { hostname: 'shared.example' }), { name: 'tcp', port: 8080, protocol: 'TCP' }, http('fine', 80, { hostname: 'fine.example' })]), '2026-01-03T00:00:00Z'),
    );
    const early = status(reports, 'ListenerSet', 'early');
    expect(summary(early.conditions)).toEqual(['Accepted=True/Accepted', 'Programmed=True/Programmed']);
    const late = status(reports, 'Gateway', 'late');
    expect(summary(late.conditions)).toContain('Accepted=True/ListenersNotValid');
    expect(summary(listenerOf(late, 'web').conditions)).toContain('Conflicted=True/HostnameConflict');
    expect(listenerOf(late, 'web').conditions.find((c: { type: string }) => c.type === 'Conflicted').message).toContain('listener shared of ListenerSet default/early');
    expect(summary(listenerOf(late, 'tcp').conditions)).toContain('Conflicted=True/ProtocolConflict');
    expect(accepted(listenerOf(late, 'fine'))).toBe('True');
    expect(hostOwners(graph, 'shared.example')).toEqual(['old/early/shared']);
    expect(status(reports, 'Gateway', 'old').attachedListenerSets).toBe(1);
  });

  test('a Gateway that loses every listener of its own is not accepted, and its ListenerSets report ParentNotAccepted', () => {
    const { graph, reports } = run(
      dated(gateway('first', [http('web', 80)]), '2026-01-01T00:00:00Z'),
      dated(allowing(gateway('second', [http('web', 80)]), 'Same'), '2026-01-02T00:00:00Z'),
      listenerSet('ls', [http('extra', 80, { hostname: 'extra.example' })], { gateway: 'second', creationTimestamp: '2026-01-01T00:00:00Z' }),
    );
    expect(summary(status(reports, 'Gateway', 'second').conditions)).toContain('Accepted=False/ListenersNotValid');
    const ls = status(reports, 'ListenerSet', 'ls');
    expect(summary(ls.conditions)).toEqual(['Accepted=False/ParentNotAccepted', 'Programmed=False/ParentNotAccepted']);
    expect(status(reports, 'Gateway', 'second').attachedListenerSets).toBe(0);
    expect(graph.gateways.map((g) => g.name)).toEqual(['first']);
    expect(hostOwners(graph, 'extra.example')).toEqual([]);
  });

  test('each Gateway keeps its data plane on Kubernetes: no conflict between Gateways there', () => {
    const parsed = parse(
      gatewayClass(),
      dated(allowing(gateway('old', [http('web', 80, { hostname: 'old.example' })]), 'Same'), '2026-01-01T00:00:00Z'),
      dated(gateway('serving', [http('web', 80, { hostname: 'shared.example' })]), '2026-01-02T00:00:00Z'),
      listenerSet('late', [http('shared', 80, { hostname: 'shared.example' })], { gateway: 'old', creationTimestamp: '2026-01-03T00:00:00Z' }),
    );
    const reports = computeStatuses(buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME, dataplanePerGateway: true }), parsed, ok);
    expect(summary(status(reports, 'ListenerSet', 'late').conditions)).toEqual(['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  });
});

test('a ListenerSet listener named as one of its Gateway\'s keeps its own route bookkeeping: losing an HTTPRoute there does not take the Gateway listener from it', () => {
  const grpc = { apiVersion: GW_API, kind: 'GRPCRoute', metadata: { name: 'grpc', namespace: 'default', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { parentRefs: [toSet('ls')], rules: [{}] } };
  const { graph, reports } = run(
    allowing(gateway('gw', [http('web', 80, { hostname: 'gw.example' })]), 'Same'),
    listenerSet('ls', [http('web', 80, { hostname: 'ls.example' })]),
    grpc,
    route('both', { parentRefs: [{ name: 'gw' }, toSet('ls')], rules: [{}] }, { creationTimestamp: '2026-01-02T00:00:00Z' }),
  );
  const parents = status(reports, 'HTTPRoute', 'both').parents;
  expect(parents[0].parentRef).toMatchObject({ kind: 'Gateway', name: 'gw' });
  expect(parents[0].conditions[0]).toMatchObject({ type: 'Accepted', status: 'True' });
  expect(parents[1].parentRef).toMatchObject({ kind: 'ListenerSet', name: 'ls' });
  expect(parents[1].conditions[0]).toMatchObject({ type: 'Accepted', status: 'False', reason: 'HostnameConflict' });
  expect(listenerOf(status(reports, 'Gateway', 'gw'), 'web').attachedRoutes).toBe(1);
  const served = new Map(planServers(graph.gateways).map((p) => [p.name, p.routes.map((r) => r.attached.route.name).sort()]));
  expect(served.get('gw.example')).toEqual(['both']);
  expect(served.get('ls.example')).toEqual(['grpc']);
});

test('a ListenerSet listener clashing with the Gateway leaves its siblings on the same port accepted', () => {
  const { reports } = run(
    allowing(gateway('gw', [http('web', 80, { hostname: 'gw.example' })]), 'Same'),
    listenerSet('ls', [http('fine', 80, { hostname: 'fine.example' }), { name: 'tcp', port: 80, protocol: 'TCP' }, http('also-fine', 80, { hostname: 'also.example' })]),
  );
  const ls = status(reports, 'ListenerSet', 'ls');
  expect(summary(ls.conditions)).toEqual(['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed']);
  expect(listenerOf(ls, 'fine').conditions.find((c: { type: string }) => c.type === 'Accepted').status).toBe('True');
  expect(listenerOf(ls, 'also-fine').conditions.find((c: { type: string }) => c.type === 'Accepted').status).toBe('True');
  expect(summary(listenerOf(ls, 'tcp').conditions)).toEqual(['Accepted=False/ProtocolConflict', 'Conflicted=True/ProtocolConflict', 'Programmed=False/ProtocolConflict', 'ResolvedRefs=True/ResolvedRefs']);
});
