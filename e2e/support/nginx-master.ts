/**
 * The nginx master a controller or agent runs under its prefix, seen from a test: its pid, and
 * ending it (with its workers) once the process that owned it is gone.
 */
import { promises as fs, readFileSync } from 'fs';
import { prefixLayout } from '../../controller/src/render/layout';

/** The pid in the prefix's pid file, if nginx wrote one. */
export async function masterPid(prefix: string): Promise<number | undefined> {
  try {
    const pid = Number((await fs.readFile(prefixLayout(prefix).pidFile, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` runs (a zombie, exited but not yet reaped by its parent, does not). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/PID/stat: "pid (comm) state ...", comm may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Whether `pid` is an nginx master of `prefix` (not a later process that reused the pid). */
function servesPrefix(pid: number, prefix: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return cmdline.includes('nginx') && cmdline.includes(prefixLayout(prefix).prefix);
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // The controller and the agent start nginx in its own process group (the master's pid):
    // the group reaches the workers too, even those of a master that died first.
    process.kill(-pid, signal);
  } catch {
    // gone
  }
}

/**
 * Ends the nginx running under `prefix`, with its workers: after its owner exited (killed,
 * crashed, or given up on), or in a teardown that waits for no request. A fast shutdown
 * (SIGTERM) rather than a graceful one, which waits for every open session (a UDP session lasts
 * nginx's proxy_timeout, 10 minutes); SIGKILL after 3 s. Resolves once the master is gone, so
 * the prefix can then be removed without leaving a process that writes into a deleted directory.
 */
export async function endNginx(prefix: string): Promise<void> {
  const pid = await masterPid(prefix);
  if (pid === undefined || !isAlive(pid) || !servesPrefix(pid, prefix)) return;
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + 3000;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  signalGroup(pid, 'SIGKILL');
  for (let i = 0; i < 250 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
}
