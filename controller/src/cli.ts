/**
 * portcullis-controller: the gateway controller's command line.
 *
 *   portcullis-controller --provider=file --manifests=DIR --state-dir=DIR
 *       [--listen-address=127.0.0.1] [--nginx=PATH] [--log-level=info]
 *   portcullis-controller --provider=kubernetes [--kubeconfig=FILE] [--leader-election=true] ...
 */
import * as fs from 'fs';
import * as path from 'path';
import { LOG_LEVELS, Logger, LogLevel } from './log';
import { exitWith, logLevelFlag, readFlags, runCommand, untilSignalled, UsageError } from './command';
import { FileProvider } from './providers/file';
import { localDataplane, Reconciler, standardPipeline } from './reconcile';
import { NginxProcess } from './apply/nginx';
import { defaultNginxBinary, nginxCapabilities } from './apply/nginx-binary';
import { DEFAULT_CONTROLLER_NAME } from './graph/types';
import { startInferenceHop } from './inference/hop-process';
import { limitHeapGrowth } from './heap';

export const USAGE = `Usage: portcullis-controller --provider=file --manifests=DIR --state-dir=DIR [options]
       portcullis-controller --provider=kubernetes [--kubeconfig=FILE] [options]

Runs the Portcullis gateway controller: reads Gateway API resources, renders nginx
configuration, runs and reloads its own nginx, and writes the resources' statuses.

Providers:
  --provider=file          standalone mode: resources come from YAML files
  --provider=kubernetes    resources come from the Kubernetes API (list + watch); statuses are
                           written back through the status subresource by the leader

Options:
  --manifests=DIR          folder of multi-document YAML manifests (*.yaml, *.yml), watched
                           for changes (file provider)
  --state-dir=DIR          where nginx's prefix, status.yaml and the resources' generation /
                           creationTimestamp are kept (created if missing)
  --listen-address=ADDR    address nginx listens on for every listener port, and the Gateway's
                           reported address (default 127.0.0.1)
  --nginx=PATH             nginx binary (default: $PORTCULLIS_NGINX, else the build of
                           scripts/build-nginx.sh, else nginx on the PATH, else /usr/sbin/nginx)
  --controller-name=NAME   GatewayClass controllerName to handle
                           (default ${DEFAULT_CONTROLLER_NAME})
  --log-level=LEVEL        ${LOG_LEVELS.join(', ')} (default info); JSON lines on stderr
  --health-address=H:P     /healthz and /readyz (kubernetes default 0.0.0.0:8081; file: off)
  --metrics-address=H:P    Prometheus /metrics (kubernetes default 0.0.0.0:9113; file: off)
  --gateway-api-inference-extension
                           serve InferencePool backends (alpha): HTTPRoutes may send model
                           requests to a pool, whose endpoint picker chooses the pod; without
                           it InferencePool backendRefs are InvalidKind
  --endpoint-picker-disable-tls
                           talk to endpoint pickers in plaintext (default: TLS)
  --endpoint-picker-tls-verify
                           verify endpoint pickers' certificates (default: not verified)
  --endpoint-picker-ca-file=FILE
                           PEM roots for --endpoint-picker-tls-verify
  -h, --help               show this help

Kubernetes provider:
  --kubeconfig=FILE        kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, else the
                           pod's service account)
  --gateway-class-name=N   only this GatewayClass is read (default: every class whose
                           controllerName is ours)
  --leader-election=BOOL   true (default): replicas elect a leader with a Lease; only the
                           leader writes statuses (and provisions); false: this one writes
  --leader-election-lock-name=NAME   the Lease's name (default portcullis-leader)
  --leader-election-namespace=NS     the Lease's namespace (default $POD_NAMESPACE, else
                           the service account's namespace, else default)
  --dataplane=local        nginx runs in this process's machine, as in standalone mode
                           (needs --state-dir; --listen-address, --nginx apply)
  --dataplane=agent        each Gateway gets its own nginx pods (Deployment, Service,
                           ServiceAccount provisioned by the leader) running portcullis-agent,
                           which fetch their config from this process:
  --agent-address=H:P      the agents' config server (default 0.0.0.0:8443)
  --agent-server-url=URL   where agents reach it (required), e.g.
                           https://portcullis.portcullis-system.svc:8443
  --agent-tls-cert=FILE, --agent-tls-key=FILE
                           the config server's certificate (required: configs carry private
                           keys; --agent-allow-plaintext=true only for tests or a mesh)
  --agent-ca-file=FILE     CA the agents verify it with (put in each Gateway's ConfigMap)
  --dataplane-image=IMAGE  nginx + portcullis-agent image (default portcullis/nginx:latest)
  --dataplane-service-type=T   LoadBalancer (default), ClusterIP or NodePort
  --dataplane-replicas=N   nginx pods per Gateway (default 1)

Status is written to DIR/status.yaml after every reconcile (one YAML document per resource).
SIGTERM or SIGINT stops nginx and exits with code 0.
`;

