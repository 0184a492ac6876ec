/**
 * NginxProcess: runs one nginx master (`nginx -p <prefix> -g 'daemon off;'`) and applies
 * rendered configs to it.
 *
 * apply(): write the files into a new generation dir, switch the <prefix>/conf symlink, SIGHUP
 * the master, hand over from the old workers as soon as the new ones exist, then wait until the
 * private status endpoint answers with the new generation's token (only new workers know it:
 * the reload has taken effect). If nginx refuses the reload, the previous generation stays live
 * and serving, and the result carries nginx's message. nginx logs to stderr too; every line
 * reaches the Logger.
 *
 * No `nginx -t` before a reload: the reload is itself the check. nginx's master parses the new
 * config completely before it changes anything, and a config it rejects (syntax, a directive's
 * value, a port it cannot bind) leaves the running workers and their config untouched; a
 * separate `nginx -t` parsed the same files once more (at 1,000 routes on one host, ~70 ms of a
 * change's time). The first start, when there is no running config to keep, is checked with
 * `nginx -t` so a refused config starts nothing. `checkBeforeReload` restores the check of the
 * server blocks that differ from the live ones (apply/check.ts).
 */
import * as fs from 'fs';
import * as http from 'http';
import * as path from 'path';
import execa from 'execa';
import type { Logger } from '../log';
import { GENERATION_CONF, MAIN_CONF, prefixLayout, renderGeneration, type PrefixLayout, type RenderedConfig } from '../render';
import { FATAL_LEVELS, forward, lineSplitter, testMessage, type NginxLogLine } from './errorlog';
import { accepting, alive, childPids } from './procs';
import { blockedAncestor, ensurePrefixDirs, liveDir, pruneGenerations, switchLive, writeGeneration } from './files';
import { CHECK_CONF, partialCheck } from './check';
import { bindFailures, type PortFailure } from './ports';

/**
 * A refused configuration carries nginx's message and, when nginx could not listen on some
 * ports (apply/ports.ts), those ports: the rest of the configuration was not at fault.
 */
export type ApplyResult = { ok: true } | { ok: false; message: string; portFailures?: PortFailure[] };

export interface NginxProcessOptions {
  prefix: string;
  /** nginx binary; default 'nginx'. */
  binary?: string;
  log: Logger;
  /** How long to wait for nginx to serve a new generation; default 15 s. */
  readyTimeoutMs?: number;
  /** `nginx -t` the changed server blocks before each reload too (default false: see above). */
  checkBeforeReload?: boolean;
}

/**
 * glibc malloc tuning for nginx: every `map` block allocates and frees ~1 MB of temporary hash
 * arrays while the config is parsed; by default glibc hands that memory back to the kernel each
 * time (brk down, brk up, zero pages again). Keeping a padded heap makes `nginx -t` and reloads
 * of large configs several times cheaper (1,000 routes: 0.9 s -> 0.2 s CPU).
 */
const NGINX_ENV = { MALLOC_TOP_PAD_: String(16 * 1024 * 1024), MALLOC_TRIM_THRESHOLD_: String(128 * 1024 * 1024) };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A delay that does not keep the Node process alive (used in races with an exit). */
const idle = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

