import { ChildProcess, spawn } from 'child_process';
import { promises as fs } from 'fs';
import * as path from 'path';
import { followLogs, type LogLine } from './log-lines';

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
  /** Sends a signal and resolves with the exit code (or the signal name) once it exited. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | string>;
  exited: Promise<number | string>;
}

const running = new Set<ControllerProcess>();

/** The nginx master pid of a controller's state dir, if nginx wrote one. */
export async function nginxPid(stateDir: string): Promise<number | undefined> {
  const prefix = path.join(stateDir, 'nginx');
  for (const candidate of ['logs/nginx.pid', 'nginx.pid', 'run/nginx.pid']) {
    try {
      const pid = Number((await fs.readFile(path.join(prefix, candidate), 'utf8')).trim());
      if (pid > 0) return pid;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts the real controller CLI (bin/portcullis-controller.js, TypeScript run by tsx) in
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
    async stop(signal = 'SIGTERM', timeoutMs = 10000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      running.delete(proc);
      // If the controller could not stop its nginx (killed, crashed), do it for it.
      const pid = await nginxPid(options.stateDir);
      if (pid && isAlive(pid)) {
        try {
          process.kill(pid, 'SIGQUIT');
        } catch {
          // already gone
        }
      }
      return result;
    },
    exited,
  };
  running.add(proc);
  if (waitFirstReconcile) {
    try {
      // The first start compiles the controller with tsx; with suites in parallel workers on two
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

/** For afterAll/afterEach: stops every controller a test started and has not stopped. */
export async function stopAllControllers(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop('SIGTERM')));
}
