import { ChildProcess, spawn } from 'child_process';
import * as path from 'path';
import { atFileEnd } from './file-end';
import { followLogs, type LogLine } from './log-lines';
import { endNginx, isAlive, masterPid } from './nginx-master';

export { isAlive };

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO_ROOT, 'bin', 'portcullis-controller.js');

export type { LogLine };

export interface ControllerOptions {
  /** Standalone mode's folder; unused with `kubeconfig`. */
  manifestsDir: string;
  /** Run with --provider=kubernetes against this kubeconfig (nginx still local: --dataplane=local). */
  kubeconfig?: string;
  /** With `kubeconfig`: local (default) or agent (per-Gateway data planes, pass --agent-* in args). */
  dataplane?: 'local' | 'agent';
  stateDir: string;
  listenAddress?: string;
  logLevel?: string;
  nginx?: string;
  args?: string[];
}

export interface ControllerProcess {
  child: ChildProcess;
  stateDir: string;
  manifestsDir: string;
  /** Every JSON log line printed so far. */
  logs: LogLine[];
  /** Non-JSON stderr/stdout text (crashes, usage). */
  output: string[];
  /** Number of "reconciled" log lines so far. */
  reconciles(): number;
  /** Waits for a log line matching `predicate` (looking at lines already printed too). */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Waits until `count` reconciles have completed in total. */
  waitForReconciles(count: number, timeoutMs?: number): Promise<void>;
  /**
   * The port the controller bound for its health or metrics endpoint, from its start log: tests
   * pass port 0, because a port picked by the test and bound later by the controller can be taken
   * meanwhile by another suite's process.
   */
  boundPort(endpoint: 'health' | 'metrics'): Promise<number>;
  /**
   * Sends a signal and resolves with the exit code (or the signal name) once it exited and its
   * nginx is gone. `nginxGraceMs`: after that long, nginx's remaining sessions are ended (a fast
   * shutdown) instead of waiting out the controller's graceful quit, which lasts as long as a
   * session does (10 s and more for a UDP session): for teardowns, which wait for no request.
   */
  stop(signal?: NodeJS.Signals, timeoutMs?: number, nginxGraceMs?: number): Promise<number | string>;
  exited: Promise<number | string>;
}

/** The nginx master pid of a controller's state dir, if nginx wrote one. */
export function nginxPid(stateDir: string): Promise<number | undefined> {
  return masterPid(nginxPrefix(stateDir));
}

/** Where the controller runs nginx (`nginx -p`): controller/src/cli.ts puts it in the state dir. */
function nginxPrefix(stateDir: string): string {
  return path.join(stateDir, 'nginx');
}

/**
 * How long stop() lets the controller stop by itself before killing it: longer than its own
 * escalation (controller/src/apply/nginx.ts: 10 s of graceful quit for nginx's open requests,
 * 3 s of fast shutdown, then the process group), so that a controller is never killed while it
 * is still stopping its nginx.
 */
const STOP_TIMEOUT_MS = 20_000;

/**
 * Starts the real controller CLI (bin/portcullis-controller.js, TypeScript run by bin/typescript.js) in
 * standalone mode, exactly as a user would, and resolves after its first reconcile.
 */
export async function startController(options: ControllerOptions, waitFirstReconcile = true): Promise<ControllerProcess> {
  const args = [
    BIN,
    ...(options.kubeconfig
      ? ['--provider=kubernetes', `--kubeconfig=${options.kubeconfig}`, `--dataplane=${options.dataplane ?? 'local'}`]
      : ['--provider=file', `--manifests=${options.manifestsDir}`]),
    `--state-dir=${options.stateDir}`,
    `--listen-address=${options.listenAddress ?? '127.0.0.1'}`,
    `--log-level=${options.logLevel ?? 'debug'}`,
    ...(options.nginx ? [`--nginx=${options.nginx}`] : []),
    ...(options.args ?? []),
  ];
  // E2E_CONTROLLER_NODE_ARGS: node flags for the controller (e.g. --cpu-prof when profiling a bench).
  const nodeArgs = (process.env.E2E_CONTROLLER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1));
  });
  const follower = followLogs(child, exited, { name: 'controller', echo: process.env.E2E_CONTROLLER_LOGS ? (line) => process.stderr.write(line + '\n') : undefined });
  const { logs, output } = follower;

  const proc: ControllerProcess = {
    child,
    stateDir: options.stateDir,
    manifestsDir: options.manifestsDir,
    logs,
    output,
    reconciles: () => logs.filter((l) => l.msg === 'reconciled').length,
    waitForLog: (predicate, timeoutMs = 15000) => follower.waitForLog(predicate, timeoutMs),
    async waitForReconciles(count, timeoutMs = 15000) {
      const deadline = Date.now() + timeoutMs;
      while (proc.reconciles() < count) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`controller exited; output: ${output.join('\n').slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`only ${proc.reconciles()} of ${count} reconciles after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async boundPort(endpoint) {
      const started = await follower.waitForLog((l) => l.msg === 'controller starting', 120_000);
      const address = started[endpoint];
      if (typeof address !== 'string') throw new Error(`the controller logged no ${endpoint} address: ${JSON.stringify(started)}`);
      return Number(address.split(':').pop());
    },
    async stop(signal = 'SIGTERM', timeoutMs = STOP_TIMEOUT_MS, nginxGraceMs?: number) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const grace = nginxGraceMs === undefined ? undefined : setTimeout(() => void endNginx(nginxPrefix(options.stateDir)), nginxGraceMs);
      const result = await exited;
      clearTimeout(timer);
      clearTimeout(grace);
      forget();
      // A controller that was killed or crashed could not stop its nginx (its own process
      // group, so it outlives the controller): end it here, before the caller removes its prefix.
      await endNginx(nginxPrefix(options.stateDir));
      return result;
    },
    exited,
  };
  // However the test file ends (a failed assertion before its cleanup, a hook that threw).
  const forget = atFileEnd(() => proc.stop('SIGKILL').then(() => undefined));
  if (waitFirstReconcile) {
    try {
      // The first start compiles the controller's sources; with suites in parallel workers on two
      // cores that alone can take longer than half a minute, so wait up to two.
      await proc.waitForLog((l) => l.msg === 'reconciled', 120_000);
    } catch (err) {
      await proc.stop('SIGKILL');
      throw err;
    }
  }
  return proc;
}

/**
 * Resolves once the controller has reconciled after `since` reconciles and then stayed quiet
 * for `quietMs`: a change is picked up after the provider's debounce, and a reconcile already
 * running when it came is followed by one more.
 */
export async function settleAfter(controller: ControllerProcess, since: number, quietMs: number): Promise<void> {
  await controller.waitForReconciles(since + 1);
  for (;;) {
    const n = controller.reconciles();
    await new Promise((r) => setTimeout(r, quietMs));
    if (controller.reconciles() === n) return;
  }
}