export class NginxProcess {
  private readonly layout: PrefixLayout;
  private readonly binary: string;
  private readonly log: Logger;
  private readonly readyTimeoutMs: number;
  private readonly checkBeforeReload: boolean;
  private child?: execa.ExecaChildProcess;
  private exited?: Promise<void>;
  private generation = 0;
  /** Workers the live generation runs (from its start or last reload); 0 = unknown. */
  private workers = 0;
  private lastFiles?: Record<string, string>;
  private readonly lineListeners = new Set<(line: NginxLogLine) => void>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: NginxProcessOptions) {
    this.layout = prefixLayout(options.prefix);
    this.binary = options.binary ?? 'nginx';
    this.log = options.log;
    this.readyTimeoutMs = options.readyTimeoutMs ?? 15000;
    this.checkBeforeReload = options.checkBeforeReload ?? false;
  }

  /** The nginx master's pid while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(config: RenderedConfig): Promise<ApplyResult> {
    return this.serialise(() => (this.child ? this.doApply(config) : this.doStart(config)));
  }

  apply(config: RenderedConfig): Promise<ApplyResult> {
    return this.serialise(() => (this.child ? this.doApply(config) : this.doStart(config)));
  }

  stop(): Promise<void> {
    return this.serialise(() => this.doStop());
  }

  private serialise<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private token(): string {
    return `${process.pid}-${Date.now()}-${this.generation}`;
  }

  /** Writes and checks one generation; returns its dir, or nginx's message. */
  private async stage(config: RenderedConfig): Promise<{ dir: string; token: string } | { message: string }> {
    ensurePrefixDirs(this.layout);
    this.generation += 1;
    const token = this.token();
    // While nginx runs, the reload checks (see the top of this file).
    if (this.child && !this.checkBeforeReload) {
      return { dir: writeGeneration(this.layout, String(this.generation), { ...config.files, [GENERATION_CONF]: renderGeneration(token) }), token };
    }
    // With the check, the live generation's server blocks need no second one.
    const partial = this.child ? partialCheck(this.lastFiles, config.files) : undefined;
    const files = { ...config.files, [GENERATION_CONF]: renderGeneration(token), ...(partial?.files ?? {}) };
    const dir = writeGeneration(this.layout, String(this.generation), files);
    if (partial) this.log.debug('nginx -t reads the changed server blocks only', { component: 'nginx', changed: partial.changed, servers: partial.total, newLocations: partial.newLocations });
    const res = await execa(this.binary, ['-t', '-q', '-p', this.layout.prefix + '/', '-e', 'stderr', '-c', path.join(dir, partial ? CHECK_CONF : MAIN_CONF)], {
      reject: false,
      all: true,
      env: NGINX_ENV,
    });
    if (res.exitCode !== 0) {
      fs.rmSync(dir, { recursive: true, force: true });
      const message = testMessage(res.all ?? res.stderr ?? '');
      this.log.warn('nginx rejected the new configuration; the last good one keeps serving', { component: 'nginx', message });
      return { message };
    }
    for (const line of (res.all ?? '').split('\n')) forward(this.log, line);
    return { dir, token };
  }

  private async doStart(config: RenderedConfig): Promise<ApplyResult> {
    const staged = await this.stage(config);
    if ('message' in staged) return { ok: false, message: staged.message };
    await this.stopStale();
    const blocked = blockedAncestor(this.layout);
    if (blocked) {
      this.log.warn(
        `nginx workers (user nobody) cannot pass through ${blocked}: request bodies and responses too large for memory will fail; give it search permission (chmod o+x)`,
        { component: 'nginx' },
      );
    }
    switchLive(this.layout, staged.dir);
    const child = execa(this.binary, ['-p', this.layout.prefix + '/', '-e', 'stderr', '-c', this.layout.mainConf, '-g', 'daemon off;'], {
      detached: true, // its own process group, so stop() can reach workers too
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      env: NGINX_ENV,
    });
    this.child = child;
    const onChunk = lineSplitter((line) => {
      const parsed = forward(this.log, line);
      if (parsed) for (const l of this.lineListeners) l(parsed);
    });
    child.stderr?.on('data', onChunk);
    child.stdout?.on('data', onChunk);
    this.exited = new Promise<void>((resolve) => {
      child.on('exit', (code, signal) => {
        if (this.child === child) {
          this.child = undefined;
          this.log.info('nginx exited', { component: 'nginx', code, signal });
        }
        resolve();
      });
    });
    const result = await this.waitServing(staged.token);
    if (!result.ok) {
      await this.doStop();
      return result;
    }
    this.lastFiles = config.files;
    pruneGenerations(this.layout, [staged.dir]);
    this.workers = childPids(child.pid!).length;
    this.log.info('nginx started', { component: 'nginx', pid: child.pid, prefix: this.layout.prefix });
    return { ok: true };
  }

  private async doApply(config: RenderedConfig): Promise<ApplyResult> {
    if (this.lastFiles && sameFiles(this.lastFiles, config.files)) return { ok: true };
    const t0 = Date.now();
    const previous = liveDir(this.layout);
    const staged = await this.stage(config);
    const t1 = Date.now();
    if ('message' in staged) return { ok: false, message: staged.message };
    switchLive(this.layout, staged.dir);
    const master = this.child!.pid!;
    const oldWorkers = childPids(master);
    const started = this.watchStarts(master);
    const waiting = this.waitServing(staged.token, started.up);
    process.kill(master, 'SIGHUP');
    const handover = this.handOver(master, oldWorkers, waiting, started);
    const result = await waiting;
    const forked = await handover;
    started.stop();
    const t2 = Date.now();
    // Old workers stop accepting as soon as they start shutting down, a moment after the new
    // ones are up: wait for that so the very next request is answered by the new config (not
    // for them to exit: one carrying a long-lived stream lives on until the stream ends).
    if (result.ok) {
      const deadline = Date.now() + 500;
      while (Date.now() < deadline && oldWorkers.some(accepting)) await sleep(5);
      // nginx retitles a worker just before it closes its listening sockets.
      if (oldWorkers.some(alive)) await sleep(2);
    }
    if (!result.ok) {
      // nginx kept its old workers: point the live config back at what they run.
      if (previous) switchLive(this.layout, previous);
      fs.rmSync(staged.dir, { recursive: true, force: true });
      return result;
    }
    this.lastFiles = config.files;
    pruneGenerations(this.layout, [staged.dir]);
    // reloadMs: the signal until the new workers answer, of which forkMs until they exist (the
    // master parsed the config and forked them).
    this.log.debug('nginx reloaded', { component: 'nginx', checkMs: t1 - t0, reloadMs: t2 - t1, forkMs: forked === undefined ? undefined : forked - t1, drainMs: Date.now() - t2 });
    return { ok: true };
  }

  /**
   * After a reload, nginx's master starts the new workers and only 100 ms later tells the old
   * ones to quit; meanwhile the old ones, first in the kernel's accept queue, keep taking the new
   * connections with the old config. Once the new workers exist (the master parsed the config
   * and forked them), send the old ones the same graceful quit ourselves: they stop accepting,
   * finish their requests and exit, and the master (which marks them exiting when its 100 ms
   * are up) does not respawn them. A refused reload starts no workers: nothing is signalled.
   */
  private async handOver(master: number, oldWorkers: number[], served: Promise<ApplyResult>, started: WorkerStarts): Promise<number | undefined> {
    // Until the reload is known to have failed (then no new workers come), or 2 s have passed.
    let failed = false;
    void served.then((r) => (failed = !r.ok));
    const deadline = Date.now() + 2000;
    const old = new Set(oldWorkers);
    // Workers of an earlier generation may still be finishing long requests: count only as many
    // new workers as the live generation had.
    const expected = this.workers || oldWorkers.length;
    started.expect(expected);
    while (!failed && Date.now() < deadline && oldWorkers.some(alive)) {
      // The master's "start worker process N" lines say it at once; /proc is read too, slowly,
      // in case its log does not reach us (an error_log level above notice).
      const fresh = started.pids.length >= expected ? started.pids : childPids(master).filter((p) => !old.has(p));
      if (fresh.length >= expected) {
        this.workers = fresh.length;
        for (const pid of oldWorkers) {
          try {
            process.kill(pid, 'SIGQUIT');
          } catch {
            /* already gone */
          }
        }
        return Date.now();
      }
      await Promise.race([started.up, sleep(20)]);
    }
    return undefined;
  }

  /**
   * Follows the master's log for the workers it starts after a reload. Until they exist, a
   * reload is the master parsing the config: polling then would only take CPU from it (on a busy
   * node the agent's polls competed with the parse they wait for).
   */
  private watchStarts(master: number): WorkerStarts {
    const pids: number[] = [];
    let expected = Infinity;
    let resolve!: () => void;
    const up = new Promise<void>((r) => (resolve = r));
    const onLine = (l: NginxLogLine) => {
      if (l.pid !== master) return;
      const m = /^start worker process (\d+)$/.exec(l.message);
      if (!m) return;
      pids.push(Number(m[1]));
      if (pids.length >= expected) resolve();
    };
    this.lineListeners.add(onLine);
    return {
      pids,
      up,
      expect: (n) => {
        expected = n;
        if (pids.length >= n) resolve();
      },
      stop: () => this.lineListeners.delete(onLine),
    };
  }

  /**
   * Resolves once the status endpoint answers `token`; fails on a fatal log line or exit. Polls
   * every 3 ms once `workersUp` (the new workers exist), every 25 ms before.
   */
  private waitServing(token: string, workersUp?: Promise<void>): Promise<ApplyResult> {
    return new Promise<ApplyResult>((resolve) => {
      let done = false;
      const fatal: string[] = [];
      const finish = (r: ApplyResult) => {
        if (done) return;
        done = true;
        this.lineListeners.delete(onLine);
        clearTimeout(timer);
        const portFailures = r.ok ? [] : bindFailures(r.message);
        resolve(!r.ok && portFailures.length > 0 ? { ...r, portFailures } : r);
      };
      const onLine = (l: NginxLogLine) => {
        if (!FATAL_LEVELS.has(l.level)) return;
        // nginx retries a failed bind() for about 2.5 s before it gives up on the reload (and
        // may still succeed if the port frees up): only "still could not bind()" is final.
        if (/bind\(\) to .* failed/.test(l.message)) {
          if (!fatal.includes(`[${l.level}] ${l.message}`)) fatal.push(`[${l.level}] ${l.message}`);
          return;
        }
        if (!/still could not bind/.test(l.message)) fatal.push(`[${l.level}] ${l.message}`);
        // Give nginx a moment to log the rest of the failure before reporting it.
        setTimeout(() => finish({ ok: false, message: fatal.join('; ') }), 50);
      };
      this.lineListeners.add(onLine);
      const timer = setTimeout(
        () => finish({ ok: false, message: fatal.join('; ') || `nginx did not serve the new configuration within ${this.readyTimeoutMs} ms` }),
        this.readyTimeoutMs,
      );
      const child = this.child;
      this.exited?.then(() => finish({ ok: false, message: fatal.join('; ') || 'nginx exited' }));
      let fast = !workersUp;
      void workersUp?.then(() => (fast = true));
      const poll = async () => {
        while (!done && this.child === child) {
          if ((await this.generationServed()) === token) return finish({ ok: true });
          if (fast) await sleep(3);
          else await Promise.race([sleep(25), workersUp]);
        }
      };
      void poll();
    });
  }

  private generationServed(): Promise<string | undefined> {
    return new Promise((resolve) => {
      // A fresh connection each time: a kept-alive one stays with an old worker, which answers
      // the old generation until nginx tells it to quit (100 ms after the new workers start).
      const req = http.get({ socketPath: this.layout.statusSocket, path: '/generation', timeout: 1000, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
        res.on('error', () => resolve(undefined));
      });
      req.on('error', () => resolve(undefined));
      req.on('timeout', () => req.destroy());
    });
  }

  private async doStop(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    const group = -child.pid;
    try {
      process.kill(child.pid, 'SIGQUIT'); // graceful: finish in-flight requests
    } catch {
      /* already gone */
    }
    const exited = await Promise.race([this.exited!.then(() => true), idle(10000).then(() => false)]);
    if (!exited) {
      this.log.warn('nginx did not quit within 10 s; killing it', { component: 'nginx', pid: child.pid });
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      await Promise.race([this.exited, idle(3000)]);
    }
    // Workers of a master that died abruptly would keep serving: end the whole group.
    for (let i = 0; i < 50 && alive(group); i++) {
      try {
        process.kill(group, i < 20 ? 'SIGQUIT' : 'SIGKILL');
      } catch {
        break;
      }
      await sleep(100);
    }
    this.child = undefined;
    this.lastFiles = undefined;
  }

  /**
   * A master left running by an earlier controller on the same prefix would hold the ports; one
   * that was killed outright (SIGKILL, a crash, a power cut) leaves its unix socket file behind,
   * and nginx then refuses to start with "Address already in use" until someone deletes it.
   */
  private async stopStale(): Promise<void> {
    const owner = this.staleMaster();
    if (owner !== undefined) {
      this.log.warn('stopping an nginx left running on this prefix', { component: 'nginx', pid: owner });
      process.kill(owner, 'SIGQUIT');
      for (let i = 0; i < 100 && alive(owner); i++) await sleep(100);
      if (alive(owner)) process.kill(owner, 'SIGKILL');
    }
    removeStaleSocket(this.layout.statusSocket);
  }

  /** The pid of a live nginx master serving this prefix, from its pid file. */
  private staleMaster(): number | undefined {
    let pid: number;
    try {
      pid = Number(fs.readFileSync(this.layout.pidFile, 'utf8').trim());
    } catch {
      return undefined;
    }
    if (!Number.isInteger(pid) || pid <= 1 || !alive(pid)) return undefined;
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      return cmdline.includes('nginx') && cmdline.includes(this.layout.prefix) ? pid : undefined;
    } catch {
      return undefined;
    }
  }
}

interface WorkerStarts {
  /** Workers the master said it started since the signal. */
  pids: number[];
  /** Resolves when `expect`'s count have started. */
  up: Promise<void>;
  expect(count: number): void;
  stop(): void;
}

function sameFiles(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/** Deletes a unix socket file no process listens on any more (only a socket: never another file). */
function removeStaleSocket(file: string): void {
  try {
    if (fs.lstatSync(file).isSocket()) fs.unlinkSync(file);
  } catch {
    // absent already
  }
}
