import { buildGraph, DEFAULT_CONTROLLER_NAME, type Graph } from '../src/graph';
import { computeStatuses } from '../src/status';
import { buildModel } from '../src/model';
import { parseInferencePoolValue } from '../src/model/inference';
import { renderConfig } from '../src/render';
import { gateway, gatewayClass, http, parse, route, service, slice } from './graph-fixtures';

const base = [gatewayClass(), gateway('gw', [http('web')])];
const POOL = { group: 'inference.networking.k8s.io', kind: 'InferencePool' };
const build = (enabled: boolean, ...docs: object[]): Graph =>
  buildGraph(parse(...base, ...docs).set, { controllerName: DEFAULT_CONTROLLER_NAME, inferenceExtension: enabled });
const poolRoute = (backendRefs: object[]) => route('r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs }] });
const pool = (name: string, spec: object = {}) => ({
  apiVersion: 'inference.networking.k8s.io/v1',
  kind: 'InferencePool',
  metadata: { name },
  spec: { selector: { matchLabels: { app: 'llm' } }, targetPorts: [{ number: 8000 }], ...spec },
});
const pod = (name: string, ip: string, extra: { labels?: object; ready?: string; deleting?: boolean; conditions?: boolean } = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: extra.labels ?? { app: 'llm' }, ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { containers: [{ name: 'vllm', image: 'vllm' }] },
  status: { phase: 'Running', podIP: ip, ...(extra.conditions === false ? {} : { conditions: [{ type: 'Ready', status: extra.ready ?? 'True' }] }) },
});
const resolvedRefs = (g: Graph) => g.routes[0].parents[0].conditions.find((c) => c.type === 'ResolvedRefs');
const epp = [service('epp', [{ name: 'grpc', port: 9002 }]), slice('epp-1', 'epp', [{ addresses: ['127.0.0.50'] }], [{ name: 'grpc', port: 9002 }])];

