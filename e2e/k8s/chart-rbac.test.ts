/**
 * RBAC of the Helm chart (charts/portcullis) where it is enforced: the controller run against a
 * real kube-apiserver with the chart ServiceAccount's token (`kubectl create token`).
 */
import { spawnSync } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';
import { spawn, type ChildProcess } from 'child_process';
import { describeKube, K8S_TOOLS, startCluster, type Cluster } from '../support/kube';
import { gateway, httpRoute, toYaml } from '../support/manifests';
import { freePort } from '../support/ports';
import { makeTempDir, removeDir } from '../support/tmp';

const REPO = path.resolve(__dirname, '../..');
const CHART = path.join(REPO, 'charts', 'portcullis');
const HELM = path.join(K8S_TOOLS, 'bin', 'helm');
const NS = 'portcullis-system';
const RELEASE = 'portcullis';

/** The controller CLI as a child process; its JSON log lines are kept. */
interface ControllerProcess {
  child: ChildProcess;
  logs: Record<string, unknown>[];
  output: string[];
  stop(): Promise<void>;
}

function startController(args: string[]): ControllerProcess {
  const child = spawn(process.execPath, [path.join(REPO, 'bin', 'portcullis-controller.js'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: ControllerProcess = {
    child,
    logs: [],
    output: [],
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
  let buffer = '';
  const onText = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        proc.logs.push(JSON.parse(line));
      } catch {
        if (line.trim()) proc.output.push(line);
      }
    }
  };
  child.stdout!.on('data', onText);
  child.stderr!.on('data', onText);
  return proc;
}

/**
 * The controller run with the chart's ServiceAccount token: RBAC is enforced on that identity,
 * so every request the controller makes while it does its job (informers on every watched kind,
 * status writes, the Lease) must be allowed by the chart's ClusterRole and Role: the
 * controller's count of API requests answered 403 (its /metrics) stays 0 and its log has no
 * refusal; with one rule taken out of the ClusterRole the count grows (the check can fail).
 */
describeKube('the controller with the chart ServiceAccount token', () => {
  let cluster: Cluster;
  let work: string;
  let controller: ControllerProcess | undefined;
  const helm = (args: string[]) => spawnSync(HELM, args, { encoding: 'utf8', env: cluster.env, timeout: 120_000 });
  let metricsPort = 0;
  const apply = (docs: Record<string, unknown>[]) => cluster.kubectl(['apply', '-f', '-'], toYaml(docs));
  /**
   * The controller's own count of its API requests by HTTP status (its /metrics): the API
   * server does not count requests its authorizer refuses (apiserver_request_total only sees
   * what passed the filters), so the client side is where a 403 shows.
   */
  const apiRequests = async (): Promise<{ total: number; forbidden: number }> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    let total = 0;
    let forbidden = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith('portcullis_controller_api_requests_total{')) continue;
      const n = Number(line.slice(line.lastIndexOf(' ') + 1));
      total += n;
      if (line.includes('code="403"')) forbidden += n;
    }
    return { total, forbidden };
  };
  const condition = (obj: any, type: string) => (obj?.status?.conditions ?? []).find((c: any) => c.type === type);
  const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe().catch(() => undefined);
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`${what} not seen within ${timeoutMs} ms; controller log tail:\n${controller?.logs.slice(-15).map((l) => JSON.stringify(l)).join("\n")}\n${controller?.output.slice(-10).join("\n")}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  beforeAll(async () => {
    cluster = await startCluster();
    work = await makeTempDir('portcullis-chart-rbac-');
    await cluster.kubectl(['create', 'namespace', NS]);
    const install = helm(['install', RELEASE, CHART, '-n', NS]);
    if (install.status !== 0) throw new Error(install.stderr);
  }, 180_000);

  afterAll(async () => {
    await controller?.stop();
    await cluster?.stop();
    await removeDir(work);
  });

  test('reconciles, writes statuses and holds the Lease with no request refused; without a rule it is refused', async () => {
    const token = (await cluster.kubectl(['create', 'token', RELEASE, '-n', NS, '--duration=1h'])).trim();
    const kubeconfig = path.join(work, 'kubeconfig');
    await fs.writeFile(
      kubeconfig,
      toYaml([
        {
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'c', cluster: { server: cluster.env.K8S_API_SERVER, 'certificate-authority': cluster.env.K8S_CA_FILE } }],
          users: [{ name: 'sa', user: { token } }],
          contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa' } }],
          'current-context': 'sa',
        },
      ]),
    );
    const port = await freePort();
    await apply([
      gateway('gw', [{ name: 'http', port }]),
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'echo-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'echo' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [{ addresses: ['10.244.250.2'], conditions: { ready: true } }],
      },
      httpRoute('web', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'echo', port: 80 }] }] }),
      {
        apiVersion: 'gateway.portcullis.dev/v1alpha1',
        kind: 'RateLimitPolicy',
        metadata: { name: 'web-limit', namespace: 'default' },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'web' }], rateLimit: { local: { rules: [{ key: '$binary_remote_addr', rate: '10r/s' }] } } },
      },
    ]);
    const state = path.join(work, 'state');
    controller = startController([
      '--provider=kubernetes',
      `--kubeconfig=${kubeconfig}`,
      '--dataplane=local',
      `--state-dir=${state}`,
      '--listen-address=127.0.0.1',
      '--log-level=debug',
      '--leader-election=true',
      `--leader-election-namespace=${NS}`,
      '--leader-election-lock-name=portcullis-leader',
      '--health-address=127.0.0.1:0',
      // Port 0, read back from the start log: a port chosen here and bound later by the
      // controller can be taken meanwhile by another suite's process (EADDRINUSE seen in CI).
      '--metrics-address=127.0.0.1:0',
    ]);
    await until('controller start logged', async () => {
      const started = controller!.logs.find((l) => l.msg === 'controller starting');
      if (started) metricsPort = Number(String(started.metrics).split(':').pop());
      return started !== undefined;
    });
    await until('GatewayClass Accepted', async () => condition(await cluster.getJson('gatewayclass', 'portcullis'), 'Accepted')?.status === 'True');
    await until('Gateway Programmed', async () => condition(await cluster.getJson('gateway', 'gw', 'default'), 'Programmed')?.status === 'True');
    await until('HTTPRoute Accepted', async () => {
      const route = await cluster.getJson('httproute', 'web', 'default');
      return route.status?.parents?.[0]?.conditions?.find((c: any) => c.type === 'Accepted')?.status === 'True';
    });
    await until('RateLimitPolicy Accepted', async () => {
      const policy = await cluster.getJson('ratelimitpolicy', 'web-limit', 'default');
      return policy.status?.ancestors?.[0]?.conditions?.find((c: any) => c.type === 'Accepted')?.status === 'True';
    });
    const lease = await until('the Lease', async () => (await cluster.getJson('lease', 'portcullis-leader', NS)).spec?.holderIdentity);
    expect(lease).toBeTruthy();
    // A change after the start: list/watch keep working, and the status is updated again.
    await cluster.kubectl(['label', 'httproute', 'web', '-n', 'default', 'touched=1']);
    await apply([httpRoute('web', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v2' } }], backendRefs: [{ name: 'echo', port: 80 }] }] })]);
    await until('the new generation observed', async () => {
      const route = await cluster.getJson('httproute', 'web', 'default');
      return route.status?.parents?.[0]?.conditions?.every((c: any) => c.observedGeneration === route.metadata.generation);
    });
    const counts = await apiRequests();
    expect(counts.total).toBeGreaterThan(20);
    expect(counts.forbidden).toBe(0);
    expect(controller.logs.filter((l) => /forbidden|403/i.test(JSON.stringify(l)))).toEqual([]);

    // The check can fail: without update on httproutes/status the controller's writes are refused.
    const role = await cluster.getJson('clusterrole', RELEASE);
    role.rules = role.rules.map((r: any) => ({ ...r, resources: r.resources.filter((x: string) => x !== 'httproutes/status') })).filter((r: any) => r.resources.length > 0);
    delete role.metadata.resourceVersion;
    await cluster.kubectl(['replace', '-f', '-'], JSON.stringify(role));
    await apply([httpRoute('web', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v3' } }], backendRefs: [{ name: 'echo', port: 80 }] }] })]);
    await until('a refused status write', async () => (await apiRequests()).forbidden > 0);
    expect(controller.logs.some((l) => /forbidden/.test(JSON.stringify(l)) && /httproutes/.test(JSON.stringify(l)))).toBe(true);
  }, 300_000);
}, ['helm']);
