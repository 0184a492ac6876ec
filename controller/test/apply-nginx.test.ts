/**
 * NginxProcess with a real nginx: reloads take effect before apply() resolves, a config nginx
 * rejects leaves the last good one serving, nginx's error log reaches the Logger, stop() leaves
 * no process behind; and weighted backends split traffic in their proportions.
 */
import * as fs from 'fs';
import * as path from 'path';
import { buildModel, finalizeModel } from '../src/model';
import { renderConfig } from '../src/render';
import { httpRequest } from '../../e2e/support/http';
import { occupyPort } from '../../e2e/support/ports';
import { NginxProcess } from '../src/apply/nginx';
import { defaultNginxBinary } from '../src/apply/nginx-binary';
import { Harness, freePort } from './apply-harness';
import * as f from './model-fixtures';
import { GW_API, gateway, gatewayClass, parse, service } from './graph-fixtures';
import { buildGraph, DEFAULT_CONTROLLER_NAME } from '../src/graph';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function who(port: number, p: string): Promise<string | number> {
  const res = await httpRequest(port, p);
  return res.status === 200 && res.json ? res.json.backend : res.status;
}

describe('NginxProcess', () => {
  let h: Harness;
  let port: number;
  const graphTo = (backend: string, pathPrefix = '/') =>
    f.graph([f.listener(port, [f.attach(f.route('r', [f.rule(0, [f.prefix(pathPrefix)], [f.backend(backend, h.port(backend))])]))])]);

  beforeEach(async () => {
    h = await Harness.create(['one', 'two', 'three']);
    port = await freePort();
  });
  afterEach(async () => {
    await h.close();
  });

  test('apply() resolves once the new config serves: the very next request sees it', async () => {
    expect(await h.nginx.start(h.render(graphTo('one')))).toEqual({ ok: true });
    expect(await who(port, '/')).toBe('one');
    for (const next of ['two', 'three', 'one', 'two']) {
      expect(await h.nginx.apply(h.render(graphTo(next)))).toEqual({ ok: true });
      expect(await who(port, '/')).toBe(next);
    }
  });

  test('a config nginx rejects is not applied (the reload refuses it as a whole); the last good one keeps serving and the message is returned', async () => {
    await h.nginx.start(h.render(graphTo('one')));
    const model = buildModel(graphTo('two'));
    // Valid alone, rejected by nginx together (the spec's busy-buffers rule).
    model.http.settings = { proxyBuffers: { number: 2, size: '4k' }, proxyBusyBuffersSize: '16k' };
    const bad = renderConfig(model, { listenAddress: '127.0.0.1', prefix: h.prefix, workerProcesses: 1 });
    const result = await h.nginx.apply(bad);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(/proxy_busy_buffers_size/);
    expect(await who(port, '/')).toBe('one');
    // The live config on disk is still the good one, and later changes still flow.
    expect(fs.readFileSync(path.join(h.prefix, 'conf', 'upstreams.conf'), 'utf8')).toContain(String(h.port('one')));
    expect(await h.nginx.apply(h.render(graphTo('three')))).toEqual({ ok: true });
    expect(await who(port, '/')).toBe('three');
  });

  test('a reload nginx refuses (port already taken) keeps the old workers serving and reports the reason', async () => {
    await h.nginx.start(h.render(graphTo('one')));
    const busy = await freePort();
    const holder = await occupyPort(busy);
    try {
      const g = graphTo('two');
      g.gateways[0].listeners.push(f.listener(busy, []));
      const result = await h.nginx.apply(h.render(g));
      expect(result.ok).toBe(false);
      expect(!result.ok && result.message).toMatch(/bind\(\).*failed|Address already in use/);
      // The port is named, so the data plane can leave its listeners out and serve the rest.
      expect(!result.ok && result.portFailures).toEqual([{ address: '127.0.0.1', port: busy, error: '98: Address already in use' }]);
      expect(await who(port, '/')).toBe('one');
    } finally {
      await holder.close();
    }
    expect(await h.nginx.apply(h.render(graphTo('three')))).toEqual({ ok: true });
    expect(await who(port, '/')).toBe('three');
  });

  test('a hostname of 253 characters (the longest DNS allows) is served: the server-name hash buckets grow to hold it', async () => {
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    const r = f.route('long', [f.rule(0, [f.prefix('/')], [f.backend('two', h.port('two'))])], { hostnames: [long] });
    const g = f.graph([f.listener(port, [f.attach(f.route('r', [f.rule(0, [f.prefix('/')], [f.backend('one', h.port('one'))])])), f.attach(r)])]);
    expect(await h.nginx.start(h.render(g))).toEqual({ ok: true });
    const res = await httpRequest(port, '/', { host: long });
    expect(res.json?.backend).toBe('two');
    expect(await who(port, '/')).toBe('one');
  });

  test('a TLS passthrough route for a 253-character hostname is served: the stream map hash buckets grow to hold it', async () => {
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    const parsed = parse(
      gatewayClass(),
      gateway('gw', [{ name: 'tls', port, protocol: 'TLS', tls: { mode: 'Passthrough' } }]),
      { apiVersion: GW_API, kind: 'TLSRoute', metadata: { name: 'long', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: [long], rules: [{ backendRefs: [{ name: 'one', port: 80 }] }] } },
      service('one', [{ port: 80 }]),
    );
    const graph = buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
    expect(graph.routes[0].parents[0].conditions[0]).toMatchObject({ type: 'Accepted', status: 'True' });
    expect(await h.nginx.start(h.render(graph))).toEqual({ ok: true });
  });

  test('1,000 TLS passthrough hostnames on one port: the stream map hash is sized for them (no "could not build optimal map_hash" on each reload)', async () => {
    const routes = Array.from({ length: 1000 }, (_, i) => ({
      apiVersion: GW_API,
      kind: 'TLSRoute',
      metadata: { name: `r${i}`, namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }], hostnames: [`r${i}.pass.example`], rules: [{ backendRefs: [{ name: 'one', port: 80 }] }] },
    }));
    const parsed = parse(gatewayClass(), gateway('gw', [{ name: 'tls', port, protocol: 'TLS', tls: { mode: 'Passthrough' } }]), ...routes, service('one', [{ port: 80 }]));
    expect(await h.nginx.start(h.render(buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME })))).toEqual({ ok: true });
    expect(h.log.records.filter((r) => /could not build optimal map_hash/.test(r.msg))).toEqual([]);
  });

  test('header values longer together than one nginx parameter (4 KB) on one path: each request reaches the rule it matches', async () => {
    const [a, b] = ['a'.repeat(2300), 'b'.repeat(2300)];
    const header = (value: string) => ({ headers: [{ name: 'X-Long', type: 'Exact' as const, value }] });
    const r = f.route('long', [
      f.rule(0, [f.prefix('/', header(a))], [f.backend('one', h.port('one'))]),
      f.rule(1, [f.prefix('/', header(b))], [f.backend('two', h.port('two'))]),
      f.rule(2, [f.prefix('/')], [f.backend('three', h.port('three'))]),
    ]);
    expect(await h.nginx.start(h.render(f.graph([f.listener(port, [f.attach(r)])])))).toEqual({ ok: true });
    const backendFor = async (value?: string) => (await httpRequest(port, '/', value ? { headers: { 'x-long': value } } : {})).json?.backend;
    expect(await backendFor(a)).toBe('one');
    expect(await backendFor(b)).toBe('two');
    expect(await backendFor(`${a}x`)).toBe('three');
    expect(await backendFor()).toBe('three');
  });

  test("nginx's error log lines reach the Logger", async () => {
    const deadPort = await freePort();
    const g = f.graph([f.listener(port, [f.attach(f.route('r', [f.rule(0, [f.prefix('/')], [f.backend('dead', deadPort)])]))])]);
    await h.nginx.start(h.render(g));
    expect((await httpRequest(port, '/')).status).toBe(502);
    await new Promise((r) => setTimeout(r, 200));
    const line = h.log.records.find((r) => r.level === 'error' && /connect\(\) failed/.test(r.msg));
    expect(line?.fields).toMatchObject({ component: 'nginx', nginxLevel: 'error' });
  });

  test('stop() ends the master and its workers and frees the port', async () => {
    await h.nginx.start(h.render(graphTo('one')));
    const pid = h.nginx.pid!;
    expect(alive(pid)).toBe(true);
    await h.nginx.stop();
    expect(alive(pid)).toBe(false);
    expect(alive(-pid)).toBe(false); // no process left in its group (workers)
    await expect(httpRequest(port, '/')).rejects.toThrow(/ECONNREFUSED/);
  });

  test('after an nginx killed outright (its socket file left behind), a new start on the same prefix serves', async () => {
    await h.nginx.start(h.render(graphTo('one')));
    const pid = h.nginx.pid!;
    process.kill(-pid, 'SIGKILL'); // master and workers, as a crash or an OOM kill would
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    const socket = path.join(h.prefix, 'run', 'status.sock');
    expect(fs.lstatSync(socket).isSocket()).toBe(true);
    const next = new NginxProcess({ prefix: h.prefix, binary: defaultNginxBinary(), log: h.log });
    try {
      expect(await next.start(h.render(graphTo('two')))).toEqual({ ok: true });
      expect(await who(port, '/')).toBe('two');
    } finally {
      await next.stop();
    }
  });

  test('start() with a config nginx rejects fails with the message and starts nothing', async () => {
    const model = buildModel(graphTo('one'));
    model.servers[0].settings.limitReq = [{ zone: 'no_such_zone' }];
    const result = await h.nginx.start(renderConfig(model, { listenAddress: '127.0.0.1', prefix: h.prefix }));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(/no_such_zone/);
    expect(h.nginx.pid).toBeUndefined();
  });
});

