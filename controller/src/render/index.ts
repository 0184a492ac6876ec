/**
 * renderConfig: NginxModel -> config files, through templates/*.hbs. Paths in RenderedConfig
 * are relative to the config directory (<prefix>/conf); `nginx.conf` is the main file and
 * includes the others by relative path, so a staged copy can be checked with `nginx -t`.
 */
import type { NginxModel } from '../model/types';
import { NOT_FOUND_LOCATION } from '../model/locations';
import { DISPATCH_KEY_VARIABLE } from '../model/matching';
import { STREAM_REJECT_VARIABLE } from '../model/streams';
import { GENERATION_CONF, MAIN_CONF, MAX_UNIX_SOCKET_PATH, prefixLayout } from './layout';
import { serversRenderer, templates } from './templates';
import { endLocationRender } from './location-cache';

export { prefixLayout, MAIN_CONF, GENERATION_CONF, type PrefixLayout } from './layout';

export interface RenderOptions {
  listenAddress: string;
  /** nginx -p dir; logs, pid, temp files and sockets live under it. */
  prefix: string;
  /** nginx error_log level (debug, info, notice, warn, error, crit, alert, emerg); default notice. */
  errorLogLevel?: string;
  /** worker_processes; default 'auto'. */
  workerProcesses?: number | 'auto';
  /** Write an access log into <prefix>/logs/access.log; default true. */
  accessLog?: boolean;
  /** Where the inference hop listens: host:port or unix:/path (default unix:<prefix>/run/inference-hop.sock). */
  inferenceHop?: string;
  /**
   * The binary's modules with temp files besides proxy (apply/nginx-binary.ts, from `nginx -V`),
   * whose temp paths go under the prefix too: Debian's nginx has them; default none, as the
   * project's build (scripts/build-nginx.sh), which refuses their directives.
   */
  tempPathModules?: readonly ('fastcgi' | 'uwsgi' | 'scgi')[];
}

export interface RenderedConfig {
  files: Record<string, string>;
}

const ERROR_LOG_LEVELS = ['debug', 'info', 'notice', 'warn', 'error', 'crit', 'alert', 'emerg'];

function hashSize(n: number, minimum: number): number {
  let size = minimum;
  while (size < n * 2) size *= 2;
  return size;
}

/**
 * A hash bucket size (server_names_hash_bucket_size, map_hash_bucket_size) for the longest key:
 * one bucket must hold at least one entry (a pointer and the key with two bytes,
 * pointer-aligned) and its end marker, else nginx refuses the configuration ("could not build
 * server_names_hash" / "map_hash"). A hostname may have 253 characters; nginx's defaults hold
 * 238 (256) and 46 (64).
 */
function hashBucketSize(keys: Iterable<string>, minimum: number): number {
  let longest = 0;
  for (const k of keys) if (k.length > longest) longest = k.length;
  const needed = 8 + Math.ceil((longest + 2) / 8) * 8 + 8;
  let size = minimum;
  while (size < needed) size *= 2;
  return size;
}

export function renderConfig(model: NginxModel, options: RenderOptions): RenderedConfig {
  const context = renderContext(model, options);
  const t = templates();
  const servers = serversRenderer().render(context);
  endLocationRender();
  return {
    files: {
      [MAIN_CONF]: t['nginx.conf'](context),
      'maps.conf': t['maps.conf'](context),
      'upstreams.conf': t['upstreams.conf'](context),
      'servers.conf': servers,
      [GENERATION_CONF]: t['generation.conf'](context),
      ...(model.stream ? { 'stream.conf': t['stream.conf'](context) } : {}),
      ...model.secretFiles,
    },
  };
}

/** What the templates see: the model and the options, checked. */
export function renderContext(model: NginxModel, options: RenderOptions) {
  const layout = prefixLayout(options.prefix);
  if (Buffer.byteLength(layout.statusSocket) > MAX_UNIX_SOCKET_PATH) {
    throw new Error(`nginx prefix ${layout.prefix} is too long for a unix socket path (${layout.statusSocket})`);
  }
  const errorLogLevel = options.errorLogLevel ?? 'notice';
  if (!ERROR_LOG_LEVELS.includes(errorLogLevel)) {
    throw new Error(`errorLogLevel must be one of ${ERROR_LOG_LEVELS.join(', ')}, got ${JSON.stringify(errorLogLevel)}`);
  }
  const workers = options.workerProcesses ?? 'auto';
  if (workers !== 'auto' && !(Number.isInteger(workers) && workers > 0)) {
    throw new Error(`workerProcesses must be 'auto' or a positive integer, got ${JSON.stringify(workers)}`);
  }
  return {
    ...model,
    layout,
    listenAddress: options.listenAddress,
    // Not `inferenceHop`: that is the model's flag (some rule uses the hop), which this must not shadow.
    inferenceHopAddress: options.inferenceHop ?? `unix:${layout.inferenceHopSocket}`,
    moduleTempPaths: (options.tempPathModules ?? []).map((m) => ({ directive: `${m}_temp_path`, path: layout.temp[m] })),
    errorLogLevel,
    workerProcesses: String(workers),
    workerConnections: 4096,
    accessLog: options.accessLog ?? true,
    variablesHashMaxSize: hashSize(model.maps.length + (model.dispatchMaps?.length ?? 0) + model.splitClients.length + 64, 1024),
    serverNamesHashMaxSize: hashSize(model.servers.length, 512),
    serverNamesHashBucketSize: hashBucketSize(model.servers.flatMap((s) => s.serverNames), 256),
    streamMapHashBucketSize: hashBucketSize((model.stream?.maps ?? []).flatMap((m) => m.entries.map((e) => e.name)), 64),
    // Twice the largest map's entries: with nginx's default 2,048, a map of ~800 SNI names finds
    // no size that fits its buckets and nginx warns on every reload that it built a slower hash.
    streamMapHashMaxSize: hashSize(2 * Math.max(0, ...(model.stream?.maps ?? []).map((m) => m.entries.length)), 2048),
    generationConf: GENERATION_CONF,
    generation: '0',
    notFoundLocation: NOT_FOUND_LOCATION,
    dispatchKeyVariable: DISPATCH_KEY_VARIABLE,
    rejectVariable: STREAM_REJECT_VARIABLE,
  };
}

/** The generation file NginxProcess writes so it can see when a reload has taken effect. */
export function renderGeneration(generation: string): string {
  return templates()['generation.conf']({ generation });
}
