/**
 * The reconcile loop as a thin layer: one reconcile at a time, events during a reconcile
 * coalesced into one more, an unchanged config not re-applied, a refused config retried.
 * (The stages themselves are tested with real data elsewhere, and end to end in e2e/gateway.)
 */
import { localDataplane, Reconciler, standardPipeline, type NginxApplier, type ResourceSource } from '../src/reconcile';
import { silentLogger } from '../src/log';
import type { StatusReport } from '../src/graph/types';

const gatewayDocs = (port: number) => [
  { source: 't', doc: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'c', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { controllerName: 'gateway.portcullis.dev/controller' } } },
  { source: 't', doc: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { gatewayClassName: 'c', listeners: [{ name: 'http', port, protocol: 'HTTP' }] } } },
];

function setup(options: { applyOk?: () => boolean; applyDelayMs?: number } = {}) {
  let port = 8080;
  let scans = 0;
  const written: StatusReport[][] = [];
  const applies: string[] = [];
  let running = 0;
  let maxConcurrent = 0;
  const source: ResourceSource = {
    async scan() {
      scans++;
      return gatewayDocs(port) as any;
    },
    async writeStatuses(s) {
      written.push(s);
    },
  };
  const nginx: NginxApplier = {
    start: (c) => nginx.apply(c),
    async apply(config) {
      running++;
      maxConcurrent = Math.max(maxConcurrent, running);
      await new Promise((r) => setTimeout(r, options.applyDelayMs ?? 5));
      running--;
      applies.push(config.files['servers.conf'] ?? '');
      return options.applyOk && !options.applyOk() ? { ok: false, message: 'bind() to 127.0.0.1:8080 failed (98: Address already in use)' } : { ok: true };
    },
    async stop() {},
  };
  let clock = 0;
  const reconciler = new Reconciler({
    pipeline: standardPipeline as any,
    source,
    dataplane: localDataplane(standardPipeline as any, nginx, { log: silentLogger, listenAddress: '127.0.0.1', prefix: '/tmp/portcullis-reconcile-test' }),
    log: silentLogger,
    controllerName: 'gateway.portcullis.dev/controller',
    retryMs: 20,
    now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, ++clock)).toISOString(),
  });
  return {
    reconciler,
    written,
    applies,
    scans: () => scans,
    maxConcurrent: () => maxConcurrent,
    setPort: (p: number) => (port = p),
  };
}

const gatewayCondition = (s: StatusReport[], type: string) =>
  ((s.find((r) => r.kind === 'Gateway')!.status as any).conditions as any[]).find((c) => c.type === type);

test('events arriving during a reconcile are coalesced into one more reconcile, never run concurrently', async () => {
  const t = setup({ applyDelayMs: 30 });
  const first = t.reconciler.trigger();
  t.setPort(8081);
  void t.reconciler.trigger();
  void t.reconciler.trigger();
  await t.reconciler.trigger();
  await first;
  expect(t.scans()).toBe(2);
  expect(t.maxConcurrent()).toBe(1);
  expect(t.applies[1]).toContain('8081');
  await t.reconciler.stop();
});

test('an unchanged configuration is not applied again, but statuses are still written', async () => {
  const t = setup();
  await t.reconciler.trigger();
  await t.reconciler.trigger();
  expect(t.applies).toHaveLength(1);
  expect(t.written).toHaveLength(2);
  await t.reconciler.stop();
});

test('a refused configuration is reported as Programmed False with nginx\'s message and retried until nginx takes it', async () => {
  let ok = false;
  const t = setup({ applyOk: () => ok });
  await t.reconciler.trigger();
  const refused = gatewayCondition(t.written[0], 'Programmed');
  expect(refused).toMatchObject({ status: 'False' });
  expect(refused.message).toContain('Address already in use');
  ok = true;
  const deadline = Date.now() + 2000;
  while (gatewayCondition(t.written[t.written.length - 1], 'Programmed').status !== 'True') {
    if (Date.now() > deadline) throw new Error('not retried');
    await new Promise((r) => setTimeout(r, 10));
  }
  // Accepted did not change, so its transition time is the first one.
  const last = t.written[t.written.length - 1];
  expect(gatewayCondition(last, 'Accepted').lastTransitionTime).toBe(gatewayCondition(t.written[0], 'Accepted').lastTransitionTime);
  expect(gatewayCondition(last, 'Programmed').lastTransitionTime).not.toBe(refused.lastTransitionTime);
  await t.reconciler.stop();
});

test('statuses carry the --controller-name the reconciler runs with, even where no GatewayClass names it', async () => {
  const written: StatusReport[][] = [];
  const route = {
    source: 't',
    doc: {
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { parentRefs: [{ name: 'missing' }], rules: [{ backendRefs: [{ name: 'svc', port: 80 }] }] },
    },
  };
  const reconciler = new Reconciler({
    pipeline: standardPipeline as any,
    source: { scan: async () => [route] as any, writeStatuses: async (s) => void written.push(s) },
    dataplane: localDataplane(standardPipeline as any, { start: async () => ({ ok: true }), apply: async () => ({ ok: true }), stop: async () => {} }, { log: silentLogger, listenAddress: '127.0.0.1', prefix: '/tmp/portcullis-reconcile-test' }),
    log: silentLogger,
    controllerName: 'example.com/other-controller',
    retryMs: 0,
  });
  await reconciler.trigger();
  const parents = (written[0].find((r) => r.kind === 'HTTPRoute')?.status as any)?.parents ?? [];
  expect(parents.length).toBeGreaterThan(0);
  for (const p of parents) expect(p.controllerName).toBe('example.com/other-controller');
  await reconciler.stop();
});

describe('a reconcile with the same documents (per-Gateway data planes)', () => {
  test('recomputes statuses only: no new graph, no publish; a changed document builds and publishes again', async () => {
    let docs: { source: string; doc: any }[] = gatewayDocs(8080);
    const published: unknown[] = [];
    let programmed = false;
    const written: StatusReport[][] = [];
    const reconciler = new Reconciler({
      pipeline: standardPipeline as any,
      source: { scan: async () => docs as any, writeStatuses: async (s) => void written.push(s) },
      dataplane: {
        perGateway: true,
        settled: () => true,
        publish: async (graph) => {
          published.push(graph);
          return { outcome: { ok: true }, applied: true, modelMs: 0, renderMs: 0 };
        },
        resultFor: () => (programmed ? { programmed: true, addresses: ['10.0.0.1'] } : { programmed: false, reason: 'Pending' as const, message: 'waiting', addresses: [] }),
      },
      log: silentLogger,
      controllerName: 'gateway.portcullis.dev/controller',
    });
    const gatewayProgrammed = () => (written[written.length - 1].find((s) => s.kind === 'Gateway')!.status as any).conditions.find((c: any) => c.type === 'Programmed');
    await reconciler.trigger();
    expect(published).toHaveLength(1);
    expect(gatewayProgrammed()).toMatchObject({ status: 'False', reason: 'Pending' });
    // An agent reported: same documents, so only the statuses change.
    programmed = true;
    await reconciler.trigger();
    expect(published).toHaveLength(1);
    expect(gatewayProgrammed()).toMatchObject({ status: 'True', reason: 'Programmed' });
    // One document replaced (same content, new object, as a watch event gives it): built and published again.
    docs = [docs[0], { ...docs[1], doc: { ...docs[1].doc } }];
    await reconciler.trigger();
    expect(published).toHaveLength(2);
    await reconciler.stop();
  });
});
