/**
 * The Gateway API Inference Extension conformance cases (GIE conformance/tests), ported to
 * standalone mode: loopback model servers as the pool's pods, `portcullis-picker` processes as
 * the endpoint pickers (TLS with a self-signed certificate, as upstream pickers serve), and
 * the same requests and checks the upstream suite makes.
 */
import { spawn, type ChildProcess } from 'child_process';
import * as path from 'path';
import { REPO_ROOT } from '../support/controller';
import { eventually } from '../support/http';
import { gateway, httpRoute, type Manifest } from '../support/manifests';
import { freePort, waitForPort } from '../support/ports';
import { condition, findStatus, readStatus, routeParent } from '../support/status';
import { inferencePool, podFor, startModelServer, type ModelServer } from '../support/model-server';
import { httpRequest } from '../support/http';
import { COMPLETION, podPort, startInferenceGateway, startPods, type InferenceGateway } from './support';
import { pickerService } from './test-picker';

const POOL = { group: 'inference.networking.k8s.io', kind: 'InferencePool' };
const PICKER_BIN = path.join(REPO_ROOT, 'bin', 'portcullis-picker.js');
let gw: InferenceGateway;
let secondPort: number;
let primary: ModelServer[];
let secondary: ModelServer[];
let dp: ModelServer[][];
let h2c: ModelServer;
const pickers: ChildProcess[] = [];

