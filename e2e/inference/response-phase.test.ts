/**
 * The response phase of the picker protocol (standalone mode, a test picker on grpc-js): the
 * picker gets the response headers with the endpoint that served, then each body chunk as it
 * comes; what the client gets follows its replies (header mutations, chunk replacements, a body
 * it streams itself); server-sent events stay token by token; a picker can turn the phase off
 * (mode_override); a picker failing mid-response follows the pool's failure mode.
 */
import { httpRoute } from '../support/manifests';
import { inferencePool, podFor, type ModelServer } from '../support/model-server';
import { COMPLETION, podPort, startInferenceGateway, startPods, streamCompletion, type InferenceGateway } from './support';
import { pickerService, selfSignedCert, startTestPicker, type SeenRequest, type TestPicker } from './test-picker';

const POOL = { group: 'inference.networking.k8s.io', kind: 'InferencePool' };
let gw: InferenceGateway;
let pods: ModelServer[];
let picker: TestPicker;
const labels = { app: 'llm' };

beforeAll(async () => {
  const port = await podPort();
  pods = (await startPods(['pod-a', 'pod-b'], [port], 41)).map((r) => r[0]);
  picker = await startTestPicker(await selfSignedCert(), () => ({ endpoints: pods[0].endpoint }));
  const r = (name: string, path: string, pool: string) =>
    httpRoute(name, { rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ ...POOL, name: pool }] }] });
  gw = await startInferenceGateway({
    'pool.yaml': [
      ...pods.map((p) => podFor(p, labels)),
      ...pickerService('epp', picker.port),
      inferencePool('closed', { labels, ports: [port], picker: { name: 'epp', port: 9002 } }),
      inferencePool('open', { labels, ports: [port], picker: { name: 'epp', port: 9002, failureMode: 'FailOpen' } }),
      r('closed', '/closed', 'closed'),
      r('open', '/open', 'open'),
    ],
  });
}, 90000);

afterAll(async () => {
  await gw?.close();
  await picker?.close();
  await Promise.all((pods ?? []).map((p) => p.close()));
});

const last = (): SeenRequest => picker.seen[picker.seen.length - 1];

test('the picker gets the response headers (with :status and the endpoint that served) and every body chunk; its header mutation reaches the client', async () => {
  picker.reply = () => ({ endpoints: pods[1].endpoint, response: { setHeaders: { 'x-usage-seen': 'yes', 'x-served-by': 'rewritten' } } });
  const res = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(res.status).toBe(200);
  expect(res.json.pod).toBe('pod-b');
  expect(res.headers['x-usage-seen']).toBe('yes');
  expect(res.headers['x-served-by']).toBe('rewritten');
  const seen = last().response;
  expect(seen.headers?.[':status']).toBe('200');
  expect(seen.headers?.['content-type']).toBe('application/json');
  expect(seen.headers?.['x-served-by']).toBe('pod-b');
  expect(seen.served).toBe(pods[1].endpoint);
  expect(seen.headersEndOfStream).toBe(false);
  // The body as the pod sent it, then an empty end-of-stream chunk.
  expect(JSON.parse(seen.chunks.filter((c) => !c.endOfStream).map((c) => c.body).join('')).pod).toBe('pod-b');
  expect(seen.chunks[seen.chunks.length - 1]).toMatchObject({ body: '', endOfStream: true });
});

test('a reply replacing each chunk (STREAMED) changes what the client gets', async () => {
  picker.reply = () => ({ endpoints: pods[0].endpoint, response: { body: 'upper' } });
  const res = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(res.status).toBe(200);
  expect(res.text).toContain('"POD":"POD-A"');
  // The body may change length: it goes out chunked, not with the pod's content-length.
  expect(res.headers['content-length']).toBeUndefined();
});

test('a full-duplex picker (streamed_response, as the upstream picker answers) sends the body itself', async () => {
  picker.reply = () => ({ endpoints: pods[0].endpoint, response: { body: 'duplex', suffix: '\n[usage recorded]' } });
  const res = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(res.status).toBe(200);
  expect(res.text.endsWith('\n[usage recorded]')).toBe(true);
  expect(JSON.parse(res.text.slice(0, res.text.indexOf('\n[usage'))).pod).toBe('pod-a');
});

test('server-sent events through a full-duplex picker still reach the client token by token', async () => {
  picker.reply = () => ({ endpoints: pods[1].endpoint, response: { body: 'duplex' } });
  const res = await streamCompletion(gw.port, { ...COMPLETION, stream: true }, {}, '/closed/v1/completions');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/event-stream');
  const events = res.text.match(/^data: \{.*$/gm) ?? [];
  expect(events).toHaveLength(6);
  expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
  const chunks = last().response.chunks;
  // The picker got the tokens one by one as the pod produced them (100 ms apart)...
  expect(chunks.filter((c) => c.body.startsWith('data: {')).length).toBeGreaterThanOrEqual(4);
  expect(chunks[chunks.length - 1].at - chunks[0].at).toBeGreaterThan(350);
  // ...and the client got the first long before the picker saw the last.
  expect(res.arrivals.length).toBeGreaterThanOrEqual(4);
  expect(chunks[chunks.length - 1].at - res.arrivals[0].at).toBeGreaterThan(300);
});

test('a picker that turns the response phase off (mode_override) gets none of it', async () => {
  picker.reply = () => ({ endpoints: pods[0].endpoint, response: { skip: true, setHeaders: { 'x-never': 'set' } } });
  const res = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(res.status).toBe(200);
  expect(res.json.pod).toBe('pod-a');
  expect(res.headers['x-never']).toBeUndefined();
  expect(res.headers['content-length']).toBeDefined();
  expect(last().response).toEqual({ chunks: [] });
});

test('a picker failing in the response phase: FailClose answers 502, FailOpen passes the response through', async () => {
  for (const failAt of ['headers', 'body'] as const) {
    picker.reply = () => ({ endpoints: pods[0].endpoint, response: { failAt } });
    const closed = await gw.complete(COMPLETION, { path: '/closed/v1/completions' }).catch((e: Error) => e);
    if (failAt === 'headers') expect((closed as { status: number }).status).toBe(502);
    else expect(String((closed as Error).message)).toMatch(/aborted|hang up|reset/); // the headers were out: the response is cut
    const open = await gw.complete(COMPLETION, { path: '/open/v1/completions' });
    expect(open.status).toBe(200);
    expect(open.json.pod).toBe('pod-a');
  }
});
