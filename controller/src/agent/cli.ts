/**
 * portcullis-agent: runs next to nginx in a Gateway's data-plane pod. It receives the
 * Gateway's rendered config from the controller (configserver/), applies it to the nginx it
 * runs (apply/), reports the outcome, and serves /healthz, /readyz and /metrics.
 */
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { LOG_LEVELS, type Logger, type LogLevel } from '../log';
import { exitWith, logLevelFlag, readFlags, runCommand, untilSignalled, UsageError } from '../command';
import { NginxProcess } from '../apply/nginx';
import { defaultNginxBinary } from '../apply/nginx-binary';
import { prefixLayout } from '../render';
import { AgentChannel } from './channel';
import { AgentLoop } from './agent';
import { AgentMetrics } from './metrics';
import { InferenceHop } from '../inference/hop';

export const USAGE = `Usage: portcullis-agent --server=URL --gateway=NAMESPACE/NAME --token-file=FILE [options]

Runs nginx for one Gateway: receives the Gateway's configuration from the Portcullis
controller, applies it (nginx -t, reload; a refused config leaves the last good one serving)
and reports the outcome, which becomes the Gateway's Programmed condition.

Options:
  --server=URL             the controller's config server (https://...)
  --gateway=NS/NAME        the Gateway this data plane serves
  --token-file=FILE        ServiceAccount token (audience portcullis-agent), re-read on
                           every connect
  --ca-file=FILE           CA bundle to verify the config server with (default: system roots)
  --prefix=DIR             nginx prefix: config generations, logs, temp files, sockets
                           (default /var/run/portcullis/nginx)
  --listen-address=ADDR    address nginx listens on for the listener ports (default 0.0.0.0)
  --health-address=H:P     /healthz, /readyz and /metrics (default 0.0.0.0:9113)
  --pod-name=NAME          this replica's name in reports (default $POD_NAME, else the host name)
  --nginx=PATH             nginx binary (default: see controller/src/apply/nginx-binary.ts:
                           $PORTCULLIS_NGINX, the cached 1.26.3 build, PATH, /usr/sbin/nginx)
  --endpoint-picker-disable-tls, --endpoint-picker-tls-verify, --endpoint-picker-ca-file=FILE
                           for InferencePool backends: the inference hop the agent runs
                           beside nginx once a config needs it (see portcullis-inference-hop)
  --shutdown-delay=D       on SIGTERM, how long nginx keeps serving new connections while
                           /readyz answers 503, before it quits gracefully (default 5s;
                           e.g. 0s, 1500ms): the pod's endpoint leaves the Service while
                           nginx still answers, so no connection is refused meanwhile
  --log-level=LEVEL        ${LOG_LEVELS.join(', ')} (default info); JSON lines on stderr
  -h, --help               show this help
`;

export interface AgentOptions {
  server: string;
  gateway: string;
  tokenFile: string;
  caFile?: string;
  prefix: string;
  listenAddress: string;
  healthAddress: string;
  podName: string;
  nginx?: string;
  logLevel: LogLevel;
  /** Milliseconds nginx keeps serving after SIGTERM (see --shutdown-delay). */
  shutdownDelayMs: number;
  help: boolean;
  picker: { disableTls: boolean; verify: boolean; caFile?: string };
}

export { UsageError };

