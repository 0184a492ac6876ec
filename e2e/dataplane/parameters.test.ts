/**
 * Parameters ConfigMaps through the real API server: the controller (a local process,
 * --provider=kubernetes --dataplane=agent) reads the ConfigMap a GatewayClass
 * (`spec.parametersRef`) or a Gateway (`spec.infrastructure.parametersRef`) names. A missing
 * ConfigMap or a bad key is reported as the Gateway API says (Accepted False, reason
 * InvalidParameters, naming the ConfigMap and the key); the ConfigMaps are watched, so an edit
 * reaches the provisioned Service without any change to the Gateway or the class. No agent is
 * needed: what is checked is the status and the provisioned objects, read back with kubectl.
 */
import * as path from 'path';
import { describeKube, startCluster, type Cluster } from '../support/kube';
import { startController, type ControllerProcess } from '../support/controller';
import { makeAgentTls } from '../support/agent-tls';
import { agentModeArgs } from '../support/agent-mode';
import { eventually } from '../support/http';
import { freePort } from '../support/ports';
import { makeTempDir, removeDir } from '../support/tmp';
import { GATEWAY_API, CONTROLLER_NAME, type Manifest } from '../support/manifests';

jest.setTimeout(180000);

const NS = 'pcd-params';
const CLASS_PARAMS_NS = 'pcd-params-cfg';

type Condition = { type: string; status: string; reason: string; message: string };

describeKube('parameters ConfigMaps (InvalidParameters, watched)', () => {
  let cluster: Cluster;
  let controller: ControllerProcess;
  let dir: string;
  let port: number;

  const accepted = async (kind: string, name: string, namespace?: string): Promise<Condition | undefined> =>
    ((await cluster.getJson(kind, name, namespace)).status?.conditions ?? []).find((c: Condition) => c.type === 'Accepted');
  const serviceType = async (name: string) => (await cluster.getJson('service', name, NS).catch(() => undefined))?.spec?.type as string | undefined;

  function configMap(name: string, namespace: string, data: Record<string, string>): Manifest {
    return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
  }

  function gateway(name: string, className: string, parametersRef?: string): Manifest {
    return {
      apiVersion: GATEWAY_API,
      kind: 'Gateway',
      metadata: { name, namespace: NS },
      spec: {
        gatewayClassName: className,
        ...(parametersRef ? { infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: parametersRef } } } : {}),
        listeners: [{ name: 'http', port, protocol: 'HTTP' }],
      },
    };
  }

  beforeAll(async () => {
    dir = await makeTempDir('pcd-params-');
    const tls = makeAgentTls(dir);
    cluster = await startCluster();
    port = await freePort();
    const agentPort = await freePort();
    await cluster.kubectl(['create', 'namespace', NS]);
    await cluster.kubectl(['create', 'namespace', CLASS_PARAMS_NS]);
    controller = await startController({
      manifestsDir: dir,
      stateDir: path.join(dir, 'controller'),
      kubeconfig: cluster.kubeconfig,
      dataplane: 'agent',
      args: await agentModeArgs({ agentPort, agentUrl: `https://127.0.0.1:${agentPort}`, tls }),
    });
  });

  afterAll(async () => {
    await controller?.stop();
    await cluster?.stop();
    await removeDir(dir);
  });

  it('a GatewayClass whose parametersRef names a missing ConfigMap is Accepted False, InvalidParameters; creating and editing the ConfigMap reaches the Service', async () => {
    await cluster.apply([
      {
        apiVersion: GATEWAY_API,
        kind: 'GatewayClass',
        metadata: { name: 'portcullis' },
        spec: { controllerName: CONTROLLER_NAME, parametersRef: { group: '', kind: 'ConfigMap', name: 'class-params', namespace: CLASS_PARAMS_NS } },
      },
      gateway('gw-a', 'portcullis'),
    ]);
    const missing = await eventually(() => accepted('gatewayclass', 'portcullis'), (c) => c?.status === 'False', 30000, 200);
    expect(missing!.reason).toBe('InvalidParameters');
    expect(missing!.status).toBe('False');
    expect(missing!.message).toContain(`ConfigMap ${CLASS_PARAMS_NS}/class-params not found`);
    // The Gateway is still provisioned, with the controller's defaults.
    expect(await eventually(() => serviceType('gw-a-portcullis'), (t) => t !== undefined, 30000, 200)).toBe('LoadBalancer');

    // The ConfigMap appears: the class is accepted and the Service follows, with no change to the class.
    await cluster.apply([configMap('class-params', CLASS_PARAMS_NS, { serviceType: 'ClusterIP' })]);
    const ok = await eventually(() => accepted('gatewayclass', 'portcullis'), (c) => c?.status === 'True', 30000, 200);
    expect(ok!.reason).toBe('Accepted');
    await eventually(() => serviceType('gw-a-portcullis'), (t) => t === 'ClusterIP', 30000, 200);

    // An edit of the ConfigMap alone re-provisions.
    await cluster.apply([configMap('class-params', CLASS_PARAMS_NS, { serviceType: 'NodePort' })]);
    await eventually(() => serviceType('gw-a-portcullis'), (t) => t === 'NodePort', 30000, 200);

    // A bad value is named, and the last good keys no longer apply (the defaults do).
    await cluster.apply([configMap('class-params', CLASS_PARAMS_NS, { serviceType: 'Bogus' })]);
    const bad = await eventually(() => accepted('gatewayclass', 'portcullis'), (c) => c?.status === 'False', 30000, 200);
    expect(bad!.reason).toBe('InvalidParameters');
    expect(bad!.status).toBe('False');
    expect(bad!.message).toMatch(/serviceType must be one of LoadBalancer, ClusterIP, NodePort, got "Bogus"/);
    await eventually(() => serviceType('gw-a-portcullis'), (t) => t === 'LoadBalancer', 30000, 200);
  });

  it("a Gateway whose infrastructure.parametersRef is missing or has a bad key is Accepted False, InvalidParameters, and recovers when it is fixed", async () => {
    await cluster.apply([gateway('gw-b', 'portcullis', 'gw-b-params')]);
    const missing = await eventually(() => accepted('gateway', 'gw-b', NS), (c) => c?.status === 'False', 30000, 200);
    expect(missing!.reason).toBe('InvalidParameters');
    expect(missing!.status).toBe('False');
    expect(missing!.message).toContain(`Gateway spec.infrastructure.parametersRef: ConfigMap ${NS}/gw-b-params not found`);

    await cluster.apply([configMap('gw-b-params', NS, { serviceType: 'ClusterIP', replicas: 'two' })]);
    const bad = await eventually(
      () => accepted('gateway', 'gw-b', NS),
      (c) => c?.reason === 'InvalidParameters' && c.message.includes('replicas'),
      30000,
      200,
    );
    expect(bad!.message).toMatch(/replicas must be a whole number from 0 to 1000, got "two"/);
    // The good key of the same ConfigMap still applies.
    await eventually(() => serviceType('gw-b-portcullis'), (t) => t === 'ClusterIP', 30000, 200);

    await cluster.apply([configMap('gw-b-params', NS, { serviceType: 'ClusterIP', replicas: '2' })]);
    const ok = await eventually(() => accepted('gateway', 'gw-b', NS), (c) => c?.status === 'True', 30000, 200);
    expect(ok!.reason).toBe('Accepted');
    const dep = await eventually(() => cluster.getJson('deployment', 'gw-b-portcullis', NS), (d) => d.spec.replicas === 2, 30000, 200);
    expect(dep.spec.replicas).toBe(2);
  });
});
