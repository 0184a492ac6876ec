/**
 * Data planes through the real API server: the controller (a local process, --provider=
 * kubernetes --dataplane=agent, admin kubeconfig) provisions a Gateway's Deployment, Service,
 * ServiceAccount and agent ConfigMap; portcullis-agent runs as a local process standing in for
 * the pod (no kubelet here) with a real token of the provisioned ServiceAccount, a real nginx,
 * and an echo backend in a network namespace (EndpointSlices refuse loopback); statuses are
 * read back with kubectl; the garbage collector (kube-controller-manager) removes the objects
 * with the Gateway.
 */
import * as fs from 'fs';
import * as path from 'path';
import { describeKube, K8S_TOOLS, startCluster, type Cluster } from '../support/kube';
import { startNetnsBackends, type NetnsBackends } from '../support/netns';
import { startController, type ControllerProcess } from '../support/controller';
import { startAgent, stopAllAgents, type AgentProcess } from '../support/agent';
import { makeAgentTls } from '../support/agent-tls';
import { agentModeArgs, serviceWithEndpoints, writeAgentToken } from '../support/agent-mode';
import { eventually, httpRequest } from '../support/http';
import { freePort, occupyPort } from '../support/ports';
import { makeTempDir, removeDir } from '../support/tmp';
import { GATEWAY_API, CONTROLLER_NAME, type Manifest } from '../support/manifests';

jest.setTimeout(240000);

/** Garbage collection needs kube-controller-manager (built by ../shared/tools/k8s/build.sh). */
const HAS_KCM = fs.existsSync(path.join(K8S_TOOLS, 'bin', 'kube-controller-manager'));

const NS = 'pcd-e2e';
const BASE = 'gw-portcullis';

