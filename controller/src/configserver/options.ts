/**
 * The controller's --dataplane=agent flags -> a started KubernetesDataplane (config server
 * listening, watches of our provisioned objects running).
 */
import * as fs from 'fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../log';
import type { ServiceType } from '../provisioning/types';
import { KubernetesDataplane } from './kubernetes';

export interface AgentDataplaneOptions {
  /** host:port the config server listens on (default 0.0.0.0:8443). */
  agentAddress: string;
  /** Where agents reach it (https://<service>.<namespace>.svc:8443). */
  agentServerUrl: string;
  agentTlsCert?: string;
  agentTlsKey?: string;
  /** CA agents verify the config server with (copied into each Gateway's agent ConfigMap). */
  agentCaFile?: string;
  agentAllowPlaintext?: boolean;
  dataplaneImage: string;
  dataplaneServiceType: ServiceType;
  dataplaneReplicas: number;
  controllerName: string;
  logLevel: string;
}

export async function startAgentDataplane(kubeConfig: KubeConfig, o: AgentDataplaneOptions, log: Logger): Promise<KubernetesDataplane> {
  const m = /^(.*):(\d+)$/.exec(o.agentAddress);
  if (!m) throw new Error(`--agent-address must be HOST:PORT, got "${o.agentAddress}"`);
  if ((o.agentTlsCert === undefined) !== (o.agentTlsKey === undefined)) throw new Error('--agent-tls-cert and --agent-tls-key go together');
  const dataplane = new KubernetesDataplane({
    kubeConfig,
    log,
    controllerName: o.controllerName,
    listen: { host: m[1].replace(/^\[|\]$/g, '') || undefined, port: Number(m[2]) },
    ...(o.agentTlsCert && o.agentTlsKey ? { tls: { certFile: o.agentTlsCert, keyFile: o.agentTlsKey } } : {}),
    allowPlaintext: o.agentAllowPlaintext,
    errorLogLevel: o.logLevel === 'debug' ? 'info' : 'notice',
    defaults: {
      image: o.dataplaneImage,
      serviceType: o.dataplaneServiceType,
      externalTrafficPolicy: 'Local',
      replicas: o.dataplaneReplicas,
      logLevel: o.logLevel,
      agentServerUrl: o.agentServerUrl,
      ...(o.agentCaFile ? { agentCa: fs.readFileSync(o.agentCaFile, 'utf8') } : {}),
    },
  });
  await dataplane.start();
  return dataplane;
}
