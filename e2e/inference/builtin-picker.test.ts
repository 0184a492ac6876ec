/**
 * Standalone inference routing with the built-in picker: an InferencePool without
 * endpointPickerRef, Pod manifests in the folder, fake vLLM-style model servers on loopback.
 */
import { readStatus, findStatus, condition, routeParent } from '../support/status';
import { eventually } from '../support/http';
import { httpRoute } from '../support/manifests';
import { inferencePool, podFor, type ModelServer } from '../support/model-server';
import { CHAT, COMPLETION, podPort, startInferenceGateway, startPods, type InferenceGateway } from './support';
import * as http from 'http';

let gw: InferenceGateway;
let pods: ModelServer[];
const labels = { app: 'llm' };

beforeAll(async () => {
  const port = await podPort();
  pods = (await startPods(['pod-a', 'pod-b'], [port], 21, { tokenGapMs: 150 })).map((r) => r[0]);
  gw = await startInferenceGateway({
    'pool.yaml': [
      ...pods.map((p) => podFor(p, labels)),
      // Not ready, and not selected: never candidates.
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pod-down', labels }, status: { podIP: '127.0.0.29', conditions: [{ type: 'Ready', status: 'False' }] } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'other', labels: { app: 'other' } }, status: { podIP: '127.0.0.28' } },
      inferencePool('llm', { labels, ports: [port] }),
      httpRoute('llm', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llm' }] }] }),
    ],
  });
}, 60000);

afterAll(async () => {
  await gw?.close();
  await Promise.all((pods ?? []).map((p) => p.close()));
});

test('the pool is Accepted and ResolvedRefs for its Gateway; the route resolves the pool', async () => {
  const statuses = await readStatus(gw.stateDir);
  const pool = findStatus(statuses, 'InferencePool', 'llm', 'default');
  expect(pool?.status.parents).toHaveLength(1);
  const parent = pool!.status.parents[0];
  expect(parent.parentRef).toEqual({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'gw' });
  expect(condition(parent.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
  expect(condition(parent.conditions, 'ResolvedRefs')).toMatchObject({ status: 'True', reason: 'ResolvedRefs' });
  const route = routeParent(findStatus(statuses, 'HTTPRoute', 'llm', 'default'), 'gw');
  expect(condition(route.conditions, 'ResolvedRefs')).toMatchObject({ status: 'True' });
});

test('a completion request (model, prompt, max_tokens, temperature) reaches a ready pod of the pool with its body intact', async () => {
  const res = await gw.complete(COMPLETION);
  expect(res.status).toBe(200);
  expect(['pod-a', 'pod-b']).toContain(res.json.pod);
  expect(res.json.choices[0].text).toBe('Portcullis routes tokens.');
  const pod = pods.find((p) => p.name === res.json.pod)!;
  expect(JSON.parse(pod.bodies[pod.bodies.length - 1])).toEqual(COMPLETION);
  // The picker's choice travels with the request, as Envoy would forward it.
  expect(res.json.headers['x-gateway-destination-endpoint'].split(',')[0]).toBe(pod.endpoint);
});

test('the OpenAI chat form (messages) works too', async () => {
  const res = await gw.complete(CHAT, { path: '/v1/chat/completions' });
  expect(res.status).toBe(200);
  expect(res.json.object).toBe('chat.completion');
  expect(res.json.choices[0].message.content).toBe('Portcullis routes');
});

test('test-epp-endpoint-selection steers the request to the named pod', async () => {
  for (const p of pods) {
    for (let i = 0; i < 5; i++) {
      const res = await gw.complete(COMPLETION, { headers: { 'test-epp-endpoint-selection': p.address } });
      expect(res.json.pod).toBe(p.name);
    }
  }
  const none = await gw.complete(COMPLETION, { headers: { 'test-epp-endpoint-selection': '127.0.0.99' } });
  expect(none.status).toBe(503);
});

test('the least loaded pod gets the requests: a deep queue on pod-a sends >= 90 % to pod-b', async () => {
  pods[0].load = { waiting: 12, running: 8, kvCache: 0.9 };
  pods[1].load = { waiting: 0, running: 1, kvCache: 0.1 };
  // Wait for a scrape (50 ms) to see the new load.
  await new Promise((r) => setTimeout(r, 300));
  let toB = 0;
  for (let i = 0; i < 40; i++) if ((await gw.complete(COMPLETION)).json.pod === 'pod-b') toB++;
  expect(toB / 40).toBeGreaterThanOrEqual(0.9);
  pods[0].load = { waiting: 0, running: 1, kvCache: 0.1 };
  pods[1].load = { waiting: 12, running: 8, kvCache: 0.9 };
  await new Promise((r) => setTimeout(r, 300));
  let toA = 0;
  for (let i = 0; i < 40; i++) if ((await gw.complete(COMPLETION)).json.pod === 'pod-a') toA++;
  expect(toA / 40).toBeGreaterThanOrEqual(0.9);
  for (const p of pods) p.load = { waiting: 0, running: 0, kvCache: 0 };
});

test('server-sent events reach the client token by token, not buffered until the end', async () => {
  const arrivals: { at: number; text: string }[] = [];
  await new Promise<void>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: gw.port, path: '/v1/completions', method: 'POST', headers: { 'content-type': 'application/json' }, agent: false },
      (res) => {
        expect(res.headers['content-type']).toBe('text/event-stream');
        res.on('data', (c: Buffer) => arrivals.push({ at: Date.now(), text: c.toString() }));
        res.on('end', () => resolve());
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ ...COMPLETION, stream: true }));
  });
  const all = arrivals.map((a) => a.text).join('');
  expect(all.match(/^data: \{/gm)).toHaveLength(6);
  expect(all.endsWith('data: [DONE]\n\n')).toBe(true);
  // Six tokens 150 ms apart: chunks arrive spread over ~750 ms, the first long before the last.
  expect(arrivals.length).toBeGreaterThanOrEqual(4);
  expect(arrivals[arrivals.length - 1].at - arrivals[0].at).toBeGreaterThan(500);
});

test('a pod that stops being Ready is no longer chosen', async () => {
  await gw.write('pool.yaml', [
    podFor(pods[0], labels, undefined, false),
    podFor(pods[1], labels),
    inferencePool('llm', { labels, ports: [pods[0].port] }),
    httpRoute('llm', { rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llm' }] }] }),
  ]);
  await eventually(() => gw.complete(COMPLETION), (r) => r.json?.pod === 'pod-b');
  for (let i = 0; i < 20; i++) expect((await gw.complete(COMPLETION)).json.pod).toBe('pod-b');
});
