import * as fs from 'fs';
import type { Cluster } from './kube';
import type { Manifest } from './manifests';

/** The certificate set the controller's agent config server serves (see makeAgentTls). */
export interface AgentTls {
  ca: string;
  cert: string;
  key: string;
}

/**
 * The flags of a controller running with --dataplane=agent as the chart sets them: where its
 * config server listens, the URL agents reach it at, its certificate, and free health/metrics
 * ports so several controllers can run side by side.
 */
export async function agentModeArgs(options: { agentPort: number; agentUrl: string; tls: AgentTls; image?: string }): Promise<string[]> {
  return [
    `--agent-address=127.0.0.1:${options.agentPort}`,
    `--agent-server-url=${options.agentUrl}`,
    `--agent-tls-cert=${options.tls.cert}`,
    `--agent-tls-key=${options.tls.key}`,
    `--agent-ca-file=${options.tls.ca}`,
    `--dataplane-image=${options.image ?? 'portcullis/nginx:e2e'}`,
    // Port 0: the kernel picks free ports; ControllerProcess.boundPort reads them back.
    '--health-address=127.0.0.1:0',
    '--metrics-address=127.0.0.1:0',
  ];
}

/**
 * A Service and the EndpointSlice a kubelet-less cluster needs for it: port 80 of `name`
 * reaches `targetPort` on `address` (a network namespace's address; EndpointSlices refuse
 * loopback).
 */
export function serviceWithEndpoints(options: { name: string; namespace: string; address: string; targetPort: number; managedBy: string }): Manifest[] {
  const { name, namespace, address, targetPort, managedBy } = options;
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ports: [{ name: 'http', port: 80, targetPort, protocol: 'TCP' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-1`, namespace, labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': managedBy } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: targetPort, protocol: 'TCP' }],
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
    },
  ];
}

/**
 * Writes a token of the ServiceAccount the controller provisioned for a Gateway into `file`,
 * as the kubelet would project it into the data-plane pod (audience portcullis-agent by
 * default). Waits for the ServiceAccount to exist, since provisioning runs after the apply.
 */
export async function writeAgentToken(cluster: Cluster, options: { namespace: string; serviceAccount: string; file: string; audience?: string | null; timeoutMs?: number }): Promise<string> {
  const audience = options.audience === undefined ? 'portcullis-agent' : options.audience;
  const args = ['create', 'token', options.serviceAccount, '-n', options.namespace, ...(audience ? ['--audience', audience] : []), '--duration=1h'];
  const deadline = Date.now() + (options.timeoutMs ?? 30000);
  for (;;) {
    const token = await cluster.kubectl(args).catch((err: Error) => {
      if (Date.now() > deadline) throw err;
      return '';
    });
    if (token.trim()) {
      fs.writeFileSync(options.file, token.trim());
      return options.file;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
