import { planProvisioning } from '../src/provisioning/plan';
import { baseName, dnsLabel } from '../src/provisioning/names';
import { gatewayAddresses } from '../src/provisioning/addresses';
import { parseParameters } from '../src/provisioning/params';
import type { ConfigMapObject, GatewayClassObject, GatewayObject, ProvisioningDefaults } from '../src/provisioning/types';

const CONTROLLER = 'gateway.portcullis.dev/controller';
const defaults: ProvisioningDefaults = {
  image: 'portcullis/nginx:0.1.0',
  serviceType: 'LoadBalancer',
  externalTrafficPolicy: 'Local',
  replicas: 1,
  logLevel: 'info',
  agentServerUrl: 'https://portcullis.portcullis-system.svc:8443',
  agentCa: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n',
};

function gateway(over: Partial<GatewayObject['spec']> = {}, name = 'gw'): GatewayObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: 'team-a', uid: 'uid-1', generation: 1 },
    spec: {
      gatewayClassName: 'portcullis',
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP' },
        { name: 'http-b', port: 80, protocol: 'HTTP' },
        { name: 'alt', port: 8080, protocol: 'HTTP' },
      ],
      ...over,
    },
  };
}

function cls(parametersRef?: GatewayClassObject['spec']['parametersRef'], controllerName = CONTROLLER): GatewayClassObject {
  return { metadata: { name: 'portcullis' }, spec: { controllerName, parametersRef } };
}

function plan(gws: GatewayObject[], classes: GatewayClassObject[] = [cls()], cms: ConfigMapObject[] = []) {
  return planProvisioning({
    gateways: gws,
    gatewayClasses: classes,
    controllerName: CONTROLLER,
    defaults,
    configMap: (ns, name) => cms.find((c) => c.metadata.namespace === ns && c.metadata.name === name),
  });
}

describe('provisioning: which Gateways get a data plane', () => {
  it('provisions only Gateways whose class names our controller', () => {
    expect(plan([gateway()]).gateways.map((g) => g.key)).toEqual(['team-a/gw']);
    expect(plan([gateway()], [cls(undefined, 'example.com/other')]).gateways).toEqual([]);
    expect(plan([gateway({ gatewayClassName: 'missing' })]).gateways).toEqual([]);
  });
});

