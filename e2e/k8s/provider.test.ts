/**
 * The Kubernetes provider against a real API server (etcd + kube-apiserver): the controller runs
 * as a local process with a kubeconfig, nginx local (--dataplane=local), backends in a network
 * namespace. What a user sees: statuses with kubectl, policies rejected by CEL at kubectl apply,
 * requests served, one status write per changed object, and a controller that outlives its API
 * server.
 */
import { MESSAGES } from '../../controller/src/resources/policies/common';
import { CONTROLLER_NAME, gateway, httpRoute, rule, type Manifest } from '../support/manifests';
import { freePort } from '../support/ports';
import { describeKube, startKubeGatewayFixture, type KubeGatewayFixture } from '../support/kube-gateway';

jest.setTimeout(90000);

const ROUTES = 10;
const routeNamed = (i: number, prefix = `/r${i}`) => httpRoute(`r${i}`, { rules: [rule('echo', [{ path: { type: 'PathPrefix', value: prefix } }])] });

function rateLimit(name: string, targetRefs: Manifest[], extra: Manifest = {}): Manifest {
  return {
    apiVersion: 'gateway.portcullis.dev/v1alpha1',
    kind: 'RateLimitPolicy',
    metadata: { name, namespace: 'default' },
    spec: { targetRefs, rateLimit: { local: { rules: [{ key: '$binary_remote_addr', rate: '100r/s', zoneSize: '1m' }] } }, ...extra },
  };
}

const routeRef = (name: string) => ({ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name });
const gatewayRef = (name: string) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name });

