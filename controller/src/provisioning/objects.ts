/**
 * desiredObjects: a Gateway of ours -> the objects its data plane needs (pure).
 *
 *   ServiceAccount <base>        the agent's identity: the config server gives a token of this
 *                                account this Gateway's config and no other
 *   ConfigMap <base>-agent       the CA the agent verifies the config server with
 *   Service <base>               type from the parameters; one port per distinct listener port
 *   Deployment <base>            one container running portcullis-agent, which starts nginx
 *
 * Every object is owned by the Gateway (garbage collection removes them with it) and carries
 * the Gateway's spec.infrastructure labels and annotations; our own selector labels win over
 * those, so a Gateway cannot make its Service select other pods.
 */
import { agentConfigName, baseName, ownLabels, selectorLabels } from './names';
import type { EffectiveParameters } from './params';
import type { GatewayObject, KubeObject, OwnerReference, ProvisioningDefaults } from './types';

/** Where the agent's files live inside the pod (the image keeps its root filesystem read-only). */
export const AGENT_PATHS = {
  tokenDir: '/var/run/secrets/portcullis',
  token: '/var/run/secrets/portcullis/token',
  configDir: '/etc/portcullis',
  ca: '/etc/portcullis/ca.crt',
  runDir: '/var/run/portcullis',
  prefix: '/var/run/portcullis/nginx',
  cacheDir: '/var/cache/nginx',
};
/** The audience of the agent's projected token: it is good for the config server only. */
export const AGENT_TOKEN_AUDIENCE = 'portcullis-agent';
/** Preferred port of the agent's /healthz, /readyz and /metrics. */
export const AGENT_PORT = 9113;
const TOKEN_SECONDS = 3600;

export interface DesiredObjects {
  serviceAccount: KubeObject;
  agentConfig: KubeObject;
  service: KubeObject;
  deployment: KubeObject;
}

export function ownerReference(gateway: GatewayObject): OwnerReference {
  if (!gateway.metadata.uid) throw new Error(`Gateway ${gateway.metadata.namespace}/${gateway.metadata.name} has no uid (not read from the API server?)`);
  return {
    apiVersion: gateway.apiVersion ?? 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    name: gateway.metadata.name,
    uid: gateway.metadata.uid,
    controller: true,
  };
}

/** Distinct listener ports, ascending, with the transport nginx serves them on. */
export function servicePorts(gateway: GatewayObject): { name: string; port: number; protocol: 'TCP' | 'UDP'; targetPort: number }[] {
  const byPort = new Map<string, { port: number; protocol: 'TCP' | 'UDP' }>();
  for (const l of gateway.spec.listeners) {
    const protocol = l.protocol === 'UDP' ? 'UDP' : 'TCP';
    byPort.set(`${l.port}/${protocol}`, { port: l.port, protocol });
  }
  return [...byPort.values()]
    .sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol))
    .map(({ port, protocol }) => ({ name: `${protocol.toLowerCase()}-${port}`, port, protocol, targetPort: port }));
}

/** The agent's own port: AGENT_PORT unless a listener took it. */
export function agentPort(gateway: GatewayObject): number {
  const used = new Set(gateway.spec.listeners.map((l) => l.port));
  let port = AGENT_PORT;
  while (used.has(port)) port++;
  return port;
}

function meta(gateway: GatewayObject, name: string, base: string) {
  const infra = gateway.spec.infrastructure ?? {};
  return {
    name,
    namespace: gateway.metadata.namespace,
    labels: { ...(infra.labels ?? {}), ...ownLabels(gateway.metadata.name, base) },
    ...(infra.annotations && Object.keys(infra.annotations).length ? { annotations: { ...infra.annotations } } : {}),
    ownerReferences: [ownerReference(gateway)],
  };
}

