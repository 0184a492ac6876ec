/**
 * HTTPRoute matching through the real controller CLI and a real nginx: every path type,
 * header / query / method conditions, ANY of the matches and ALL of a match's conditions,
 * precedence across rules and routes, and 404 when nothing matches.
 *
 * Shared by both providers: ../matching.test.ts runs these cases in standalone mode,
 * e2e/k8s/conformance.test.ts through the Kubernetes API server.
 */
import type { GatewayFixture, StartGatewayFixture } from '../../support/gateway';
import { httpRoute, rule } from '../../support/manifests';

export function matchingCases(start: StartGatewayFixture, setupTimeoutMs = 60000): void {
  const BACKENDS = [
    'exact', 'prefix', 'deeper', 'regex', 'rp-prefix', 'rp-regex',
    'm-default', 'm-header', 'm-query', 'm-method', 'm-all', 'any', 'hre', 'qre', 'get-only',
    'older', 'newer', 'alpha', 'beta', 'short', 'long', 'e-exact', 'e-prefix', 'first-rule', 'second-rule',
  ];

  const path = (type: string, value: string) => ({ path: { type, value } });

  let gw: GatewayFixture;

  beforeAll(async () => {
    gw = await start({
      backends: BACKENDS,
      files: {
        'paths.yaml': [
          httpRoute('paths', {
            rules: [
              rule('exact', [path('Exact', '/exact')]),
              rule('prefix', [path('PathPrefix', '/prefix')]),
              rule('deeper', [path('PathPrefix', '/prefix/deeper/')]),
              rule('regex', [path('RegularExpression', '/regex/[0-9]+')]),
              rule('rp-prefix', [path('PathPrefix', '/rp')]),
              rule('rp-regex', [path('RegularExpression', '/rp/[a-z]+')]),
            ],
          }),
        ],
        'conditions.yaml': [
          httpRoute('conditions', {
            rules: [
              rule('m-default', [path('PathPrefix', '/m')]),
              rule('m-header', [{ ...path('PathPrefix', '/m'), headers: [{ name: 'X-Env', value: 'prod' }] }]),
              rule('m-query', [{ ...path('PathPrefix', '/m'), queryParams: [{ name: 'env', value: 'prod' }] }]),
              rule('m-method', [{ ...path('PathPrefix', '/m'), method: 'POST' }]),
              rule('m-all', [
                { ...path('PathPrefix', '/m'), headers: [{ name: 'X-Env', value: 'prod' }], queryParams: [{ name: 'env', value: 'prod' }] },
              ]),
              rule('any', [
                { ...path('Exact', '/any'), headers: [{ name: 'X-A', value: '1' }] },
                { ...path('Exact', '/any'), queryParams: [{ name: 'a', value: '1' }] },
              ]),
              rule('hre', [{ ...path('PathPrefix', '/hre'), headers: [{ name: 'X-Version', type: 'RegularExpression', value: 'v[0-9]+' }] }]),
              rule('qre', [{ ...path('PathPrefix', '/qre'), queryParams: [{ name: 'id', type: 'RegularExpression', value: '[0-9]+' }] }]),
              rule('get-only', [{ ...path('PathPrefix', '/get-only'), method: 'GET' }]),
            ],
          }),
        ],
        'precedence.yaml': [
          // Same path in two routes: the older route wins, whatever the names.
          httpRoute('zz-older', { creationTimestamp: '2020-01-01T00:00:00Z', rules: [rule('older', [path('PathPrefix', '/shared')])] }),
          httpRoute('aa-newer', { creationTimestamp: '2024-01-01T00:00:00Z', rules: [rule('newer', [path('PathPrefix', '/shared')])] }),
          // Same creation time: namespace/name alphabetical order decides.
          httpRoute('beta', { creationTimestamp: '2021-01-01T00:00:00Z', rules: [rule('beta', [path('PathPrefix', '/tie')])] }),
          httpRoute('alpha', { creationTimestamp: '2021-01-01T00:00:00Z', rules: [rule('alpha', [path('PathPrefix', '/tie')])] }),
          // Longest prefix and exact-over-prefix hold across routes too.
          httpRoute('short', { rules: [rule('short', [path('PathPrefix', '/p/a')])] }),
          httpRoute('long', { rules: [rule('long', [path('PathPrefix', '/p/a/b')])] }),
          httpRoute('e-prefix', { rules: [rule('e-prefix', [path('PathPrefix', '/e')])] }),
          httpRoute('e-exact', { rules: [rule('e-exact', [path('Exact', '/e')])] }),
          // Inside one route, the first of two equal rules wins.
          httpRoute('order', { rules: [rule('first-rule', [path('PathPrefix', '/order')]), rule('second-rule', [path('PathPrefix', '/order')])] }),
        ],
      },
    });
  }, setupTimeoutMs);

  afterAll(async () => {
    await gw?.close();
  });

  describe('path matching', () => {
    test('Exact matches the whole path only', async () => {
      expect(await gw.backend('/exact')).toBe('exact');
      expect(await gw.backend('/exact?x=1')).toBe('exact');
      expect(await gw.backend('/exact/')).toBe(404);
      expect(await gw.backend('/exactly')).toBe(404);
    });

    test('PathPrefix matches whole "/" segments: /prefix matches /prefix, /prefix/ and /prefix/x but not /prefixx', async () => {
      expect(await gw.backend('/prefix')).toBe('prefix');
      expect(await gw.backend('/prefix/')).toBe('prefix');
      expect(await gw.backend('/prefix/x/y')).toBe('prefix');
      expect(await gw.backend('/prefixx')).toBe(404);
    });

    test('a trailing "/" in a PathPrefix value is ignored, and the longest prefix wins', async () => {
      expect(await gw.backend('/prefix/deeper')).toBe('deeper');
      expect(await gw.backend('/prefix/deeper/z')).toBe('deeper');
      expect(await gw.backend('/prefix/deeperx')).toBe('prefix');
    });

    test('RegularExpression is anchored at the start of the path', async () => {
      expect(await gw.backend('/regex/123')).toBe('regex');
      expect(await gw.backend('/regex/42/more')).toBe('regex');
      expect(await gw.backend('/regex/abc')).toBe(404);
      expect(await gw.backend('/x/regex/123')).toBe(404);
    });

    test('a RegularExpression path outranks a PathPrefix (implementation-specific; as NGINX Gateway Fabric)', async () => {
      expect(await gw.backend('/rp/abc')).toBe('rp-regex');
      expect(await gw.backend('/rp/123')).toBe('rp-prefix');
      expect(await gw.backend('/rp')).toBe('rp-prefix');
    });

    test('the backend receives the original path and query string', async () => {
      const res = await gw.request('/prefix/a%20b/c?x=1&y=two');
      expect(res.json).toMatchObject({ backend: 'prefix', url: '/prefix/a%20b/c?x=1&y=two', method: 'GET' });
    });
  });

  describe('header, query parameter and method matches', () => {
    test('a header match selects its rule; header names are case-insensitive, values exact', async () => {
      expect(await gw.backend('/m', { headers: { 'X-Env': 'prod' } })).toBe('m-header');
      expect(await gw.backend('/m', { headers: { 'x-env': 'prod' } })).toBe('m-header');
      expect(await gw.backend('/m', { headers: { 'X-Env': 'Prod' } })).toBe('m-default');
      expect(await gw.backend('/m')).toBe('m-default');
    });

    test('a query parameter match selects its rule; names are case-sensitive', async () => {
      expect(await gw.backend('/m?env=prod')).toBe('m-query');
      expect(await gw.backend('/m?a=1&env=prod&b=2')).toBe('m-query');
      expect(await gw.backend('/m?ENV=prod')).toBe('m-default');
      expect(await gw.backend('/m?env=production')).toBe('m-default');
      expect(await gw.backend('/m?xenv=prod')).toBe('m-default');
    });

    test('a method match selects its rule', async () => {
      expect(await gw.backend('/m', { method: 'POST', body: 'x' })).toBe('m-method');
      expect(await gw.backend('/m', { method: 'PUT', body: 'x' })).toBe('m-default');
    });

    test('ALL conditions of one match element must hold', async () => {
      expect(await gw.backend('/m?env=prod', { headers: { 'X-Env': 'prod' } })).toBe('m-all');
    });

    test('ANY match element of a rule is enough', async () => {
      expect(await gw.backend('/any', { headers: { 'X-A': '1' } })).toBe('any');
      expect(await gw.backend('/any?a=1')).toBe('any');
      expect(await gw.backend('/any')).toBe(404);
      expect(await gw.backend('/any?a=2', { headers: { 'X-A': '2' } })).toBe(404);
    });

    test('RegularExpression header and query values', async () => {
      expect(await gw.backend('/hre', { headers: { 'X-Version': 'v12' } })).toBe('hre');
      expect(await gw.backend('/hre', { headers: { 'X-Version': 'latest' } })).toBe(404);
      expect(await gw.backend('/qre?id=123')).toBe('qre');
      expect(await gw.backend('/qre?id=abc')).toBe(404);
    });

    test('a method no rule allows answers 404, HEAD included when only GET is allowed', async () => {
      expect(await gw.backend('/get-only')).toBe('get-only');
      expect((await gw.request('/get-only', { method: 'HEAD' })).status).toBe(404);
      expect((await gw.request('/get-only', { method: 'POST', body: '' })).status).toBe(404);
    });
  });

  describe('precedence between rules', () => {
    test('method beats headers, headers beat query params, more conditions beat fewer', async () => {
      expect(await gw.backend('/m?env=prod', { method: 'POST', body: 'x', headers: { 'X-Env': 'prod' } })).toBe('m-method');
      expect(await gw.backend('/m?env=prod', { headers: { 'X-Env': 'prod' } })).toBe('m-all');
    });

    test('between two equal rules of one route, the first in the list wins', async () => {
      expect(await gw.backend('/order/x')).toBe('first-rule');
    });
  });

  describe('precedence between routes', () => {
    test('the oldest route wins a tie, whatever its name', async () => {
      expect(await gw.backend('/shared')).toBe('older');
    });

    test('with equal creation times, the first by namespace/name wins', async () => {
      expect(await gw.backend('/tie')).toBe('alpha');
    });

    test('the longest prefix wins across routes', async () => {
      expect(await gw.backend('/p/a/b/c')).toBe('long');
      expect(await gw.backend('/p/a/c')).toBe('short');
    });

    test('an Exact path beats a PathPrefix across routes', async () => {
      expect(await gw.backend('/e')).toBe('e-exact');
      expect(await gw.backend('/e/f')).toBe('e-prefix');
    });
  });

  describe('requests no rule matches', () => {
    test('answer 404', async () => {
      expect(await gw.backend('/')).toBe(404);
      expect(await gw.backend('/nothing/here')).toBe(404);
    });

    test('a Host header with a port is matched without the port', async () => {
      expect(await gw.backend('/exact', { host: `example.test:${gw.port}` })).toBe('exact');
    });
  });
}
