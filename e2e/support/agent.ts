import { spawn, type ChildProcess } from 'child_process';
import * as path from 'path';
import { REPO_ROOT, type LogLine } from './controller';

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
    '--log-level=debug',
  ];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: LogLine[] = [];
  const output: string[] = [];
  const waiters: { predicate: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  let buffer = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      let parsed: LogLine | undefined;
      try {
        parsed = JSON.parse(line) as LogLine;
      } catch {
        output.push(line);
      }
      if (!parsed || typeof parsed.msg !== 'string') continue;
      logs.push(parsed);
      if (process.env.E2E_AGENT_LOGS) process.stderr.write(`[${options.podName}] ${line}\n`);
      for (const w of [...waiters]) {
        if (w.predicate(parsed)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(parsed);
        }
      }
    }
  });
  child.stdout!.on('data', (c: Buffer) => output.push(c.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const agent: AgentProcess = {
    child,
    options,
    logs,
    output,
    exited,
    waitForLog(predicate, timeoutMs = 20000) {
      const seen = logs.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(entry), 1);
          reject(new Error(`agent ${options.podName}: no matching log line after ${timeoutMs} ms; last: ${JSON.stringify(logs.slice(-5))} ${output.join('').slice(-1000)}`));
        }, timeoutMs);
        const entry = {
          predicate,
          resolve: (l: LogLine) => {
            clearTimeout(timer);
            resolve(l);
          },
        };
        waiters.push(entry);
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      const result = await exited;
      clearTimeout(timer);
      running.delete(agent);
      return result;
    },
  };
  running.add(agent);
  return agent;
}

export async function stopAllAgents(): Promise<void> {
  await Promise.all([...running].map((a) => a.stop()));
}
