/**
 * npm run bench:inference — the cost of the picker hop and the quality of the built-in picker.
 *
 * A real standalone controller (nginx + the inference hop) in front of fake vLLM-style model
 * servers on loopback (e2e/support/model-server.ts). In the same run, interleaved request by
 * request over one keepalive connection each:
 *   direct    nginx -> the pod (a Service backend): proxying straight to the chosen pod
 *   builtin   nginx -> hop -> built-in picker (in-process) -> the same pod
 *   ext_proc  nginx -> hop -> portcullis-picker over ext_proc/gRPC (TLS, HTTP/2) -> the same pod
 *             (the picker turns the response phase off, as it needs nothing from responses)
 *   +response the same with a picker that takes the response phase (--response-phase=true: the
 *             response headers and each chunk go to it and come back), what reading usage costs
 * Prints p50/p99 of each and the added latency (hop - direct), then requests/s of each with
 * autocannon (BENCH_CONNECTIONS), then the picker's choice quality: two pods, one slow with a
 * deep queue, concurrent clients, share of requests sent to the idle pod (goal >= 90 %).
 *
 * --write-docs: also write the figures as docs/benchmarks-gateway.md's table (inference).
 * Env: BENCH_REQUESTS (latency samples per path, default 2000), BENCH_SECONDS (per throughput
 * run, default 5), BENCH_CONNECTIONS (default 16), BENCH_QUALITY (requests, default 400).
 */
import * as http from 'http';
import * as path from 'path';
import { spawn, type ChildProcess } from 'child_process';
import { REPO_ROOT } from '../e2e/support/controller';
import { httpRoute, serviceFor } from '../e2e/support/manifests';
import { freePort, waitForPort } from '../e2e/support/ports';
import { inferencePool, podFor } from '../e2e/support/model-server';
import { startInferenceGateway } from '../e2e/inference/support';
import { pickerService } from '../e2e/inference/test-picker';
import { benchCommand, docsTable } from './support/bench-docs';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const QUALITY = Number(process.env.BENCH_QUALITY ?? 400);
const POOL = { group: 'inference.networking.k8s.io', kind: 'InferencePool' };
const BODY = JSON.stringify({ model: 'fake-model', prompt: 'Write a haiku about gateways', max_tokens: 6, temperature: 0.2 });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function post(agent: http.Agent, port: number, p: string, headers: Record<string, string> = {}): Promise<{ ms: number; pod: string }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (res.statusCode !== 200) return reject(new Error(`${p}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 200)}`));
        resolve({ ms, pod: (res.headers['x-served-by'] as string) ?? '' });
      });
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

// autocannon ships no types; the forge benchmarks load it the same way.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<any>;

async function throughput(port: number, p: string, headers: Record<string, string>): Promise<number> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${p}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: BODY,
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  if (result.non2xx > 0 || result.errors > 0) console.log(`  (${p}: ${result.non2xx} non-2xx, ${result.errors} errors)`);
  return result.requests.average;
}

