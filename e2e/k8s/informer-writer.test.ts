/**
 * The Kubernetes provider's informer and status writer against a real API server (etcd +
 * kube-apiserver from ../shared/tools/k8s), each checked on its own rather than through a whole
 * controller:
 *
 * - informer: a watch answered with 410 Gone lists again, keeps the very document of every
 *   unchanged object (the pipeline sees no change for them) and picks up what changed while it
 *   was gone; failures back off (doubling, with jitter) and keep the store meanwhile, and it
 *   resumes and catches up once the server answers again. The 410 event and the failures come
 *   from a thin wrapper around the real client (a server that compacts on demand or drops
 *   connections on cue is not something the API server offers); lists and watches go to the
 *   real server.
 * - informer: what the API server and kubectl keep for themselves (managedFields, the
 *   last-applied annotation) stays out of the store; the object's own annotations and labels stay.
 * - status writer: a real 409 Conflict (the object changed on the server after the writer's
 *   informer saw it) is retried on a fresh read, keeping the other controller's entry written
 *   meanwhile; a report equal to what the server holds writes nothing.
 */
import { KubeClient, ConnectionError, type WatchEvent } from '../../controller/src/providers/kubernetes/client';
import { Informer, LAST_APPLIED_ANNOTATION } from '../../controller/src/providers/kubernetes/informer';
import { StatusWriter } from '../../controller/src/providers/kubernetes/status-writer';
import { kindByName, objectPath } from '../../controller/src/providers/kubernetes/kinds';
import type { StatusReport } from '../../controller/src/graph/types';
import type { Logger } from '../../controller/src/log';
import { describeKube, startCluster, type Cluster } from '../support/kube';
import { CONTROLLER_NAME, GATEWAY_API, type Manifest } from '../support/manifests';

jest.setTimeout(120000);

const NS = 'default';
const HTTPROUTE = kindByName('HTTPRoute')!;
const SERVICE = kindByName('Service')!;

