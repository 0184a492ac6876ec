/**
 * HTTPRoute filters through the real controller and nginx: the Gateway API conformance cases
 * (httproute-request-header-modifier, -response-header-modifier, -redirect-*, -rewrite-*,
 * -request-mirror, -cors) ported to our echo backend, plus hostile values.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { eventually } from '../support/http';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { httpRoute, Manifest } from '../support/manifests';
import { condition, findStatus, readStatus, routeParent } from '../support/status';

let gw: GatewayFixture;

const backendRef = (name = 'v1') => [{ name, port: 80 }];
const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];
const filterRule = (path: string, filters: Manifest[], backend: string | null = 'v1'): Manifest => ({
  matches: prefix(path),
  filters,
  ...(backend ? { backendRefs: backendRef(backend) } : {}),
});
const reqHeaders = (m: Manifest) => ({ type: 'RequestHeaderModifier', requestHeaderModifier: m });
const resHeaders = (m: Manifest) => ({ type: 'ResponseHeaderModifier', responseHeaderModifier: m });
const redirect = (r: Manifest) => ({ type: 'RequestRedirect', requestRedirect: r });
const rewrite = (r: Manifest) => ({ type: 'URLRewrite', urlRewrite: r });

const HEADERS_ROUTE = httpRoute('request-header-modifier', {
  rules: [
    filterRule('/set', [reqHeaders({ set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }] })]),
    filterRule('/add', [reqHeaders({ add: [{ name: 'X-Header-Add', value: 'add-appends-values' }] })]),
    filterRule('/remove', [reqHeaders({ remove: ['X-Header-Remove'] })]),
    filterRule('/multiple', [
      reqHeaders({
        set: [
          { name: 'X-Header-Set-1', value: 'header-set-1' },
          { name: 'X-Header-Set-2', value: 'header-set-2' },
        ],
        add: [
          { name: 'X-Header-Add-1', value: 'header-add-1' },
          { name: 'X-Header-Add-2', value: 'header-add-2' },
          { name: 'X-Header-Add-3', value: 'header-add-3' },
        ],
        remove: ['X-Header-Remove-1', 'X-Header-Remove-2'],
      }),
    ]),
    filterRule('/case-insensitivity', [reqHeaders({ set: [{ name: 'X-Header-Set', value: 'header-set' }], add: [{ name: 'X-Header-Add', value: 'header-add' }], remove: ['X-Header-Remove'] })]),
    // Values nginx would read as variables, quotes, braces and semicolons reach the backend as written.
    filterRule('/hostile', [reqHeaders({ set: [{ name: 'X-Hostile', value: '$host"; return 200 "pwned; ${x} \\ {}' }], add: [{ name: 'X-Dollar', value: '$1$$' }] })]),
  ],
});

const RESPONSE_ROUTE = httpRoute('response-header-modifier', {
  rules: [
    filterRule('/response/set', [resHeaders({ set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }] })]),
    filterRule('/response/add', [resHeaders({ add: [{ name: 'X-Header-Add', value: 'add-appends-values' }] })]),
    filterRule('/response/remove', [resHeaders({ remove: ['X-Header-Remove'] })]),
    filterRule('/response/case-insensitivity', [
      resHeaders({
        set: [{ name: 'X-Header-Set', value: 'header-set' }],
        add: [
          { name: 'X-Header-Add', value: 'header-add' },
          { name: 'x-lowercase-add', value: 'lowercase-add' },
          { name: 'X-UPPERCASE-ADD', value: 'uppercase-add' },
        ],
        remove: ['X-Header-Remove'],
      }),
    ]),
    filterRule('/response-and-request', [
      resHeaders({ set: [{ name: 'X-Header-Set-1', value: 'header-set-1' }], remove: ['X-Header-Remove-1'] }),
      reqHeaders({ set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }], add: [{ name: 'X-Header-Add-Append', value: 'header-val-2' }], remove: ['X-Header-Remove'] }),
    ]),
  ],
});

const REDIRECT_ROUTE = httpRoute('redirect', {
  rules: [
    filterRule('/original-prefix', [redirect({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/replacement-prefix' } })], null),
    filterRule('/full', [redirect({ path: { type: 'ReplaceFullPath', replaceFullPath: '/full-path-replacement' } })], null),
    filterRule('/path-and-host', [redirect({ hostname: 'example.org', path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/replacement-prefix' } })], null),
    filterRule('/path-and-status', [redirect({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/replacement-prefix' }, statusCode: 301 })], null),
    filterRule('/port', [redirect({ port: 8083 })], null),
    filterRule('/port-and-host-and-status', [redirect({ port: 8083, hostname: 'example.org', statusCode: 302 })], null),
    filterRule('/scheme', [redirect({ scheme: 'https' })], null),
    filterRule('/scheme-and-host-and-status', [redirect({ scheme: 'https', statusCode: 302, hostname: 'example.org' })], null),
    filterRule('/scheme-nil-and-port-nil', [redirect({ hostname: 'example.org' })], null),
    filterRule('/scheme-nil-and-port-80', [redirect({ port: 80, hostname: 'example.org' })], null),
    filterRule('/scheme-https-and-port-443', [redirect({ scheme: 'https', port: 443, hostname: 'example.org' })], null),
    filterRule('/scheme-https-and-port-8443', [redirect({ scheme: 'https', port: 8443, hostname: 'example.org' })], null),
    filterRule('/status-303', [redirect({ statusCode: 303, hostname: 'example.org' })], null),
    filterRule('/status-307', [redirect({ statusCode: 307, hostname: 'example.org' })], null),
    filterRule('/status-308', [redirect({ statusCode: 308, hostname: 'example.org' })], null),
    filterRule('/dollar-redirect', [redirect({ path: { type: 'ReplaceFullPath', replaceFullPath: '/a$b' } })], null),
  ],
});

const REWRITE_ROUTE = httpRoute('rewrite-path', {
  rules: [
    filterRule('/prefix/one', [rewrite({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/one' } })]),
    filterRule('/strip-prefix', [rewrite({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } })]),
    filterRule('/full/one', [rewrite({ path: { type: 'ReplaceFullPath', replaceFullPath: '/one' } })]),
    filterRule('/full/rewrite-path-and-modify-headers', [
      rewrite({ path: { type: 'ReplaceFullPath', replaceFullPath: '/test' } }),
      reqHeaders({ set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }], add: [{ name: 'X-Header-Add', value: 'header-val-1' }], remove: ['X-Header-Remove'] }),
    ]),
    filterRule('/prefix/rewrite-path-and-modify-headers', [rewrite({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/prefix' } })]),
    filterRule('/dollar-rewrite', [rewrite({ path: { type: 'ReplaceFullPath', replaceFullPath: '/x$1$y' } })]),
  ],
});

const REWRITE_HOST_ROUTE = httpRoute('rewrite-host', {
  hostnames: ['rewrite.example'],
  rules: [
    filterRule('/one', [rewrite({ hostname: 'one.example.org' })]),
    { filters: [rewrite({ hostname: 'example.org' })], backendRefs: backendRef('v2') },
    filterRule('/rewrite-host-and-modify-headers', [rewrite({ hostname: 'test.example.org' }), reqHeaders({ set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }] })], 'v2'),
  ],
});

const mirror = (name: string, extra: Manifest = {}) => ({ type: 'RequestMirror', requestMirror: { backendRef: { name, port: 80 }, ...extra } });
const MIRROR_ROUTE = httpRoute('request-mirror', {
  rules: [
    filterRule('/mirror', [mirror('mirror')]),
    filterRule('/multiple-mirrors', [mirror('mirror'), mirror('mirror2')]),
    filterRule('/half-mirror', [mirror('mirror', { percent: 50 })]),
    filterRule('/no-mirror', [mirror('mirror', { fraction: { numerator: 0 } })]),
  ],
});

const CORS_ROUTE = httpRoute('cors', {
  rules: [
    filterRule('/cors-1', [
      {
        type: 'CORS',
        cors: {
          allowOrigins: ['https://www.foo.com', 'https://*.bar.com'],
          allowMethods: ['GET', 'OPTIONS'],
          allowHeaders: ['x-header-1', 'x-header-2'],
          exposeHeaders: ['x-header-3', 'x-header-4'],
          allowCredentials: true,
          maxAge: 3600,
        },
      },
    ]),
    filterRule('/cors-wildcard', [{ type: 'CORS', cors: { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: true } }]),
  ],
});

const INVALID_ROUTES = [
  httpRoute('bad-header-value', { rules: [filterRule('/bad-value', [reqHeaders({ set: [{ name: 'X-Bad', value: 'a\r\nInjected: yes' }] })])] }),
  httpRoute('bad-add-name', { rules: [filterRule('/bad-add', [reqHeaders({ add: [{ name: 'X_Under', value: 'v' }] })]), filterRule('/good-rule', [])] }),
  httpRoute('extension-ref', { rules: [filterRule('/ext', [{ type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Thing', name: 'x' } }])] }),
  httpRoute('redirect-with-mirror', { rules: [filterRule('/rm', [redirect({ hostname: 'example.org' }), mirror('mirror')], null)] }),
];

beforeAll(async () => {
  gw = await startGatewayFixture({
    backends: ['v1', 'v2', 'mirror', 'mirror2'],
    files: {
      'routes.yaml': [HEADERS_ROUTE, RESPONSE_ROUTE, REDIRECT_ROUTE, REWRITE_ROUTE, REWRITE_HOST_ROUTE, MIRROR_ROUTE, CORS_ROUTE],
      'invalid.yaml': INVALID_ROUTES,
    },
  });
}, 60000);

afterAll(async () => {
  await gw?.close();
});

/** What the backend received. */
async function echoed(path: string, headers: Record<string, string> = {}, host?: string) {
  const res = await gw.request(path, { headers, ...(host ? { host } : {}) });
  expect(res.status).toBe(200);
  return res.json as { backend: string; path: string; url: string; headers: Record<string, string> };
}

