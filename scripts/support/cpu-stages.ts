/**
 * CPU time per named stage of an in-process profile (scripts/prof-*.ts): user + system CPU of
 * the process, steadier than wall time on a shared machine.
 */
export function cpuStages() {
  const stage: Record<string, number[]> = {};
  const time = <T>(name: string, f: () => T): T => {
    const t = process.cpuUsage();
    const out = f();
    const d = process.cpuUsage(t);
    (stage[name] ??= []).push((d.user + d.system) / 1000);
    return out;
  };
  return { stage, time };
}
