/**
 * Routing as the Gateway API defines it, through a real nginx running the rendered config:
 * Graph data -> buildModel -> renderConfig -> NginxProcess, loopback echo backends that answer
 * with their own name, real HTTP requests.
 */
import * as http from 'http';
import * as http2 from 'http2';
import type { AddressInfo } from 'net';
import { httpRequest, type HttpRequestOptions } from '../../e2e/support/http';
import { Harness, freePort } from './apply-harness';
import * as f from './model-fixtures';

const BACKENDS = [
  'exact', 'prefix', 'deeper', 'regex', 're-exact', 're-prefix',
  'v2', 'fast', 'post', 'any', 'all', 'get', 're-header', 're-query',
  'old', 'new', 'old-h', 'new-hi', 'first', 'second',
  'exact-host', 'wild-host', 'any-host', 'only', 'many-first', 'many-mid', 'many-last',
  'f-root', 'f7', 'f70', 'f-login', 't-slow', 't-plain', 't-pair-a', 't-pair-b',
  'sp-a', 'sp-b', 'sp-c',
];

let h: Harness;
/** An HTTP/2 backend without TLS (a Service port with appProtocol kubernetes.io/h2c). */
let h2cBackend: http2.Http2Server;
/**
 * A backend that fails the first `fails` attempts of each request id (?id=), answering `code`,
 * not answering (?hang) or else resetting the connection; then answers 200 with the attempts it saw.
 */
let flakyBackend: http.Server;
const flakyAttempts = new Map<string, number>();
let port: number;
let port2: number;

async function who(host: string, path: string, options: HttpRequestOptions = {}, p = port): Promise<string | number> {
  const res = await httpRequest(p, path, { host, ...options });
  if (res.status === 200 && res.json && typeof res.json.backend === 'string') return res.json.backend;
  return res.status;
}

