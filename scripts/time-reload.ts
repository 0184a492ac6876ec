/**
 * Times the agent's apply path alone (NginxProcess.apply: write, SIGHUP, new workers, hand-over)
 * on a config written by scripts/dump-config.ts, one location added per change, and prints the
 * medians with nginx's CPU per change (master + workers, from /proc) and the master's RSS:
 *   npx tsx scripts/dump-config.ts --one-host --out=/tmp/pc-conf
 *   npx tsx scripts/time-reload.ts --conf=/tmp/pc-conf [--changes=12] [--nginx=PATH]
 * Run it back to back with another binary or config to compare them.
 */
import * as fs from 'fs';
import * as path from 'path';
import { NginxProcess } from '../controller/src/apply/nginx';
import { defaultNginxBinary } from '../controller/src/apply/nginx-binary';
import type { Logger } from '../controller/src/log';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

const prefix = path.resolve(arg('conf', '/tmp/pc-conf'));
const changes = Number(arg('changes', '12'));
const binary = arg('nginx', defaultNginxBinary());
// dump-config renders paths under its --out dir: nginx runs with that prefix. Its conf/ becomes
// the live link at the first start, so the rendered files are kept aside in dumped/ first.
const dumped = path.join(prefix, 'dumped');
if (!fs.existsSync(dumped)) fs.cpSync(path.join(prefix, 'conf'), dumped, { recursive: true });
const files: Record<string, string> = {};
for (const f of fs.readdirSync(dumped)) if (f.endsWith('.conf')) files[f] = fs.readFileSync(path.join(dumped, f), 'utf8');

const reloads: Record<string, number>[] = [];
const log: Logger = {
  debug: (msg, fields) => void (msg === 'nginx reloaded' && reloads.push(fields as Record<string, number>)),
  info: () => undefined,
  warn: (msg, fields) => console.error(msg, fields ?? ''),
  error: (msg, fields) => console.error(msg, fields ?? ''),
};

/** utime + stime in ms of the master (with the workers it reaped) and its live workers. */
function nginxCpuMs(master: number): number {
  const stat = (pid: number) => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ').map(Number);
  const m = stat(master);
  let ticks = m[11] + m[12] + m[13] + m[14];
  for (const pid of fs.readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(' ').filter(Boolean)) {
    const w = stat(Number(pid));
    ticks += w[11] + w[12];
  }
  return ticks * 10;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const nginx = new NginxProcess({ prefix, binary, log });
  const started = await nginx.start({ files });
  if (!started.ok) throw new Error(started.message);
  const totals: number[] = [];
  try {
    const cpu0 = nginxCpuMs(nginx.pid!);
    const servers = files['servers.conf'];
    const end = servers.lastIndexOf('}');
    for (let i = 0; i < changes; i++) {
      const added = `\n    location "/time-reload-${i}" {\n        return 200;\n    }\n`;
      const t = Date.now();
      const r = await nginx.apply({ files: { ...files, 'servers.conf': servers.slice(0, end) + added + servers.slice(end) } });
      if (!r.ok) throw new Error(r.message);
      totals.push(Date.now() - t);
    }
    const cpu = (nginxCpuMs(nginx.pid!) - cpu0) / changes;
    const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${nginx.pid}/status`, 'utf8'))![1]);
    const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`${binary}, ${changes} changes, load average ${load}`);
    console.log(`apply p50 ${median(totals)} ms; signal -> new workers forked ${median(reloads.map((r) => r.forkMs))} ms, -> answering ${median(reloads.map((r) => r.reloadMs))} ms`);
    console.log(`nginx CPU per change (master + workers) ${cpu.toFixed(1)} ms; master RSS ${Math.round(rss / 1024)} MB`);
  } finally {
    await nginx.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
