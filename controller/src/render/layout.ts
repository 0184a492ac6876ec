/**
 * Where things live under the nginx prefix (`nginx -p <prefix>`). Everything nginx writes stays
 * in the prefix, so nginx runs from any directory without touching /var or /etc.
 *
 *   <prefix>/conf         -> symlink to the live config generation (conf.d-<n>/)
 *   <prefix>/logs/        error.log, access.log
 *   <prefix>/run/         nginx.pid, status.sock (the controller's private status endpoint)
 *   <prefix>/temp/<kind>  body and proxy temp files
 */
import * as path from 'path';

/** Linux sun_path is 108 bytes including the terminating NUL. */
export const MAX_UNIX_SOCKET_PATH = 107;

export interface PrefixLayout {
  prefix: string;
  confLink: string;
  mainConf: string;
  logsDir: string;
  errorLog: string;
  accessLog: string;
  runDir: string;
  pidFile: string;
  statusSocket: string;
  /** Where the inference hop listens (InferencePool backends). */
  inferenceHopSocket: string;
  tempDir: string;
  temp: { clientBody: string; proxy: string; fastcgi: string; uwsgi: string; scgi: string };
}

export function prefixLayout(prefix: string): PrefixLayout {
  const p = path.resolve(prefix);
  const temp = path.join(p, 'temp');
  return {
    prefix: p,
    confLink: path.join(p, 'conf'),
    mainConf: path.join(p, 'conf', 'nginx.conf'),
    logsDir: path.join(p, 'logs'),
    errorLog: path.join(p, 'logs', 'error.log'),
    accessLog: path.join(p, 'logs', 'access.log'),
    runDir: path.join(p, 'run'),
    pidFile: path.join(p, 'run', 'nginx.pid'),
    statusSocket: path.join(p, 'run', 'status.sock'),
    inferenceHopSocket: path.join(p, 'run', 'inference-hop.sock'),
    tempDir: temp,
    temp: {
      clientBody: path.join(temp, 'client_body'),
      proxy: path.join(temp, 'proxy'),
      fastcgi: path.join(temp, 'fastcgi'),
      uwsgi: path.join(temp, 'uwsgi'),
      scgi: path.join(temp, 'scgi'),
    },
  };
}

/** The main file's name inside the config directory; RenderedConfig paths are relative to it. */
export const MAIN_CONF = 'nginx.conf';
/** Rewritten by NginxProcess on every apply so it can tell when the new generation serves. */
export const GENERATION_CONF = 'generation.conf';