async function main(): Promise<void> {
  const podPortNumber = await freePort();
  const podsProcess: ChildProcess = spawn(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(__dirname, 'bench-inference-pods.ts'), String(podPortNumber), '127.0.0.81', '127.0.0.82'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => podsProcess.stdout!.once('data', () => resolve()));
  const pod = (name: string, address: string) => ({
    name,
    address,
    port: podPortNumber,
    endpoint: `${address}:${podPortNumber}`,
    control: async (set?: object): Promise<{ served: number }> =>
      (await fetch(`http://${address}:${podPortNumber}/_control`, { method: set ? 'POST' : 'GET', body: set ? JSON.stringify(set) : undefined })).json() as Promise<{ served: number }>,
  });
  const idle = pod('pod-idle', '127.0.0.81');
  const busy = pod('pod-busy', '127.0.0.82');
  const pickerPort = await freePort();
  const picker: ChildProcess = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'portcullis-picker.js'), `--endpoints=${idle.endpoint},${busy.endpoint}`, `--grpc-port=${pickerPort}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForPort(pickerPort, '127.0.0.1', 30000);
  const respPickerPort = await freePort();
  const respPicker: ChildProcess = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'bin', 'portcullis-picker.js'), `--endpoints=${idle.endpoint},${busy.endpoint}`, `--grpc-port=${respPickerPort}`, '--response-phase=true'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  await waitForPort(respPickerPort, '127.0.0.1', 30000);
  const labels = { app: 'llm' };
  const gw = await startInferenceGateway({
    'bench.yaml': [
      ...serviceFor('pod-idle', idle.port, idle.address),
      podFor(idle, labels),
      podFor(busy, labels),
      ...pickerService('epp', pickerPort),
      ...pickerService('epp-resp', respPickerPort),
      inferencePool('extresp', { labels, ports: [podPortNumber], picker: { name: 'epp-resp', port: 9002 } }),
      httpRoute('extresp', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/extresp' } }], backendRefs: [{ ...POOL, name: 'extresp' }] }] }),
      inferencePool('builtin', { labels, ports: [podPortNumber] }),
      inferencePool('extproc', { labels, ports: [podPortNumber], picker: { name: 'epp', port: 9002 } }),
      httpRoute('direct', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/direct' } }], backendRefs: [{ name: 'pod-idle', port: 80 }] }] }),
      httpRoute('builtin', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/builtin' } }], backendRefs: [{ ...POOL, name: 'builtin' }] }] }),
      httpRoute('extproc', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/extproc' } }], backendRefs: [{ ...POOL, name: 'extproc' }] }] }),
    ],
  });
  const steer = { 'test-epp-endpoint-selection': idle.address };
  try {
    console.log(`bench:inference — ${REQUESTS} sequential requests per path (interleaved, keepalive), then ${SECONDS} s x ${CONNECTIONS} connections each\n`);
    const paths: [string, string, Record<string, string>][] = [
      ['direct (nginx -> pod)', '/direct/v1/completions', {}],
      ['hop + built-in picker', '/builtin/v1/completions', steer],
      ['hop + ext_proc picker (TLS)', '/extproc/v1/completions', steer],
      ['  + response phase', '/extresp/v1/completions', steer],
    ];
    const agents = paths.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    // Warm up: connections, the picker channel, JIT.
    for (let i = 0; i < 200; i++) for (let j = 0; j < paths.length; j++) await post(agents[j], gw.port, paths[j][1], paths[j][2]);
    const samples: number[][] = paths.map(() => []);
    for (let i = 0; i < REQUESTS; i++) for (let j = 0; j < paths.length; j++) samples[j].push((await post(agents[j], gw.port, paths[j][1], paths[j][2])).ms);
    const sorted = samples.map((s) => [...s].sort((a, b) => a - b));
    const f = (n: number) => n.toFixed(3);
    console.log('latency (ms)                       p50      p99');
    sorted.forEach((s, j) => console.log(`  ${paths[j][0].padEnd(32)} ${f(percentile(s, 50)).padStart(7)}  ${f(percentile(s, 99)).padStart(7)}`));
    for (let j = 1; j < paths.length; j++) {
      console.log(`  added by ${paths[j][0].padEnd(23)} ${f(percentile(sorted[j], 50) - percentile(sorted[0], 50)).padStart(7)}  ${f(percentile(sorted[j], 99) - percentile(sorted[0], 99)).padStart(7)}   (goal: p50 < 1 ms)`);
    }
    agents.forEach((a) => a.destroy());
    const docRows = paths.map(([name], j) => [
      name.trim() === '+ response phase' ? 'hop + ext_proc picker with the response phase' : name,
      `${f(percentile(sorted[j], 50))} ms`,
      `${f(percentile(sorted[j], 99))} ms`,
      j === 0 ? '' : `${f(percentile(sorted[j], 50) - percentile(sorted[0], 50))} / ${f(percentile(sorted[j], 99) - percentile(sorted[0], 99))} ms`,
      '',
      '',
    ]);

    console.log('\nthroughput (requests/s)');
    const rps: number[] = [];
    for (const [name, p, h] of paths) {
      rps.push(await throughput(gw.port, p, h));
      console.log(`  ${name.padEnd(32)} ${rps[rps.length - 1].toFixed(0).padStart(7)}   (${(rps[rps.length - 1] / rps[0]).toFixed(2)} of direct)`);
      docRows[rps.length - 1][4] = `${rps[rps.length - 1].toFixed(0)} (${(rps[rps.length - 1] / rps[0]).toFixed(2)})`;
    }

    console.log(`\nchoice quality: ${QUALITY} requests from 8 concurrent clients; pod-busy answers after 50 ms with a queue of 10`);
    await busy.control({ delayMs: 50, load: { waiting: 10, running: 4, kvCache: 0.8 } });
    await new Promise((r) => setTimeout(r, 200));
    for (const [name, p] of [['built-in picker', '/builtin/v1/completions'], ['portcullis-picker (ext_proc)', '/extproc/v1/completions']]) {
      const before = { idle: (await idle.control()).served, busy: (await busy.control()).served };
      let left = QUALITY;
      const worker = async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        while (left-- > 0) await post(agent, gw.port, p);
        agent.destroy();
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      const toIdle = (await idle.control()).served - before.idle;
      const total = toIdle + (await busy.control()).served - before.busy;
      console.log(`  ${name.padEnd(32)} ${((100 * toIdle) / total).toFixed(1)} % to the idle pod (${toIdle}/${total})   (goal >= 90 %)`);
      docRows[p === '/builtin/v1/completions' ? 1 : 2][5] = `${((100 * toIdle) / total).toFixed(1)} %`;
    }
    docsTable({
      doc: 'gateway',
      id: 'inference',
      command: benchCommand('bench:inference'),
      columns: ['path', 'p50', 'p99', 'added p50 / p99', `req/s, ${CONNECTIONS} connections (of direct)`, 'to the idle pod'],
      rows: docRows,
      note: 'Goals: added p50 < 1 ms; >= 90 % of the requests to the idle pod.',
    });
  } finally {
    await gw.close();
    picker.kill('SIGTERM');
    respPicker.kill('SIGTERM');
    podsProcess.kill('SIGTERM');
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
