/** GRPCRoute precedence (GRPCRoute spec order) and HTTPRoute/GRPCRoute separation, read from the model. */
import { buildGraph, DEFAULT_CONTROLLER_NAME } from '../src/graph';
import { buildModel } from '../src/model';
import { gateway, gatewayClass, GW_API, http, parse, route, service, slice } from './graph-fixtures';
import { simulate } from './model-simulate';

const grpcRoute = (name: string, spec: object, creationTimestamp = '2026-01-01T00:00:00Z') => ({
  apiVersion: GW_API,
  kind: 'GRPCRoute',
  metadata: { name, namespace: 'default', creationTimestamp },
  spec: { parentRefs: [{ name: 'gw' }], ...spec },
});
const to = [{ name: 'svc', port: 80 }];
const base = [
  gatewayClass(),
  gateway('gw', [http('web', 80)]),
  service('svc', [{ name: 'http', port: 80, protocol: 'TCP' }]),
  slice('svc-1', 'svc', [{ addresses: ['127.0.0.1'] }], [{ name: 'http', port: 9000, protocol: 'TCP' }]),
];

function model(...docs: object[]) {
  const parsed = parse(...base, ...docs);
  const graph = buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
  return { graph, model: buildModel(graph) };
}
const call = (m: ReturnType<typeof model>['model'], host: string, path: string, headers: Record<string, string> = {}) =>
  simulate(m, 80, { host, path, method: 'POST', headers: { 'content-type': 'application/grpc', ...headers } });

