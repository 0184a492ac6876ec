/**
 * GRPCRoute filters through the real controller and nginx with grpc-js clients and servers: the
 * conformance cases grpcroute-request-header-modifier and grpcroute-request-mirror.
 */
import type * as grpc from '@grpc/grpc-js';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { echoPath, ECHO_SERVICE, grpcCall, grpcClient, type GrpcEchoBackend, startGrpcEchoBackend } from '../support/grpc-echo';
import { eventually } from '../support/http';
import { GATEWAY_API, type Manifest, serviceFor } from '../support/manifests';

let gw: GatewayFixture;
const backends: Record<string, GrpcEchoBackend> = {};
let client: grpc.Client;

const route = (name: string, hostname: string, filters: Manifest[]): Manifest => ({
  apiVersion: GATEWAY_API,
  kind: 'GRPCRoute',
  metadata: { name },
  spec: { parentRefs: [{ name: 'gw' }], hostnames: [hostname], rules: [{ matches: [{ method: { service: ECHO_SERVICE, method: 'Echo' } }], filters, backendRefs: [{ name: 'grpc-main', port: 80 }] }] },
});

beforeAll(async () => {
  for (const name of ['main', 'mirror']) backends[name] = await startGrpcEchoBackend(`grpc-${name}`);
  gw = await startGatewayFixture({
    files: {
      'grpc.yaml': [
        ...serviceFor('grpc-main', backends.main.port),
        ...serviceFor('grpc-mirror', backends.mirror.port),
        route('headers', 'headers.grpc', [
          {
            type: 'RequestHeaderModifier',
            requestHeaderModifier: {
              set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }],
              add: [{ name: 'X-Header-Add', value: 'add-appends-values' }],
              remove: ['X-Header-Remove'],
            },
          },
        ]),
        route('mirror', 'mirror.grpc', [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'grpc-mirror', port: 80 } } }]),
        // backendRef filters next to another backendRef: each call carries its own backend's header.
        {
          ...route('per-backend', 'per-backend.grpc', []),
          spec: {
            parentRefs: [{ name: 'gw' }],
            hostnames: ['per-backend.grpc'],
            rules: [
              {
                matches: [{ method: { service: ECHO_SERVICE, method: 'Echo' } }],
                backendRefs: ['grpc-main', 'grpc-mirror'].map((name) => ({ name, port: 80, filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Backend', value: name }] } }] })),
              },
            ],
          },
        },
      ],
    },
  });
  client = grpcClient(gw.port);
}, 60000);

afterAll(async () => {
  client?.close();
  await gw?.close();
  for (const b of Object.values(backends)) await b.close();
});

test('RequestHeaderModifier: set, add and remove reach the gRPC backend as metadata', async () => {
  const c = grpcClient(gw.port, 'headers.grpc');
  try {
    const r = await grpcCall(c, echoPath(), { 'x-header-set': 'some-other-value', 'x-header-add': 'some-other-value', 'x-header-remove': 'val' });
    expect(r.code).toBe(0);
    expect(r.reply!.backend).toBe('grpc-main');
    expect(r.reply!.headers['x-header-set']).toBe('set-overwrites-values');
    expect(r.reply!.headers['x-header-add']).toBe('some-other-value,add-appends-values');
    expect(r.reply!.headers['x-header-remove']).toBeUndefined();
    expect(r.reply!.authority).toBe('headers.grpc');
  } finally {
    c.close();
  }
});

test('RequestMirror: the mirror backend receives the call too', async () => {
  const c = grpcClient(gw.port, 'mirror.grpc');
  try {
    const tag = `t${Date.now()}`;
    const r = await grpcCall(c, echoPath(), { 'x-tag': tag });
    expect(r.code).toBe(0);
    expect(r.reply!.backend).toBe('grpc-main');
    await eventually(async () => backends.mirror.calls.some((call) => call.headers['x-tag'] === tag), (x) => x);
  } finally {
    c.close();
  }
});

test('backendRef filters with two backendRefs: each call carries the header of the backend it reached', async () => {
  const c = grpcClient(gw.port, 'per-backend.grpc');
  try {
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const r = await grpcCall(c, echoPath(), {});
      expect(r.code).toBe(0);
      expect(r.reply!.headers.backend).toBe(r.reply!.backend);
      seen.add(r.reply!.backend);
    }
    expect([...seen].sort()).toEqual(['grpc-main', 'grpc-mirror']);
    // A method no rule matches still gets UNIMPLEMENTED through the server's gRPC error pages.
    expect((await grpcCall(c, echoPath('EchoTwo'), {})).code).toBe(12);
  } finally {
    c.close();
  }
});
