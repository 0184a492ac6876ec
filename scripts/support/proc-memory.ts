/** Memory of a running process, for the benchmarks' controller RSS and heap figures. */
import { readFileSync } from 'fs';

/** The process's resident memory now (VmRSS), or its peak so far (VmHWM, what a memory limit meets), in MB. */
export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`))!;
  return Math.round(Number(line.replace(/\D+/g, '')) / 1024);
}

/** A Prometheus /metrics page as a map from series (name with labels) to value. */
export async function metrics(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** The controller's heap used and total (MB) from its own gauges (prom-client's default metrics). */
export function controllerHeapMb(m: Map<string, number>): { used: number; total: number } {
  const mb = (k: string) => Math.round((m.get(`portcullis_controller_nodejs_heap_size_${k}_bytes`) ?? NaN) / 1048576);
  return { used: mb('used'), total: mb('total') };
}
