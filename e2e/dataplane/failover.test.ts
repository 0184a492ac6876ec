/**
 * Leader failover with agents attached, on the real API server: two controller processes
 * (--dataplane=agent, leader election on a Lease) and one portcullis-agent with real nginx
 * serving an echo backend in a network namespace. Agents reach "the controller" through one
 * address, as they reach the controller's Service in a cluster: here a TCP pass-through (TLS
 * ends at the controllers) that sends each new connection to a replica that accepts it, in
 * turn. Only the leader serves agents (followers answer 503, the agent retries).
 *
 * The leader is killed (SIGKILL, no Lease release): the follower takes the Lease within the
 * lease duration (15 s), the agent reconnects to it (nginx serving its last config meanwhile),
 * and a route created after the failover reaches the serving nginx; the Gateway is Programmed
 * again, written by the new leader.
 */
import * as path from 'path';
import { describeKube, startCluster, type Cluster } from '../support/kube';
import { startNetnsBackends, type NetnsBackends } from '../support/netns';
import { startController, type ControllerProcess } from '../support/controller';
import { startAgent, stopAllAgents, type AgentProcess } from '../support/agent';
import { makeAgentTls } from '../support/agent-tls';
import { agentModeArgs, serviceWithEndpoints, writeAgentToken } from '../support/agent-mode';
import { eventually, httpRequest } from '../support/http';
import { freePort } from '../support/ports';
import { makeTempDir, removeDir } from '../support/tmp';
import { startPassThrough } from '../support/pass-through';
import { GATEWAY_API, CONTROLLER_NAME, type Manifest } from '../support/manifests';

jest.setTimeout(240000);

const NS = 'pck-failover';
const BASE = 'gw-portcullis';
const LEASE = ['--leader-election=true', '--leader-election-namespace=default', '--leader-election-lock-name=portcullis-failover'];
const LEASE_MS = 15000;

const leads = (c: ControllerProcess) => c.logs.filter((l) => l.msg === 'became the leader').length - c.logs.filter((l) => l.msg === 'no longer the leader').length > 0;

