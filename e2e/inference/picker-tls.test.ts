/**
 * TLS towards endpoint pickers: on by default without verification (external-picker.test.ts
 * talks to a self-signed picker that way); --endpoint-picker-disable-tls for plaintext pickers;
 * --endpoint-picker-tls-verify with --endpoint-picker-ca-file to verify them.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { httpRoute } from '../support/manifests';
import { inferencePool, podFor, type ModelServer } from '../support/model-server';
import { COMPLETION, podPort, startInferenceGateway, startPods, type InferenceGateway } from './support';
import { pickerService, selfSignedCert, startTestPicker, type TestPicker } from './test-picker';

const POOL = { group: 'inference.networking.k8s.io', kind: 'InferencePool' };
const labels = { app: 'llm' };
let pods: ModelServer[];
const pickers: TestPicker[] = [];
const gateways: InferenceGateway[] = [];

function files(pickerPorts: Record<string, number>, port: number) {
  return {
    'pool.yaml': [
      ...pods.map((p) => podFor(p, labels)),
      ...Object.entries(pickerPorts).flatMap(([name, p]) => [
        ...pickerService(`epp-${name}`, p),
        inferencePool(name, { labels, ports: [port], picker: { name: `epp-${name}`, port: 9002 } }),
        httpRoute(name, { rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }], backendRefs: [{ ...POOL, name }] }] }),
      ]),
    ],
  };
}

beforeAll(async () => {
  const port = await podPort();
  pods = (await startPods(['pod-a'], [port], 41)).map((r) => r[0]);
}, 30000);

afterAll(async () => {
  for (const g of gateways) await g.close();
  for (const p of pickers) await p.close();
  await Promise.all((pods ?? []).map((p) => p.close()));
});

test('--endpoint-picker-disable-tls talks plaintext (h2c) to a plaintext picker; the default (TLS) cannot', async () => {
  const plain = await startTestPicker(undefined, () => ({ endpoints: pods[0].endpoint }));
  pickers.push(plain);
  const off = await startInferenceGateway(files({ plain: plain.port }, pods[0].port), ['--gateway-api-inference-extension', '--endpoint-picker-disable-tls']);
  gateways.push(off);
  const res = await off.complete(COMPLETION, { path: '/plain/v1/completions' });
  expect(res.status).toBe(200);
  expect(res.json.pod).toBe('pod-a');
  const on = await startInferenceGateway(files({ plain: plain.port }, pods[0].port));
  gateways.push(on);
  const seen = plain.seen.length;
  const refused = await on.complete(COMPLETION, { path: '/plain/v1/completions' });
  expect(refused.status).toBe(503);
  expect(plain.seen.length).toBe(seen);
}, 90000);

test('--endpoint-picker-tls-verify accepts a picker whose certificate the CA file holds and refuses another', async () => {
  const trusted = await selfSignedCert();
  const good = await startTestPicker(trusted, () => ({ endpoints: pods[0].endpoint }));
  const bad = await startTestPicker(await selfSignedCert(), () => ({ endpoints: pods[0].endpoint }));
  pickers.push(good, bad);
  const dir = await fs.mkdtemp('/tmp/pc-ca-');
  const ca = path.join(dir, 'ca.pem');
  await fs.writeFile(ca, trusted.cert);
  const gw = await startInferenceGateway(files({ good: good.port, bad: bad.port }, pods[0].port), ['--gateway-api-inference-extension', '--endpoint-picker-tls-verify', `--endpoint-picker-ca-file=${ca}`]);
  gateways.push(gw);
  expect((await gw.complete(COMPLETION, { path: '/good/v1/completions' })).status).toBe(200);
  expect((await gw.complete(COMPLETION, { path: '/bad/v1/completions' })).status).toBe(503);
  expect(bad.seen).toHaveLength(0);
  await fs.rm(dir, { recursive: true, force: true });
}, 90000);
