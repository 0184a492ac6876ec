/**
 * `portcullis-controller --provider=kubernetes`: the Kubernetes provider feeding the Reconciler,
 * leader election, the controller's health/metrics endpoints, and the data plane.
 *
 * Every replica watches, reconciles and keeps its data plane view warm; only the leader writes
 * statuses (and provisions), so a new leader takes over with its caches full and writes only
 * what differs from what the old one wrote.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CliOptions } from './cli';
import type { Logger } from './log';
import { NginxProcess } from './apply/nginx';
import { defaultNginxBinary, hasHttp2Directive, nginxVersion } from './apply/nginx-binary';
import { startInferenceHop } from './inference/hop-process';
import { Reconciler, standardPipeline } from './reconcile';
import { AlwaysLeader, KubeClient, KubernetesProvider, LeaderElector, type Leadership } from './providers/kubernetes';
import { ControllerMetrics } from './observability/metrics';
import { startEndpoints } from './observability/server';

const SA_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

function leaseNamespace(options: CliOptions): string {
  if (options.leaderElectionNamespace) return options.leaderElectionNamespace;
  if (process.env.POD_NAMESPACE) return process.env.POD_NAMESPACE;
  try {
    return fs.readFileSync(SA_NAMESPACE_FILE, 'utf8').trim() || 'default';
  } catch {
    return 'default';
  }
}

export async function runKubernetes(options: CliOptions, log: Logger): Promise<number> {
  const client = KubeClient.fromOptions({ kubeconfig: options.kubeconfig });
  const metrics = new ControllerMetrics();
  client.onRequest((verb, _path, status) => metrics.apiRequests.inc({ verb, code: String(status) }));

  const elector = options.leaderElection
    ? new LeaderElector({ client, namespace: leaseNamespace(options), name: options.leaderElectionLockName, log })
    : undefined;
  const leadership: Leadership = elector ?? new AlwaysLeader();
  leadership.onChange((leader) => metrics.leader.set(leader ? 1 : 0));

  const provider = new KubernetesProvider({
    client,
    log,
    controllerName: options.controllerName,
    leadership,
    gatewayClassName: options.gatewayClassName,
    onStatusWrite: () => metrics.statusWrites.inc(),
  });

  const stateDir = path.resolve(options.stateDir!);
  const prefix = path.join(stateDir, 'nginx');
  fs.mkdirSync(stateDir, { recursive: true });
  const binary = options.nginx ?? defaultNginxBinary();
  if (!fs.existsSync(binary)) throw new Error(`nginx binary ${binary} not found (install nginx or pass --nginx=PATH)`);
  const nginx = new NginxProcess({ prefix, binary, log });
  const version = nginxVersion(binary);
  const hop = options.inferenceExtension ? await startInferenceHop(options, log) : undefined;

  const reconciler = new Reconciler({
    pipeline: standardPipeline,
    source: provider,
    dataplane: nginx,
    log,
    controllerName: options.controllerName,
    inferenceExtension: options.inferenceExtension,
    ...(hop ? { inferenceHop: hop.address } : {}),
    listenAddress: options.listenAddress,
    prefix,
    errorLogLevel: options.logLevel === 'debug' ? 'info' : 'notice',
    nginx: { http2On: hasHttp2Directive(version), ...(version ? { version: version.text } : {}) },
  });
  let reconciled = false;
  reconciler.onReconciled((summary) => {
    reconciled = true;
    metrics.observeReconcile(summary);
    metrics.setResources(provider.counts());
  });

  const endpoints = await startEndpoints({
    healthAddress: options.healthAddress,
    metricsAddress: options.metricsAddress,
    registry: metrics.registry,
    ready: () => provider.hasSynced() && reconciled,
  });
  log.info('controller starting', {
    provider: 'kubernetes',
    server: client.server.origin,
    controllerName: options.controllerName,
    gatewayClassName: options.gatewayClassName,
    leaderElection: elector ? { lease: `${leaseNamespace(options)}/${options.leaderElectionLockName}`, identity: elector.identity } : false,
    dataplane: options.dataplane,
    stateDir,
    listenAddress: options.listenAddress,
    health: endpoints.health && `${endpoints.health.address}:${endpoints.health.port}`,
    metrics: endpoints.metrics && `${endpoints.metrics.address}:${endpoints.metrics.port}`,
  });

  let stopping: Promise<number> | undefined;
  const stop = (signal: string): Promise<number> => {
    if (!stopping) {
      stopping = (async () => {
        log.info('stopping', { signal });
        // Release the Lease first: another replica takes over while we shut down.
        await elector?.stop();
        provider.stop();
        await reconciler.stop();
        await nginx.stop();
        await hop?.stop();
        await endpoints.close();
        client.close();
        log.info('stopped');
        return 0;
      })();
    }
    return stopping;
  };
  const done = new Promise<number>((resolve) => {
    process.once('SIGTERM', () => void stop('SIGTERM').then(resolve));
    process.once('SIGINT', () => void stop('SIGINT').then(resolve));
  });

  elector?.start();
  provider.watch(() => void reconciler.trigger());
  await provider.start();
  metrics.setResources(provider.counts());
  log.info('resources synced', provider.counts());
  await reconciler.trigger();
  return done;
}