export function desiredObjects(gateway: GatewayObject, params: EffectiveParameters, defaults: ProvisioningDefaults): DesiredObjects {
  const ns = gateway.metadata.namespace;
  if (!ns) throw new Error(`Gateway ${gateway.metadata.name} has no namespace`);
  const base = baseName(gateway.metadata.name, gateway.spec.gatewayClassName);
  const selector = selectorLabels(gateway.metadata.name, base);
  const ports = servicePorts(gateway);
  const port = agentPort(gateway);
  const infra = gateway.spec.infrastructure ?? {};

  const serviceAccount: KubeObject = {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: meta(gateway, base, base),
    // The agent gets a token with the config server's audience instead (projected below).
    automountServiceAccountToken: false,
  };

  const agentConfig: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(gateway, agentConfigName(base), base),
    data: { 'ca.crt': defaults.agentCa ?? '', server: defaults.agentServerUrl },
  };

  const external = params.serviceType !== 'ClusterIP';
  const service: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(gateway, base, base),
    spec: {
      type: params.serviceType,
      selector,
      ports,
      ...(external ? { externalTrafficPolicy: params.externalTrafficPolicy } : {}),
      ...staticAddressFields(gateway, params.serviceType),
    },
  };

  const args = [
    `--server=${defaults.agentServerUrl}`,
    `--gateway=${ns}/${gateway.metadata.name}`,
    `--token-file=${AGENT_PATHS.token}`,
    ...(defaults.agentCa ? [`--ca-file=${AGENT_PATHS.ca}`] : []),
    `--prefix=${AGENT_PATHS.prefix}`,
    `--listen-address=0.0.0.0`,
    `--health-address=0.0.0.0:${port}`,
    `--log-level=${params.logLevel}`,
  ];

  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(gateway, base, base),
    spec: {
      replicas: params.replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels: { ...(infra.labels ?? {}), ...selector },
          ...(infra.annotations && Object.keys(infra.annotations).length ? { annotations: { ...infra.annotations } } : {}),
        },
        spec: {
          serviceAccountName: base,
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 101,
            runAsGroup: 101,
            fsGroup: 101,
            seccompProfile: { type: 'RuntimeDefault' },
            // Listener ports below 1024 without a capability (a "safe" sysctl since 1.22).
            sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }],
          },
          containers: [
            {
              name: 'nginx',
              image: defaults.image,
              ...(defaults.imagePullPolicy ? { imagePullPolicy: defaults.imagePullPolicy } : {}),
              command: ['portcullis-agent'],
              args,
              env: [
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
              ],
              ports: [
                ...ports.map((p) => ({ name: p.name, containerPort: p.port, protocol: p.protocol })),
                { name: 'agent', containerPort: port, protocol: 'TCP' },
              ],
              // Liveness only restarts an agent that stopped answering once it had started: the
              // startup probe gives a new one up to 2 minutes (a node busy enough to take 20-60 s
              // to start a process had the liveness probe kill agents before they listened, a
              // restart loop), and a 5 s timeout keeps a slow answer from counting as none.
              startupProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 2, timeoutSeconds: 5, failureThreshold: 60 },
              readinessProbe: { httpGet: { path: '/readyz', port }, periodSeconds: 2, timeoutSeconds: 5, failureThreshold: 3 },
              livenessProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 },
              securityContext: {
                readOnlyRootFilesystem: true,
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'token', mountPath: AGENT_PATHS.tokenDir, readOnly: true },
                { name: 'agent-config', mountPath: AGENT_PATHS.configDir, readOnly: true },
                { name: 'run', mountPath: AGENT_PATHS.runDir },
                { name: 'cache', mountPath: AGENT_PATHS.cacheDir },
              ],
            },
          ],
          volumes: [
            {
              name: 'token',
              projected: {
                sources: [{ serviceAccountToken: { path: 'token', audience: AGENT_TOKEN_AUDIENCE, expirationSeconds: TOKEN_SECONDS } }],
              },
            },
            { name: 'agent-config', configMap: { name: agentConfigName(base) } },
            { name: 'run', emptyDir: {} },
            { name: 'cache', emptyDir: {} },
          ],
        },
      },
    },
  };

  return { serviceAccount, agentConfig, service, deployment };
}

/**
 * Gateway spec.addresses (IPAddress; other types make the Gateway not Accepted, graph/gateways.ts)
 * -> the Service fields that give it those addresses: the load balancer's IP for a LoadBalancer
 * Service, the cluster IP(s) otherwise. An address Kubernetes refuses (outside the Service
 * range, taken, two of one family) leaves the Service without it, and the Gateway's Programmed
 * condition says AddressNotUsable (status/statuses.ts compares them with the Service's).
 */
export function staticAddressFields(gateway: GatewayObject, serviceType: string): Record<string, unknown> {
  const ips = (gateway.spec.addresses ?? []).filter((a) => (a.type ?? 'IPAddress') === 'IPAddress').map((a) => a.value);
  if (ips.length === 0) return {};
  if (serviceType === 'LoadBalancer') return { loadBalancerIP: ips[0] };
  return { clusterIP: ips[0], clusterIPs: ips };
}
