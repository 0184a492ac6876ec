/**
 * Our side of the endpoint-picker protocol against someone else's implementation: the
 * inference extension's own pickers, built from the Go module proxy (scripts/build-epp.sh), on a
 * real API server. The picker watches the InferencePool and its Pods through a kubeconfig (Pods
 * created with kubectl, their status patched as a kubelet would; each "pod" a fake model server
 * in a network namespace, prefix pci-, 10.246.0.0/16) and listens on every address of this
 * machine; the pool's endpointPickerRef names a Service whose EndpointSlice points at the host's
 * end of one of the veth pairs (EndpointSlices refuse loopback). The controller runs with
 * --gateway-api-inference-extension and a local nginx, whose hop asks the picker over TLS
 * (its self-signed certificate, not verified: our default).
 *
 * lwepp (v1.6.0, the lightweight reference picker): round robin over the ready pods, the
 * conformance steering header, and in the response phase the conformance report of the endpoint
 * that served (from the `envoy.lb` metadata the hop sends with the response headers).
 * epp (v1.5.0, the full picker) for a second pool over the same pods: its scorers follow the
 * pods' /metrics, and its full-duplex response phase sends every body back itself.
 */
import * as path from 'path';
import { sharedK8sTools, startCluster, type Cluster } from '../support/kube';
import { startNetnsBackends, type NetnsBackends } from '../support/netns';
import { startController, type ControllerProcess } from '../support/controller';
import { eventually, httpRequest, type HttpResponse } from '../support/http';
import { freePort } from '../support/ports';
import { makeTempDir, removeDir } from '../support/tmp';
import { CONTROLLER_NAME, gateway, gatewayClass, httpRoute } from '../support/manifests';
import { inferencePool } from '../support/model-server';
import { describeWithEpp, startUpstreamEpp, type UpstreamEpp } from '../support/upstream-epp';
import { COMPLETION, streamCompletion } from './support';

jest.setTimeout(240000);

const NS = 'llm';
const TARGET_PORT = 8000;
const POD_NAMES = ['vllm-a', 'vllm-b', 'vllm-c'];
const labels = { app: 'vllm' };
const POOL_REF = { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'vllm' };
/** The conformance picker's report of the endpoint that served (set in the response phase). */
const SERVED = 'x-conformance-test-served-endpoint';

