/**
 * backendRef-level filters in rules with several backendRefs: a backendRef's filters apply to
 * the requests forwarded to that backend and to no other (Gateway API HTTPBackendRef.filters),
 * the rule's filters to all of them. The first case is the conformance suite's
 * HTTPRouteRequestHeaderModifierBackendWeights, ported.
 *
 * Shared by both providers: ../backend-filters.test.ts runs these cases in standalone mode,
 * e2e/k8s/conformance.test.ts through the Kubernetes API server.
 */
import type { GatewayFixture, StartGatewayFixture } from '../../support/gateway';
import { httpRoute, type Manifest } from '../../support/manifests';

const prefix = (value: string, extra: Manifest = {}) => [{ path: { type: 'PathPrefix', value }, ...extra }];
const setRequest = (name: string, value: string) => ({ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name, value }] } });
const response = (m: Manifest) => ({ type: 'ResponseHeaderModifier', responseHeaderModifier: m });
const rewritePrefix = (to: string) => ({ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: to } } });
const ref = (name: string, filters: Manifest[], weight?: number) => ({ name, port: 80, ...(weight !== undefined ? { weight } : {}), filters });

export const BACKEND_FILTER_ROUTES: Manifest[] = [
  httpRoute('request-header-modifier-backend-weights', {
    rules: [
      {
        matches: prefix('/weights'),
        backendRefs: [ref('v1', [setRequest('Backend', 'v1')], 10), ref('v2', [setRequest('Backend', 'v2')], 20), ref('v3', [setRequest('Backend', 'v3')], 70)],
      },
    ],
  }),
  httpRoute('backend-and-rule-filters', {
    rules: [
      {
        matches: prefix('/both'),
        // (One filter type at both levels is refused: which would win is not defined.)
        filters: [setRequest('X-Rule', 'every-backend')],
        backendRefs: [
          ref('v1', [{ type: 'URLRewrite', urlRewrite: { hostname: 'v1.example' } }]),
          ref('v2', [response({ set: [{ name: 'X-Served-Via', value: 'v2-filter' }], remove: ['X-Echo-Backend'] })]),
        ],
      },
      {
        matches: prefix('/rewrite'),
        backendRefs: [ref('v1', [rewritePrefix('/one')]), ref('v2', [rewritePrefix('/two')])],
      },
      {
        // Reached through the path location's dispatch (a header condition), then split.
        matches: prefix('/cond', { headers: [{ name: 'x-cond', value: '1' }] }),
        backendRefs: [ref('v1', [setRequest('X-Picked', 'v1')]), ref('v2', [setRequest('X-Picked', 'v2')])],
      },
      {
        // One share has no usable backend: it answers 500, the others keep their filters.
        matches: prefix('/half'),
        backendRefs: [ref('v1', [setRequest('X-Picked', 'v1')]), ref('missing', [setRequest('X-Picked', 'missing')])],
      },
      {
        // Weight 0 takes nothing, so the only backend left applies its filters to every request.
        matches: prefix('/only'),
        backendRefs: [ref('v1', [setRequest('X-Picked', 'v1')], 0), ref('v2', [setRequest('X-Picked', 'v2')], 1)],
      },
    ],
  }),
];

export function backendFilterCases(start: StartGatewayFixture, setupTimeoutMs = 60000): void {
  let gw: GatewayFixture;

  beforeAll(async () => {
    gw = await start({ backends: ['v1', 'v2', 'v3'], files: { 'routes.yaml': BACKEND_FILTER_ROUTES } });
  }, setupTimeoutMs);

  afterAll(async () => {
    await gw?.close();
  });

  test('HTTPRouteRequestHeaderModifierBackendWeights: every request carries the header of the backend it reached', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const res = await gw.request('/weights');
      expect(res.status).toBe(200);
      expect(res.json.headers.backend).toBe(res.json.backend);
      seen.add(res.json.backend);
    }
    // 10/20/70: each backend is reached in 100 draws (v1 missed with probability 0.9^100).
    expect([...seen].sort()).toEqual(['v1', 'v2', 'v3']);
  });

  test('rule filters apply to every backend, a backendRef’s only to its own', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const res = await gw.request('/both');
      expect(res.status).toBe(200);
      expect(res.json.headers['x-rule']).toBe('every-backend');
      seen.add(res.json.backend);
      if (res.json.backend === 'v1') {
        expect(res.json.headers.host).toBe('v1.example');
        expect(res.headers['x-served-via']).toBeUndefined();
        expect(res.headers['x-echo-backend']).toBe('v1');
      } else {
        expect(res.json.headers.host).not.toBe('v1.example');
        expect(res.headers['x-served-via']).toBe('v2-filter');
        expect(res.headers['x-echo-backend']).toBeUndefined();
      }
    }
    expect([...seen].sort()).toEqual(['v1', 'v2']);
  });

  test('each backend rewrites the path its own way', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await gw.request('/rewrite/x?q=1');
      expect(res.status).toBe(200);
      expect(res.json.url).toBe(res.json.backend === 'v1' ? '/one/x?q=1' : '/two/x?q=1');
    }
  });

  test('a rule reached through a header condition still splits with per-backend filters', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await gw.request('/cond', { headers: { 'x-cond': '1' } });
      expect(res.status).toBe(200);
      expect(res.json.headers['x-picked']).toBe(res.json.backend);
    }
    expect((await gw.request('/cond')).status).toBe(404);
  });

  test('the share of a missing backend answers 500; the other keeps its filters', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const res = await gw.request('/half');
      statuses.add(res.status);
      if (res.status === 200) expect(res.json.headers['x-picked']).toBe('v1');
    }
    expect([...statuses].sort()).toEqual([200, 500]);
  });

  test('weight 0 leaves one backend, whose filters apply to every request', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await gw.request('/only');
      expect(res.json).toMatchObject({ backend: 'v2', headers: { 'x-picked': 'v2' } });
    }
  });
}
