/** CPU time of processes from /proc, for the benchmarks' per-change figures (steadier than wall time under load). */
import * as fs from 'fs';

const TICK_MS = 1000 / 100; // USER_HZ

/** utime + stime (+ reaped children's, with `children`) of a process, in ms; 0 once it is gone. */
export function cpuMs(pid: number, children = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14-17 of stat (utime, stime, cutime, cstime) are 11-14 after the command.
    return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) * TICK_MS;
  } catch {
    return 0;
  }
}

/** The nginx master with the workers it reaped, plus its live workers. */
export function nginxCpuMs(master: number): number {
  let ms = cpuMs(master, true);
  try {
    for (const pid of fs.readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(' ').filter(Boolean)) ms += cpuMs(Number(pid));
  } catch {
    /* no children file */
  }
  return ms;
}
