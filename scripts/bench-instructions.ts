/**
 * nginx's own instructions per request for a rendered config, counted by valgrind's callgrind
 * (user space of the one nginx process; the kernel's work for the sockets is not in it). Unlike
 * req/s and CPU time, the count does not move with other work on the machine, so two configs
 * can be compared to a fraction of a percent on a loaded machine: what the filters part of
 * `npm run bench:dataplane` uses to show what a filter costs. nginx runs without a master
 * (master_process off), is warmed up, its counters are zeroed, then `requests` requests are sent
 * on one keep-alive connection (curl) and the counters dumped.
 */
import * as fs from 'fs';
import * as path from 'path';
import execa from 'execa';
import { ensurePrefixDirs } from '../controller/src/apply/files';
import { prefixLayout, type RenderedConfig } from '../controller/src/render';
import { GENERATION_CONF } from '../controller/src/render/layout';

export function hasCallgrind(): boolean {
  return ['valgrind', 'callgrind_control'].every((b) => execa.sync('sh', ['-c', `command -v ${b}`], { reject: false }).exitCode === 0);
}

export async function instructionsPerRequest(o: { nginx: string; prefix: string; config: RenderedConfig; url: string; headers: string[]; requests: number }): Promise<number> {
  const conf = path.join(o.prefix, 'conf');
  fs.mkdirSync(conf, { recursive: true });
  ensurePrefixDirs(prefixLayout(o.prefix));
  for (const [name, text] of Object.entries(o.config.files)) {
    fs.mkdirSync(path.dirname(path.join(conf, name)), { recursive: true }); // secrets/ holds certificates
    fs.writeFileSync(path.join(conf, name), text);
  }
  fs.writeFileSync(path.join(conf, GENERATION_CONF), 'return 200 "0";\n');
  const out = path.join(o.prefix, 'callgrind.out');
  const child = execa('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, o.nginx, '-p', `${o.prefix}/`, '-c', path.join(conf, 'nginx.conf'), '-g', 'daemon off; master_process off;'], { reject: false, all: true });
  // HTTPS: the bench's self-signed certificate (-k), and HTTP/1.1 as wrk speaks (curl would take h2).
  const headerArgs = [...o.headers.flatMap((h) => ['-H', h]), ...(o.url.startsWith('https:') ? ['-k', '--http1.1'] : [])];
  try {
    let up = false;
    // A large config takes nginx under valgrind tens of seconds to load.
    for (let i = 0; i < 3000 && !up && child.exitCode === null; i++) {
      up = (await execa('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', ...headerArgs, o.url], { reject: false })).stdout === '200';
      if (!up) await new Promise((r) => setTimeout(r, 100));
    }
    if (!up) throw new Error(`nginx under callgrind did not answer 200 for ${o.url}: ${child.all ?? ''}`);
    const urls = Array.from({ length: o.requests }, () => o.url);
    await execa('curl', ['-s', '-o', '/dev/null', ...headerArgs, ...urls.slice(0, 200)]);
    await execa('callgrind_control', ['-z', String(child.pid)]);
    await execa('curl', ['-s', '-o', '/dev/null', ...headerArgs, ...urls], { maxBuffer: 1 << 26 });
    await execa('callgrind_control', ['-d', String(child.pid)]);
  } finally {
    child.kill('SIGTERM');
    await child;
  }
  for (const f of fs.readdirSync(o.prefix).filter((n) => n.startsWith('callgrind.out'))) {
    const text = fs.readFileSync(path.join(o.prefix, f), 'utf8');
    if (!text.includes('Trigger: dump')) continue;
    return Number(/^summary: (\d+)$/m.exec(text)![1]) / o.requests;
  }
  throw new Error('callgrind wrote no dump');
}