describe('weights', () => {
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await Harness.create(['light', 'heavy', 'never']);
    port = await freePort();
    const be = (n: string, weight: number) => f.backend(n, h.port(n), { weight });
    const g = f.graph([
      f.listener(port, [
        f.attach(
          f.route('split', [
            f.rule(0, [f.prefix('/split')], [be('light', 1), be('heavy', 3), be('never', 0)]),
            f.rule(1, [f.prefix('/half-broken')], [be('light', 1), f.backend('gone', undefined, { valid: false, weight: 1 })]),
          ]),
        ),
      ]),
    ]);
    const result = await h.nginx.start(h.render(g));
    if (!result.ok) throw new Error(result.message);
  });
  afterAll(async () => {
    await h.close();
  });

  async function tally(p: string, n: number): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const k = String(await who(port, p));
      counts[k] = (counts[k] ?? 0) + 1;
    }
    return counts;
  }

  test('traffic splits by weight (1:3 over 200 requests), weight 0 gets none', async () => {
    const counts = await tally('/split', 200);
    expect(counts.never).toBeUndefined();
    // Expected 50 / 150; binomial sd is about 6, allow 4 sd.
    expect(counts.light).toBeGreaterThanOrEqual(25);
    expect(counts.light).toBeLessThanOrEqual(75);
    expect((counts.light ?? 0) + (counts.heavy ?? 0)).toBe(200);
  });

  test("an invalid backend's share answers 500", async () => {
    const counts = await tally('/half-broken', 200);
    expect(counts['500']).toBeGreaterThanOrEqual(70);
    expect(counts['500']).toBeLessThanOrEqual(130);
    expect((counts['500'] ?? 0) + (counts.light ?? 0)).toBe(200);
  });
});