describeKube('leader failover with an agent-fronted Gateway', () => {
  let cluster: Cluster;
  let backends: NetnsBackends;
  let dir: string;
  let port: number;
  let proxy: { port: number; close(): Promise<void> };
  const controllers: ControllerProcess[] = [];
  let agent: AgentProcess;

  const route = (name: string, pathValue: string): Manifest => ({
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: NS },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: pathValue } }], backendRefs: [{ name: 'echo', port: 80 }] }] },
  });
  const serves = async (p: string) => (await httpRequest(port, p, { timeoutMs: 2000 }).catch(() => ({ status: 0 }))).status;
  const programmed = async () =>
    ((await cluster.getJson('gateway', 'gw', NS)).status?.conditions ?? []).find((c: { type: string }) => c.type === 'Programmed') as { status: string; reason: string; observedGeneration: number } | undefined;

  beforeAll(async () => {
    dir = await makeTempDir('pck-failover-');
    const tls = makeAgentTls(dir);
    cluster = await startCluster();
    backends = await startNetnsBackends(['echo'], { prefix: 'pck-', subnet: '10.244' });
    port = await freePort();
    const agentPorts = [await freePort(), await freePort()];
    proxy = await startPassThrough(agentPorts);
    const agentUrl = `https://127.0.0.1:${proxy.port}`;
    await cluster.kubectl(['create', 'namespace', NS]);
    await cluster.apply([
      { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name: 'portcullis' }, spec: { controllerName: CONTROLLER_NAME } },
      ...serviceWithEndpoints({ name: 'echo', namespace: NS, address: backends.address, targetPort: backends.ports.echo, managedBy: 'pck-e2e' }),
      {
        apiVersion: GATEWAY_API,
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: NS },
        spec: { gatewayClassName: 'portcullis', listeners: [{ name: 'http', port, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }] },
      },
      route('r1', '/one'),
    ]);
    for (const [i, agentPort] of agentPorts.entries()) {
      controllers.push(
        await startController({
          manifestsDir: dir,
          stateDir: path.join(dir, `controller-${i}`),
          kubeconfig: cluster.kubeconfig,
          dataplane: 'agent',
          args: [...LEASE, ...(await agentModeArgs({ agentPort, agentUrl, tls }))],
        }),
      );
      // The first one takes the Lease before the second starts, so the roles are known.
      if (i === 0) await eventually(async () => leads(controllers[0]), (x) => x, 30000, 100);
    }
    const tokenFile = await writeAgentToken(cluster, { namespace: NS, serviceAccount: BASE, file: path.join(dir, 'token') });
    agent = await startAgent({ server: agentUrl, gateway: `${NS}/gw`, tokenFile, caFile: tls.ca, prefix: path.join(dir, 'pod'), listenAddress: '127.0.0.1', healthPort: await freePort(), podName: 'pod-1' });
  }, 240000);

  afterAll(async () => {
    await stopAllAgents();
    for (const c of controllers) await c.stop('SIGTERM').catch(() => undefined);
    await proxy?.close();
    await backends?.close();
    await cluster?.stop();
    await removeDir(dir);
  });

  test('the leader serves the agent: routes are served and the Gateway is Programmed', async () => {
    expect(leads(controllers[1])).toBe(false);
    await eventually(() => serves('/one'), (s) => s === 200, 60000, 100).catch((err) => {
      throw new Error(`${(err as Error).message}; agent logs: ${JSON.stringify(agent.logs.slice(-8))}`);
    });
    expect((await httpRequest(port, '/one/x')).json.backend).toBe('echo');
    await eventually(programmed, (c) => c?.status === 'True', 30000, 200);
    expect(controllers[0].logs.some((l) => l.msg === 'agent connected')).toBe(true);
    expect(controllers[1].logs.some((l) => l.msg === 'agent connected')).toBe(false);
  });

  test('after SIGKILL of the leader, the follower takes the Lease within the lease duration, the agent reconnects to it, and a new route is served', async () => {
    const [a, b] = controllers;
    const killedAt = Date.now();
    await a.stop('SIGKILL');
    // nginx keeps serving its last config while there is no leader.
    expect(await serves('/one')).toBe(200);
    await eventually(async () => leads(b), (x) => x, LEASE_MS + 10000, 100);
    const takeoverMs = Date.now() - killedAt;
    await b.waitForLog((l) => l.msg === 'agent connected', 20000);
    const reconnectMs = Date.now() - killedAt;
    process.stderr.write(`failover with agents: takeover ${takeoverMs} ms (lease ${LEASE_MS} ms), agent connected to the new leader ${reconnectMs} ms after the kill\n`);
    // The follower judges expiry on its own clock: lease duration plus a retry period or two.
    expect(takeoverMs).toBeLessThan(LEASE_MS + 5000);
    expect(await serves('/one')).toBe(200);

    const applied = Date.now();
    await cluster.apply([route('r2', '/two')]);
    await eventually(() => serves('/two'), (s) => s === 200, 30000, 50);
    process.stderr.write(`route created after the failover served in ${Date.now() - applied} ms\n`);
    expect((await httpRequest(port, '/two/y')).json.backend).toBe('echo');
    const routeStatus = await eventually(
      () => cluster.getJson('httproute', 'r2', NS),
      (r) => (r.status?.parents?.[0]?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Accepted' && c.status === 'True'),
      30000,
      200,
    );
    expect(routeStatus.status.parents[0].controllerName).toBe(CONTROLLER_NAME);
    await eventually(programmed, (c) => c?.status === 'True', 30000, 200);
    expect(agent.logs.filter((l) => l.msg === 'configuration applied').length).toBeGreaterThanOrEqual(2);
  });
});