beforeAll(async () => {
  h = await Harness.create(BACKENDS);
  h2cBackend = http2.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ backend: 'h2c', httpVersion: req.httpVersion, path: req.url, header: req.headers['x-added'] ?? null }));
  });
  await new Promise<void>((resolve) => h2cBackend.listen(0, '127.0.0.1', resolve));
  const h2cPort = (h2cBackend.address() as AddressInfo).port;
  flakyBackend = http.createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const id = q.get('id') ?? '';
    const attempt = (flakyAttempts.get(id) ?? 0) + 1;
    flakyAttempts.set(id, attempt);
    req.resume();
    if (attempt <= Number(q.get('fails') ?? 0)) {
      if (q.get('code')) res.writeHead(Number(q.get('code'))).end();
      else if (!q.has('hang')) req.socket.resetAndDestroy();
      // ?hang: no answer at all (the gateway's timeout ends the attempt)
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ backend: 'flaky', attempts: attempt }));
  });
  await new Promise<void>((resolve) => flakyBackend.listen(0, '127.0.0.1', resolve));
  const flaky = f.backend('flaky', (flakyBackend.address() as AddressInfo).port);
  port = await freePort();
  port2 = await freePort();
  const be = (name: string, more = {}) => f.backend(name, h.port(name), more);
  const H = (name: string, value: string, type: 'Exact' | 'RegularExpression' = 'Exact') => ({ name, type, value });

  const paths = f.route('paths', [
    f.rule(0, [f.exact('/exact')], [be('exact')]),
    f.rule(1, [f.prefix('/prefix')], [be('prefix')]),
    f.rule(2, [f.regex('/re/[0-9]+')], [be('regex')]),
    f.rule(3, [f.prefix('/prefix/deeper/')], [be('deeper')]),
    f.rule(4, [f.exact('/re/7')], [be('re-exact')]),
    f.rule(5, [f.prefix('/re')], [be('re-prefix')]),
  ], { hostnames: ['paths.test'] });

  const conds = f.route('conds', [
    f.rule(0, [f.prefix('/', { headers: [H('X-Version', 'v2')] })], [be('v2')]),
    f.rule(1, [f.prefix('/', { queryParams: [H('mode', 'fast')] })], [be('fast')]),
    f.rule(2, [f.prefix('/', { method: 'POST' })], [be('post')]),
    f.rule(3, [f.prefix('/any', { headers: [H('X-A', '1')] }), f.prefix('/any', { queryParams: [H('b', '2')] })], [be('any')]),
    f.rule(4, [f.prefix('/all', { headers: [H('X-A', '1')], queryParams: [H('b', '2')], method: 'GET' })], [be('all')]),
    f.rule(5, [f.exact('/get', { method: 'GET' })], [be('get')]),
    f.rule(6, [f.prefix('/re-h', { headers: [H('X-Re', '^ab+c$', 'RegularExpression')] })], [be('re-header')]),
    f.rule(7, [f.prefix('/re-q', { queryParams: [H('v', '^[0-9]+$', 'RegularExpression')] })], [be('re-query')]),
  ], { hostnames: ['conds.test'] });

  // Created first, so older.
  const old = f.route('old', [
    f.rule(0, [f.prefix('/p')], [be('old')]),
    f.rule(1, [f.prefix('/q', { headers: [H('X-H', '1')] })], [be('old-h')]),
    f.rule(2, [f.prefix('/r')], [be('first')]),
    f.rule(3, [f.prefix('/r')], [be('second')]),
  ], { hostnames: ['prec.test'] });
  const newer = f.route('newer', [
    f.rule(0, [f.prefix('/p')], [be('new')]),
    f.rule(1, [f.prefix('/p/longer')], [be('new')]),
    f.rule(2, [f.prefix('/q', { headers: [H('X-H', '1'), H('X-I', '1')] })], [be('new-hi')]),
  ], { hostnames: ['prec.test'] });

  const exactHost = f.route('exact-host', [f.rule(0, [f.prefix('/')], [be('exact-host')])], { hostnames: ['foo.example.com'] });
  const wildHost = f.route('wild-host', [f.rule(0, [f.prefix('/')], [be('wild-host')])], { hostnames: ['*.example.com'] });
  const anyHost = f.route('any-host', [f.rule(0, [f.prefix('/anyhost')], [be('any-host')])]);

  const broken = f.route('broken', [
    f.rule(0, [f.prefix('/')], [f.backend('missing', undefined, { valid: false, invalidReason: 'BackendNotFound' })]),
    f.rule(1, [f.prefix('/noeps')], [f.backend('idle', undefined)]),
    f.rule(2, [f.prefix('/zero')], [be('only', { weight: 0 })]),
  ], { hostnames: ['broken.test'] });

  const only = f.route('only', [f.rule(0, [f.prefix('/')], [be('only')])], { hostnames: ['only.test'] });

  // More candidates on one path than one dispatch regex holds (MAX_ALTERNATIVES): several ifs.
  const many = f.route(
    'many',
    Array.from({ length: 120 }, (_, i) =>
      f.rule(i, [f.prefix('/m', { headers: [H('X-N', String(i))] })], [be(i === 0 ? 'many-first' : i === 119 ? 'many-last' : 'many-mid')]),
    ),
    { hostnames: ['many.test'] },
  );

  // "/" dispatches here, so the other paths are folded into it (no locations of their own).
  const folded = f.route('folded', [
    f.rule(0, [f.prefix('/', { headers: [H('X-Root', '1')] })], [be('f-root')]),
    f.rule(1, [f.prefix('/f7', { headers: [H('X-F', '1')] })], [be('f7')]),
    f.rule(2, [f.prefix('/f70')], [be('f70')]),
    f.rule(3, [f.exact('/f7/login', { method: 'POST' })], [be('f-login')]),
  ], { hostnames: ['fold.test'] });

  const timeouts = f.route('timeouts', [
    { ...f.rule(0, [f.prefix('/slow')], [be('t-slow')]), timeouts: { requestMs: 2000, backendRequestMs: 300 } },
    f.rule(1, [f.prefix('/plain')], [be('t-plain')]),
    // One Service, two endpoints (pods).
    {
      ...f.rule(2, [f.prefix('/pair')], [be('t-pair-a', { endpoints: [{ address: '127.0.0.1', port: h.port('t-pair-a') }, { address: '127.0.0.1', port: h.port('t-pair-b') }] })]),
      timeouts: { requestMs: 300 },
    },
  ], { hostnames: ['timeout.test'] });

  const h2c = f.route('h2c', [
    {
      ...f.rule(0, [f.prefix('/')], [f.backend('h2c', h2cPort, { h2c: true })]),
      filters: { mirrors: [], requestHeaders: { set: [{ name: 'X-Added', value: 'yes' }], add: [], remove: [] } },
    },
  ], { hostnames: ['h2c.test'] });

  const retries = f.route('retries', [
    { ...f.rule(0, [f.prefix('/on-500')], [flaky]), retry: { codes: [500], attempts: 2 } },
    { ...f.rule(1, [f.prefix('/timed')], [flaky]), retry: { codes: [], attempts: 3 }, timeouts: { requestMs: 2000, backendRequestMs: 200 } },
    f.rule(2, [f.prefix('/no-retry')], [flaky]),
  ], { hostnames: ['retry.test'] });

  // One Service with two endpoints (pods sp-a and sp-b), and a second Service (sp-c).
  const pods = () => be('sp-a', { endpoints: [{ address: '127.0.0.1', port: h.port('sp-a') }, { address: '127.0.0.1', port: h.port('sp-b') }] });
  const sessions = f.route('sessions', [
    { ...f.rule(0, [f.prefix('/cookie')], [pods()]), session: { type: 'Cookie' } },
    { ...f.rule(1, [f.prefix('/header')], [pods()]), session: { type: 'Header', name: 'X-Session' } },
    { ...f.rule(2, [f.prefix('/split')], [pods(), be('sp-c')]), session: { type: 'Cookie', name: 'sid', maxAgeSeconds: 3600 } },
    f.rule(3, [f.prefix('/plain')], [pods()]),
  ], { hostnames: ['session.test'] });

  const graph = f.graph([
    f.listener(port, [paths, conds, old, newer, exactHost, wildHost, anyHost, broken, many, folded, timeouts, h2c, retries, sessions].map((r) => f.attach(r))),
    f.listener(port2, [f.attach(only)]),
  ]);
  const result = await h.nginx.start(h.render(graph));
  if (!result.ok) throw new Error(result.message);
});