describe('GRPCRoute precedence', () => {
  test('more service characters win, even a RegularExpression over an Exact service + method', () => {
    const { model: m } = model(
      grpcRoute('r', {
        hostnames: ['g.test'],
        rules: [
          { matches: [{ method: { service: 'foo.Bar', method: 'Get' } }], backendRefs: to },
          { matches: [{ method: { type: 'RegularExpression', service: 'foo\\.Bar.*', method: '.*' } }], backendRefs: to },
        ],
      }),
    );
    expect(call(m, 'g.test', '/foo.Bar/Get')).toBe('default/r#1');
    expect(call(m, 'g.test', '/foo.Barn/Get')).toBe('default/r#1');
    expect(call(m, 'g.test', '/other.S/Get')).toBe(404);
  });

  test('a service-only match beats a method-only match; then more method characters win', () => {
    const { model: m } = model(
      grpcRoute('r', {
        hostnames: ['g.test'],
        rules: [
          { matches: [{ method: { method: 'Get' } }], backendRefs: to },
          { matches: [{ method: { service: 'a.B' } }], backendRefs: to },
          { matches: [{ method: { service: 'a.B', method: 'Get' } }], backendRefs: to },
        ],
      }),
    );
    expect(call(m, 'g.test', '/a.B/Get')).toBe('default/r#2');
    expect(call(m, 'g.test', '/a.B/Put')).toBe('default/r#1');
    expect(call(m, 'g.test', '/x.Y/Get')).toBe('default/r#0');
    expect(call(m, 'g.test', '/x.Y/Getter')).toBe(404);
  });

  test('equal service and method: more header matches win, then rule order', () => {
    const { model: m } = model(
      grpcRoute('r', {
        hostnames: ['g.test'],
        rules: [
          { matches: [{ method: { service: 'a.B', method: 'Get' } }], backendRefs: to },
          { matches: [{ method: { service: 'a.B', method: 'Get' }, headers: [{ name: 'x-a', value: '1' }] }], backendRefs: to },
          { matches: [{ method: { service: 'a.B', method: 'Get' }, headers: [{ name: 'x-a', value: '1' }] }], backendRefs: to },
        ],
      }),
    );
    expect(call(m, 'g.test', '/a.B/Get', { 'x-a': '1' })).toBe('default/r#1');
    expect(call(m, 'g.test', '/a.B/Get')).toBe('default/r#0');
  });

  test('RegularExpression candidates keep their place between Exact ones (service characters 11 > 8 > 5)', () => {
    const { model: m } = model(
      grpcRoute('r', {
        hostnames: ['g.test'],
        rules: [
          { matches: [{ method: { type: 'RegularExpression', service: 'a\\..*' } }], backendRefs: to },
          { matches: [{ method: { service: 'a.Longer', method: 'M' } }], backendRefs: to },
          { matches: [{ method: { type: 'RegularExpression', service: 'a\\.Longer.*', method: 'X' } }], backendRefs: to },
        ],
      }),
    );
    // Positions: r#2 (11 service characters), r#1 (8), r#0 (5): r#0's regex must not jump ahead of r#1.
    expect(call(m, 'g.test', '/a.Longer/X')).toBe('default/r#2');
    expect(call(m, 'g.test', '/a.Longer/M')).toBe('default/r#1');
    expect(call(m, 'g.test', '/a.Longer/N')).toBe('default/r#0');
    expect(call(m, 'g.test', '/a.Other/M')).toBe('default/r#0');
  });

  test('across routes: the more specific hostname first, then the older route, then namespace/name', () => {
    const { model: m } = model(
      grpcRoute('wild', { hostnames: ['*.test'], rules: [{ matches: [{ method: { service: 'a.LongService' } }], backendRefs: to }] }),
      grpcRoute('young', { hostnames: ['g.test'], rules: [{ matches: [{ method: { service: 'a.B' } }], backendRefs: to }] }, '2026-02-01T00:00:00Z'),
      grpcRoute('old', { hostnames: ['g.test'], rules: [{ matches: [{ method: { service: 'a.B' } }], backendRefs: to }] }, '2025-01-01T00:00:00Z'),
      grpcRoute('b-same', { hostnames: ['h.test'], rules: [{ backendRefs: to }] }),
      grpcRoute('a-same', { hostnames: ['h.test'], rules: [{ backendRefs: to }] }),
    );
    // g.test also takes *.test's rules (after its own, by hostname precedence).
    expect(call(m, 'g.test', '/a.LongService/M')).toBe('default/wild#0');
    expect(call(m, 'g.test', '/a.B/M')).toBe('default/old#0');
    expect(call(m, 'x.test', '/a.LongService/M')).toBe('default/wild#0');
    expect(call(m, 'h.test', '/any.S/M')).toBe('default/a-same#0');
  });
});

describe('HTTPRoutes and GRPCRoutes are not merged', () => {
  test('intersecting hostnames on one listener: the older route is accepted, the other HostnameConflict', () => {
    const { graph, model: m } = model(
      route('web', { parentRefs: [{ name: 'gw' }], hostnames: ['*.example'], rules: [{ backendRefs: to }] }, { creationTimestamp: '2025-06-01T00:00:00Z' }),
      grpcRoute('rpc', { hostnames: ['api.example'], rules: [{ backendRefs: to }] }, '2026-01-01T00:00:00Z'),
      grpcRoute('other', { hostnames: ['rpc.test'], rules: [{ backendRefs: to }] }, '2024-01-01T00:00:00Z'),
    );
    const rpc = graph.routes.find((r) => r.name === 'rpc')!;
    expect(rpc.kind).toBe('GRPCRoute');
    expect(rpc.parents[0].conditions.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'HostnameConflict' });
    expect(graph.routes.find((r) => r.name === 'other')!.parents[0].accepted).toBe(true);
    expect(graph.gateways[0].listeners[0].attachedRoutes).toBe(2);
    expect(simulate(m, 80, { host: 'api.example', path: '/a.B/M' })).toBe('default/web#0');
    expect(call(m, 'rpc.test', '/a.B/M')).toBe('default/other#0');
  });

  test('a gRPC server answers nginx errors as gRPC statuses and proxies with grpc_pass', () => {
    const { model: m } = model(grpcRoute('rpc', { hostnames: ['rpc.test'], rules: [{ matches: [{ method: { service: 'a.B' } }], backendRefs: to }] }));
    const server = m.servers.find((s) => s.serverNames.includes('rpc.test'))!;
    expect(server.grpcErrors?.find((e) => e.code === 404)).toMatchObject({ grpcStatus: 12 });
    expect(server.grpcErrors?.find((e) => e.code === 429)).toMatchObject({ grpcStatus: 8 });
    expect(server.ruleLocations.every((r) => r.grpc)).toBe(true);
    expect(m.http.http2).toBe(true);
  });
});

