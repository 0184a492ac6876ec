/**
 * The inference extension through a real Kubernetes API server (etcd + kube-apiserver; no
 * kubelet): InferencePool, HTTPRoute and Pods are applied with kubectl, the Pods' status
 * (Ready, podIP) is patched as a kubelet would, and each "pod" is a fake model server in a
 * network namespace of its own (prefix pci-, 10.246.0.0/16), listening on the pool's target
 * port. The controller runs as a local process three times against the same objects:
 * 1. without --gateway-api-inference-extension: the route's pool is InvalidKind and the
 *    controller never lists or watches InferencePools or Pods;
 * 2. with it, nginx local (--dataplane=local): statuses of pools and routes are written to the
 *    API server and requests reach the pod the built-in picker (or the steering header) chose;
 * 3. with it and --dataplane=agent: portcullis-agent, standing in for the Gateway's pod with a
 *    real token of the provisioned ServiceAccount, starts the inference hop beside its nginx
 *    and serves the inference route.
 */
import * as fs from 'fs';
import * as path from 'path';
import { describeKube, sharedK8sTools, startCluster, type Cluster } from '../support/kube';
import { startNetnsBackends, type NetnsBackends } from '../support/netns';
import { startController, type ControllerProcess } from '../support/controller';
import { startAgent, stopAllAgents, type AgentProcess } from '../support/agent';
import { makeAgentTls } from '../support/agent-tls';
import { agentModeArgs, writeAgentToken } from '../support/agent-mode';
import { eventually, httpRequest, type HttpResponse } from '../support/http';
import { freePort } from '../support/ports';
import { makeTempDir, removeDir } from '../support/tmp';
import { CONTROLLER_NAME, gateway, gatewayClass, httpRoute, type Manifest } from '../support/manifests';
import { inferencePool } from '../support/model-server';
import { COMPLETION } from './support';

jest.setTimeout(240000);

const NS = 'llm';
/** Every pod serves on this port in its own network namespace, as a pool's targetPorts say. */
const TARGET_PORT = 8000;
const POD_NAMES = ['vllm-a', 'vllm-b'];
const labels = { app: 'vllm' };
const POOL_REF = { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'vllm' };
const FOREIGN_CONTROLLER = 'example.net/other-gateway';

function cond(conditions: any[] | undefined, type: string): any {
  return (conditions ?? []).find((c) => c.type === type);
}