function cond(conditions: any[] | undefined, type: string): any {
  return (conditions ?? []).find((c) => c.type === type);
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastErr: unknown;
  for (;;) {
    try {
      last = await fn();
      if (ok(last)) return last;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met after ${timeoutMs} ms; last value: ${JSON.stringify(last)?.slice(0, 2000)} ${lastErr ?? ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function metric(gw: KubeGatewayFixture, name: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics`);
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

describeKube('Kubernetes provider on a real API server', () => {
  let gw: KubeGatewayFixture;
  /** The routes as applied now; tests move one route's path at a time. */
  const prefixes = Array.from({ length: ROUTES }, (_, i) => `/r${i}`);
  const routesWith = (i: number, prefix: string) => {
    prefixes[i] = prefix;
    return prefixes.map((p, j) => routeNamed(j, p));
  };

  beforeAll(async () => {
    gw = await startKubeGatewayFixture({
      backends: ['echo'],
      files: { 'routes.yaml': Array.from({ length: ROUTES }, (_, i) => routeNamed(i)) },
    });
  }, 240000);

  afterAll(async () => {
    await gw?.close();
  });

  test('statuses are written through the status subresource and read back with kubectl', async () => {
    const gc = await eventually(() => gw.cluster.getJson('gatewayclass', 'portcullis'), (o) => cond(o.status?.conditions, 'Accepted')?.status === 'True');
    expect(gc.status.supportedFeatures.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(['Gateway', 'HTTPRoute', 'HTTPRouteQueryParamMatching']));
    const g = await eventually(() => gw.cluster.getJson('gateway', 'gw', 'default'), (o) => cond(o.status?.conditions, 'Programmed')?.status === 'True');
    expect(cond(g.status.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted', observedGeneration: 1 });
    expect(g.status.addresses).toEqual([{ type: 'IPAddress', value: '127.0.0.1' }]);
    expect(g.status.listeners[0]).toMatchObject({ name: 'http', attachedRoutes: ROUTES });
    const r = await gw.cluster.getJson('httproute', 'r3', 'default');
    expect(r.status.parents).toHaveLength(1);
    expect(r.status.parents[0]).toMatchObject({ controllerName: CONTROLLER_NAME, parentRef: { name: 'gw', kind: 'Gateway' } });
    expect(cond(r.status.parents[0].conditions, 'Accepted')).toMatchObject({ status: 'True', observedGeneration: 1 });
    expect(cond(r.status.parents[0].conditions, 'ResolvedRefs')).toMatchObject({ status: 'True' });
    // And the routes are served by nginx, to the backend in the network namespace.
    expect(await gw.backend('/r3/x')).toBe('echo');
    expect(await gw.backend('/nowhere')).toBe(404);
  });

  test('/healthz, /readyz and /metrics answer', async () => {
    expect((await fetch(`http://127.0.0.1:${gw.healthPort}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${gw.healthPort}/readyz`)).status).toBe(200);
    expect(await metric(gw, 'portcullis_controller_leader')).toBe(1);
    expect(await metric(gw, 'portcullis_controller_resources{kind="HTTPRoute"}')).toBe(ROUTES);
    expect(await metric(gw, 'portcullis_controller_reconciles_total')).toBeGreaterThanOrEqual(1);
  });

  test('CEL rules reject bad policies at kubectl apply with the messages users see', async () => {
    const mixed = await gw.cluster.applyFailure([rateLimit('mixed', [gatewayRef('gw'), routeRef('r1')])]);
    expect(mixed).toContain('The RateLimitPolicy "mixed" is invalid');
    expect(mixed).toContain(MESSAGES.mixedTargets);
    const busy = await gw.cluster.applyFailure([
      {
        apiVersion: 'gateway.portcullis.dev/v1alpha1',
        kind: 'ProxySettingsPolicy',
        metadata: { name: 'busy', namespace: 'default' },
        spec: { targetRefs: [routeRef('r1')], buffering: { bufferSize: '16k', busyBuffersSize: '8k', buffers: { number: 8, size: '4k' } } },
      },
    ]);
    expect(busy).toContain(MESSAGES.busyAboveBufferSize);
    const zone = await gw.cluster.applyFailure([
      { ...rateLimit('tiny', [routeRef('r1')]), spec: { targetRefs: [routeRef('r1')], rateLimit: { local: { rules: [{ key: '$binary_remote_addr', rate: '1r/s', zoneSize: '8k' }] } } } },
    ]);
    expect(zone).toContain(MESSAGES.zoneTooSmall);
  });

  test('a policy reports its ancestors, and its target gets RateLimitPolicyAffected', async () => {
    await gw.write('policy.yaml', [rateLimit('limit-r1', [routeRef('r1')])]);
    const p = await eventually(() => gw.cluster.getJson('ratelimitpolicy', 'limit-r1', 'default'), (o) => (o.status?.ancestors ?? []).length > 0);
    expect(p.status.ancestors[0]).toMatchObject({ controllerName: CONTROLLER_NAME, ancestorRef: { kind: 'HTTPRoute', name: 'r1' } });
    expect(cond(p.status.ancestors[0].conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    const r1 = await eventually(() => gw.cluster.getJson('httproute', 'r1', 'default'), (o) => !!cond(o.status?.parents?.[0]?.conditions, 'RateLimitPolicyAffected'));
    expect(cond(r1.status.parents[0].conditions, 'RateLimitPolicyAffected')).toMatchObject({ status: 'True', reason: 'PolicyAffected' });
    // Removing the policy takes the condition away again.
    await gw.remove('policy.yaml');
    await eventually(() => gw.cluster.getJson('httproute', 'r1', 'default'), (o) => !cond(o.status?.parents?.[0]?.conditions, 'RateLimitPolicyAffected'));
  });

  test('IPAccessPolicy: CEL refuses a bad network and clientAddress on a route; a denied client gets 403', async () => {
    const ipPolicy = (name: string, spec: Manifest): Manifest => ({ apiVersion: 'gateway.portcullis.dev/v1alpha1', kind: 'IPAccessPolicy', metadata: { name, namespace: 'default' }, spec });
    const badNetwork = await gw.cluster.applyFailure([ipPolicy('bad-net', { targetRefs: [routeRef('r2')], deny: ['10.0.0.0/33'] })]);
    expect(badNetwork).toContain('The IPAccessPolicy "bad-net" is invalid');
    expect(badNetwork).toContain('spec.deny[0]');
    const onRoute = await gw.cluster.applyFailure([ipPolicy('on-route', { targetRefs: [routeRef('r2')], clientAddress: { source: 'Connection' } })]);
    expect(onRoute).toContain(MESSAGES.clientAddressGatewayOnly);
    const noTrusted = await gw.cluster.applyFailure([ipPolicy('no-trusted', { targetRefs: [gatewayRef('gw')], clientAddress: { source: 'XForwardedFor' } })]);
    expect(noTrusted).toContain(MESSAGES.trustedCIDRsRequired);
    // The controller's requests come from 127.0.0.1.
    await gw.write('ip.yaml', [ipPolicy('deny-local', { targetRefs: [routeRef('r2')], deny: ['127.0.0.0/8', '::1'] })]);
    await eventually(() => gw.backend('/r2/x'), (v) => v === 403);
    expect(await gw.backend('/r3/x')).toBe('echo');
    const p = await eventually(() => gw.cluster.getJson('ipaccesspolicy', 'deny-local', 'default'), (o) => (o.status?.ancestors ?? []).length > 0);
    expect(cond(p.status.ancestors[0].conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    await gw.remove('ip.yaml');
    await eventually(() => gw.backend('/r2/x'), (v) => v === 'echo');
  });

  test('a reference the API server accepts but we may not follow gets a condition, not a crash', async () => {
    await gw.write('cross.yaml', [httpRoute('cross', { rules: [rule([{ name: 'echo', namespace: 'elsewhere' } as never], [{ path: { type: 'PathPrefix', value: '/cross' } }])] })]);
    const r = await eventually(() => gw.cluster.getJson('httproute', 'cross', 'default'), (o) => !!cond(o.status?.parents?.[0]?.conditions, 'ResolvedRefs'));
    expect(cond(r.status.parents[0].conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
    expect(await gw.backend('/cross')).toBe(500);
    await gw.remove('cross.yaml');
  });

  test("ListenerSets: one reusing its Gateway's listener name keeps its own status and routes; one created after another Gateway took a port loses there, not the other Gateway", async () => {
    const [own, taken] = [await freePort(), await freePort()];
    const at = (d: Manifest, creationTimestamp: string) => ({ ...d, metadata: { ...d.metadata, creationTimestamp } });
    const parent = gateway('ls-parent', [{ name: 'http', port: own, hostname: 'parent.example' }]);
    const set = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { name: 'ls' },
      spec: {
        parentRef: { name: 'ls-parent' },
        listeners: [
          { name: 'http', port: own, protocol: 'HTTP', hostname: 'set.example' },
          { name: 'web', port: taken, protocol: 'HTTP', hostname: 'taken.example' },
        ],
      },
    };
    const prefix = (p: string) => [{ path: { type: 'PathPrefix', value: p } }];
    await gw.write('listenersets.yaml', [
      at({ ...parent, spec: { ...parent.spec, allowedListeners: { namespaces: { from: 'Same' } } } }, '2026-01-01T00:00:01Z'),
      at(gateway('ls-taker', [{ name: 'web', port: taken, hostname: 'taken.example' }]), '2026-01-01T00:00:02Z'),
      at(set, '2026-01-01T00:00:03Z'),
      httpRoute('via-gateway', { rules: [rule('echo', prefix('/via-gateway'))] }, 'ls-parent'),
      httpRoute('via-set', { parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'ls' }], rules: [rule('echo', prefix('/via-set'))] }),
      httpRoute('taker', { rules: [rule('echo', prefix('/taker'))] }, 'ls-taker'),
    ]);
    const ls = await eventually(() => gw.cluster.getJson('listenerset', 'ls', 'default'), (o) => cond(o.status?.conditions, 'Programmed')?.status === 'True');
    expect(cond(ls.status.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'ListenersNotValid' });
    const entry = (o: any, name: string) => o.status.listeners.find((l: { name: string }) => l.name === name);
    expect(entry(ls, 'http').attachedRoutes).toBe(1);
    expect(cond(entry(ls, 'http').conditions, 'Programmed')).toMatchObject({ status: 'True' });
    expect(cond(entry(ls, 'web').conditions, 'Conflicted')).toMatchObject({ status: 'True', reason: 'HostnameConflict' });
    const parentStatus = await gw.cluster.getJson('gateway', 'ls-parent', 'default');
    expect(parentStatus.status.attachedListenerSets).toBe(1);
    expect(parentStatus.status.listeners.map((l: { name: string }) => l.name)).toEqual(['http']);
    expect(entry(parentStatus, 'http').attachedRoutes).toBe(1);
    const taker = await gw.cluster.getJson('gateway', 'ls-taker', 'default');
    expect(cond(entry(taker, 'web').conditions, 'Conflicted')).toMatchObject({ status: 'False' });
    expect(await gw.backend('/via-set', { host: 'set.example' }, own)).toBe('echo');
    expect(await gw.backend('/via-gateway', { host: 'set.example' }, own)).toBe(404);
    expect(await gw.backend('/via-gateway', { host: 'parent.example' }, own)).toBe('echo');
    expect(await gw.backend('/taker', { host: 'taken.example' }, taken)).toBe('echo');
    await gw.remove('listenersets.yaml');
  });

  test('one status write per changed object: changing one of ten routes updates one status', async () => {
    await gw.settle(gw.controller.reconciles() - 1);
    const before = await gw.cluster.requestCounts();
    const writesBefore = await metric(gw, 'portcullis_controller_status_writes_total');
    await gw.write('routes.yaml', routesWith(4, '/r4-moved'));
    await eventually(() => gw.cluster.getJson('httproute', 'r4', 'default'), (o) => o.status?.parents?.[0]?.conditions?.[0]?.observedGeneration === 2);
    await new Promise((r) => setTimeout(r, 1500)); // anything else would have been written by now
    const after = await gw.cluster.requestCounts();
    const delta = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
    expect(delta('PUT|httproutes|status')).toBe(1);
    expect(delta('PUT|gateways|status')).toBe(0);
    expect(delta('PUT|gatewayclasses|status')).toBe(0);
    expect((await metric(gw, 'portcullis_controller_status_writes_total')) - writesBefore).toBe(1);
    expect(await gw.backend('/r4-moved')).toBe('echo');
    expect(await gw.backend('/r4')).toBe(404);
  });

  test("another controller's parent entry on a route is kept when ours is rewritten", async () => {
    const other = { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'other-gw' }, controllerName: 'example.com/other', conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'theirs', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 }] };
    const r6 = await gw.cluster.getJson('httproute', 'r6', 'default');
    await gw.cluster.kubectl(['patch', 'httproute', 'r6', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { parents: [...r6.status.parents, other] } })]);
    await gw.write('routes.yaml', routesWith(6, '/r6-moved'));
    const after = await eventually(() => gw.cluster.getJson('httproute', 'r6', 'default'), (o) => o.status?.parents?.some((p: any) => p.controllerName === CONTROLLER_NAME && p.conditions[0].observedGeneration === 2));
    expect(after.status.parents.find((p: any) => p.controllerName === 'example.com/other')).toMatchObject({ conditions: [{ message: 'theirs' }] });
    expect(after.status.parents).toHaveLength(2);
  });

  test('a lost API server connection is survived: watches resume, no status storm, changes are served', async () => {
    const writesBefore = await metric(gw, 'portcullis_controller_status_writes_total');
    await gw.cluster.down();
    await new Promise((r) => setTimeout(r, 3000));
    expect(gw.controller.child.exitCode).toBeNull();
    // nginx keeps serving while the API server is away.
    expect(await gw.backend('/r2')).toBe('echo');
    await gw.cluster.up();
    await gw.cluster.apply(routesWith(8, '/r8-after'));
    await eventually(() => gw.backend('/r8-after'), (b) => b === 'echo', 60000);
    await eventually(() => gw.cluster.getJson('httproute', 'r8', 'default'), (o) => o.status?.parents?.[0]?.conditions?.[0]?.observedGeneration === 2, 30000);
    await new Promise((r) => setTimeout(r, 1500));
    // Only the changed route's status: everything else was already right on the server.
    expect((await metric(gw, 'portcullis_controller_status_writes_total')) - writesBefore).toBe(1);
    expect(gw.controller.child.exitCode).toBeNull();
  });
});
