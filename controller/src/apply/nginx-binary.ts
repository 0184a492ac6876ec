/**
 * Which nginx the controller, the tests and the benchmarks run: decided here only.
 *
 *   1. $PORTCULLIS_NGINX (a path), else $NGINX_BINARY (the older name, still honoured);
 *   2. the build scripts/build-nginx.sh caches (~/.cache/portcullis-nginx/lean/sbin/nginx,
 *      or under $PORTCULLIS_CACHE): nginx 1.26.3, the version the project ships and tests;
 *   3. nginx on the PATH, else /usr/sbin/nginx (Debian's; root's PATH may lack /usr/sbin).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * Where scripts/build-nginx.sh links its latest build: `lean` since nginx is built without the
 * modules the config never uses. `current`, the link of the earlier full build, is left to older
 * checkouts sharing the cache (their configs set fastcgi_temp_path, which the lean build lacks);
 * it is only a fallback here.
 */
export function cachedNginxPath(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.PORTCULLIS_CACHE ?? path.join(os.homedir(), '.cache');
  const link = (name: string) => path.join(cache, 'portcullis-nginx', name, 'sbin', 'nginx');
  return fs.existsSync(link('lean')) || !fs.existsSync(link('current')) ? link('lean') : link('current');
}

export function defaultNginxBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PORTCULLIS_NGINX) return env.PORTCULLIS_NGINX;
  if (env.NGINX_BINARY) return env.NGINX_BINARY;
  const cached = cachedNginxPath(env);
  if (fs.existsSync(cached)) return cached;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, 'nginx'))) return path.join(dir, 'nginx');
  }
  return '/usr/sbin/nginx';
}

export interface NginxVersion {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

/** "nginx version: nginx/1.26.3" -> 1.26.3; undefined when the text holds no version. */
export function parseNginxVersion(output: string): NginxVersion | undefined {
  const m = /nginx\/(\d+)\.(\d+)\.(\d+)/.exec(output);
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), text: `${m[1]}.${m[2]}.${m[3]}` };
}

const versions = new Map<string, NginxVersion | undefined>();

/** The version `binary -v` prints (cached per binary); undefined when it cannot be run. */
export function nginxVersion(binary: string): NginxVersion | undefined {
  if (versions.has(binary)) return versions.get(binary);
  // nginx -v writes to stderr.
  const r = spawnSync(binary, ['-v'], { encoding: 'utf8' });
  const v = r.error ? undefined : parseNginxVersion(`${r.stderr ?? ''}${r.stdout ?? ''}`);
  versions.set(binary, v);
  return v;
}

/**
 * `http2 on` (nginx >= 1.25.1) serves HTTP/1.1 and HTTP/2 with prior knowledge (h2c, what gRPC
 * clients speak in plaintext) on one port. Older nginx only has `listen ... http2`, which
 * answers HTTP/1.1 requests with HTTP/2 frames.
 */
export function hasHttp2Directive(v: Pick<NginxVersion, 'major' | 'minor' | 'patch'> | undefined): boolean {
  if (!v) return true;
  if (v.major !== 1) return v.major > 1;
  return v.minor > 25 || (v.minor === 25 && v.patch >= 1);
}

/** nginx's modules with temp files of their own besides proxy (nginx.conf.hbs sets their paths). */
export const TEMP_PATH_MODULES = ['fastcgi', 'uwsgi', 'scgi'] as const;
export type TempPathModule = (typeof TEMP_PATH_MODULES)[number];

/**
 * Which of TEMP_PATH_MODULES a binary has, from the configure arguments `nginx -V` prints
 * (built in unless --without-http_<name>_module). Debian's nginx has all three, with temp paths
 * under /var/lib/nginx that a non-root nginx cannot create: the config moves them under the
 * prefix. scripts/build-nginx.sh builds none of them, and nginx refuses their directives then.
 */
export function parseTempPathModules(output: string): TempPathModule[] {
  return TEMP_PATH_MODULES.filter((m) => !output.includes(`--without-http_${m}_module`));
}

const modules = new Map<string, TempPathModule[]>();

/** TEMP_PATH_MODULES `binary` has (cached per binary); none when it cannot be run. */
export function nginxTempPathModules(binary: string): TempPathModule[] {
  let found = modules.get(binary);
  if (!found) {
    const r = spawnSync(binary, ['-V'], { encoding: 'utf8' });
    const out = `${r.stderr ?? ''}${r.stdout ?? ''}`;
    found = r.error || !/configure arguments:/.test(out) ? [] : parseTempPathModules(out);
    modules.set(binary, found);
  }
  return found;
}

/**
 * What the controller needs to know of the nginx binary that serves its config: whether it has
 * `http2 on` (older ones cannot mix h1 and h2c on a port), its version for messages, and which
 * modules with temp paths of their own it has.
 */
export function nginxCapabilities(binary: string): { http2On: boolean; version?: string; tempPathModules: TempPathModule[] } {
  const v = nginxVersion(binary);
  return { http2On: hasHttp2Directive(v), ...(v ? { version: v.text } : {}), tempPathModules: nginxTempPathModules(binary) };
}