describe('provisioning: the objects of one Gateway', () => {
  const { objects } = plan([gateway()]).gateways[0];

  it('names every object <gateway>-<class> in the Gateway namespace, owned by the Gateway', () => {
    for (const o of Object.values(objects).filter((x) => x.kind !== 'ConfigMap')) {
      expect(o.metadata.name).toBe('gw-portcullis');
      expect(o.metadata.namespace).toBe('team-a');
    }
    expect(objects.agentConfig.metadata.name).toBe('gw-portcullis-agent');
    for (const o of Object.values(objects)) {
      expect(o.metadata.ownerReferences).toEqual([{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: 'gw', uid: 'uid-1', controller: true }]);
      expect(o.metadata.labels).toMatchObject({ 'gateway.networking.k8s.io/gateway-name': 'gw', 'app.kubernetes.io/managed-by': 'portcullis' });
    }
  });

  it('gives the Service one port per distinct listener port, LoadBalancer by default', () => {
    const spec = objects.service.spec as { type: string; ports: unknown[]; selector: Record<string, string>; externalTrafficPolicy: string };
    expect(spec.type).toBe('LoadBalancer');
    expect(spec.externalTrafficPolicy).toBe('Local');
    expect(spec.ports).toEqual([
      { name: 'tcp-80', port: 80, protocol: 'TCP', targetPort: 80 },
      { name: 'tcp-8080', port: 8080, protocol: 'TCP', targetPort: 8080 },
    ]);
    const dep = objects.deployment.spec as { selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> } } };
    expect(dep.selector.matchLabels).toEqual(spec.selector);
    expect(dep.template.metadata.labels).toMatchObject(spec.selector);
  });

  it('runs portcullis-agent for this Gateway as its ServiceAccount, with a token for the config server only', () => {
    const pod = (objects.deployment.spec as any).template.spec;
    expect(pod.serviceAccountName).toBe('gw-portcullis');
    expect(pod.automountServiceAccountToken).toBe(false);
    const c = pod.containers[0];
    expect(c.command).toEqual(['portcullis-agent']);
    expect(c.args).toEqual(expect.arrayContaining(['--gateway=team-a/gw', '--server=https://portcullis.portcullis-system.svc:8443', '--ca-file=/etc/portcullis/ca.crt']));
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.volumes[0].projected.sources[0].serviceAccountToken.audience).toBe('portcullis-agent');
    expect((objects.agentConfig as any).data['ca.crt']).toBe(defaults.agentCa);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 9113 });
    // A slow start (a busy node) is the startup probe's to wait out, up to 2 minutes, before
    // the liveness probe may restart the agent.
    expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 9113 });
    expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBe(120);
    expect(c.livenessProbe.timeoutSeconds).toBe(5);
  });

  it('keeps the Service ports in sync with the listeners', () => {
    const changed = plan([gateway({ listeners: [{ name: 'a', port: 9000, protocol: 'HTTP' }, { name: 'u', port: 53, protocol: 'UDP' }] })]).gateways[0];
    expect((changed.objects.service.spec as any).ports.map((p: any) => p.name)).toEqual(['udp-53', 'tcp-9000']);
    expect((changed.objects.deployment.spec as any).template.spec.containers[0].ports.map((p: any) => p.containerPort)).toEqual([53, 9000, 9113]);
  });

  it('moves the agent port off a listener that uses it', () => {
    const g = plan([gateway({ listeners: [{ name: 'a', port: 9113, protocol: 'HTTP' }] })]).gateways[0];
    expect((g.objects.deployment.spec as any).template.spec.containers[0].readinessProbe.httpGet.port).toBe(9114);
  });

  it('copies spec.infrastructure labels and annotations, without letting them replace the selector labels', () => {
    const g = plan([
      gateway({
        infrastructure: { labels: { team: 'a', 'app.kubernetes.io/instance': 'hijack' }, annotations: { 'example.com/cost-center': '42' } },
      }),
    ]).gateways[0];
    for (const o of Object.values(g.objects)) {
      expect(o.metadata.labels).toMatchObject({ team: 'a', 'app.kubernetes.io/instance': 'gw-portcullis' });
      expect(o.metadata.annotations).toEqual({ 'example.com/cost-center': '42' });
    }
    const tmpl = (g.objects.deployment.spec as any).template.metadata;
    expect(tmpl.labels).toMatchObject({ team: 'a', 'app.kubernetes.io/instance': 'gw-portcullis' });
    expect(tmpl.annotations).toEqual({ 'example.com/cost-center': '42' });
  });
});

describe('provisioning: Gateway static addresses', () => {
  const serviceSpec = (g: GatewayObject, classes?: GatewayClassObject[], cms?: ConfigMapObject[]) => plan([g], classes, cms).gateways[0].objects.service.spec as Record<string, unknown>;

  it('a LoadBalancer Service asks for the first IPAddress as its load balancer IP', () => {
    expect(serviceSpec(gateway({ addresses: [{ value: '192.0.2.7' }] }))).toMatchObject({ type: 'LoadBalancer', loadBalancerIP: '192.0.2.7' });
  });

  it('a ClusterIP Service takes the addresses as its cluster IPs; other address types are left out', () => {
    const clusterIP = [cls({ group: '', kind: 'ConfigMap', name: 'p', namespace: 'team-a' })];
    const params: ConfigMapObject[] = [{ metadata: { name: 'p', namespace: 'team-a' }, data: { serviceType: 'ClusterIP' } }];
    const spec = serviceSpec(gateway({ addresses: [{ type: 'Hostname', value: 'gw.example' }, { type: 'IPAddress', value: '10.0.0.13' }] }), clusterIP, params);
    expect(spec).toMatchObject({ type: 'ClusterIP', clusterIP: '10.0.0.13', clusterIPs: ['10.0.0.13'] });
    expect(spec.loadBalancerIP).toBeUndefined();
  });

  it('without addresses, Kubernetes picks them', () => {
    const spec = serviceSpec(gateway());
    expect([spec.clusterIP, spec.clusterIPs, spec.loadBalancerIP]).toEqual([undefined, undefined, undefined]);
  });
});

