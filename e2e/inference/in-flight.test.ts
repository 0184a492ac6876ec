/**
 * Both pickers count a request against its pod only while it is in flight, until its response
 * has ended: the built-in picker in the hop, and `portcullis-picker` over ext_proc (the hop
 * keeps the picker's stream open, quiet, until the response has ended; its end tells the
 * picker the request is over). Two pods: a quick idle one, and a slow one reporting a deep
 * queue. Many concurrent requests between two scrapes of their metrics all end quickly at the
 * idle pod, so it stays the better choice; a picker counting every request sent since the last
 * scrape would soon find the idle pod "busier" than the queue of the other and send it there.
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
let picker: ChildProcess | undefined;
const labels = { app: 'llm' };

beforeAll(async () => {
  const port = await podPort();
  // As vLLM does, each pod reports the requests it holds (running, and beyond two waiting).
  pods = (await startPods(['pod-idle', 'pod-busy'], [port], 91, { slots: 2 })).map((r) => r[0]);
  pods[1].delayMs = 50;
  pods[1].load = { waiting: 10, running: 4, kvCache: 0.8 };
  const pickerPort = await freePort();
  // Scrapes a second apart: far more requests than the busy pod's queue fall between two, on
  // any machine (at the default 50 ms a slow machine may not send that many).
  picker = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'bin', 'portcullis-picker.js'), `--endpoints=${pods.map((p) => p.endpoint).join(',')}`, `--grpc-port=${pickerPort}`, '--refresh-metrics-interval-ms=1000'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  await waitForPort(pickerPort, '127.0.0.1', 30000);
  const route = (name: string) => httpRoute(name, { rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ ...POOL, name }] }] });
  gw = await startInferenceGateway({
    'pool.yaml': [
      ...pods.map((p) => podFor(p, labels)),
      ...pickerService('epp', pickerPort),
      inferencePool('builtin', { labels, ports: [port] }),
      inferencePool('external', { labels, ports: [port], picker: { name: 'epp', port: 9002 } }),
      route('builtin'),
      route('external'),
    ],
  });
}, 90000);

afterAll(async () => {
  await gw?.close();
  picker?.kill('SIGTERM');
  await Promise.all((pods ?? []).map((p) => p.close()));
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