describe('RequestHeaderModifier', () => {
  test('set adds the header, and overwrites a value the client sent', async () => {
    expect((await echoed('/set', { 'Some-Other-Header': 'val' })).headers).toMatchObject({ 'some-other-header': 'val', 'x-header-set': 'set-overwrites-values' });
    expect((await echoed('/set', { 'X-Header-Set': 'some-other-value' })).headers['x-header-set']).toBe('set-overwrites-values');
  });

  test('add adds the header, or appends to the value the client sent', async () => {
    expect((await echoed('/add')).headers['x-header-add']).toBe('add-appends-values');
    expect((await echoed('/add', { 'X-Header-Add': 'some-other-value' })).headers['x-header-add']).toBe('some-other-value,add-appends-values');
  });

  test('remove drops the header', async () => {
    expect((await echoed('/remove', { 'X-Header-Remove': 'val' })).headers['x-header-remove']).toBeUndefined();
  });

  test('several set, add and remove at once', async () => {
    const h = (await echoed('/multiple', { 'X-Header-Set-2': 'set-val-2', 'X-Header-Add-2': 'add-val-2', 'X-Header-Remove-2': 'remove-val-2', 'Another-Header': 'another-header-val' })).headers;
    expect(h).toMatchObject({
      'x-header-set-1': 'header-set-1',
      'x-header-set-2': 'header-set-2',
      'x-header-add-1': 'header-add-1',
      'x-header-add-2': 'add-val-2,header-add-2',
      'x-header-add-3': 'header-add-3',
      'another-header': 'another-header-val',
    });
    expect(h['x-header-remove-1']).toBeUndefined();
    expect(h['x-header-remove-2']).toBeUndefined();
  });

  test('header names are case-insensitive', async () => {
    const h = (await echoed('/case-insensitivity', { 'x-header-set': 'original-val-set', 'x-header-add': 'original-val-add', 'x-header-remove': 'original-val-remove' })).headers;
    expect(h['x-header-set']).toBe('header-set');
    expect(h['x-header-add']).toBe('original-val-add,header-add');
    expect(h['x-header-remove']).toBeUndefined();
  });

  test('values with $, quotes, braces and semicolons reach the backend exactly as written', async () => {
    const h = (await echoed('/hostile', { 'X-Dollar': 'x' })).headers;
    expect(h['x-hostile']).toBe('$host"; return 200 "pwned; ${x} \\ {}');
    expect(h['x-dollar']).toBe('x,$1$$');
  });

  test('the gateway still sets its own forwarding headers next to the filter', async () => {
    const h = (await echoed('/set')).headers;
    expect(h['x-forwarded-proto']).toBe('http');
    expect(h.host).toBe(`127.0.0.1:${gw.port}`);
  });
});