describeWithEpp('the upstream lightweight endpoint picker (lwepp v1.6.0) on the Kubernetes API server', 'lwepp', () => {
  let cluster: Cluster;
  let dir: string;
  let port: number;
  const pods: Record<string, NetnsBackends> = {};
  let controller: ControllerProcess | undefined;
  let epp: UpstreamEpp | undefined;

  const podUrl = (name: string) => `${pods[name].address}:${TARGET_PORT}`;
  const nameOf = (endpoint: string) => POD_NAMES.find((n) => podUrl(n) === endpoint);
  const control = async (name: string, body?: unknown) =>
    JSON.parse((await httpRequest(TARGET_PORT, '/_control', body ? { method: 'POST', body: JSON.stringify(body) } : {}, pods[name].address)).text);
  const complete = (headers: Record<string, string> = {}, body: unknown = COMPLETION, host?: string): Promise<HttpResponse> =>
    httpRequest(port, '/v1/completions', { method: 'POST', host, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), timeoutMs: 15000 });

  async function setReady(name: string, ready: boolean): Promise<void> {
    const ip = pods[name].address;
    const status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
    await cluster.kubectl(['patch', 'pod', name, '-n', NS, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  }

  beforeAll(async () => {
    dir = await makeTempDir('pci-epp-');
    cluster = await startCluster({ kcm: false });
    await cluster.kubectl(['apply', '--server-side', '-f', path.join(sharedK8sTools()!, 'crds', 'gateway-api-inference-extension-v1.6.0')]);
    await cluster.kubectl(['wait', '--for', 'condition=established', '--timeout=60s', 'crd', '--all']);
    for (const name of POD_NAMES) pods[name] = await startNetnsBackends([name], { prefix: 'pci-', subnet: '10.246', models: { port: TARGET_PORT } });
    port = await freePort();
    const eppPort = await freePort();
    // The picker listens on all addresses; the Service's slice names one that is not loopback.
    const eppAddress = pods[POD_NAMES[0]].hostAddress;
    await cluster.kubectl(['create', 'namespace', NS]);
    await cluster.kubectl(['create', 'serviceaccount', 'default', '-n', NS]);
    await cluster.apply([
      gatewayClass(),
      { ...gateway('gw', [{ name: 'http', port, allowedRoutes: { namespaces: { from: 'Same' } } }]), metadata: { name: 'gw', namespace: NS } },
      inferencePool('vllm', { labels, ports: [TARGET_PORT], picker: { name: 'vllm-epp', port: 9002, failureMode: 'FailClose' } }, NS),
      httpRoute('llm', { namespace: NS, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], backendRefs: [POOL_REF] }] }),
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'vllm-epp', namespace: NS }, spec: { ports: [{ name: 'grpc', port: 9002, targetPort: eppPort, protocol: 'TCP' }] } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'vllm-epp-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'vllm-epp' } },
        addressType: 'IPv4',
        ports: [{ name: 'grpc', port: eppPort, protocol: 'TCP' }],
        endpoints: [{ addresses: [eppAddress], conditions: { ready: true } }],
      },
    ]);
    for (const name of POD_NAMES) {
      await cluster.apply([
        { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels }, spec: { containers: [{ name: 'model', image: 'vllm/vllm-openai:fake', ports: [{ containerPort: TARGET_PORT }] }] } },
      ]);
      await setReady(name, true);
    }
    epp = await startUpstreamEpp(
      'lwepp',
      [
        '--pool-name=vllm',
        `--pool-namespace=${NS}`,
        `--grpc-port=${eppPort}`,
        `--grpc-health-port=${await freePort()}`,
        `--metrics-port=${await freePort()}`,
        '--secure-serving=true',
      ],
      { host: eppAddress, port: eppPort },
      cluster.kubeconfig,
    );
    controller = await startController({
      manifestsDir: dir,
      stateDir: path.join(dir, 'state'),
      kubeconfig: cluster.kubeconfig,
      args: ['--gateway-api-inference-extension', '--leader-election=false', '--health-address=127.0.0.1:0', '--metrics-address=127.0.0.1:0'],
    });
    // Served once the route is programmed and the picker knows the pods.
    await eventually(() => complete().catch(() => ({ status: 0 }) as HttpResponse), (r) => r.status === 200, 60000, 300);
  });

  afterAll(async () => {
    if (epp && process.env.EPP_LOG) process.stderr.write(epp.log());
    await controller?.stop();
    await epp?.stop();
    for (const p of Object.values(pods)) await p.close();
    await cluster?.stop();
    await removeDir(dir);
  });

  test('the pool is accepted by our controller, its picker reference resolved', async () => {
    // Statuses are written after the reconcile that served the first request: wait for ours.
    const ours = await eventually(
      async () => ((await cluster.getJson('inferencepool', 'vllm', NS)).status?.parents ?? []).find((p: any) => p.controllerName === CONTROLLER_NAME),
      (p: any) => !!p,
      30000,
      200,
    );
    expect((ours?.conditions ?? []).find((c: any) => c.type === 'ResolvedRefs')).toMatchObject({ status: 'True' });
  });

  test('requests go where the picker decides (round robin over the ready pods), body intact, and its response-phase report names the pod that served', async () => {
    const served: string[] = [];
    const before = Object.fromEntries(await Promise.all(POD_NAMES.map(async (n) => [n, (await control(n)).served] as const)));
    for (let i = 0; i < 12; i++) {
      const res = await complete();
      expect(res.status).toBe(200);
      // The picker's header reached the pod, naming that very pod...
      expect(nameOf(res.json.headers['x-gateway-destination-endpoint'])).toBe(res.json.pod);
      // ...and its reply to the response headers reports it back (the served-endpoint metadata).
      expect(res.headers[SERVED]).toBe(podUrl(res.json.pod));
      served.push(res.json.pod);
    }
    // Round robin over three pods: each pod every third request.
    for (let i = 3; i < served.length; i++) expect(served[i]).toBe(served[i - 3]);
    expect(new Set(served.slice(0, 3)).size).toBe(3);
    for (const n of POD_NAMES) {
      const after = await control(n);
      expect(after.served - before[n]).toBe(4);
      expect(JSON.parse(after.lastBody)).toEqual(COMPLETION);
    }
  });

  test('the conformance steering header restricts its choice to the pods it names', async () => {
    for (const name of POD_NAMES) {
      for (let i = 0; i < 3; i++) {
        const res = await complete({ 'test-epp-endpoint-selection': pods[name].address });
        expect(res.json.pod).toBe(name);
        expect(res.headers[SERVED]).toBe(podUrl(name));
      }
    }
    const two = `${pods['vllm-a'].address},${pods['vllm-c'].address}`;
    const hits = new Set<string>();
    for (let i = 0; i < 6; i++) hits.add((await complete({ 'test-epp-endpoint-selection': two })).json.pod);
    expect([...hits].sort()).toEqual(['vllm-a', 'vllm-c']);
  });

  test('server-sent events pass through the response phase token by token', async () => {
    const res = await streamCompletion(port, { ...COMPLETION, stream: true }, { 'test-epp-endpoint-selection': pods['vllm-b'].address });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers[SERVED]).toBe(podUrl('vllm-b'));
    const events = res.text.match(/^data: \{.*$/gm) ?? [];
    expect(events).toHaveLength(6);
    expect(events.every((e) => JSON.parse(e.slice(6)).pod === 'vllm-b')).toBe(true);
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
    // Six tokens 100 ms apart: they arrive spread out, the first long before the last.
    expect(res.arrivals.length).toBeGreaterThanOrEqual(4);
    expect(res.arrivals[res.arrivals.length - 1].at - res.arrivals[0].at).toBeGreaterThan(350);
  });

  test('a pod turning NotReady leaves the picker’s choice (it watches the Pods itself)', async () => {
    await setReady('vllm-b', false);
    await eventually(
      async () => {
        const seen = new Set<string>();
        for (let i = 0; i < 6; i++) seen.add((await complete()).json.pod);
        return seen;
      },
      (seen) => !seen.has('vllm-b'),
      30000,
      300,
    );
    for (let i = 0; i < 8; i++) expect((await complete()).json.pod).not.toBe('vllm-b');
    await setReady('vllm-b', true);
    await eventually(() => complete({ 'test-epp-endpoint-selection': pods['vllm-b'].address }), (r) => r.json?.pod === 'vllm-b', 30000, 300);
  });

  /**
   * The full picker (epp v1.5.0, its default configuration: queue, KV-cache and prefix scorers
   * over the pods' vLLM /metrics, scraped every 50 ms) for a second pool over the same pods,
   * routed by hostname. It answers the response phase in full duplex (streamed_response).
   */
  describeWithEpp('the upstream full endpoint picker (epp v1.5.0)', 'epp', () => {
    const HOST = 'full.example';
    let full: UpstreamEpp | undefined;
    let n = 0;
    // A new prompt each time, so that the prefix scorer has no affinity to follow.
    const ask = (headers: Record<string, string> = {}) => complete(headers, { ...COMPLETION, prompt: `question ${n++} ${Math.random()}` }, HOST);

    beforeAll(async () => {
      const fullPort = await freePort();
      const address = pods[POD_NAMES[1]].hostAddress;
      await cluster.apply([
        inferencePool('vllm-full', { labels, ports: [TARGET_PORT], picker: { name: 'vllm-full-epp', port: 9002, failureMode: 'FailClose' } }, NS),
        httpRoute('llm-full', { namespace: NS, hostnames: [HOST], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], backendRefs: [{ ...POOL_REF, name: 'vllm-full' }] }] }),
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'vllm-full-epp', namespace: NS }, spec: { ports: [{ name: 'grpc', port: 9002, targetPort: fullPort, protocol: 'TCP' }] } },
        {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: 'vllm-full-epp-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'vllm-full-epp' } },
          addressType: 'IPv4',
          ports: [{ name: 'grpc', port: fullPort, protocol: 'TCP' }],
          endpoints: [{ addresses: [address], conditions: { ready: true } }],
        },
      ]);
      full = await startUpstreamEpp(
        'epp',
        [
            '--pool-name=vllm-full',
          `--pool-namespace=${NS}`,
          `--grpc-port=${fullPort}`,
          `--grpc-health-port=${await freePort()}`,
          `--metrics-port=${await freePort()}`,
          '--secure-serving=true',
          '--tracing=false',
          '--enable-pprof=false',
          '--metrics-endpoint-auth=false',
        ],
        { host: address, port: fullPort },
        cluster.kubeconfig,
      );
      await eventually(() => ask().catch(() => ({ status: 0 }) as HttpResponse), (r) => r.status === 200, 60000, 300);
    });

    afterAll(async () => {
      if (full && process.env.EPP_LOG) process.stderr.write(full.log().slice(-20000));
      await full?.stop();
      for (const name of POD_NAMES) await control(name, { load: { waiting: 0, running: 0, kvCache: 0 } });
    });

    test('requests go to the pod its scorers prefer: the one whose /metrics show no queue and a free KV cache', async () => {
      for (const idle of ['vllm-b', 'vllm-c']) {
        for (const name of POD_NAMES) await control(name, { load: name === idle ? { waiting: 0, running: 0, kvCache: 0.05 } : { waiting: 12, running: 8, kvCache: 0.9 } });
        await new Promise((r) => setTimeout(r, 600));
        const hits: string[] = [];
        for (let i = 0; i < 20; i++) {
          const res = await ask();
          expect(res.status).toBe(200);
          expect(nameOf(res.json.headers['x-gateway-destination-endpoint'].split(',')[0])).toBe(res.json.pod);
          hits.push(res.json.pod);
        }
        expect(hits.filter((h) => h === idle).length).toBeGreaterThanOrEqual(18);
      }
    });

    test('its full-duplex response phase: the JSON answer and server-sent events come back intact, tokens one by one', async () => {
      for (const name of POD_NAMES) await control(name, { load: { waiting: 0, running: 0, kvCache: 0 } });
      const json = await ask();
      expect(json.status).toBe(200);
      expect(json.json.choices[0].text).toBe('Portcullis routes tokens.');
      const res = await streamCompletion(port, { ...COMPLETION, prompt: `stream ${Math.random()}`, stream: true }, { host: HOST });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream');
      expect(res.text.match(/^data: \{.*$/gm) ?? []).toHaveLength(6);
      expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(res.arrivals.length).toBeGreaterThanOrEqual(4);
      expect(res.arrivals[res.arrivals.length - 1].at - res.arrivals[0].at).toBeGreaterThan(350);
    });
  });

  test('picker down: FailClose answers 503', async () => {
    await epp!.stop();
    const res = await complete();
    expect(res.status).toBe(503);
  });
});