const VALUES = ['server', 'gateway', 'token-file', 'ca-file', 'prefix', 'listen-address', 'health-address', 'pod-name', 'nginx', 'log-level', 'endpoint-picker-ca-file', 'shutdown-delay'];
const SWITCHES = ['endpoint-picker-disable-tls', 'endpoint-picker-tls-verify'];

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): AgentOptions {
  const values = readFlags(argv, { values: VALUES, switches: SWITCHES });
  const logLevel = logLevelFlag(values);
  const options: AgentOptions = {
    server: values.get('server') ?? '',
    gateway: values.get('gateway') ?? '',
    tokenFile: values.get('token-file') ?? '',
    caFile: values.get('ca-file'),
    prefix: values.get('prefix') ?? '/var/run/portcullis/nginx',
    listenAddress: values.get('listen-address') ?? '0.0.0.0',
    healthAddress: values.get('health-address') ?? '0.0.0.0:9113',
    podName: values.get('pod-name') ?? env.POD_NAME ?? os.hostname(),
    nginx: values.get('nginx'),
    logLevel,
    shutdownDelayMs: 5000,
    help: values.has('help'),
    picker: {
      disableTls: values.get('endpoint-picker-disable-tls') === 'true',
      verify: values.get('endpoint-picker-tls-verify') === 'true',
      caFile: values.get('endpoint-picker-ca-file'),
    },
  };
  if (options.help) return options;
  if (!options.server) throw new UsageError('--server=URL is required');
  try {
    const u = new URL(options.server);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error();
  } catch {
    throw new UsageError(`--server must be an http(s) URL, got "${options.server}"`);
  }
  if (!/^[^/]+\/[^/]+$/.test(options.gateway)) throw new UsageError(`--gateway must be NAMESPACE/NAME, got "${options.gateway}"`);
  if (!options.tokenFile) throw new UsageError('--token-file=FILE is required');
  if (!path.isAbsolute(options.prefix)) options.prefix = path.resolve(options.prefix);
  const delay = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(values.get('shutdown-delay') ?? '5s');
  if (!delay) throw new UsageError(`--shutdown-delay must be a duration such as 5s or 500ms, got "${values.get('shutdown-delay')}"`);
  options.shutdownDelayMs = Math.round(Number(delay[1]) * (delay[2] === 's' ? 1000 : 1));
  if (!/^(.*):(\d+)$/.test(options.healthAddress)) throw new UsageError(`--health-address must be HOST:PORT, got "${options.healthAddress}"`);
  return options;
}

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function runAgent(options: AgentOptions, log: Logger): Promise<number> {
  const binary = options.nginx ?? defaultNginxBinary();
  if (!fs.existsSync(binary)) throw new Error(`nginx binary ${binary} not found (pass --nginx=PATH)`);
  if (!fs.existsSync(options.tokenFile)) throw new Error(`token file ${options.tokenFile} not found`);
  const nginx = new NginxProcess({ prefix: options.prefix, binary, log });
  const layout = prefixLayout(options.prefix);
  const metrics = new AgentMetrics(() => layout.statusSocket);
  const channel = new AgentChannel({
    server: options.server,
    gateway: options.gateway,
    pod: options.podName,
    tokenFile: options.tokenFile,
    caFile: options.caFile,
    variant: { prefix: layout.prefix, listenAddress: options.listenAddress },
    log,
  });
  channel.onConnection((c) => metrics.connected.set(c ? 1 : 0));
  // InferencePool rules proxy to the inference hop on a unix socket under the prefix: run it
  // in this process once a config needs it (the controller renders that upstream only then).
  let hop: InferenceHop | undefined;
  const applier = {
    apply: async (config: { files: Record<string, string> }) => {
      if (!hop && Object.values(config.files).some((f) => f.includes('upstream portcullis_inference_hop'))) {
        fs.mkdirSync(layout.runDir, { recursive: true });
        const h = new InferenceHop({
          socket: layout.inferenceHopSocket,
          log,
          picker: {
            tls: !options.picker.disableTls,
            verify: options.picker.verify,
            ca: options.picker.caFile ? fs.readFileSync(options.picker.caFile) : undefined,
          },
        });
        log.info('inference hop listening', { component: 'agent', address: await h.listen() });
        hop = h;
      }
      return nginx.apply(config);
    },
  };
  const loop = new AgentLoop(applier, channel, log, metrics);

  const healthServer = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const nginxUp = alive(nginx.pid);
    if (url === '/healthz') {
      // Once nginx ran, a dead nginx is a dead data plane: let the kubelet restart the pod.
      const ok = loop.live === undefined || nginxUp;
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : 'nginx is not running\n');
    } else if (url === '/readyz') {
      const ok = loop.live !== undefined && nginxUp && !draining;
      const why = draining ? 'shutting down\n' : 'no configuration applied yet\n';
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? `ok ${loop.live}\n` : why);
    } else if (url === '/metrics') {
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        (err: Error) => res.writeHead(500).end(err.message),
      );
    } else res.writeHead(404).end();
  });
  const m = /^(.*):(\d+)$/.exec(options.healthAddress)!;
  await new Promise<void>((resolve, reject) => {
    healthServer.once('error', reject);
    healthServer.listen(Number(m[2]), m[1].replace(/^\[|\]$/g, ''), () => resolve());
  });
  log.info('agent starting', { component: 'agent', gateway: options.gateway, server: options.server, pod: options.podName, prefix: layout.prefix, health: options.healthAddress });

  let stopping: Promise<number> | undefined;
  // SIGTERM is the pod being deleted (scale-down, rollout, eviction): the kubelet signals and
  // the endpoint controller marks the endpoint terminating at the same time, and proxies keep
  // sending new connections here until they have seen that. An nginx that quits at once
  // refuses them. So it keeps serving (and applying configs) for the shutdown delay while
  // /readyz says 503, then quits gracefully, finishing the requests and streams it holds.
  let draining = false;
  const stop = (signal: string): Promise<number> => {
    stopping ??= (async () => {
      const delayMs = signal === 'SIGTERM' && loop.live !== undefined ? options.shutdownDelayMs : 0;
      log.info('stopping', { component: 'agent', signal, delayMs });
      // A repeated SIGTERM must not end the process mid-drain (Node's default), orphaning nginx.
      process.on('SIGTERM', () => log.info('already stopping', { component: 'agent' }));
      draining = true;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      channel.stop();
      loop.stop();
      await loop.idle();
      await nginx.stop();
      await hop?.close();
      healthServer.close();
      return 0;
    })();
    return stopping;
  };
  const done = untilSignalled(stop);
  void channel.run(() => loop.live, (frame) => loop.frame(frame));
  return done;
}

export function main(argv: string[]): Promise<number> {
  return runCommand(argv, { name: 'portcullis-agent', component: 'agent', usage: USAGE, parse: (a) => parseArgs(a), run: runAgent });
}

if (require.main === module || require.main?.filename.endsWith('portcullis-agent.js')) exitWith('portcullis-agent', main(process.argv.slice(2)));