describe('ResponseHeaderModifier', () => {
  const echoSet = (pairs: Record<string, string>) => ({ 'X-Echo-Set-Header': Object.entries(pairs).map(([k, v]) => `${k}:${v}`).join(',') });
  const joined = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v)?.replace(/,\s+/g, ',');

  test('set replaces the backend value', async () => {
    const res = await gw.request('/response/set', { headers: echoSet({ 'X-Header-Set': 'some-other-value', 'Some-Other-Header': 'val' }) });
    expect(res.headers['x-header-set']).toBe('set-overwrites-values');
    expect(res.headers['some-other-header']).toBe('val');
  });

  test('add appends to the backend value', async () => {
    expect(joined((await gw.request('/response/add')).headers['x-header-add'])).toBe('add-appends-values');
    expect(joined((await gw.request('/response/add', { headers: echoSet({ 'X-Header-Add': 'some-other-value' }) })).headers['x-header-add'])).toBe('some-other-value,add-appends-values');
  });

  test('remove drops the backend header, whatever its case', async () => {
    expect((await gw.request('/response/remove', { headers: echoSet({ 'X-Header-Remove': 'val' }) })).headers['x-header-remove']).toBeUndefined();
    const res = await gw.request('/response/case-insensitivity', { headers: echoSet({ 'x-header-set': 'original-val-set', 'x-header-add': 'original-val-add', 'x-header-remove': 'original-val-remove' }) });
    expect(res.headers['x-header-set']).toBe('header-set');
    expect(joined(res.headers['x-header-add'])).toBe('original-val-add,header-add');
    expect(res.headers['x-lowercase-add']).toBe('lowercase-add');
    expect(res.headers['x-uppercase-add']).toBe('uppercase-add');
    expect(res.headers['x-header-remove']).toBeUndefined();
  });

  test('request and response modifiers on one rule', async () => {
    const res = await gw.request('/response-and-request', { headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1', ...echoSet({ 'X-Header-Remove-1': 'x' }) } });
    expect(res.headers['x-header-set-1']).toBe('header-set-1');
    expect(res.headers['x-header-remove-1']).toBeUndefined();
    expect(res.json.headers['x-header-set']).toBe('set-overwrites-values');
    expect(res.json.headers['x-header-add-append']).toBe('append-val-1,header-val-2');
    expect(res.json.headers['x-header-remove']).toBeUndefined();
  });
});

describe('RequestRedirect', () => {
  const redirectOf = async (path: string) => {
    const res = await gw.request(path);
    return { status: res.status, location: res.headers.location };
  };
  const here = () => `http://127.0.0.1:${gw.port}`;

  test('path: ReplacePrefixMatch and ReplaceFullPath, with host and status', async () => {
    expect(await redirectOf('/original-prefix/lemon')).toEqual({ status: 302, location: `${here()}/replacement-prefix/lemon` });
    expect(await redirectOf('/full/path/original')).toEqual({ status: 302, location: `${here()}/full-path-replacement` });
    expect(await redirectOf('/path-and-host')).toEqual({ status: 302, location: `http://example.org:${gw.port}/replacement-prefix` });
    expect(await redirectOf('/path-and-status')).toEqual({ status: 301, location: `${here()}/replacement-prefix` });
  });

  test('the query string is kept', async () => {
    expect((await redirectOf('/original-prefix/a?x=1&y=2')).location).toBe(`${here()}/replacement-prefix/a?x=1&y=2`);
  });

  test('port', async () => {
    expect(await redirectOf('/port')).toEqual({ status: 302, location: 'http://127.0.0.1:8083/port' });
    expect(await redirectOf('/port-and-host-and-status')).toEqual({ status: 302, location: 'http://example.org:8083/port-and-host-and-status' });
  });

  test('scheme: https without a port means 443, which is not written', async () => {
    expect(await redirectOf('/scheme')).toEqual({ status: 302, location: 'https://127.0.0.1/scheme' });
    expect(await redirectOf('/scheme-and-host-and-status')).toEqual({ status: 302, location: 'https://example.org/scheme-and-host-and-status' });
  });

  test('no scheme and no port: the listener port; well-known ports are left out', async () => {
    expect((await redirectOf('/scheme-nil-and-port-nil')).location).toBe(`http://example.org:${gw.port}/scheme-nil-and-port-nil`);
    expect((await redirectOf('/scheme-nil-and-port-80')).location).toBe('http://example.org/scheme-nil-and-port-80');
    expect((await redirectOf('/scheme-https-and-port-443')).location).toBe('https://example.org/scheme-https-and-port-443');
    expect((await redirectOf('/scheme-https-and-port-8443')).location).toBe('https://example.org:8443/scheme-https-and-port-8443');
  });

  test('status codes 303, 307 and 308', async () => {
    expect((await redirectOf('/status-303')).status).toBe(303);
    expect((await redirectOf('/status-307')).status).toBe(307);
    expect((await redirectOf('/status-308')).status).toBe(308);
  });

  test('a "$" in the path is written as is', async () => {
    expect((await redirectOf('/dollar-redirect')).location).toBe(`${here()}/a$b`);
  });
});

describe('URLRewrite', () => {
  test('path: ReplacePrefixMatch on segment boundaries and ReplaceFullPath', async () => {
    expect((await echoed('/prefix/one/two')).path).toBe('/one/two');
    expect((await echoed('/prefix/one')).path).toBe('/one');
    expect((await echoed('/strip-prefix/three')).path).toBe('/three');
    expect((await echoed('/strip-prefix')).path).toBe('/');
    expect((await echoed('/full/one/two')).path).toBe('/one');
    expect((await echoed('/prefix/rewrite-path-and-modify-headers/one')).path).toBe('/prefix/one');
  });

  test('the query string is kept', async () => {
    expect((await echoed('/prefix/one/two?a=1&b=%20')).url).toBe('/one/two?a=1&b=%20');
  });

  test('percent-encoded paths stay encoded after a prefix rewrite (nginx replaces the prefix itself where it proxies inline)', async () => {
    expect((await echoed('/prefix/one/a%20b/%C3%A9')).url).toBe('/one/a%20b/%C3%A9');
    expect((await echoed('/strip-prefix/x%3Fy?q=1')).url).toBe('/x%3Fy?q=1');
    // The plain prefix rewrites are done by proxy_pass's URI part, not by a regex rewrite.
    const conf = await fs.readFile(path.join(gw.stateDir, 'nginx', 'conf', 'servers.conf'), 'utf8');
    expect(conf).toMatch(/proxy_pass "http:\/\/\w+\/one\/";/);
  });

  test('path rewrite and header modifier together', async () => {
    const r = await echoed('/full/rewrite-path-and-modify-headers/test', { 'X-Header-Remove': 'x', 'X-Header-Add': 'y' });
    expect(r.path).toBe('/test');
    expect(r.headers).toMatchObject({ 'x-header-set': 'set-overwrites-values', 'x-header-add': 'y,header-val-1' });
    expect(r.headers['x-header-remove']).toBeUndefined();
  });

  test('a "$" in the replacement is a character, not a variable or capture', async () => {
    expect((await echoed('/dollar-rewrite')).path).toBe('/x$1$y');
  });

  test('hostname replaces the Host header', async () => {
    expect((await echoed('/one', {}, 'rewrite.example')).headers.host).toBe('one.example.org');
    const two = await echoed('/two', {}, 'rewrite.example');
    expect(two.backend).toBe('v2');
    expect(two.headers.host).toBe('example.org');
    const both = await echoed('/rewrite-host-and-modify-headers', {}, 'rewrite.example');
    expect(both.headers).toMatchObject({ host: 'test.example.org', 'x-header-set': 'set-overwrites-values' });
  });
});

describe('RequestMirror', () => {
  test('the mirror backend receives a copy; the client gets the main backend answer', async () => {
    const tag = `m-${Date.now()}`;
    const res = await gw.request(`/mirror?tag=${tag}`, { method: 'POST', body: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(res.json.backend).toBe('v1');
    const copy = await eventually(
      async () => gw.backends.mirror.requests.find((r) => r.url === `/mirror?tag=${tag}`),
      (r) => r !== undefined,
    );
    expect(copy!.method).toBe('POST');
  });

  test('two mirrors each receive a copy', async () => {
    const tag = `mm-${Date.now()}`;
    await echoed(`/multiple-mirrors?tag=${tag}`);
    for (const b of ['mirror', 'mirror2']) {
      await eventually(async () => gw.backends[b].requests.some((r) => r.url.includes(tag)), (x) => x);
    }
  });

  test('percent: about that share of requests is mirrored; fraction 0 mirrors none', async () => {
    const tag = `half-${Date.now()}`;
    for (let i = 0; i < 200; i++) await echoed(`/half-mirror?tag=${tag}&i=${i}`);
    for (let i = 0; i < 20; i++) await echoed(`/no-mirror?tag=${tag}&i=${i}`);
    // Copies may still be on their way after the answers: wait until no new one arrives for 500 ms.
    for (let seen = -1; ; ) {
      const now = gw.backends.mirror.requests.filter((r) => r.url.includes(tag)).length;
      if (now === seen) break;
      seen = now;
      await new Promise((r) => setTimeout(r, 500));
    }
    const copies = gw.backends.mirror.requests.filter((r) => r.url.includes(tag));
    expect(copies.filter((r) => r.path === '/no-mirror')).toHaveLength(0);
    const half = copies.filter((r) => r.path === '/half-mirror').length;
    // 200 draws at 50 %: 99.9 % of outcomes fall within 100 ± 24.
    expect(half).toBeGreaterThan(70);
    expect(half).toBeLessThan(130);
  });
});

describe('CORS', () => {
  const preflight = (path: string, origin: string, extra: Record<string, string> = {}) =>
    gw.request(path, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', ...extra } });

  test('a preflight from an exact or wildcard-matching origin is answered with the CORS headers', async () => {
    for (const origin of ['https://www.foo.com', 'https://www.bar.com', 'https://xpto.www.bar.com']) {
      const res = await preflight('/cors-1', origin, { 'Access-Control-Request-Headers': 'x-header-1, x-header-2' });
      expect([200, 204]).toContain(res.status);
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, OPTIONS',
        'access-control-allow-headers': 'x-header-1, x-header-2',
        'access-control-expose-headers': 'x-header-3, x-header-4',
        'access-control-max-age': '3600',
        'access-control-allow-credentials': 'true',
      });
    }
    expect(gw.backends.v1.requests.some((r) => r.method === 'OPTIONS' && r.path === '/cors-1')).toBe(false);
  });

  test('a preflight from another origin gets no CORS headers', async () => {
    const res = await preflight('/cors-1', 'https://foobar.com');
    expect([200, 204, 403]).toContain(res.status);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
  });

  test('a simple request from an allowed origin gets Allow-Origin and Expose-Headers from the backend answer', async () => {
    const res = await gw.request('/cors-1', { headers: { Origin: 'https://www.foo.com' } });
    expect(res.json.backend).toBe('v1');
    expect(res.headers['access-control-allow-origin']).toBe('https://www.foo.com');
    expect(res.headers['access-control-expose-headers']).toBe('x-header-3, x-header-4');
    expect(res.headers['access-control-max-age']).toBeUndefined();
    const other = await gw.request('/cors-1', { headers: { Origin: 'https://evil.com' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('with credentials, wildcards are answered with the request values, never "*"', async () => {
    const res = await preflight('/cors-wildcard', 'https://any.example', { 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'x-a' });
    expect(res.headers).toMatchObject({ 'access-control-allow-origin': 'https://any.example', 'access-control-allow-methods': 'PUT', 'access-control-allow-headers': 'x-a' });
  });
});

describe('invalid filters are reported, never rendered', () => {
  const accepted = async (name: string) => condition(routeParent(findStatus(await readStatus(gw.stateDir), 'HTTPRoute', name), 'gw')?.conditions, 'Accepted');

  test('a header value with CR/LF: the rule is dropped with UnsupportedValue, nothing is injected', async () => {
    const c = await accepted('bad-header-value');
    expect(c).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(c?.message).toContain('control characters');
    expect((await gw.request('/bad-value')).status).toBe(404);
  });

  test('a partly invalid route keeps its valid rules (PartiallyInvalid)', async () => {
    const parent = routeParent(findStatus(await readStatus(gw.stateDir), 'HTTPRoute', 'bad-add-name'), 'gw');
    expect(condition(parent?.conditions, 'Accepted')?.status).toBe('True');
    expect(condition(parent?.conditions, 'PartiallyInvalid')?.message).toContain('X_Under');
    expect((await gw.request('/good-rule')).status).toBe(200);
  });

  test('ExtensionRef is not supported: UnsupportedValue', async () => {
    expect(await accepted('extension-ref')).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
  });

  test('RequestRedirect with RequestMirror: IncompatibleFilters', async () => {
    expect(await accepted('redirect-with-mirror')).toMatchObject({ status: 'False', reason: 'IncompatibleFilters' });
  });
});
