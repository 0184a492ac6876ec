/**
 * Leader election with a coordination.k8s.io Lease: two controller processes on one real API
 * server, each with its own nginx (127.0.0.2 and 127.0.0.3, so the Gateway's address tells
 * who wrote its status). One leads and writes statuses; when it dies the other takes over
 * within the lease duration (15 s) and rewrites only what differs; a leader that stops cleanly
 * hands over at once.
 */
import * as path from 'path';
import { startController, type ControllerProcess } from '../support/controller';
import { httpRoute, rule } from '../support/manifests';
import { describeKube, startKubeGatewayFixture, type KubeGatewayFixture } from '../support/kube-gateway';

jest.setTimeout(120000);

const LEASE = ['--leader-election=true', '--leader-election-namespace=default', '--leader-election-lock-name=portcullis-test'];

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    try {
      last = await fn();
      if (ok(last)) return last;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`condition not met after ${timeoutMs} ms; last: ${JSON.stringify(last)?.slice(0, 1000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function writes(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(text.split('\n').find((l) => l.startsWith('portcullis_controller_status_writes_total '))?.split(' ')[1] ?? NaN);
}

const identityOf = (c: ControllerProcess) => String(c.logs.find((l) => l.msg === 'controller starting')?.leaderElection && (c.logs.find((l) => l.msg === 'controller starting')!.leaderElection as { identity: string }).identity);
const leads = (c: ControllerProcess) => c.logs.filter((l) => l.msg === 'became the leader').length - c.logs.filter((l) => l.msg === 'no longer the leader').length > 0;

describeKube('leader election with two controller processes', () => {
  let gw: KubeGatewayFixture;
  let b: ControllerProcess | undefined;
  let a2: ControllerProcess | undefined;
  let bMetrics: number;

  const startReplica = async (name: string, address: string): Promise<{ c: ControllerProcess; metricsPort: number }> => {
    const c = await startController({
      manifestsDir: gw.dir,
      stateDir: path.join(gw.dir, name),
      kubeconfig: gw.cluster.kubeconfig,
      listenAddress: address,
      args: [...LEASE, '--health-address=127.0.0.1:0', '--metrics-address=127.0.0.1:0'],
    });
    return { c, metricsPort: await c.boundPort('metrics') };
  };

  beforeAll(async () => {
    gw = await startKubeGatewayFixture({
      backends: ['echo'],
      files: { 'routes.yaml': [httpRoute('r', { rules: [rule('echo')] })] },
      controller: { listenAddress: '127.0.0.2', args: LEASE },
    });
    ({ c: b, metricsPort: bMetrics } = await startReplica('b', '127.0.0.3'));
  }, 240000);

  afterAll(async () => {
    await b?.stop('SIGTERM');
    await a2?.stop('SIGTERM');
    await gw?.close();
  });

  const address = async () => (await gw.cluster.getJson('gateway', 'gw', 'default')).status?.addresses?.[0]?.value;

  test('one replica leads and writes statuses; both serve their nginx', async () => {
    const a = gw.controller;
    await eventually(async () => leads(a), (x) => x);
    expect(leads(b!)).toBe(false);
    const lease = await gw.cluster.getJson('lease', 'portcullis-test', 'default');
    expect(lease.spec.holderIdentity).toBe(identityOf(a));
    expect(await eventually(address, (v) => v === '127.0.0.2')).toBe('127.0.0.2');
    // Every replica reconciles and keeps its own nginx current (warm for a takeover).
    expect(await gw.backend('/')).toBe('echo');
    expect(await gw.request('/', {}, gw.port).then(() => 'ok')).toBe('ok');
  });

  test('when the leader dies, the other takes over within the lease duration and rewrites only what differs', async () => {
    const writesBefore = await writes(bMetrics);
    const killedAt = Date.now();
    await gw.controller.stop('SIGKILL');
    await eventually(async () => leads(b!), (x) => x, 30000);
    const takeoverMs = Date.now() - killedAt;
    process.stderr.write(`leader failover after SIGKILL: ${takeoverMs} ms (lease 15 s)\n`);
    expect(takeoverMs).toBeLessThan(15000 + 2000 + 3000);
    expect(await eventually(address, (v) => v === '127.0.0.3')).toBe('127.0.0.3');
    await new Promise((r) => setTimeout(r, 1500));
    // The Gateway's address is the only status that differs from what the old leader wrote.
    expect((await writes(bMetrics)) - writesBefore).toBe(1);
    const lease = await gw.cluster.getJson('lease', 'portcullis-test', 'default');
    expect(lease.spec.holderIdentity).toBe(identityOf(b!));
    expect(lease.spec.leaseTransitions).toBeGreaterThanOrEqual(1);
  });

  test('a leader that stops cleanly releases the Lease: the follower takes over at once', async () => {
    ({ c: a2 } = await startReplica('a2', '127.0.0.2'));
    expect(leads(a2)).toBe(false);
    const stoppedAt = Date.now();
    await b!.stop('SIGTERM');
    b = undefined;
    await eventually(async () => leads(a2!), (x) => x, 20000);
    const takeoverMs = Date.now() - stoppedAt;
    process.stderr.write(`leader handover after SIGTERM: ${takeoverMs} ms\n`);
    expect(takeoverMs).toBeLessThan(8000);
    expect(await eventually(address, (v) => v === '127.0.0.2')).toBe('127.0.0.2');
  });
});
