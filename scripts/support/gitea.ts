/**
 * A real Gitea 1.27.3 for side-by-side benchmarks and comparisons, started through
 * ../shared/tools/gitea/start.sh (the binary is built by its build.sh, cached in
 * ~/.cache/portcullis-gitea). A reference only: no test and no product code depends on it.
 *
 *   const gitea = await startGitea({ database: 'sqlite' });      // or { database: 'postgres', databaseUrl }
 *   await fetch(`${gitea.url}/api/v1/user`, { headers: { authorization: `token ${gitea.token}` } });
 *   await gitea.restart();   // e.g. after loading rows into its database directly
 *   await gitea.stop();      // keeps nothing unless keepDir
 *
 * `token` belongs to the admin `root` (scopes `all`); `dbFile` is the SQLite file (database
 * 'sqlite'), for direct loads while Gitea is stopped.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../e2e/support/ports';

const run = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '..', '..');

export const GITEA_TOOLS = process.env.GITEA_TOOLS ?? path.join(os.homedir(), '.cache', 'portcullis-gitea');
export const GITEA_VERSION = process.env.GITEA_VERSION ?? 'v1.27.3';
export const GITEA_BIN = process.env.GITEA_BIN ?? path.join(GITEA_TOOLS, `gitea-${GITEA_VERSION}`);
export const GITEA_ADMIN = { username: 'root', password: process.env.GITEA_ADMIN_PASSWORD ?? 'portcullis-root-1' };

/** ../shared/tools/gitea from the repository root (or from its parent, for a checkout nested one level deeper). */
export function sharedGiteaTools(): string | undefined {
  if (process.env.PORTCULLIS_SHARED_DIR) return path.join(process.env.PORTCULLIS_SHARED_DIR, 'tools', 'gitea');
  for (let dir = path.dirname(REPO_ROOT); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared', 'tools', 'gitea');
    if (existsSync(path.join(candidate, 'start.sh'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Why a Gitea cannot be started here, or undefined when it can. */
export function giteaMissing(): string | undefined {
  const tools = sharedGiteaTools();
  if (!tools) return 'the shared Gitea tools (../shared/tools/gitea) are not beside the repository';
  if (!existsSync(GITEA_BIN)) return `${GITEA_BIN} is missing (build it with ${tools}/build.sh)`;
  return undefined;
}

export interface GiteaOptions {
  /** sqlite (default) or postgres (then databaseUrl: postgres://USER:PASS@HOST:PORT/DB?sslmode=disable, an existing empty database). */
  database?: 'sqlite' | 'postgres';
  databaseUrl?: string;
  port?: number;
  /** State directory; a new temporary one by default (removed by stop() unless keepDir). */
  dir?: string;
  keepDir?: boolean;
  /** Extra app.ini text (later keys win), e.g. "[api]\nMAX_RESPONSE_ITEMS = 50\n". */
  extraIni?: string;
}

export interface Gitea {
  url: string;
  port: number;
  dir: string;
  pid: number;
  /** The admin's token (scopes: all). */
  token: string;
  admin: { username: string; password: string };
  /** The SQLite database file (database 'sqlite'). */
  dbFile: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function startScript(tools: string, port: number, dir: string, opts: GiteaOptions): Promise<number> {
  const env: NodeJS.ProcessEnv = { ...process.env, GITEA_BIN, GITEA_VERSION, GITEA_TOOLS, DATABASE: opts.database ?? 'sqlite' };
  delete env.DATABASE_URL; // the forge's variable: Gitea's start.sh reads GITEA_DATABASE_URL only
  if (opts.database === 'postgres') env.GITEA_DATABASE_URL = opts.databaseUrl;
  if (opts.extraIni) {
    const file = path.join(dir, 'extra.ini');
    writeFileSync(file, opts.extraIni);
    env.GITEA_EXTRA_INI = file;
  }
  try {
    const { stdout } = await run('bash', [path.join(tools, 'start.sh'), String(port), dir], { env, maxBuffer: 1 << 20 });
    return Number(stdout.trim().split('\n').pop());
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`gitea start.sh failed: ${e.stderr ?? e.message}`);
  }
}

export async function startGitea(opts: GiteaOptions = {}): Promise<Gitea> {
  const missing = giteaMissing();
  if (missing) throw new Error(missing);
  const tools = sharedGiteaTools()!;
  const port = opts.port ?? (await freePort());
  const dir = opts.dir ?? mkdtempSync(path.join(os.tmpdir(), 'gitea-ref-'));
  const url = `http://127.0.0.1:${port}`;
  const pid = await startScript(tools, port, dir, opts);
  const basic = `Basic ${Buffer.from(`${GITEA_ADMIN.username}:${GITEA_ADMIN.password}`).toString('base64')}`;
  const res = await fetch(`${url}/api/v1/users/${GITEA_ADMIN.username}/tokens`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `ref-${Date.now().toString(36)}`, scopes: ['all'] }),
  });
  if (res.status !== 201) throw new Error(`gitea token: ${res.status} ${await res.text()}`);
  const { sha1 } = (await res.json()) as { sha1: string };
  const gitea: Gitea = {
    url,
    port,
    dir,
    pid,
    token: sha1,
    admin: GITEA_ADMIN,
    dbFile: path.join(dir, 'data', 'gitea.db'),
    async restart() {
      await run('bash', [path.join(tools, 'stop.sh'), dir]);
      gitea.pid = await startScript(tools, port, dir, opts);
    },
    async stop() {
      await run('bash', [path.join(tools, 'stop.sh'), dir]).catch(() => undefined);
      if (!opts.keepDir && !opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return gitea;
}

/** Resident set size of a process in MiB (Linux /proc), or null when it is gone. */
/**
 * Proportional set size: resident pages, each shared page divided among the processes sharing
 * it. Summed over a server's processes it counts the node (or git) binary's pages once, where a
 * sum of resident sizes counts them in every process that maps them.
 */
export function pssMiB(pid: number): number | null {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

export function rssMiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}