afterAll(async () => {
  h2cBackend?.close();
  flakyBackend?.close();
  await h?.close();
});

describe('paths folded into the location that dispatches anyway', () => {
  test('segments and exact paths hold as with locations of their own', async () => {
    const F = { headers: { 'X-F': '1' } };
    expect(await who('fold.test', '/f70')).toBe('f70');
    expect(await who('fold.test', '/f70/x')).toBe('f70');
    expect(await who('fold.test', '/f700')).toBe(404);
    expect(await who('fold.test', '/f7', F)).toBe('f7');
    expect(await who('fold.test', '/f7/x', F)).toBe('f7');
    expect(await who('fold.test', '/f7x', F)).toBe(404);
    expect(await who('fold.test', '/f70', F)).toBe('f70');
    expect(await who('fold.test', '/f7/login', { method: 'POST' })).toBe('f-login');
    expect(await who('fold.test', '/f7/login', F)).toBe('f7');
    expect(await who('fold.test', '/f7/login/', { method: 'POST', ...F })).toBe('f7');
    expect(await who('fold.test', '/f7/login/', { method: 'POST' })).toBe(404);
    expect(await who('fold.test', '/anything', { headers: { 'X-Root': '1' } })).toBe('f-root');
    expect(await who('fold.test', '/f7/login%0A', { method: 'POST' })).toBe(404);
  });
});