describeKube('InferencePool on the Kubernetes API server', () => {
  let cluster: Cluster;
  let dir: string;
  let port: number;
  const pods: Record<string, NetnsBackends> = {};
  let controller: ControllerProcess | undefined;

  const kget = (kind: string, name: string) => cluster.getJson(kind, name, NS);
  const routeParent = async (name: string) => ((await kget('httproute', name)).status?.parents ?? []).find((p: any) => p.controllerName === CONTROLLER_NAME);
  const ourPoolParent = async () => ((await kget('inferencepool', 'vllm')).status?.parents ?? []).find((p: any) => p.parentRef?.name === 'gw' && p.controllerName === CONTROLLER_NAME);
  const podUrl = (name: string) => `${pods[name].address}:${TARGET_PORT}`;
  const control = async (name: string, body?: unknown) =>
    JSON.parse((await httpRequest(TARGET_PORT, '/_control', body ? { method: 'POST', body: JSON.stringify(body) } : {}, pods[name].address)).text);
  const complete = (headers: Record<string, string> = {}, p = '/v1/completions'): Promise<HttpResponse> =>
    httpRequest(port, p, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(COMPLETION), timeoutMs: 15000 });

  /** A Pod as the API server holds it once scheduled and started: created, then its status patched. */
  async function applyPod(name: string, ready: boolean): Promise<void> {
    await cluster.apply([
      { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels }, spec: { containers: [{ name: 'model', image: 'vllm/vllm-openai:fake', ports: [{ containerPort: TARGET_PORT }] }] } },
    ]);
    await setReady(name, ready);
  }

  async function setReady(name: string, ready: boolean): Promise<void> {
    const ip = pods[name].address;
    const status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
    await cluster.kubectl(['patch', 'pod', name, '-n', NS, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  }

  /** LIST and WATCH requests the API server has answered for a resource. */
  async function listsAndWatches(resource: string): Promise<number> {
    let n = 0;
    for (const [key, value] of await cluster.requestCounts()) {
      const [verb, res] = key.split('|');
      if (res === resource && (verb === 'LIST' || verb === 'WATCH')) n += value;
    }
    return n;
  }

  const routes = (): Manifest[] => [
    httpRoute('llm', { namespace: NS, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], backendRefs: [POOL_REF] }] }),
    httpRoute('missing-pool', { namespace: NS, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/missing' } }], backendRefs: [{ ...POOL_REF, name: 'nope' }] }] }),
  ];

  beforeAll(async () => {
    dir = await makeTempDir('pci-k8s-');
    // The agent runs as root here, so its nginx workers run as nobody and must pass through the
    // prefix's parents to reach the hop's socket (in the image everything runs as uid 101).
    fs.chmodSync(dir, 0o711);
    cluster = await startCluster({ kcm: false });
    const tools = sharedK8sTools()!;
    await cluster.kubectl(['apply', '--server-side', '-f', path.join(tools, 'crds', 'gateway-api-inference-extension-v1.6.0')]);
    await cluster.kubectl(['wait', '--for', 'condition=established', '--timeout=60s', 'crd', '--all']);
    for (const name of POD_NAMES) pods[name] = await startNetnsBackends([name], { prefix: 'pci-', subnet: '10.246', models: { port: TARGET_PORT } });
    port = await freePort();
    await cluster.kubectl(['create', 'namespace', NS]);
    // No controller manager here: the namespace's default ServiceAccount, which Pods need, by hand.
    await cluster.kubectl(['create', 'serviceaccount', 'default', '-n', NS]);
    await cluster.apply([
      gatewayClass(),
      { ...gateway('gw', [{ name: 'http', port, allowedRoutes: { namespaces: { from: 'Same' } } }]), metadata: { name: 'gw', namespace: NS } },
      { ...inferencePool('vllm', { labels, ports: [TARGET_PORT] }, NS) },
      ...routes(),
    ]);
    for (const name of POD_NAMES) await applyPod(name, true);
    // A pod the selector does not pick, ready: never a candidate.
    await cluster.apply([{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'other', namespace: NS, labels: { app: 'other' } }, spec: { containers: [{ name: 'x', image: 'x' }] } }]);
    // Another implementation's entry in the pool's parents: ours must sit beside it, not replace it.
    await cluster.kubectl([
      'patch', 'inferencepool', 'vllm', '-n', NS, '--subresource=status', '--type=merge', '-p',
      JSON.stringify({
        status: {
          parents: [
            {
              parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: NS, name: 'their-gw' },
              controllerName: FOREIGN_CONTROLLER,
              conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), observedGeneration: 1 }],
            },
          ],
        },
      }),
    ]);
  });

  afterAll(async () => {
    await stopAllAgents();
    await controller?.stop();
    for (const p of Object.values(pods)) await p.close();
    await cluster?.stop();
    await removeDir(dir);
  });

  describe('without --gateway-api-inference-extension', () => {
    let before: { pools: number; pods: number };

    beforeAll(async () => {
      before = { pools: await listsAndWatches('inferencepools'), pods: await listsAndWatches('pods') };
      controller = await startController({
        manifestsDir: dir,
        stateDir: path.join(dir, 'no-flag'),
        kubeconfig: cluster.kubeconfig,
        args: ['--leader-election=false', '--health-address=127.0.0.1:0', '--metrics-address=127.0.0.1:0'],
      });
    });

    afterAll(async () => {
      await controller?.stop();
      controller = undefined;
    });

    test('the route is Accepted with ResolvedRefs False, reason InvalidKind, and its rule answers 500', async () => {
      const parent = await eventually(() => routeParent('llm'), (p) => !!cond(p?.conditions, 'ResolvedRefs'), 30000, 200);
      expect(cond(parent.conditions, 'Accepted')).toMatchObject({ status: 'True' });
      expect(cond(parent.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidKind' });
      expect((await complete()).status).toBe(500);
    });

    test('nothing lists or watches InferencePools or Pods, and the pool gets no entry of ours', async () => {
      expect(await listsAndWatches('inferencepools')).toBe(before.pools);
      expect(await listsAndWatches('pods')).toBe(before.pods);
      expect(await ourPoolParent()).toBeUndefined();
    });
  });

  describe('with the flag, nginx local', () => {
    beforeAll(async () => {
      controller = await startController({
        manifestsDir: dir,
        stateDir: path.join(dir, 'local'),
        kubeconfig: cluster.kubeconfig,
        args: ['--gateway-api-inference-extension', '--leader-election=false', '--health-address=127.0.0.1:0', '--metrics-address=127.0.0.1:0'],
      });
    });

    afterAll(async () => {
      await controller?.stop();
      controller = undefined;
    });

    test('the pool gets a parent entry of ours (Accepted, ResolvedRefs) beside the other controller’s', async () => {
      const parent = await eventually(ourPoolParent, (p) => !!p, 30000, 200);
      expect(parent.parentRef).toEqual({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: NS, name: 'gw' });
      expect(cond(parent.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
      expect(cond(parent.conditions, 'ResolvedRefs')).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });
      const parents = (await kget('inferencepool', 'vllm')).status.parents;
      expect(parents.find((p: any) => p.controllerName === FOREIGN_CONTROLLER)?.parentRef.name).toBe('their-gw');
    });

    test('routes: the pool resolves; a missing pool is BackendNotFound', async () => {
      const ok = await eventually(() => routeParent('llm'), (p) => cond(p?.conditions, 'ResolvedRefs')?.status === 'True', 30000, 200);
      expect(cond(ok.conditions, 'Accepted')).toMatchObject({ status: 'True' });
      const missing = await routeParent('missing-pool');
      expect(cond(missing.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    });

    test('a request reaches the pod the steering header names, with its body intact', async () => {
      for (const name of POD_NAMES) {
        const served = (await control(name)).served;
        const res = await eventually(() => complete({ 'test-epp-endpoint-selection': pods[name].address }), (r) => r.status === 200, 20000, 200);
        expect(res.json.pod).toBe(name);
        expect(res.json.headers['x-gateway-destination-endpoint'].split(',')[0]).toBe(podUrl(name));
        const after = await control(name);
        expect(after.served).toBe(served + 1);
        expect(JSON.parse(after.lastBody)).toEqual(COMPLETION);
      }
    });

    test('the built-in picker spreads requests over the ready pods only, and follows a pod turning NotReady', async () => {
      const hits = new Map<string, number>();
      for (let i = 0; i < 30; i++) {
        const res = await complete();
        expect(res.status).toBe(200);
        hits.set(res.json.pod, (hits.get(res.json.pod) ?? 0) + 1);
      }
      expect([...hits.keys()].sort()).toEqual(POD_NAMES);

      await setReady('vllm-b', false);
      await eventually(() => complete({ 'test-epp-endpoint-selection': pods['vllm-b'].address }), (r) => r.status === 503, 30000, 200);
      for (let i = 0; i < 10; i++) expect((await complete()).json.pod).toBe('vllm-a');
      await setReady('vllm-b', true);
      await eventually(() => complete({ 'test-epp-endpoint-selection': pods['vllm-b'].address }), (r) => r.json?.pod === 'vllm-b', 30000, 200);
    });

    test('the least loaded pod gets the requests (load read from each pod’s /metrics)', async () => {
      await control('vllm-a', { load: { waiting: 12, running: 8, kvCache: 0.9 } });
      await new Promise((r) => setTimeout(r, 300));
      let toB = 0;
      for (let i = 0; i < 20; i++) if ((await complete()).json.pod === 'vllm-b') toB++;
      await control('vllm-a', { load: { waiting: 0, running: 0, kvCache: 0 } });
      expect(toB).toBeGreaterThanOrEqual(18);
    });
  });

  describe('with the flag, a data plane per Gateway (portcullis-agent)', () => {
    const BASE = 'gw-portcullis';
    let agent: AgentProcess;

    beforeAll(async () => {
      const tls = makeAgentTls(dir);
      const agentPort = await freePort();
      const agentUrl = `https://127.0.0.1:${agentPort}`;
      controller = await startController({
        manifestsDir: dir,
        stateDir: path.join(dir, 'agent-mode'),
        kubeconfig: cluster.kubeconfig,
        dataplane: 'agent',
        args: ['--gateway-api-inference-extension', '--leader-election=false', ...(await agentModeArgs({ agentPort, agentUrl, tls }))],
      });
      const tokenFile = await writeAgentToken(cluster, { namespace: NS, serviceAccount: BASE, file: path.join(dir, 'agent-token') });
      agent = startAgent({ server: agentUrl, gateway: `${NS}/gw`, tokenFile, caFile: tls.ca, prefix: path.join(dir, 'pod-1'), listenAddress: '127.0.0.1', healthPort: await freePort(), podName: 'pod-1' });
    });

    test('the agent starts the inference hop beside nginx on a unix socket under its prefix', async () => {
      const line = await agent.waitForLog((l) => l.msg === 'inference hop listening', 60000);
      expect(String(line.address)).toContain(path.join(dir, 'pod-1'));
      const programmed = await eventually(
        async () => cond((await kget('gateway', 'gw')).status?.conditions, 'Programmed'),
        (c) => c?.status === 'True',
        60000,
        200,
      );
      expect(programmed.reason).toBe('Programmed');
    });

    test('the agent’s nginx serves the inference route through the hop to the chosen pod', async () => {
      for (const name of POD_NAMES) {
        const res = await eventually(() => complete({ 'test-epp-endpoint-selection': pods[name].address }).catch(() => ({ status: 0 }) as HttpResponse), (r) => r.status === 200, 30000, 200);
        expect(res.json.pod).toBe(name);
        expect(JSON.parse((await control(name)).lastBody)).toEqual(COMPLETION);
      }
      const chat = await httpRequest(port, '/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 }),
      });
      expect(chat.status).toBe(200);
      expect(POD_NAMES).toContain(chat.json.pod);
    });
  });
});