type Record_ = { level: string; msg: string; fields?: Record<string, unknown> };
function captureLog(): Logger & { records: Record_[] } {
  const records: Record_[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void records.push({ level, msg, fields });
  return { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const until = async (check: () => boolean, timeoutMs = 15000, what = 'condition') => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not met after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** The real client with `list` requests and watches that a test can make fail on cue. */
function faultyClient(real: KubeClient) {
  const faults = { lists: 0, watches: 0, gone: 0, listTimes: [] as number[] };
  const client = Object.create(real) as KubeClient;
  client.request = async function <T>(verb: Parameters<KubeClient['request']>[0], method: string, path: string, body?: unknown): Promise<T> {
    if (verb === 'list') {
      faults.listTimes.push(Date.now());
      if (faults.lists > 0) {
        faults.lists--;
        throw new ConnectionError(`GET ${path}: connect ECONNREFUSED (injected)`);
      }
    }
    return real.request<T>(verb, method as never, path, body);
  } as KubeClient['request'];
  client.watch = (path, params, onEvent, onEnd) => {
    if (faults.gone > 0) {
      faults.gone--;
      // What the API server sends when the version asked for was compacted away.
      setImmediate(() => {
        onEvent({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } } as WatchEvent);
        onEnd();
      });
      return { abort() {} };
    }
    if (faults.watches > 0) {
      faults.watches--;
      setTimeout(() => onEnd(new ConnectionError('watch: connection reset (injected)')), 5);
      return { abort() {} };
    }
    return real.watch(path, params, onEvent, onEnd);
  };
  return { client, faults };
}

describeKube('informer and status writer on the real API server', () => {
  let cluster: Cluster;
  let real: KubeClient;

  const service = (name: string, port = 80): Manifest => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec: { ports: [{ port, protocol: 'TCP' }] } });
  const route = (name: string): Manifest => ({
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: NS },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'svc-a', port: 80 }] }] },
  });

  beforeAll(async () => {
    cluster = await startCluster();
    real = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfig });
    await cluster.apply([service('svc-a'), service('svc-b')]);
  });

  afterAll(async () => {
    real?.close();
    await cluster?.stop();
  });

  test('410 Gone on the watch: lists again, unchanged objects keep their document, changes made meanwhile arrive', async () => {
    const { client, faults } = faultyClient(real);
    let changes = 0;
    const informer = new Informer({ client, kind: SERVICE, log: captureLog(), onChange: () => changes++, minBackoffMs: 50 });
    informer.start();
    await informer.waitForSync();
    try {
      expect(informer.lists).toBe(1);
      const before = informer.get(NS, 'svc-a')!.doc;
      // The next watch is told its version is gone; meanwhile a Service is added and one changed.
      faults.gone = 1;
      await cluster.apply([service('svc-c'), service('svc-b', 81)]);
      // Restart the running watch so the next one meets the 410 (a watch ends on the server's timeout too).
      (informer as unknown as { watchHandle?: { abort(): void } }).watchHandle?.abort();
      await until(() => informer.lists === 2 && !!informer.get(NS, 'svc-c') && (informer.get(NS, 'svc-b')!.doc as { spec: { ports: { port: number }[] } }).spec.ports[0].port === 81, 20000, 'relist after 410');
      expect(informer.get(NS, 'svc-a')!.doc).toBe(before);
      expect(changes).toBeGreaterThan(0);
      // And it watches again: a change after the re-list arrives without another list.
      await cluster.apply([service('svc-d')]);
      await until(() => !!informer.get(NS, 'svc-d'), 15000, 'watch after relist');
      expect(informer.lists).toBe(2);
    } finally {
      informer.stop();
    }
  });

  test('the store holds no managedFields and no last-applied annotation; the other annotations and labels stay', async () => {
    const annotated: Manifest = { ...route('r-annotated'), metadata: { name: 'r-annotated', namespace: NS, labels: { team: 'a' }, annotations: { 'example.com/owner': 'team-a' } } };
    const bare: Manifest = { ...route('r-bare'), metadata: { name: 'r-bare', namespace: NS } };
    await cluster.apply([annotated, bare]);
    const informer = new Informer({ client: real, kind: HTTPROUTE, log: captureLog(), onChange: () => undefined });
    informer.start();
    await informer.waitForSync();
    try {
      await until(() => !!informer.get(NS, 'r-annotated') && !!informer.get(NS, 'r-bare'), 10000, 'routes seen');
      // The server holds both (kubectl apply wrote them): without stripping the store would too.
      const onServer = await real.request<{ metadata: { annotations: Record<string, string>; managedFields?: unknown[] } }>('get', 'GET', objectPath(HTTPROUTE, NS, 'r-annotated'));
      expect(onServer.metadata.annotations[LAST_APPLIED_ANNOTATION]).toBeDefined();
      expect(onServer.metadata.managedFields?.length).toBeGreaterThan(0);
      const meta = (name: string) => (informer.get(NS, name)!.doc as { metadata: Record<string, unknown> }).metadata;
      expect(meta('r-annotated').annotations).toEqual({ 'example.com/owner': 'team-a' });
      expect(meta('r-annotated').labels).toEqual({ team: 'a' });
      expect(meta('r-annotated').managedFields).toBeUndefined();
      expect(meta('r-bare').annotations).toBeUndefined();
      expect(meta('r-bare').managedFields).toBeUndefined();
      expect(informer.get(NS, 'r-annotated')!.metaKey).not.toContain('last-applied');
      // An edit of the other annotation is a change the pipeline sees.
      const before = informer.get(NS, 'r-annotated')!.doc;
      await cluster.kubectl(['annotate', 'httproute', 'r-annotated', '-n', NS, '--overwrite', 'example.com/owner=team-b']);
      await until(() => informer.get(NS, 'r-annotated')!.doc !== before, 10000, 'annotation change seen');
      expect(meta('r-annotated').annotations).toEqual({ 'example.com/owner': 'team-b' });
    } finally {
      informer.stop();
      await cluster.kubectl(['delete', 'httproute', 'r-annotated', 'r-bare', '-n', NS]);
    }
  });

  test('an answer read outside the watch never brings back an object the watch deleted', async () => {
    const informer = new Informer({ client: real, kind: SERVICE, log: captureLog(), onChange: () => undefined });
    informer.start();
    await informer.waitForSync();
    try {
      await cluster.apply([service('svc-gone')]);
      await until(() => !!informer.get(NS, 'svc-gone'), 15000, 'service seen');
      // The object as a status write would have got it back, just before the deletion.
      const late = JSON.parse(JSON.stringify(await cluster.getJson('service', 'svc-gone', NS)));
      await cluster.kubectl(['delete', 'service', 'svc-gone', '-n', NS]);
      await until(() => !informer.get(NS, 'svc-gone'), 15000, 'deletion seen');
      informer.observe(late);
      expect(informer.get(NS, 'svc-gone')).toBeUndefined();
    } finally {
      informer.stop();
    }
  });

  test('failures back off (doubling, with jitter), keep the store, and the informer catches up when the server answers', async () => {
    const { client, faults } = faultyClient(real);
    const log = captureLog();
    const informer = new Informer({ client, kind: SERVICE, log, onChange: () => undefined, minBackoffMs: 100, maxBackoffMs: 1000 });
    // The first four lists fail: retried after ~100, ~200, ~400, ~800 ms.
    faults.lists = 4;
    informer.start();
    await informer.waitForSync();
    try {
      const retries = log.records.filter((r) => r.msg === 'list failed; retrying').map((r) => Number(r.fields!.retryInMs));
      expect(retries).toEqual([100, 200, 400, 800]);
      const gaps = faults.listTimes.slice(1).map((t, i) => t - faults.listTimes[i]);
      for (const [i, gap] of gaps.entries()) {
        expect(gap).toBeGreaterThanOrEqual(retries[i] * 0.8 - 5);
        expect(gap).toBeLessThan(retries[i] * 1.2 + 1000);
      }
      const size = informer.size;
      expect(size).toBeGreaterThanOrEqual(4);
      // Now the watch breaks twice: the store stays as it is, and what was created meanwhile arrives.
      faults.watches = 2;
      (informer as unknown as { watchHandle?: { abort(): void } }).watchHandle?.abort();
      await cluster.apply([service('svc-e')]);
      await until(() => log.records.filter((r) => r.msg === 'watch failed; retrying').length >= 2, 15000, 'two watch failures');
      expect(informer.size).toBeGreaterThanOrEqual(size);
      await until(() => !!informer.get(NS, 'svc-e'), 20000, 'catch up after the watch failures');
      // The watch resumed from its version: no list was needed for that.
      expect(faults.listTimes.length).toBe(5);
    } finally {
      informer.stop();
    }
  });

  test('status writer: a 409 is retried on a fresh read (the other controller\'s entry stays); an equal report writes nothing', async () => {
    await cluster.apply([route('r1')]);
    const informer = new Informer({ client: real, kind: HTTPROUTE, log: captureLog(), onChange: () => undefined });
    informer.start();
    await informer.waitForSync();
    await until(() => !!informer.get(NS, 'r1'), 10000, 'route seen');
    // From here the writer's view of r1 is stale: another controller writes its status.
    informer.stop();
    const other = { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: NS, name: 'other-gw' }, controllerName: 'example.com/other', conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'theirs', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 }] };
    await cluster.kubectl(['patch', 'httproute', 'r1', '-n', NS, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { parents: [other] } })]);
    const ours = { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: NS, name: 'gw' }, controllerName: CONTROLLER_NAME, conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'The Route is accepted', lastTransitionTime: '2026-01-02T00:00:00Z', observedGeneration: 1 }] };
    const report = (): StatusReport => ({ apiVersion: `${GATEWAY_API}`, kind: 'HTTPRoute', namespace: NS, name: 'r1', generation: 1, status: { parents: [JSON.parse(JSON.stringify(ours))] } });
    const writer = new StatusWriter({ client: real, informers: new Map([['HTTPRoute', informer]]), controllerName: CONTROLLER_NAME, log: captureLog() });
    writer.setDesired([report()]);
    writer.enable();
    await writer.idle();
    expect(writer.conflicts).toBe(1);
    expect(writer.writes).toBe(2);
    const stored = await cluster.getJson('httproute', 'r1', NS);
    expect(stored.status.parents.map((p: { controllerName: string }) => p.controllerName).sort()).toEqual([CONTROLLER_NAME, 'example.com/other'].sort());
    const rv = stored.metadata.resourceVersion;
    // The same report again (a new object with the same content, as the next reconcile makes it).
    writer.setDesired([report()]);
    await writer.idle();
    expect(writer.writes).toBe(2);
    expect((await cluster.getJson('httproute', 'r1', NS)).metadata.resourceVersion).toBe(rv);
    writer.disable();
  });
});
