/**
 * The Helm chart (charts/portcullis) against a real kube-apiserver + etcd
 * (../shared/tools/k8s): helm lint, every rendered object accepted by the API server
 * (`helm template | kubectl apply --dry-run=server`), a real `helm install`/`upgrade`, and the
 * RBAC it grants checked where RBAC is enforced: `kubectl auth can-i` as the chart's
 * ServiceAccount, and the controller itself run with that ServiceAccount's token (`kubectl
 * create token`), which must do its whole job without one request refused.
 */
import { spawnSync } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';
import { describeKube, K8S_TOOLS, sharedK8sTools, startCluster, type Cluster } from '../support/kube';

const REPO = path.resolve(__dirname, '../..');
const CHART = path.join(REPO, 'charts', 'portcullis');
const HELM = path.join(K8S_TOOLS, 'bin', 'helm');
const NS = 'portcullis-system';
const RELEASE = 'portcullis';
const SA = `system:serviceaccount:${NS}:${RELEASE}`;
const ALL_ON = ['--set', 'portcullisGateway.gwAPIInferenceExtension.enable=true,portcullisGateway.replicas=3,nginx.service.type=NodePort,nginx.replicas=2'];

describeKube('Helm chart charts/portcullis on a real API server', () => {
  let cluster: Cluster;
  const helm = (args: string[]) => spawnSync(HELM, args, { encoding: 'utf8', env: cluster.env, timeout: 120_000 });
  /** `kubectl auth can-i` as the chart's ServiceAccount; "kind/status" asks about the subresource. */
  const canI = async (verb: string, resource: string, namespace?: string) => {
    const [kind, sub] = resource.split('/');
    const r = spawnSync(path.join(K8S_TOOLS, 'bin', 'kubectl'), ['auth', 'can-i', verb, kind, ...(sub ? [`--subresource=${sub}`] : []), `--as=${SA}`, ...(namespace ? ['-n', namespace] : ['-A'])], { encoding: 'utf8', env: cluster.env });
    return r.stdout.trim();
  };

  beforeAll(async () => {
    cluster = await startCluster();
    // The inference extension's CRDs (kept beside the tools: the module proxy refuses that module).
    await cluster.kubectl(['apply', '--server-side', '-f', path.join(sharedK8sTools() ?? '', 'crds', 'gateway-api-inference-extension-v1.6.0')]);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  test('helm lint --strict is clean, with the defaults and with every switch on', () => {
    for (const set of [[], ALL_ON]) {
      const r = helm(['lint', '--strict', CHART, ...set]);
      expect(r.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(r.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
      expect(r.status).toBe(0);
    }
  });

  test('several replicas without leader election are refused with a clear message', () => {
    const r = helm(['template', RELEASE, CHART, '-n', NS, '--set', 'portcullisGateway.replicas=2,portcullisGateway.leaderElection.enable=false']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('portcullisGateway.replicas > 1 needs portcullisGateway.leaderElection.enable=true');
  });

  test('helm template | kubectl apply --dry-run=server: the API server accepts every object', async () => {
    await cluster.kubectl(['create', 'namespace', NS]);
    for (const set of [[], ALL_ON]) {
      const r = helm(['template', RELEASE, CHART, '-n', NS, ...set]);
      expect(r.status).toBe(0);
      const out = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], r.stdout);
      for (const kind of ['serviceaccount', 'secret', 'clusterrole', 'clusterrolebinding', 'role', 'rolebinding', 'service', 'deployment', 'gatewayclass']) {
        expect(out).toMatch(new RegExp(`^${kind}[./].* created \\(server dry run\\)$`, 'm'));
      }
    }
  });

  test('helm install, then upgrade with the inference extension: RBAC follows the value, the agent certificate is kept', async () => {
    const install = helm(['install', RELEASE, CHART, '-n', NS]);
    expect(install.stderr).toBe('');
    expect(install.status).toBe(0);
    const gc = await cluster.getJson('gatewayclass', 'portcullis');
    expect(gc.spec.controllerName).toBe('gateway.portcullis.dev/controller');
    const dep = await cluster.getJson('deployment', RELEASE, NS);
    const pod = dep.spec.template.spec;
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.containers[0].securityContext.readOnlyRootFilesystem).toBe(true);
    expect(pod.containers[0].image).toBe('portcullis/controller:0.1.0');
    expect(pod.containers[0].args).toEqual(expect.arrayContaining(['--provider=kubernetes', '--leader-election=true', '--dataplane-image=portcullis/nginx:0.1.0', '--dataplane-service-type=LoadBalancer']));
    expect(pod.containers[0].livenessProbe.httpGet.path).toBe('/healthz');
    expect(pod.containers[0].readinessProbe.httpGet.path).toBe('/readyz');

    expect(await canI('list', 'httproutes.gateway.networking.k8s.io')).toBe('yes');
    expect(await canI('update', 'gateways.gateway.networking.k8s.io', 'default')).toBe('no');
    expect(await canI('update', 'gateways.gateway.networking.k8s.io/status', 'default')).toBe('yes');
    expect(await canI('delete', 'httproutes.gateway.networking.k8s.io')).toBe('no');
    expect(await canI('patch', 'deployments.apps', 'default')).toBe('yes');
    expect(await canI('create', 'tokenreviews.authentication.k8s.io')).toBe('yes');
    expect(await canI('update', 'leases.coordination.k8s.io', NS)).toBe('yes');
    expect(await canI('update', 'leases.coordination.k8s.io', 'default')).toBe('no');
    expect(await canI('list', 'inferencepools.inference.networking.k8s.io')).toBe('no');
    expect(await canI('list', 'pods')).toBe('no');
    const secret = await cluster.getJson('secret', `${RELEASE}-agent-tls`, NS);

    const upgrade = helm(['upgrade', RELEASE, CHART, '-n', NS, '--set', 'portcullisGateway.gwAPIInferenceExtension.enable=true']);
    expect(upgrade.status).toBe(0);
    expect(await canI('list', 'inferencepools.inference.networking.k8s.io')).toBe('yes');
    expect(await canI('update', 'inferencepools.inference.networking.k8s.io/status', 'default')).toBe('yes');
    expect(await canI('update', 'inferencepools.inference.networking.k8s.io', 'default')).toBe('no');
    expect((await cluster.getJson('deployment', RELEASE, NS)).spec.template.spec.containers[0].args).toContain('--gateway-api-inference-extension');
    // Running agents trust the CA they were given: an upgrade must not make a new one.
    expect((await cluster.getJson('secret', `${RELEASE}-agent-tls`, NS)).data).toEqual(secret.data);
    const ca = Buffer.from(secret.data['ca.crt'], 'base64').toString();
    expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const crt = Buffer.from(secret.data['tls.crt'], 'base64').toString();
    const dir = await fs.mkdtemp(path.join(cluster.dir, 'certs-'));
    await fs.writeFile(path.join(dir, 'ca.crt'), ca);
    await fs.writeFile(path.join(dir, 'tls.crt'), crt);
    const verify = spawnSync('openssl', ['verify', '-CAfile', path.join(dir, 'ca.crt'), path.join(dir, 'tls.crt')], { encoding: 'utf8' });
    expect(verify.stdout).toContain(': OK');
    const san = spawnSync('openssl', ['x509', '-noout', '-ext', 'subjectAltName', '-in', path.join(dir, 'tls.crt')], { encoding: 'utf8' });
    expect(san.stdout).toContain(`DNS:${RELEASE}.${NS}.svc`);

    const down = helm(['upgrade', RELEASE, CHART, '-n', NS, '--reset-values']);
    expect(down.status).toBe(0);
    expect(await canI('list', 'inferencepools.inference.networking.k8s.io')).toBe('no');
  });
}, ['helm']);