describeKube('Gateway data planes on Kubernetes (provisioning + portcullis-agent)', () => {
  let cluster: Cluster;
  let backends: NetnsBackends;
  let controller: ControllerProcess;
  let dir: string;
  let tls: { ca: string; cert: string; key: string };
  let agentUrl: string;
  let port: number;
  let port2: number;
  let agent: AgentProcess;

  const kget = (kind: string, name: string) => cluster.getJson(kind, name, NS);
  const gatewayStatus = async () => (await kget('gateway', 'gw')).status ?? {};
  const programmed = async () => ((await gatewayStatus()).conditions ?? []).find((c: { type: string }) => c.type === 'Programmed');

  function gatewayDoc(listeners: { name: string; port: number }[]): Manifest {
    return {
      apiVersion: GATEWAY_API,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: NS },
      spec: {
        gatewayClassName: 'portcullis',
        infrastructure: { labels: { team: 'edge' }, annotations: { 'example.com/owner': 'edge-team' } },
        listeners: listeners.map((l) => ({ ...l, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } })),
      },
    };
  }

  function routeDoc(name: string, pathValue: string): Manifest {
    return {
      apiVersion: GATEWAY_API,
      kind: 'HTTPRoute',
      metadata: { name, namespace: NS },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: pathValue } }], backendRefs: [{ name: 'echo', port: 80 }] }] },
    };
  }

  const token = (audience?: string): Promise<string> =>
    writeAgentToken(cluster, { namespace: NS, serviceAccount: BASE, file: path.join(dir, `token-${Date.now()}-${Math.random().toString(36).slice(2)}`), audience: audience ?? null });

  async function startPod(name: string, tokenFile: string, caFile: string): Promise<AgentProcess> {
    return startAgent({ server: agentUrl, gateway: `${NS}/gw`, tokenFile, caFile, prefix: path.join(dir, name), listenAddress: '127.0.0.1', healthPort: await freePort(), podName: name });
  }

  const serves = async (p: string) => (await httpRequest(port, p).catch(() => ({ status: 0 }))).status;

  beforeAll(async () => {
    dir = await makeTempDir('pcd-k8s-');
    tls = makeAgentTls(dir);
    cluster = await startCluster({ kcm: true });
    backends = await startNetnsBackends(['echo'], { prefix: 'pcd-', subnet: '10.245' });
    port = await freePort();
    port2 = await freePort();
    const agentPort = await freePort();
    agentUrl = `https://127.0.0.1:${agentPort}`;
    await cluster.kubectl(['create', 'namespace', NS]);
    await cluster.apply([
      { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name: 'portcullis' }, spec: { controllerName: CONTROLLER_NAME } },
      ...serviceWithEndpoints({ name: 'echo', namespace: NS, address: backends.address, targetPort: backends.ports.echo, managedBy: 'pcd-e2e' }),
    ]);
    controller = await startController({
      manifestsDir: dir,
      stateDir: path.join(dir, 'controller'),
      kubeconfig: cluster.kubeconfig,
      dataplane: 'agent',
      args: await agentModeArgs({ agentPort, agentUrl, tls }),
    });
  });

  afterAll(async () => {
    await stopAllAgents();
    await controller?.stop();
    await backends?.close();
    await cluster?.stop();
    await removeDir(dir);
  });

  it('provisions a Deployment, Service, ServiceAccount and agent ConfigMap owned by the Gateway', async () => {
    await cluster.apply([gatewayDoc([{ name: 'http', port }]), routeDoc('r1', '/one')]);
    const uid = (await kget('gateway', 'gw')).metadata.uid;
    for (const kind of ['deployment', 'service', 'serviceaccount', 'configmap']) {
      const name = kind === 'configmap' ? `${BASE}-agent` : BASE;
      const obj = await eventually(() => kget(kind, name).catch(() => undefined), (o) => !!o, 30000, 200);
      expect(obj.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Gateway', name: 'gw', uid, controller: true })]);
      expect(obj.metadata.labels).toMatchObject({ team: 'edge', 'gateway.networking.k8s.io/gateway-name': 'gw', 'app.kubernetes.io/managed-by': 'portcullis' });
      expect(obj.metadata.annotations).toMatchObject({ 'example.com/owner': 'edge-team' });
    }
    const svc = await kget('service', BASE);
    expect(svc.spec.type).toBe('LoadBalancer');
    expect(svc.spec.ports.map((p: { port: number }) => p.port)).toEqual([port]);
    const dep = await kget('deployment', BASE);
    const c = dep.spec.template.spec.containers[0];
    expect(c.image).toBe('portcullis/nginx:e2e');
    expect(c.args).toEqual(expect.arrayContaining([`--gateway=${NS}/gw`, `--server=${agentUrl}`]));
    const cm = await kget('configmap', `${BASE}-agent`);
    expect(cm.data['ca.crt']).toBe(fs.readFileSync(tls.ca, 'utf8'));
    // No data plane yet: the Gateway says so, with the Service's address.
    const cond = await eventually(programmed, (c) => c?.reason === 'Pending', 30000, 200);
    expect(cond.status).toBe('False');
    expect((await gatewayStatus()).addresses).toEqual([{ type: 'IPAddress', value: svc.spec.clusterIP }]);
  });

  it('an agent with a token of the Gateway ServiceAccount serves its routes, and the Gateway is Programmed', async () => {
    // The CA the agent trusts comes from the provisioned ConfigMap, as in the pod.
    const caFile = path.join(dir, 'agent-ca.crt');
    fs.writeFileSync(caFile, (await kget('configmap', `${BASE}-agent`)).data['ca.crt']);
    agent = await startPod('pod-1', await token('portcullis-agent'), caFile);
    await eventually(() => serves('/one'), (s) => s === 200, 60000, 100);
    const reply = await httpRequest(port, '/one/x');
    expect(reply.json.backend).toBe('echo');
    const cond = await eventually(programmed, (c) => c?.status === 'True', 30000, 200);
    expect(cond.reason).toBe('Programmed');
  });

  it('refuses a token without the portcullis-agent audience', async () => {
    const other = await startPod('pod-x', await token(), path.join(dir, 'agent-ca.crt'));
    const line = await other.waitForLog((l) => l.msg === 'config channel failed; reconnecting');
    expect(String(line.error)).toMatch(/HTTP 401/);
    await other.stop();
  });

  it('a route applied with kubectl reaches the agent', async () => {
    await cluster.apply([routeDoc('r2', '/two')]);
    await eventually(() => serves('/two'), (s) => s === 200, 30000, 50);
  });

  it('a port another process holds beside the agent leaves out only the listeners on it (PortUnavailable, naming the pod); the Gateway stays Programmed with the rest, serves them once the port is free, and the Service follows the listeners', async () => {
    type Listener = { name: string; conditions: { type: string; status: string; reason: string; message: string }[] };
    const extra = async () => ((await gatewayStatus()).listeners ?? []).find((l: Listener) => l.name === 'extra') as Listener | undefined;
    const cond = (l: Listener | undefined, type: string) => l?.conditions.find((c) => c.type === type);
    const holder = await occupyPort(port2);
    try {
      await cluster.apply([gatewayDoc([{ name: 'http', port }, { name: 'extra', port: port2 }]), routeDoc('r3', '/three')]);
      const svc = await eventually(() => kget('service', BASE), (s) => s.spec.ports.length === 2, 30000, 200);
      expect(svc.spec.ports.map((p: { port: number }) => p.port).sort()).toEqual([port, port2].sort());
      const held = await eventually(extra, (l) => cond(l, 'Accepted')?.reason === 'PortUnavailable', 40000, 200);
      expect(cond(held, 'Accepted')).toMatchObject({ status: 'False', reason: 'PortUnavailable' });
      expect(cond(held, 'Accepted')!.message).toContain(`Port ${port2} (TCP) is unavailable: the nginx of pod-1 could not listen on 127.0.0.1:${port2}`);
      expect(cond(held, 'Programmed')).toMatchObject({ status: 'False' });
      // The rest of the change is served: the new route on the other listener.
      await eventually(() => serves('/three'), (s) => s === 200, 30000, 100);
      expect(await serves('/two')).toBe(200);
      const gw = await eventually(programmed, (c) => c?.status === 'True', 30000, 200);
      expect(gw.reason).toBe('Programmed');
      expect(cond(await extra(), 'Accepted')?.reason).toBe('PortUnavailable');
    } finally {
      await holder.close();
    }
    // The agent finds the port free and reports it: the listener is served.
    const onExtra = async () => (await httpRequest(port2, '/three').catch(() => ({ status: 0 }))).status;
    await eventually(onExtra, (s) => s === 200, 30000, 200);
    await eventually(extra, (l) => cond(l, 'Accepted')?.status === 'True' && cond(l, 'Programmed')?.status === 'True', 30000, 200);
  });

  it('an agent that restarts gets the current config at once', async () => {
    await agent.stop();
    expect(await serves('/three')).toBe(0);
    agent = await startPod('pod-1', await token('portcullis-agent'), path.join(dir, 'agent-ca.crt'));
    await eventually(() => serves('/three'), (s) => s === 200, 30000, 20);
  });

  (HAS_KCM ? it : it.skip)('deleting the Gateway removes what was provisioned for it (garbage collection)', async () => {
    await agent.stop();
    await cluster.kubectl(['delete', 'gateway', 'gw', '-n', NS]);
    for (const kind of ['deployment', 'service', 'serviceaccount', 'configmap']) {
      const name = kind === 'configmap' ? `${BASE}-agent` : BASE;
      await eventually(() => kget(kind, name).then(() => 'present', () => 'gone'), (s) => s === 'gone', 90000, 500);
    }
  });
});
