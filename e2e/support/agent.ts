import { spawn, type ChildProcess } from 'child_process';
import * as path from 'path';
import { REPO_ROOT } from './controller';
import { atFileEnd } from './file-end';
import { followLogs, type LogLine } from './log-lines';
import { endNginx } from './nginx-master';

const BIN = path.join(REPO_ROOT, 'bin', 'portcullis-agent.js');

export interface AgentOptions {
  server: string;
  gateway: string;
  tokenFile: string;
  caFile?: string;
  prefix: string;
  listenAddress: string;
  healthPort: number;
  podName: string;
  /** --shutdown-delay (default 0s here: suites stop agents often and want it quick). */
  shutdownDelay?: string;
}

export interface AgentProcess {
  child: ChildProcess;
  options: AgentOptions;
  logs: LogLine[];
  output: string[];
  waitForLog(predicate: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  exited: Promise<number | string>;
}

const running = new Set<AgentProcess>();

/**
 * Starts the real portcullis-agent (bin/portcullis-agent.js) as a local process standing in
 * for a data-plane pod: it runs its own nginx under `prefix`, listening on `listenAddress`.
 */
export function startAgent(options: AgentOptions): AgentProcess {
  const args = [
    BIN,
    `--server=${options.server}`,
    `--gateway=${options.gateway}`,
    `--token-file=${options.tokenFile}`,
    ...(options.caFile ? [`--ca-file=${options.caFile}`] : []),
    `--prefix=${options.prefix}`,
    `--listen-address=${options.listenAddress}`,
    `--health-address=127.0.0.1:${options.healthPort}`,
    `--pod-name=${options.podName}`,
    `--shutdown-delay=${options.shutdownDelay ?? '0s'}`,
    '--log-level=debug',
  ];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const follower = followLogs(child, exited, {
    name: `agent ${options.podName}`,
    echo: process.env.E2E_AGENT_LOGS ? (line) => process.stderr.write(`[${options.podName}] ${line}\n`) : undefined,
  });
  const agent: AgentProcess = {
    child,
    options,
    logs: follower.logs,
    output: follower.output,
    exited,
    waitForLog: (predicate, timeoutMs = 20000) => follower.waitForLog(predicate, timeoutMs),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      // Longer than the agent's own stop (its shutdown delay, then up to 13 s for its nginx,
      // as the controller's), so it is not killed while it stops nginx.
      const timer = setTimeout(() => child.kill('SIGKILL'), shutdownDelayMs(options) + 20_000);
      const result = await exited;
      clearTimeout(timer);
      running.delete(agent);
      forget();
      // An agent killed or crashed leaves its nginx running (its own process group).
      await endNginx(options.prefix);
      return result;
    },
  };
  running.add(agent);
  const forget = atFileEnd(() => agent.stop('SIGKILL').then(() => undefined));
  return agent;
}

function shutdownDelayMs(options: AgentOptions): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(options.shutdownDelay ?? '0s');
  return m ? Number(m[1]) * (m[2] === 's' ? 1000 : 1) : 0;
}

export async function stopAllAgents(): Promise<void> {
  await Promise.all([...running].map((a) => a.stop()));
}
