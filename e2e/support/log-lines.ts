import type { ChildProcess } from 'child_process';

export interface LogLine {
  time?: string;
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface LogFollower {
  /** Every JSON log line printed on stderr so far. */
  logs: LogLine[];
  /** Non-JSON text (crashes, usage) from stderr and stdout. */
  output: string[];
  /**
   * Resolves with the first line (already printed or to come) matching `predicate`; rejects
   * after `timeoutMs` or when the process exits first, with `describe()` for the reason.
   */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine>;
}

/**
 * Follows the JSON-lines log our commands (controller, agent) print on stderr, so tests can
 * wait for a given event instead of sleeping. `echo` mirrors each line (for debugging runs).
 */
export function followLogs(child: ChildProcess, exited: Promise<unknown>, options: { name: string; echo?: (line: string) => void }): LogFollower {
  const logs: LogLine[] = [];
  const output: string[] = [];
  const waiters: { predicate: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  let buffer = '';
  const tail = () => `output: ${output.join('\n').slice(-2000)}; last logs: ${JSON.stringify(logs.slice(-5))}`;
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
      options.echo?.(line);
      for (const w of [...waiters]) {
        if (w.predicate(parsed)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(parsed);
        }
      }
    }
  });
  child.stdout!.on('data', (c: Buffer) => output.push(c.toString('utf8')));
  return {
    logs,
    output,
    waitForLog(predicate, timeoutMs) {
      const seen = logs.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const entry = {
          predicate,
          resolve: (l: LogLine) => {
            clearTimeout(timer);
            resolve(l);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(entry), 1);
          reject(new Error(`${options.name}: no matching log line after ${timeoutMs} ms; ${tail()}`));
        }, timeoutMs);
        waiters.push(entry);
        void exited.then(() => {
          if (!waiters.includes(entry)) return;
          clearTimeout(timer);
          waiters.splice(waiters.indexOf(entry), 1);
          reject(new Error(`${options.name} exited; ${tail()}`));
        });
      });
    },
  };
}