describe('Service appProtocol', () => {
  const h2cService = (appProtocol: string) => [
    service('app', [{ name: 'grpc', port: 80, protocol: 'TCP', appProtocol }]),
    slice('app-1', 'app', [{ addresses: ['127.0.0.1'] }], [{ name: 'grpc', port: 9000, protocol: 'TCP', appProtocol }]),
  ];
  const resolved = (graph: ReturnType<typeof model>['graph'], name: string) => graph.routes.find((r) => r.name === name)!.parents[0].conditions.find((c) => c.type === 'ResolvedRefs')!;

  test('kubernetes.io/h2c: GRPCRoutes and HTTPRoutes reach it over HTTP/2 (grpc_pass)', () => {
    const { graph, model: m } = model(
      ...h2cService('kubernetes.io/h2c'),
      grpcRoute('rpc', { hostnames: ['rpc.test'], rules: [{ backendRefs: [{ name: 'app', port: 80 }] }] }),
      route('web', { parentRefs: [{ name: 'gw' }], hostnames: ['web.test'], rules: [{ backendRefs: [{ name: 'app', port: 80 }] }] }),
    );
    expect(resolved(graph, 'rpc')).toMatchObject({ status: 'True' });
    expect(resolved(graph, 'web')).toMatchObject({ status: 'True' });
    const web = m.servers.find((s) => s.serverNames.includes('web.test'))!;
    expect(web.ruleLocations.map((l) => ({ grpc: l.grpc, target: l.target }))).toEqual([{ grpc: true, target: { kind: 'upstream', upstream: 'g_default__app_80' } }]);
  });

  test('an HTTPRoute rule mixing h2c and HTTP/1.1 backends, or rewriting the path to h2c ones, is dropped with the reason', () => {
    const { graph } = model(
      ...h2cService('kubernetes.io/h2c'),
      route('web', {
        parentRefs: [{ name: 'gw' }],
        hostnames: ['web.test'],
        rules: [
          { backendRefs: [{ name: 'app', port: 80 }, { name: 'svc', port: 80 }] },
          { matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }], backendRefs: [{ name: 'app', port: 80 }] },
          { matches: [{ path: { type: 'PathPrefix', value: '/ok' } }], backendRefs: [{ name: 'app', port: 80 }] },
        ],
      }),
    );
    const rules = graph.routes.find((r) => r.name === 'web')!.rules;
    expect(rules.map((r) => r.valid)).toEqual([false, false, true]);
    expect(rules[0].invalidMessage).toContain('kubernetes.io/h2c and HTTP/1.1 backends in one rule are not supported');
    expect(rules[1].invalidMessage).toContain('URLRewrite path to backends with appProtocol kubernetes.io/h2c is not supported');
  });

  test('kubernetes.io/ws on a GRPCRoute backend: UnsupportedProtocol', () => {
    const { graph } = model(...h2cService('kubernetes.io/ws'), grpcRoute('rpc', { hostnames: ['rpc.test'], rules: [{ backendRefs: [{ name: 'app', port: 80 }] }] }));
    expect(resolved(graph, 'rpc')).toMatchObject({ status: 'False', reason: 'UnsupportedProtocol' });
    expect(resolved(graph, 'rpc').message).toContain('kubernetes.io/ws');
  });
});
