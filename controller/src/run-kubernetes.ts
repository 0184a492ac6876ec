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
import { startAgentDataplane } from './configserver/options';
import { defaultNginxBinary, nginxCapabilities } from './apply/nginx-binary';
import { startInferenceHop } from './inference/hop-process';
import { localDataplane, Reconciler, standardPipeline } from './reconcile';
import { AlwaysLeader, KubeClient, KubernetesProvider, LeaderElector, watchedKinds, type Leadership } from './providers/kubernetes';
import { loadKubeConfig } from './providers/kubernetes/client';
import { ControllerMetrics } from './observability/metrics';
import { startEndpoints } from './observability/server';
import { untilSignalled } from './command';

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
    kinds: watchedKinds({ inferenceExtension: options.inferenceExtension }),
    onStatusWrite: () => metrics.statusWrites.inc(),
  });

  // --dataplane=agent: every Gateway's own nginx pods run portcullis-agent (configserver/);
  // --dataplane=local: one nginx on this machine serves every Gateway.
  const agents = options.dataplane === 'agent' ? await startAgentDataplane(loadKubeConfig({ kubeconfig: options.kubeconfig }), { ...options.agent!, controllerName: options.controllerName, logLevel: options.logLevel }, log) : undefined;
  const stateDir = path.resolve(options.stateDir ?? '.');
  const prefix = path.join(stateDir, 'nginx');
  let nginx: NginxProcess | undefined;
  let capabilities: ReturnType<typeof nginxCapabilities> | undefined;
  let hop: Awaited<ReturnType<typeof startInferenceHop>> | undefined;
  if (!agents) {
    fs.mkdirSync(stateDir, { recursive: true });
    const binary = options.nginx ?? defaultNginxBinary();
    if (!fs.existsSync(binary)) throw new Error(`nginx binary ${binary} not found (install nginx or pass --nginx=PATH)`);
    nginx = new NginxProcess({ prefix, binary, log });
    capabilities = nginxCapabilities(binary);
    hop = options.inferenceExtension ? await startInferenceHop(options, log) : undefined;
  }

  const reconciler = new Reconciler({
    pipeline: standardPipeline,
    source: provider,
    dataplane:
      agents ??
      localDataplane(standardPipeline, nginx!, {
        log,
        listenAddress: options.listenAddress,
        prefix,
        errorLogLevel: options.logLevel === 'debug' ? 'info' : 'notice',
        ...(hop ? { inferenceHop: hop.address } : {}),
        tempPathModules: capabilities?.tempPathModules,
      }),
    log,
    controllerName: options.controllerName,
    inferenceExtension: options.inferenceExtension,
    // Agents run the image's nginx (1.26.3, which has `http2 on`, built by scripts/build-nginx.sh).
    nginx: capabilities ?? { http2On: true },
  });
  if (agents) {
    // An agent's report (or a Service's new address) changes statuses: reconcile again.
    agents.onOutcome(() => void reconciler.trigger());
    leadership.onChange((leader) => agents.setLeader(leader));
    agents.setLeader(leadership.isLeader());
    // The leader provisions from the raw objects (uid, spec.infrastructure, parametersRef).
    reconciler.onReconciled(() => {
      if (leadership.isLeader()) void provider.scan().then((docs) => agents.provision(docs));
    });
  }
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
        await nginx?.stop();
        await agents?.stop();
        await hop?.stop();
        await endpoints.close();
        client.close();
        log.info('stopped');
        return 0;
      })();
    }
    return stopping;
  };
  const done = untilSignalled(stop);

  elector?.start();
  provider.watch(() => void reconciler.trigger());
  await provider.start();
  metrics.setResources(provider.counts());
  log.info('resources synced', provider.counts());
  await reconciler.trigger();
  return done;
}
