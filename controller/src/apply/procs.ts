/** Child processes of the nginx master (its workers), read from /proc. */
import * as fs from 'fs';

export function childPids(parent: number): number[] {
  // One file when the kernel offers it (nginx's master is single-threaded), else scan /proc.
  try {
    const text = fs.readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim();
    return text ? text.split(' ').map(Number) : [];
  } catch {
    /* no CONFIG_PROC_CHILDREN: scan */
  }
  const out: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) out.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // An exited worker stays a zombie until its master reaps it (nginx's master may be busy).
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true;
  }
}

/**
 * A worker still taking new connections: alive and not yet "shutting down" (nginx retitles a
 * worker that got the graceful quit; it closes its listening sockets first, then finishes what
 * it carries, which for a WebSocket or a gRPC stream may take hours).
 */
export function accepting(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    return !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('shutting down');
  } catch {
    return false;
  }
}