async function startPicker(endpoints: string[]): Promise<number> {
  const port = await freePort();
  const child = spawn(process.execPath, [PICKER_BIN, `--endpoints=${endpoints.join(',')}`, `--grpc-port=${port}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  pickers.push(child);
  await waitForPort(port, '127.0.0.1', 30000);
  return port;
}

const route = (name: string, path: string, backendRefs: Manifest[], parents = [{ name: 'gw' }]) =>
  httpRoute(name, { parentRefs: parents, rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs }] });

let base: Manifest[];

beforeAll(async () => {
  const port = await podPort();
  primary = (await startPods(['primary-0', 'primary-1', 'primary-2'], [port], 51)).map((r) => r[0]);
  secondary = (await startPods(['secondary-0', 'secondary-1'], [port], 61)).map((r) => r[0]);
  const dpPorts = [await podPort(), await podPort()];
  dp = await startPods(['dp-0', 'dp-1'], dpPorts, 71);
  const [primaryEpp, secondaryEpp, dpEpp] = await Promise.all([
    startPicker(primary.map((p) => p.endpoint)),
    startPicker(secondary.map((p) => p.endpoint)),
    startPicker(dp.flat().map((p) => p.endpoint)),
  ]);
  h2c = await startModelServer('h2c-0', { address: '127.0.0.76', port: await podPort(), h2c: true });
  secondPort = await freePort();
  base = [
    gateway('secondary', [{ name: 'http', port: secondPort }]),
    ...primary.map((p) => podFor(p, { app: 'primary' })),
    ...secondary.map((p) => podFor(p, { app: 'secondary' })),
    ...dp.map((ranks) => podFor(ranks[0], { app: 'dp' })),
    ...pickerService('primary-epp', primaryEpp),
    ...pickerService('secondary-epp', secondaryEpp),
    ...pickerService('dp-epp', dpEpp),
    inferencePool('primary', { labels: { app: 'primary' }, ports: [port], picker: { name: 'primary-epp', port: 9002 } }),
    inferencePool('secondary', { labels: { app: 'secondary' }, ports: [port], picker: { name: 'secondary-epp', port: 9002, failureMode: 'FailOpen' } }),
    inferencePool('dp', { labels: { app: 'dp' }, ports: dpPorts, picker: { name: 'dp-epp', port: 9002 } }),
    inferencePool('invalid-epp', { labels: { app: 'primary' }, ports: [port], picker: { name: 'no-such-service', port: 9002 } }),
    inferencePool('no-epp-ref', { labels: { app: 'primary' }, ports: [port] }),
    podFor(h2c, { app: 'h2c' }),
    { ...inferencePool('appprotocol', { labels: { app: 'h2c' }, ports: [h2c.port] }), spec: { ...inferencePool('appprotocol', { labels: { app: 'h2c' }, ports: [h2c.port] }).spec, appProtocol: 'kubernetes.io/h2c' } },
    route('appprotocol', '/appprotocol-test', [{ ...POOL, name: 'appprotocol' }]),
    route('primary', '/primary-gateway-test', [{ ...POOL, name: 'primary' }]),
    route('fail-open', '/failopen-pool-test', [{ ...POOL, name: 'secondary' }]),
    route('dp', '/dp-test', [{ ...POOL, name: 'dp' }]),
    route('weighted', '/weighted', [{ ...POOL, name: 'primary', weight: 70 }, { ...POOL, name: 'secondary', weight: 30 }]),
    route('missing-pool', '/missing-pool', [{ ...POOL, name: 'no-such-pool' }]),
    route('invalid-epp', '/invalid-epp-test', [{ ...POOL, name: 'invalid-epp' }]),
    route('no-epp-ref', '/no-epp-ref', [{ ...POOL, name: 'no-epp-ref' }]),
    route('port-unset', '/port-unset', [{ ...POOL, name: 'primary' }]),
    route('port-3000', '/port-3000', [{ ...POOL, name: 'primary', port: 3000 }]),
    route('port-8888', '/port-8888', [{ ...POOL, name: 'primary', port: 8888 }]),
    route('both-gateways', '/both', [{ ...POOL, name: 'secondary' }], [{ name: 'gw' }, { name: 'secondary' }]),
  ];
  gw = await startInferenceGateway({ 'conformance.yaml': base });
}, 120000);

afterAll(async () => {
  await gw?.close();
  for (const p of pickers) p.kill('SIGTERM');
  await Promise.all([...(primary ?? []), ...(secondary ?? []), ...(dp ?? []).flat(), ...(h2c ? [h2c] : [])].map((p) => p.close()));
});

const poolParent = async (pool: string, gateway: string) => {
  const doc = findStatus(await readStatus(gw.stateDir), 'InferencePool', pool, 'default');
  return (doc?.status.parents ?? []).find((p: any) => p.parentRef.name === gateway && p.parentRef.namespace === 'default');
};

test('InferencePoolAccepted: the pool has a parent entry for the Gateway with Accepted True', async () => {
  const parent = await poolParent('primary', 'gw');
  expect(condition(parent.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
});

test.each([1, 2, 3])('GatewayFollowingEPPRouting: with %i selected pod(s), 100 requests land only on them', async (n) => {
  const selected = primary.slice(0, n);
  const header = selected.map((p) => p.address).join(',');
  const hit = new Set<string>();
  for (let i = 0; i < 100; i++) {
    const res = await gw.complete(COMPLETION, { path: '/primary-gateway-test/v1/completions', headers: { 'test-epp-endpoint-selection': header } });
    expect(res.status).toBe(200);
    expect(selected.map((p) => p.name)).toContain(res.json.pod);
    hit.add(res.json.pod);
  }
  // Only the first is the destination; the others are fallbacks (as the upstream pickers do).
  expect(hit.size).toBeGreaterThanOrEqual(1);
}, 60000);

test('GatewayFollowingEPPRoutingWithDataParallelism: several targetPorts per pod, each rank reachable by ip:port', async () => {
  for (const ranks of dp) {
    for (const rank of ranks) {
      for (let i = 0; i < 10; i++) {
        const res = await gw.complete(COMPLETION, { path: '/dp-test/v1/completions', headers: { 'test-epp-endpoint-selection': rank.endpoint } });
        expect(res.json.pod).toBe(rank.name);
      }
    }
    // By IP alone, any rank of that pod.
    const res = await gw.complete(COMPLETION, { path: '/dp-test/v1/completions', headers: { 'test-epp-endpoint-selection': ranks[0].address } });
    expect(ranks.map((r) => r.name)).toContain(res.json.pod);
  }
});

test('GatewayDestinationEndpointServed (our reading): the pod receives the destination the picker chose', async () => {
  const res = await gw.complete(COMPLETION, { path: '/primary-gateway-test/v1/completions', headers: { 'test-epp-endpoint-selection': primary[1].address } });
  expect(res.json.headers['x-gateway-destination-endpoint'].split(',')[0]).toBe(primary[1].endpoint);
});

test('GatewayWeightedAcrossTwoInferencePools: 70/30 over 200 requests', async () => {
  let toPrimary = 0;
  for (let i = 0; i < 200; i++) {
    const res = await gw.complete(COMPLETION, { path: '/weighted/v1/completions' });
    expect(res.status).toBe(200);
    if (res.json.pod.startsWith('primary')) toPrimary++;
  }
  // Upstream's bound: within max(0.10, 4.5 sigma) of 0.70.
  expect(Math.abs(toPrimary / 200 - 0.7)).toBeLessThanOrEqual(Math.max(0.1, 4.5 * Math.sqrt((0.7 * 0.3) / 200)));
}, 60000);

test('HTTPRouteInvalidInferencePoolRef: a missing pool leaves the route Accepted with ResolvedRefs False BackendNotFound', async () => {
  const parent = routeParent(findStatus(await readStatus(gw.stateDir), 'HTTPRoute', 'missing-pool', 'default'), 'gw');
  expect(condition(parent.conditions, 'Accepted')).toMatchObject({ status: 'True' });
  expect(condition(parent.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
});

test('InferencePoolInvalidEPPService: route Accepted, pool ResolvedRefs False, requests get a 5xx', async () => {
  const routeStatus = routeParent(findStatus(await readStatus(gw.stateDir), 'HTTPRoute', 'invalid-epp', 'default'), 'gw');
  expect(condition(routeStatus.conditions, 'Accepted')).toMatchObject({ status: 'True' });
  expect(condition(routeStatus.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidInferencePool' });
  const parent = await poolParent('invalid-epp', 'gw');
  expect(condition(parent.conditions, 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidExtensionRef' });
  const res = await gw.request('/invalid-epp-test');
  expect(res.status).toBeGreaterThanOrEqual(500);
  expect(res.status).toBeLessThanOrEqual(504);
});

test('InferencePoolMissingEPPRef: a pool without endpointPickerRef is Accepted (the built-in picker serves it)', async () => {
  const parent = await poolParent('no-epp-ref', 'gw');
  expect(condition(parent.conditions, 'Accepted')).toMatchObject({ status: 'True' });
  expect((await gw.complete(COMPLETION, { path: '/no-epp-ref/v1/completions' })).status).toBe(200);
});

test('InferencePoolHTTPRoutePortValidation: backendRef port unset, 3000 or 8888 is ignored; GET without body works', async () => {
  for (const p of ['/port-unset', '/port-3000', '/port-8888']) {
    const parent = routeParent(findStatus(await readStatus(gw.stateDir), 'HTTPRoute', p.slice(1), 'default'), 'gw');
    expect(condition(parent.conditions, 'ResolvedRefs')).toMatchObject({ status: 'True' });
    const res = await gw.request(p);
    expect(res.status).toBe(200);
    expect(res.json.pod).toMatch(/^primary-/);
  }
});

test('InferencePoolAppProtocol: a kubernetes.io/h2c pool is spoken to over HTTP/2 (its pod refuses HTTP/1.1)', async () => {
  const direct = await httpRequest(h2c.port, '/v1/completions', { method: 'POST', body: '{}' }, h2c.address).catch((e: Error) => e);
  expect(direct instanceof Error || direct.status !== 200).toBe(true);
  const res = await gw.complete(COMPLETION, { path: '/appprotocol-test/v1/completions' });
  expect(res.status).toBe(200);
  expect(res.json.pod).toBe('h2c-0');
  expect(res.json.choices[0].text).toBe('Portcullis routes tokens.');
});

test('InferencePoolResolvedRefsCondition: a pool behind routes on two Gateways has two parents; removing the route removes them', async () => {
  expect(await poolParent('secondary', 'secondary')).toBeDefined();
  const res = await gw.complete(COMPLETION, { path: '/both/v1/completions' }).then(() => undefined);
  expect(res).toBeUndefined();
  await gw.write('conformance.yaml', base.filter((d) => !(d.kind === 'HTTPRoute' && (d.metadata.name === 'both-gateways' || d.metadata.name === 'weighted'))));
  expect(await poolParent('secondary', 'secondary')).toBeUndefined();
  expect(await poolParent('secondary', 'gw')).toBeDefined(); // fail-open route still uses it
});

test('EppUnAvailableFailOpen: with the picker Service left without endpoints, a FailOpen pool still answers 200', async () => {
  const first = await gw.complete(COMPLETION, { path: '/failopen-pool-test/v1/completions', headers: { 'test-epp-endpoint-selection': secondary[1].address } });
  expect(first.json.pod).toBe('secondary-1');
  const withoutPicker = base
    .filter((d) => !(d.kind === 'HTTPRoute' && (d.metadata.name === 'both-gateways' || d.metadata.name === 'weighted')))
    .map((d) => (d.kind === 'EndpointSlice' && d.metadata.name === 'secondary-epp-1' ? { ...d, endpoints: [] } : d));
  await gw.write('conformance.yaml', withoutPicker);
  await eventually(() => gw.complete(COMPLETION, { path: '/failopen-pool-test/v1/completions' }), (r) => r.status === 200 && /^secondary-/.test(r.json.pod));
  for (let i = 0; i < 10; i++) {
    const res = await gw.complete(COMPLETION, { path: '/failopen-pool-test/v1/completions' });
    expect(res.status).toBe(200);
    expect(res.json.pod).toMatch(/^secondary-/);
  }
  // The FailClose pool next to it does fail once its picker is gone.
  const closed = base.map((d) => (d.kind === 'EndpointSlice' && d.metadata.name === 'primary-epp-1' ? { ...d, endpoints: [] } : d));
  await gw.write('conformance.yaml', closed);
  const res = await gw.complete(COMPLETION, { path: '/primary-gateway-test/v1/completions' });
  expect(res.status).toBe(503);
});