export interface CliOptions {
  provider: 'file' | 'kubernetes';
  manifests?: string;
  stateDir?: string;
  listenAddress: string;
  nginx?: string;
  controllerName: string;
  logLevel: LogLevel;
  help: boolean;
  healthAddress?: string;
  metricsAddress?: string;
  kubeconfig?: string;
  gatewayClassName?: string;
  leaderElection: boolean;
  leaderElectionLockName: string;
  leaderElectionNamespace?: string;
  dataplane?: string;
  agent?: {
    agentAddress: string;
    agentServerUrl: string;
    agentTlsCert?: string;
    agentTlsKey?: string;
    agentCaFile?: string;
    agentAllowPlaintext: boolean;
    dataplaneImage: string;
    dataplaneServiceType: 'LoadBalancer' | 'ClusterIP' | 'NodePort';
    dataplaneReplicas: number;
  };
  inferenceExtension: boolean;
  endpointPicker: { disableTls: boolean; verify: boolean; caFile?: string };
}

export { UsageError };

const VALUES = [
  'provider',
  'manifests',
  'state-dir',
  'listen-address',
  'nginx',
  'log-level',
  'controller-name',
  'endpoint-picker-ca-file',
  'health-address',
  'metrics-address',
  'kubeconfig',
  'gateway-class-name',
  'leader-election',
  'leader-election-lock-name',
  'leader-election-namespace',
  'dataplane',
  'agent-address',
  'agent-server-url',
  'agent-tls-cert',
  'agent-tls-key',
  'agent-ca-file',
  'agent-allow-plaintext',
  'dataplane-image',
  'dataplane-service-type',
  'dataplane-replicas',
];
const SWITCHES = ['gateway-api-inference-extension', 'endpoint-picker-disable-tls', 'endpoint-picker-tls-verify'];

export function parseArgs(argv: string[]): CliOptions {
  const values = readFlags(argv, { values: VALUES, switches: SWITCHES });
  const help = values.has('help');
  const provider = values.get('provider');
  const logLevel = logLevelFlag(values);
  const options: CliOptions = {
    provider: provider === 'kubernetes' ? 'kubernetes' : 'file',
    manifests: values.get('manifests'),
    stateDir: values.get('state-dir'),
    listenAddress: values.get('listen-address') ?? '127.0.0.1',
    nginx: values.get('nginx'),
    controllerName: values.get('controller-name') ?? DEFAULT_CONTROLLER_NAME,
    logLevel,
    help,
    healthAddress: values.get('health-address') ?? (provider === 'kubernetes' ? '0.0.0.0:8081' : undefined),
    metricsAddress: values.get('metrics-address') ?? (provider === 'kubernetes' ? '0.0.0.0:9113' : undefined),
    kubeconfig: values.get('kubeconfig'),
    gatewayClassName: values.get('gateway-class-name'),
    leaderElection: (values.get('leader-election') ?? 'true') !== 'false',
    leaderElectionLockName: values.get('leader-election-lock-name') ?? 'portcullis-leader',
    leaderElectionNamespace: values.get('leader-election-namespace'),
    dataplane: values.get('dataplane'),
    inferenceExtension: values.get('gateway-api-inference-extension') === 'true',
    endpointPicker: {
      disableTls: values.get('endpoint-picker-disable-tls') === 'true',
      verify: values.get('endpoint-picker-tls-verify') === 'true',
      ...(values.has('endpoint-picker-ca-file') ? { caFile: values.get('endpoint-picker-ca-file') } : {}),
    },
  };
  if (help) return options;
  const le = values.get('leader-election');
  if (le !== undefined && le !== 'true' && le !== 'false') throw new UsageError(`--leader-election must be true or false, got "${le}"`);
  if (provider === undefined) throw new UsageError('--provider is required (file or kubernetes)');
  if (provider !== 'file' && provider !== 'kubernetes') {
    throw new UsageError(`--provider must be file or kubernetes, got "${provider}"`);
  }
  if (provider === 'file') {
    if (!options.manifests) throw new UsageError('--manifests=DIR is required with --provider=file');
    if (!options.stateDir) throw new UsageError('--state-dir=DIR is required with --provider=file');
  }
  if (provider === 'kubernetes') {
    const dataplane = options.dataplane ?? 'local';
    if (dataplane !== 'local' && dataplane !== 'agent') throw new UsageError(`--dataplane must be local or agent, got "${dataplane}"`);
    options.dataplane = dataplane;
    if (dataplane === 'agent') {
      const serviceType = values.get('dataplane-service-type') ?? 'LoadBalancer';
      if (serviceType !== 'LoadBalancer' && serviceType !== 'ClusterIP' && serviceType !== 'NodePort') {
        throw new UsageError(`--dataplane-service-type must be LoadBalancer, ClusterIP or NodePort, got "${serviceType}"`);
      }
      const replicas = values.get('dataplane-replicas') ?? '1';
      if (!/^\d+$/.test(replicas)) throw new UsageError(`--dataplane-replicas must be a whole number, got "${replicas}"`);
      const agentServerUrl = values.get('agent-server-url');
      if (!agentServerUrl) throw new UsageError('--agent-server-url is required with --dataplane=agent (where the agents reach this controller)');
      if ((values.get('agent-tls-cert') === undefined) !== (values.get('agent-tls-key') === undefined)) throw new UsageError('--agent-tls-cert and --agent-tls-key go together');
      options.agent = {
        agentAddress: values.get('agent-address') ?? '0.0.0.0:8443',
        agentServerUrl,
        agentTlsCert: values.get('agent-tls-cert'),
        agentTlsKey: values.get('agent-tls-key'),
        agentCaFile: values.get('agent-ca-file'),
        agentAllowPlaintext: values.get('agent-allow-plaintext') === 'true',
        dataplaneImage: values.get('dataplane-image') ?? 'portcullis/nginx:latest',
        dataplaneServiceType: serviceType,
        dataplaneReplicas: Number(replicas),
      };
    }
    if (dataplane === 'local' && !options.stateDir) throw new UsageError('--state-dir=DIR is required with --dataplane=local');
  }
  if (!options.listenAddress) throw new UsageError('--listen-address must not be empty');
  return options;
}

