/**
 * The picker hop against an external endpoint picker (ext_proc over gRPC, TLS without
 * verification by default): its choice is followed, its headers forwarded, its immediate
 * answers returned as is; FailClose and FailOpen when it is down; body limits and rate limits
 * act before it is asked.
 */
import { httpRoute } from '../support/manifests';
import { inferencePool, podFor, type ModelServer } from '../support/model-server';
import { COMPLETION, podPort, startInferenceGateway, startPods, type InferenceGateway } from './support';
import { pickerService, selfSignedCert, startTestPicker, type TestPicker } from './test-picker';

const POOL = { group: 'inference.networking.k8s.io', kind: 'InferencePool' };
let gw: InferenceGateway;
let pods: ModelServer[];
let picker: TestPicker;
const labels = { app: 'llm' };

function routes() {
  const r = (name: string, path: string, pool: string) =>
    httpRoute(name, { rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ ...POOL, name: pool }] }] });
  return [r('closed', '/closed', 'closed'), r('open', '/open', 'open'), r('limited', '/limited', 'closed'), r('small', '/small', 'closed')];
}

beforeAll(async () => {
  const port = await podPort();
  pods = (await startPods(['pod-a', 'pod-b'], [port], 31)).map((r) => r[0]);
  picker = await startTestPicker(await selfSignedCert(), () => ({ endpoints: pods[1].endpoint, setHeaders: { 'x-picked-by': 'test-picker' } }));
  gw = await startInferenceGateway({
    'pool.yaml': [
      ...pods.map((p) => podFor(p, labels)),
      ...pickerService('epp', picker.port),
      inferencePool('closed', { labels, ports: [port], picker: { name: 'epp', port: 9002 } }),
      inferencePool('open', { labels, ports: [port], picker: { name: 'epp', port: 9002, failureMode: 'FailOpen' } }),
      ...routes(),
      {
        apiVersion: 'gateway.portcullis.dev/v1alpha1',
        kind: 'ClientSettingsPolicy',
        metadata: { name: 'small-body' },
        spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'small' }, body: { maxSize: '64' } },
      },
      {
        apiVersion: 'gateway.portcullis.dev/v1alpha1',
        kind: 'RateLimitPolicy',
        metadata: { name: 'one-per-minute' },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'limited' }], rateLimit: { local: { rules: [{ key: '$binary_remote_addr', rate: '1r/m', zoneSize: '1m' }] }, rejectCode: 429 } },
      },
    ],
  });
}, 90000);

afterAll(async () => {
  await gw?.close();
  await picker?.close();
  await Promise.all((pods ?? []).map((p) => p.close()));
});

test("the picker's choice is followed, with its headers, and it sees the request's headers and whole body", async () => {
  picker.reply = () => ({ endpoints: pods[1].endpoint, setHeaders: { 'x-picked-by': 'test-picker' } });
  const before = picker.seen.length;
  for (let i = 0; i < 10; i++) {
    const res = await gw.complete(COMPLETION, { path: '/closed/v1/completions', headers: { 'x-user': 'u1' } });
    expect(res.status).toBe(200);
    expect(res.json.pod).toBe('pod-b');
    expect(res.json.headers['x-picked-by']).toBe('test-picker');
    expect(res.json.headers['x-user']).toBe('u1');
  }
  const seen = picker.seen[before];
  expect(seen.headers[':method']).toBe('POST');
  expect(seen.headers[':path']).toBe('/closed/v1/completions');
  expect(seen.headers['x-user']).toBe('u1');
  expect(seen.headers['x-request-id']).toBeTruthy();
  expect(JSON.parse(seen.body)).toEqual(COMPLETION);
});

test('a picker that rewrites the body (whole, or streamed in chunks) sends the pod its version', async () => {
  const rewritten = { ...COMPLETION, model: 'fake-model-lora-7' };
  for (const body of [{ whole: JSON.stringify(rewritten) }, { chunks: [JSON.stringify(rewritten).slice(0, 10), JSON.stringify(rewritten).slice(10)] }]) {
    picker.reply = () => ({ endpoints: pods[1].endpoint, body });
    const res = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
    expect(res.status).toBe(200);
    expect(res.json.model).toBe('fake-model-lora-7');
    expect(JSON.parse(pods[1].bodies[pods[1].bodies.length - 1])).toEqual(rewritten);
  }
  // Without a mutation the original body goes through.
  picker.reply = () => ({ endpoints: pods[1].endpoint });
  expect((await gw.complete(COMPLETION, { path: '/closed/v1/completions' })).json.model).toBe(COMPLETION.model);
});

test('the connection to the picker is reused (HTTP/2), not dialled per request', async () => {
  const before = picker.seen.length;
  for (let i = 0; i < 10; i++) await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(new Set(picker.seen.slice(before).map((s) => s.peer)).size).toBe(1);
});

test('the destination list is primary then fallbacks: an unreachable primary falls back to the next', async () => {
  picker.reply = () => ({ endpoints: `127.0.0.39:${pods[0].port},${pods[0].endpoint}` });
  const res = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(res.status).toBe(200);
  expect(res.json.pod).toBe('pod-a');
});

test("an ImmediateResponse from the picker (429) reaches the client as is, and no pod is asked", async () => {
  picker.reply = () => ({ immediate: 429, body: 'shed: too many requests', headers: { 'retry-after': '3' } });
  const served = pods[0].served + pods[1].served;
  const res = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(res.status).toBe(429);
  expect(res.text).toBe('shed: too many requests');
  expect(res.headers['retry-after']).toBe('3');
  expect(pods[0].served + pods[1].served).toBe(served);
});

test('a body over the ClientSettingsPolicy maxSize gets 413 before any picker call', async () => {
  picker.reply = () => ({ endpoints: pods[0].endpoint });
  const before = picker.seen.length;
  const res = await gw.complete({ ...COMPLETION, prompt: 'x'.repeat(200) }, { path: '/small/v1/completions' });
  expect(res.status).toBe(413);
  expect(picker.seen.length).toBe(before);
  const ok = await gw.complete({ model: 'm', prompt: 'hi' }, { path: '/small/v1/completions' });
  expect(ok.status).toBe(200);
  expect(picker.seen.length).toBe(before + 1);
});

test('rate limits apply before the picker: a rejected request never reaches it', async () => {
  picker.reply = () => ({ endpoints: pods[0].endpoint });
  const before = picker.seen.length;
  const first = await gw.complete(COMPLETION, { path: '/limited/v1/completions' });
  const second = await gw.complete(COMPLETION, { path: '/limited/v1/completions' });
  expect(first.status).toBe(200);
  expect(second.status).toBe(429);
  expect(picker.seen.length).toBe(before + 1);
});

test('picker errors: FailClose answers 503, FailOpen sends the request to a ready pod of the pool', async () => {
  picker.reply = () => ({ fail: true });
  const closed = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(closed.status).toBe(503);
  const open = await gw.complete(COMPLETION, { path: '/open/v1/completions' });
  expect(open.status).toBe(200);
  expect(['pod-a', 'pod-b']).toContain(open.json.pod);
});

test('picker down: FailClose answers 503, FailOpen still serves every request', async () => {
  await picker.close();
  const closed = await gw.complete(COMPLETION, { path: '/closed/v1/completions' });
  expect(closed.status).toBeGreaterThanOrEqual(500);
  const who = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const res = await gw.complete(COMPLETION, { path: '/open/v1/completions' });
    expect(res.status).toBe(200);
    who.add(res.json.pod);
  }
  expect(who).toEqual(new Set(['pod-a', 'pod-b']));
});
