/**
 * Both pickers count a request against its pod only while it is in flight, until its response
 * has ended: the built-in picker in the hop, and `portcullis-picker` over ext_proc (the hop
 * keeps the picker's stream open, quiet, until the response has ended; its end tells the
 * picker the request is over).
 * - A quick idle pod and a slow one reporting a deep queue: many concurrent requests between
 *   two scrapes all end quickly at the idle pod, so it stays the better choice (a picker
 *   counting every request sent since the last scrape soon finds the idle pod "busier" than
 *   the other's queue).
 * - Two pods reporting no load, one answering after two seconds: the requests it holds make it
 *   the busier one (a picker forgetting a request once routed would split evenly).
 */
import * as path from 'path';
import { spawn, type ChildProcess } from 'child_process';
import { REPO_ROOT } from '../support/controller';
import { httpRoute } from '../support/manifests';
import { freePort, waitForPort } from '../support/ports';
import { inferencePool, podFor, type ModelServer } from '../support/model-server';
import { COMPLETION, podPort, startInferenceGateway, startPods, type InferenceGateway } from './support';
import { pickerService } from './test-picker';

const POOL = { group: 'inference.networking.k8s.io', kind: 'InferencePool' };
let gw: InferenceGateway;
let pods: ModelServer[];
let slowPods: ModelServer[];
const pickers: ChildProcess[] = [];
const labels = { app: 'llm' };
const slowLabels = { app: 'llm-slow' };

async function startPicker(endpoints: string[], intervalMs: number): Promise<number> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'portcullis-picker.js'), `--endpoints=${endpoints.join(',')}`, `--grpc-port=${port}`, `--refresh-metrics-interval-ms=${intervalMs}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  pickers.push(child);
  await waitForPort(port, '127.0.0.1', 30000);
  return port;
}

beforeAll(async () => {
  const port = await podPort();
  // As vLLM does, each pod reports the requests it holds (running, and beyond two waiting).
  pods = (await startPods(['pod-idle', 'pod-busy'], [port], 91, { slots: 2 })).map((r) => r[0]);
  pods[1].delayMs = 50;
  pods[1].load = { waiting: 10, running: 4, kvCache: 0.8 };
  // Scrapes a second apart: far more requests than the busy pod's queue fall between two, on
  // any machine (at the default 50 ms a slow machine may not send that many).
  const pickerPort = await startPicker(pods.map((p) => p.endpoint), 1000);
  // Two pods reporting no load at all, one answering after two seconds; their picker scrapes once
  // (at the start) in the test's time, so what it sent and what has ended is all it knows.
  slowPods = (await startPods(['pod-quick', 'pod-slow'], [port], 96)).map((r) => r[0]);
  slowPods[1].delayMs = 2000;
  const slowPickerPort = await startPicker(slowPods.map((p) => p.endpoint), 60_000);
  const route = (name: string) => httpRoute(name, { rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ ...POOL, name }] }] });
  gw = await startInferenceGateway({
    'pool.yaml': [
      ...pods.map((p) => podFor(p, labels)),
      ...pickerService('epp', pickerPort),
      ...slowPods.map((p) => podFor(p, slowLabels)),
      ...pickerService('epp-slow', slowPickerPort),
      inferencePool('external-slow', { labels: slowLabels, ports: [port], picker: { name: 'epp-slow', port: 9002 } }),
      route('external-slow'),
      inferencePool('builtin', { labels, ports: [port] }),
      inferencePool('external', { labels, ports: [port], picker: { name: 'epp', port: 9002 } }),
      route('builtin'),
      route('external'),
    ],
  });
}, 90000);

afterAll(async () => {
  await gw?.close();
  for (const p of pickers) p.kill('SIGTERM');
  await Promise.all([...(pods ?? []), ...(slowPods ?? [])].map((p) => p.close()));
});

test.each([
  ['the built-in picker', 'builtin'],
  ['portcullis-picker over ext_proc', 'external'],
])('%s: 8 concurrent clients, 200 requests; >= 90 %% go to the idle pod, not the one with a deep queue', async (_name, prefix) => {
  // The first request makes the picker start scraping this pool; then its load is known.
  const first = await gw.complete(COMPLETION, { path: `/${prefix}/v1/completions`, headers: { 'test-epp-endpoint-selection': pods[0].address } });
  expect(first.json.pod).toBe('pod-idle');
  await new Promise((r) => setTimeout(r, 300));
  const before = pods.map((p) => p.served);
  let left = 200;
  const client = async () => {
    while (left-- > 0) expect((await gw.complete(COMPLETION, { path: `/${prefix}/v1/completions` })).status).toBe(200);
  };
  await Promise.all(Array.from({ length: 8 }, client));
  const [idle, busy] = pods.map((p, i) => p.served - before[i]);
  expect(idle + busy).toBe(200);
  expect(idle / 200).toBeGreaterThanOrEqual(0.9);
}, 90000);

test('portcullis-picker: a pod whose requests are still in flight gets fewer new ones (the stream ends with the response)', async () => {
  const before = slowPods[1].served;
  let left = 32;
  const client = async () => {
    while (left-- > 0) expect((await gw.complete(COMPLETION, { path: '/external-slow/v1/completions' })).status).toBe(200);
  };
  await Promise.all(Array.from({ length: 4 }, client));
  // Both pods look idle to the scrapes: a picker that forgot a request once routed would split
  // the 32 about evenly (16 each); one that counts it until its response has ended sees the
  // slow pod holding its requests for two seconds each and sends it only a few.
  expect(slowPods[1].served - before).toBeLessThan(8);
}, 90000);