describe('per-rule client_max_body_size (what ClientSettingsPolicy will set)', () => {
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await Harness.create(['small', 'big', 'plain']);
    port = await freePort();
    const be = (n: string) => f.backend(n, h.port(n));
    const g = f.graph([
      f.listener(port, [
        f.attach(
          f.route('limits', [
            f.rule(0, [f.prefix('/up', { headers: [{ name: 'X-Size', type: 'Exact', value: 'small' }] })], [be('small')]),
            f.rule(1, [f.prefix('/up', { headers: [{ name: 'X-Size', type: 'Exact', value: 'big' }] })], [be('big')]),
            f.rule(2, [f.prefix('/up')], [be('plain')]),
          ]),
        ),
      ]),
    ]);
    const model = buildModel(g);
    const rules = model.servers.find((s) => s.defaultServer)!.ruleLocations;
    rules[0].settings = { clientMaxBodySize: '100' };
    rules[1].settings = { clientMaxBodySize: '2m' };
    finalizeModel(model);
    const result = await h.nginx.start(renderConfig(model, { listenAddress: '127.0.0.1', prefix: h.prefix, workerProcesses: 1 }));
    if (!result.ok) throw new Error(result.message);
  });
  afterAll(async () => {
    await h.close();
  });

  const post = (size: string, bytes: number, headers: Record<string, string> = {}) =>
    httpRequest(port, '/up', { method: 'POST', body: 'z'.repeat(bytes), headers: { 'X-Size': size, ...headers } });

  test('a body of exactly the limit passes, one byte more gets 413 (Content-Length)', async () => {
    expect((await post('small', 100)).json?.backend).toBe('small');
    expect((await post('small', 101)).status).toBe(413);
  });

  test('chunked bodies are limited too', async () => {
    expect((await post('small', 101, { 'Transfer-Encoding': 'chunked' })).status).toBe(413);
  });

  test("a rule's larger limit is not cut by nginx's 1m default; other rules keep it", async () => {
    expect((await post('big', 1536 * 1024)).json?.backend).toBe('big');
    expect((await post('plain', 1536 * 1024)).status).toBe(413);
    expect((await post('plain', 1000)).json?.backend).toBe('plain');
  });
});