describe('graph: InferencePool backends', () => {
  test('without --gateway-api-inference-extension an InferencePool backendRef is InvalidKind and pools get no status', () => {
    const g = build(false, pool('llm'), poolRoute([{ ...POOL, name: 'llm' }]));
    expect(resolvedRefs(g)).toMatchObject({ status: 'False', reason: 'InvalidKind' });
    expect(resolvedRefs(g)!.message).toMatch(/--gateway-api-inference-extension/);
    expect(g.inferencePools).toBeUndefined();
  });

  test('candidates are the ready pods matching the selector, each on every targetPort', () => {
    const g = build(
      true,
      pool('llm', { targetPorts: [{ number: 8000 }, { number: 8001 }] }),
      pod('a', '10.0.0.1'),
      pod('b', '10.0.0.2', { ready: 'False' }),
      pod('c', '10.0.0.3', { labels: { app: 'other' } }),
      pod('d', '10.0.0.4', { deleting: true }),
      pod('e', '10.0.0.5', { conditions: false }),
      poolRoute([{ ...POOL, name: 'llm', port: 1234 }]),
    );
    const b = g.routes[0].rules[0].backends[0];
    expect(b.valid).toBe(true);
    expect(b.inference).toMatchObject({ pool: 'default/llm', picker: { kind: 'builtin' }, failureMode: 'FailClose' });
    expect(b.inference!.endpoints).toEqual(['10.0.0.1:8000', '10.0.0.1:8001', '10.0.0.5:8000', '10.0.0.5:8001']);
    expect(resolvedRefs(g)).toMatchObject({ status: 'True' });
  });

  test('the picker Service resolves to its ready endpoints; failureMode is carried', () => {
    const g = build(true, ...epp, pool('llm', { endpointPickerRef: { name: 'epp', port: { number: 9002 }, failureMode: 'FailOpen' } }), pod('a', '10.0.0.1'), poolRoute([{ ...POOL, name: 'llm' }]));
    expect(g.routes[0].rules[0].backends[0].inference).toMatchObject({ picker: { kind: 'service', addresses: ['127.0.0.50:9002'] }, failureMode: 'FailOpen' });
    const [report] = computeStatuses(g, parse(), { programmed: true, addresses: ['127.0.0.1'] }).filter((r) => r.kind === 'InferencePool');
    const parent = (report.status.parents as { parentRef: object; conditions: { type: string; status: string; reason: string }[] }[])[0];
    expect(parent.parentRef).toEqual({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'gw' });
    expect(parent.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Accepted', 'True', 'Accepted'],
      ['ResolvedRefs', 'True', 'ResolvedRefs'],
    ]);
  });

  test.each([
    ['a missing picker Service', { name: 'nope', port: { number: 9002 } }, /Service default\/nope not found/],
    ['a picker of another kind', { kind: 'Deployment', name: 'epp' }, /kind Deployment is not supported/],
    ['a port the picker Service lacks', { name: 'epp', port: { number: 1 } }, /has no port 1/],
  ])('%s: pool ResolvedRefs False InvalidExtensionRef, route ResolvedRefs False InvalidInferencePool, requests 500', (_name, ref, message) => {
    const g = build(true, ...epp, pool('llm', { endpointPickerRef: ref }), poolRoute([{ ...POOL, name: 'llm' }]));
    expect(resolvedRefs(g)).toMatchObject({ status: 'False', reason: 'InvalidInferencePool' });
    expect(resolvedRefs(g)!.message).toMatch(message);
    const [report] = computeStatuses(g, parse(), { programmed: true, addresses: [] }).filter((r) => r.kind === 'InferencePool');
    const conditions = (report.status.parents as { conditions: { type: string; status: string; reason: string; message: string }[] }[])[0].conditions;
    expect(conditions.find((c) => c.type === 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidExtensionRef' });
    expect(conditions.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'True' });
    const model = buildModel(g);
    expect(JSON.stringify(model.servers)).toContain('"code":500');
  });

  test('a missing pool is BackendNotFound; a pool no route uses has no parents', () => {
    const g = build(true, pool('unused'), poolRoute([{ ...POOL, name: 'nope' }]));
    expect(resolvedRefs(g)).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    expect(g.inferencePools).toEqual([expect.objectContaining({ name: 'unused', parents: [] })]);
  });

  test('a rule mixing an InferencePool with a Service is dropped with a message', () => {
    const g = build(true, pool('llm'), service('svc', [{ port: 80 }]), poolRoute([{ ...POOL, name: 'llm' }, { name: 'svc', port: 80 }]));
    expect(g.routes[0].rules[0]).toMatchObject({ valid: false });
    expect(g.routes[0].rules[0].invalidMessage).toMatch(/cannot mix InferencePool and Service/);
  });

  test('weighted pools become a split of pool descriptions the hop reads back', () => {
    const g = build(true, pool('a'), pool('b', { selector: { matchLabels: { app: 'b' } } }), pod('p', '10.0.0.1'), pod('q', '10.0.0.2', { labels: { app: 'b' } }), poolRoute([{ ...POOL, name: 'a', weight: 70 }, { ...POOL, name: 'b', weight: 30 }]));
    const model = buildModel(g);
    expect(model.inferenceHop).toBe(true);
    const split = model.splitClients[0];
    expect(split.buckets.map((b) => b.percent)).toEqual(['70.00', '*']);
    expect(split.buckets.map((b) => parseInferencePoolValue(b.value))).toEqual([
      { pool: 'default/a', failureMode: 'FailClose', picker: 'builtin', endpoints: ['10.0.0.1:8000'], h2c: false },
      { pool: 'default/b', failureMode: 'FailClose', picker: 'builtin', endpoints: ['10.0.0.2:8000'], h2c: false },
    ]);
  });
});

test('the hop upstream is rendered only when a rule uses a pool (portcullis-agent starts the hop when it sees it)', () => {
  const upstreams = (g: Graph) => renderConfig(buildModel(g), { listenAddress: '127.0.0.1', prefix: '/tmp/p', inferenceHop: '127.0.0.1:9' }).files['upstreams.conf'];
  const withPool = upstreams(build(true, pool('llm'), pod('p', '10.0.0.1'), poolRoute([{ ...POOL, name: 'llm' }])));
  expect(withPool).toContain('upstream portcullis_inference_hop {\n    server "127.0.0.1:9";');
  expect(upstreams(build(true, pool('llm'), pod('p', '10.0.0.1')))).not.toContain('portcullis_inference_hop');
});

describe('Kubernetes provider: what it watches for the inference extension', () => {
  // Imported here, not at the top: the provider's module graph loads @kubernetes/client-node.
  const { watchedKinds } = jest.requireActual('../src/providers/kubernetes/kinds') as typeof import('../src/providers/kubernetes/kinds');
  test('InferencePools and Pods are listed and watched only with --gateway-api-inference-extension', () => {
    const off = watchedKinds({}).map((k) => k.kind);
    const on = watchedKinds({ inferenceExtension: true }).map((k) => k.kind);
    expect(off).not.toContain('InferencePool');
    expect(off).not.toContain('Pod');
    expect(on).toEqual(expect.arrayContaining(['InferencePool', 'Pod', 'Service', 'HTTPRoute']));
    expect(on.filter((k) => !off.includes(k)).sort()).toEqual(['InferencePool', 'Pod']);
  });
});