describe('path matching', () => {
  test('Exact matches only the whole path', async () => {
    expect(await who('paths.test', '/exact')).toBe('exact');
    expect(await who('paths.test', '/exact?x=1')).toBe('exact');
    expect(await who('paths.test', '/exact/')).toBe(404);
    expect(await who('paths.test', '/exactly')).toBe(404);
  });

  test('PathPrefix matches whole segments: /prefix, /prefix/, /prefix/a but not /prefixes', async () => {
    expect(await who('paths.test', '/prefix')).toBe('prefix');
    expect(await who('paths.test', '/prefix/')).toBe('prefix');
    expect(await who('paths.test', '/prefix/a/b')).toBe('prefix');
    expect(await who('paths.test', '/prefixes')).toBe(404);
    // The segment test reads the decoded path: an encoded newline right after the prefix is not
    // a segment boundary, one after the slash is.
    expect(await who('paths.test', '/prefix%0A')).toBe(404);
    expect(await who('paths.test', '/prefix/%0Ax')).toBe('prefix');
  });

  test('a trailing slash on a PathPrefix is ignored, and the longest prefix wins', async () => {
    expect(await who('paths.test', '/prefix/deeper')).toBe('deeper');
    expect(await who('paths.test', '/prefix/deeper/x')).toBe('deeper');
    expect(await who('paths.test', '/prefix/deeperx')).toBe('prefix');
  });

  test('RegularExpression is anchored at the start of the path', async () => {
    expect(await who('paths.test', '/re/12')).toBe('regex');
    expect(await who('paths.test', '/re/12/more')).toBe('regex');
    expect(await who('paths.test', '/x/re/12')).toBe(404);
  });

  test('Exact beats RegularExpression, which beats PathPrefix', async () => {
    expect(await who('paths.test', '/re/7')).toBe('re-exact');
    expect(await who('paths.test', '/re/8')).toBe('regex');
    expect(await who('paths.test', '/re/x')).toBe('re-prefix');
  });

  test('the original path and query reach the backend unchanged', async () => {
    const res = await httpRequest(port, '/prefix/a%20b?x=1&y=%2F', { host: 'paths.test' });
    expect(res.json.url).toBe('/prefix/a%20b?x=1&y=%2F');
  });
});