describe('provisioning: parameters ConfigMaps', () => {
  const classCm: ConfigMapObject = { metadata: { name: 'class-params', namespace: 'portcullis-system' }, data: { serviceType: 'NodePort', replicas: '3' } };
  const gwCm: ConfigMapObject = { metadata: { name: 'gw-params', namespace: 'team-a' }, data: { serviceType: 'ClusterIP' } };
  const classRef = { group: '', kind: 'ConfigMap', name: 'class-params', namespace: 'portcullis-system' };

  it('takes the Service type and replicas from the GatewayClass parametersRef', () => {
    const g = plan([gateway()], [cls(classRef)], [classCm]).gateways[0];
    expect(g.params).toMatchObject({ serviceType: 'NodePort', replicas: 3 });
    expect((g.objects.service.spec as any).type).toBe('NodePort');
    expect((g.objects.deployment.spec as any).replicas).toBe(3);
  });

  it("lets the Gateway's infrastructure.parametersRef override the class's", () => {
    const g = plan([gateway({ infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'gw-params' } } })], [cls(classRef)], [classCm, gwCm]).gateways[0];
    expect(g.params).toMatchObject({ serviceType: 'ClusterIP', replicas: 3 });
    // ClusterIP Services take no externalTrafficPolicy (the API server rejects it).
    expect((g.objects.service.spec as any).externalTrafficPolicy).toBeUndefined();
  });

  it('reports a missing or wrong parameters object as InvalidParameters and falls back to the defaults', () => {
    const missing = plan([gateway({ infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'nope' } } })]);
    expect(missing.gateways[0].problem).toEqual({ reason: 'InvalidParameters', message: 'Gateway spec.infrastructure.parametersRef: ConfigMap team-a/nope not found' });
    expect(missing.gateways[0].params.serviceType).toBe('LoadBalancer');
    const kind = plan([gateway()], [cls({ group: 'example.com', kind: 'Params', name: 'p', namespace: 'x' })]);
    expect(kind.classProblems.get('portcullis')?.message).toMatch(/must refer to a core ConfigMap/);
  });

  it("judges a class's parametersRef even while no Gateway uses it", () => {
    const r = plan([], [cls({ group: '', kind: 'ConfigMap', name: 'gone', namespace: 'cfg' })]);
    expect(r.classProblems.get('portcullis')).toEqual({ reason: 'InvalidParameters', message: 'GatewayClass spec.parametersRef: ConfigMap cfg/gone not found' });
  });

  it('names each bad key and keeps the good ones', () => {
    const r = parseParameters({ metadata: { name: 'p' }, data: { serviceType: 'Ingress', replicas: '2', colour: 'blue' } });
    expect(r.params).toEqual({ replicas: 2 });
    expect(r.errors).toEqual(['unknown key "colour" (known: serviceType, externalTrafficPolicy, replicas, logLevel)', 'serviceType must be one of LoadBalancer, ClusterIP, NodePort, got "Ingress"']);
  });
});

describe('provisioning: names', () => {
  it('cuts names to a DNS label with a hash, different for different long names', () => {
    const a = baseName('g'.repeat(60), 'portcullis');
    const b = baseName('g'.repeat(61), 'portcullis');
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    expect(dnsLabel('short')).toBe('short');
  });
});

describe('Gateway status.addresses from the Service', () => {
  it('uses the load balancer ingress when there is one, else the cluster IP', () => {
    expect(gatewayAddresses({ spec: { type: 'LoadBalancer', clusterIP: '10.0.0.7' }, status: { loadBalancer: { ingress: [{ ip: '203.0.113.9' }, { hostname: 'lb.example.com' }] } } })).toEqual([
      { type: 'IPAddress', value: '203.0.113.9' },
      { type: 'Hostname', value: 'lb.example.com' },
    ]);
    expect(gatewayAddresses({ spec: { type: 'LoadBalancer', clusterIP: '10.0.0.7' }, status: {} })).toEqual([{ type: 'IPAddress', value: '10.0.0.7' }]);
    expect(gatewayAddresses({ spec: { type: 'ClusterIP', clusterIPs: ['10.0.0.8', 'fd00::8'] } })).toEqual([
      { type: 'IPAddress', value: '10.0.0.8' },
      { type: 'IPAddress', value: 'fd00::8' },
    ]);
    expect(gatewayAddresses(undefined)).toEqual([]);
  });
});