/** Runs the file provider until a signal; resolves with the exit code. */
export async function runFileProvider(options: CliOptions, log: Logger): Promise<number> {
  const stateDir = path.resolve(options.stateDir!);
  const prefix = path.join(stateDir, 'nginx');
  const provider = new FileProvider({ manifestsDir: options.manifests!, stateDir, log });
  const { previousStatuses } = await provider.open();
  const binary = options.nginx ?? defaultNginxBinary();
  if (!fs.existsSync(binary)) throw new Error(`nginx binary ${binary} not found (install nginx or pass --nginx=PATH)`);
  const nginx = new NginxProcess({ prefix, binary, log });
  const capabilities = nginxCapabilities(binary);
  const hop = options.inferenceExtension ? await startInferenceHop(options, log) : undefined;
  const reconciler = new Reconciler({
    pipeline: standardPipeline,
    source: provider,
    dataplane: localDataplane(standardPipeline, nginx, {
      log,
      listenAddress: options.listenAddress,
      prefix,
      errorLogLevel: options.logLevel === 'debug' ? 'info' : 'notice',
      ...(hop ? { inferenceHop: hop.address } : {}),
      tempPathModules: capabilities.tempPathModules,
    }),
    log,
    controllerName: options.controllerName,
    inferenceExtension: options.inferenceExtension,
    previousStatuses,
    nginx: capabilities,
  });
  log.info('controller starting', {
    provider: 'file',
    manifests: provider.manifestsDir,
    stateDir,
    listenAddress: options.listenAddress,
    controllerName: options.controllerName,
  });

  let stopping: Promise<number> | undefined;
  const stop = (signal: string): Promise<number> => {
    if (!stopping) {
      stopping = (async () => {
        log.info('stopping', { signal });
        provider.close();
        await reconciler.stop();
        // resources.json is saved in the background of each reconcile: let the last save end
        // (a failure is logged by the provider).
        await provider.flush().catch(() => undefined);
        await nginx.stop();
        await hop?.stop();
        log.info('stopped');
        return 0;
      })();
    }
    return stopping;
  };
  const done = untilSignalled(stop);
  // Watch before the first scan, so an edit made during startup is not missed.
  provider.watch(() => void reconciler.trigger());
  await reconciler.trigger();
  return done;
}

/**
 * The Kubernetes provider's runner, loaded only when it runs: it brings in
 * @kubernetes/client-node (thousands of generated modules), whose loading was the largest
 * single cost of a standalone start (a CPU profile of one 1,000-route start: ~18 % of the
 * controller's CPU, more than the first reconcile).
 */
function loadKubernetesRunner(): typeof import('./run-kubernetes').runKubernetes {
  return (require('./run-kubernetes') as typeof import('./run-kubernetes')).runKubernetes;
}

export function main(argv: string[]): Promise<number> {
  return runCommand(argv, {
    name: 'portcullis-controller',
    component: 'controller',
    usage: USAGE,
    parse: parseArgs,
    run: (options, log) => {
      limitHeapGrowth();
      return options.provider === 'kubernetes' ? loadKubernetesRunner()(options, log) : runFileProvider(options, log);
    },
  });
}

// Run when executed (tsx controller/src/cli.ts) or required by bin/portcullis-controller.js.
if (require.main === module || require.main?.filename.endsWith('portcullis-controller.js')) exitWith('portcullis-controller', main(process.argv.slice(2)));