describe('header, query and method matches', () => {
  test('header names are case-insensitive, values exact', async () => {
    expect(await who('conds.test', '/', { headers: { 'X-Version': 'v2' } })).toBe('v2');
    expect(await who('conds.test', '/', { headers: { 'x-VERSION': 'v2' } })).toBe('v2');
    expect(await who('conds.test', '/', { headers: { 'X-Version': 'V2' } })).toBe(404);
    expect(await who('conds.test', '/', { headers: { 'X-Version': 'v22' } })).toBe(404);
  });

  test('query parameter names are case-sensitive; the parameter may be anywhere in the query', async () => {
    expect(await who('conds.test', '/?mode=fast')).toBe('fast');
    expect(await who('conds.test', '/?a=1&mode=fast&b=2')).toBe('fast');
    expect(await who('conds.test', '/?Mode=fast')).toBe(404);
    expect(await who('conds.test', '/?amode=fast')).toBe(404);
    expect(await who('conds.test', '/?mode=faster')).toBe(404);
  });

  test('a repeated query parameter: the first occurrence decides (exact and regex values)', async () => {
    expect(await who('conds.test', '/?mode=fast&mode=slow')).toBe('fast');
    expect(await who('conds.test', '/?a=1&mode=slow&mode=fast')).toBe(404);
    expect(await who('conds.test', '/re-q?v=12&v=x')).toBe('re-query');
    expect(await who('conds.test', '/re-q?v=x&v=12')).toBe(404);
  });

  test('method: POST matches a POST rule, PUT matches nothing', async () => {
    expect(await who('conds.test', '/', { method: 'POST', body: 'payload' })).toBe('post');
    expect(await who('conds.test', '/', { method: 'PUT' })).toBe(404);
  });

  test('HEAD does not match a GET rule', async () => {
    expect(await who('conds.test', '/get')).toBe('get');
    const head = await httpRequest(port, '/get', { host: 'conds.test', method: 'HEAD' });
    expect(head.status).toBe(404);
  });

  test('a request body reaches the backend through the rule dispatch', async () => {
    const res = await httpRequest(port, '/', { host: 'conds.test', method: 'POST', body: 'x'.repeat(1000) });
    expect(res.json.backend).toBe('post');
    expect(res.json.headers['content-length']).toBe('1000');
  });

  test('a body larger than the in-memory buffer is spooled to the temp dir and forwarded', async () => {
    const res = await httpRequest(port, '/', { host: 'conds.test', method: 'POST', body: 'y'.repeat(200 * 1024), headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(200);
    expect(res.json.headers['content-length']).toBe(String(200 * 1024));
  });

  test('ANY: a rule matches when any of its match elements matches', async () => {
    expect(await who('conds.test', '/any', { headers: { 'X-A': '1' } })).toBe('any');
    expect(await who('conds.test', '/any?b=2')).toBe('any');
    expect(await who('conds.test', '/any')).toBe(404);
  });

  test('ALL: an element matches only when all its conditions hold', async () => {
    expect(await who('conds.test', '/all?b=2', { headers: { 'X-A': '1' } })).toBe('all');
    expect(await who('conds.test', '/all?b=2')).toBe(404);
    expect(await who('conds.test', '/all', { headers: { 'X-A': '1' } })).toBe(404);
  });

  test('RegularExpression header and query values', async () => {
    expect(await who('conds.test', '/re-h', { headers: { 'X-Re': 'abbbc' } })).toBe('re-header');
    expect(await who('conds.test', '/re-h', { headers: { 'X-Re': 'abd' } })).toBe(404);
    expect(await who('conds.test', '/re-q?v=123')).toBe('re-query');
    expect(await who('conds.test', '/re-q?v=12a')).toBe(404);
    expect(await who('conds.test', '/re-q?w=123')).toBe(404);
  });

  test('precedence: method beats headers, headers beat query params', async () => {
    expect(await who('conds.test', '/?mode=fast', { headers: { 'X-Version': 'v2' } })).toBe('v2');
    expect(await who('conds.test', '/?mode=fast', { method: 'POST', headers: { 'X-Version': 'v2' } })).toBe('post');
  });
});

describe('precedence across routes and rules', () => {
  test('same match in two routes: the older route wins', async () => {
    expect(await who('prec.test', '/p')).toBe('old');
    expect(await who('prec.test', '/p/x')).toBe('old');
  });

  test('a longer prefix in the newer route beats the older route', async () => {
    expect(await who('prec.test', '/p/longer/x')).toBe('new');
  });

  test('more header matches win across routes, and a request that fails them falls back', async () => {
    expect(await who('prec.test', '/q', { headers: { 'X-H': '1', 'X-I': '1' } })).toBe('new-hi');
    expect(await who('prec.test', '/q', { headers: { 'X-H': '1' } })).toBe('old-h');
    expect(await who('prec.test', '/q')).toBe(404);
  });

  test('same match in two rules of one route: the first rule wins', async () => {
    expect(await who('prec.test', '/r')).toBe('first');
  });
});

test('120 header candidates on one path: each reaches its rule, past the first dispatch regex too', async () => {
  expect(await who('many.test', '/m/x', { headers: { 'X-N': '0' } })).toBe('many-first');
  expect(await who('many.test', '/m', { headers: { 'X-N': '60' } })).toBe('many-mid');
  expect(await who('many.test', '/m/x', { headers: { 'X-N': '119' } })).toBe('many-last');
  expect(await who('many.test', '/m/x', { headers: { 'X-N': '120' } })).toBe(404);
  expect(await who('many.test', '/m/x')).toBe(404);
});

describe('hostnames', () => {
  test('an exact hostname beats a wildcard; a Host header with a port matches the hostname', async () => {
    expect(await who('foo.example.com', '/')).toBe('exact-host');
    expect(await who(`foo.example.com:${port}`, '/')).toBe('exact-host');
    expect(await who('FOO.example.com', '/')).toBe('exact-host');
  });

  test('a wildcard matches one or more labels, not the bare domain', async () => {
    expect(await who('bar.example.com', '/')).toBe('wild-host');
    expect(await who('a.b.example.com:8080', '/')).toBe('wild-host');
    expect(await who('example.com', '/')).toBe(404);
  });

  test('a route without hostnames serves every host, after the more specific routes', async () => {
    expect(await who('example.com', '/anyhost')).toBe('any-host');
    expect(await who('unknown.test', '/anyhost')).toBe('any-host');
    expect(await who('paths.test', '/anyhost')).toBe('any-host');
    expect(await who('foo.example.com', '/anyhost')).toBe('exact-host');
  });

  test('unknown hosts get 404 from the catch-all server', async () => {
    expect(await who('unknown.test', '/')).toBe(404);
    expect(await who('unknown.test', '/', {}, port2)).toBe(404);
    expect(await who('only.test', '/', {}, port2)).toBe('only');
    expect(await who('only.test', '/')).toBe(404);
  });
});

describe('rule timeouts', () => {
  test('a backend that does not answer within the rule timeout gets 504; in time, or without one, 200', async () => {
    const slow = { headers: { 'X-Request-Delay': '1s' } };
    // Without the timeout the backend would answer 200 after its 1 s.
    expect(await who('timeout.test', '/slow', slow)).toBe(504);
    expect(await who('timeout.test', '/slow', { headers: { 'X-Request-Delay': '50ms' } })).toBe('t-slow');
    expect(await who('timeout.test', '/plain', slow)).toBe('t-plain');
  });

  test('the timeout bounds the whole request, and a timed-out request takes no endpoint out of service', async () => {
    const started = Date.now();
    // Not retried on the second endpoint once the rule's time is spent.
    expect(await who('timeout.test', '/pair', { headers: { 'X-Request-Delay': '1s' } })).toBe(504);
    expect(Date.now() - started).toBeLessThan(550);
    for (let i = 0; i < 4; i++) expect(['t-pair-a', 't-pair-b']).toContain(await who('timeout.test', '/pair'));
  });
});

describe('rule retries (one endpoint: nginx retries it as the next entry of the upstream)', () => {
  let n = 0;
  /** A fresh request id per call, so the flaky backend counts each request's attempts apart. */
  async function attempt(path: string, query: string, options: HttpRequestOptions = {}): Promise<{ status: number; attempts?: number }> {
    const res = await httpRequest(port, `${path}?id=${(n += 1)}&${query}`, { host: 'retry.test', ...options });
    return { status: res.status, ...(res.status === 200 ? { attempts: res.json?.attempts } : {}) };
  }

  test('a status code listed in codes is retried up to attempts times; beyond, the last answer is returned', async () => {
    expect(await attempt('/on-500', 'fails=2&code=500')).toEqual({ status: 200, attempts: 3 });
    expect(await attempt('/on-500', 'fails=3&code=500')).toEqual({ status: 500 });
  });

  test('a status code not listed is not retried', async () => {
    expect(await attempt('/on-500', 'fails=1&code=503')).toEqual({ status: 503 });
  });

  test('a connection error is retried whenever the rule has a retry stanza', async () => {
    expect(await attempt('/on-500', 'fails=2')).toEqual({ status: 200, attempts: 3 });
    expect(await attempt('/on-500', 'fails=3')).toEqual({ status: 502 });
  });

  test('without a retry stanza a failing answer is not retried', async () => {
    expect(await attempt('/no-retry', 'fails=1&code=500')).toEqual({ status: 500 });
  });

  test('a POST is retried as a GET is (the Gateway API does not exempt methods)', async () => {
    expect(await attempt('/on-500', 'fails=1&code=500', { method: 'POST', body: 'x' })).toEqual({ status: 200, attempts: 2 });
  });

  test('backendRequest bounds each attempt: a timed-out attempt is retried within the request timeout', async () => {
    const started = Date.now();
    expect(await attempt('/timed', 'fails=2&hang')).toEqual({ status: 200, attempts: 3 });
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

describe('session persistence (open-source nginx: the token is hashed onto the endpoints)', () => {
  const get = (path: string, headers: Record<string, string> = {}) => httpRequest(port, path, { host: 'session.test', headers });
  /** The pods that answered `n` requests made by `send`. */
  async function answered(n: number, send: () => Promise<{ json: any }>): Promise<Set<string>> {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) seen.add((await send()).json?.backend);
    return seen;
  }

  test('a client without a cookie gets one; sending it back keeps it on one endpoint, while new clients spread', async () => {
    const first = await get('/cookie');
    const setCookie = String(first.headers['set-cookie']);
    expect(setCookie).toMatch(/^pc-session-[0-9a-f]{10}=[0-9a-f]{32}; Path=\/; HttpOnly$/);
    const cookie = setCookie.split(';')[0];
    expect(await answered(12, () => get('/cookie', { cookie: `other=1; ${cookie}` }))).toEqual(new Set([first.json.backend]));
    // A client that sends its cookie gets no new one.
    expect((await get('/cookie', { cookie })).headers['set-cookie']).toBeUndefined();
    expect(await answered(24, () => get('/cookie'))).toEqual(new Set(['sp-a', 'sp-b']));
  });

  test('a header session: the response names a new token, and requests with it stay on one endpoint', async () => {
    const first = await get('/header');
    const token = String(first.headers['x-session']);
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect(await answered(12, () => get('/header', { 'X-Session': token }))).toEqual(new Set([first.json.backend]));
    expect((await get('/header', { 'X-Session': token })).headers['x-session']).toBeUndefined();
    // Any token the client picks works the same way.
    const own = await answered(6, () => get('/header', { 'X-Session': 'my-own-token' }));
    expect(own.size).toBe(1);
  });

  test('several backendRefs: the session keeps its backend too; a permanent cookie carries Max-Age', async () => {
    const first = await get('/split');
    expect(String(first.headers['set-cookie'])).toMatch(/^sid=[0-9a-f]{32}; Path=\/; HttpOnly; Max-Age=3600$/);
    const cookie = String(first.headers['set-cookie']).split(';')[0];
    expect(await answered(12, () => get('/split', { cookie }))).toEqual(new Set([first.json.backend]));
    expect(await answered(40, () => get('/split'))).toEqual(new Set(['sp-a', 'sp-b', 'sp-c']));
  });

  test('without sessionPersistence, requests with the same cookie spread over the endpoints', async () => {
    expect(await answered(24, () => get('/plain', { cookie: 'sid=1' }))).toEqual(new Set(['sp-a', 'sp-b']));
  });
});

describe('backends that speak h2c', () => {
  test('an HTTP/1.1 request reaches an h2c backend over HTTP/2, with the rule\'s header changes', async () => {
    const res = await httpRequest(port, '/some/path?q=1', { host: 'h2c.test' });
    expect({ status: res.status, json: res.json }).toEqual({ status: 200, json: { backend: 'h2c', httpVersion: '2.0', path: '/some/path?q=1', header: 'yes' } });
  });
});

describe('backends that cannot take requests', () => {
  test('a rule whose backends are all invalid answers 500', async () => {
    expect(await who('broken.test', '/')).toBe(500);
  });

  test('a rule whose backends all have weight 0 answers 500', async () => {
    expect(await who('broken.test', '/zero')).toBe(500);
  });

  test('a valid backend without ready endpoints answers 502', async () => {
    expect(await who('broken.test', '/noeps')).toBe(502);
  });
});
