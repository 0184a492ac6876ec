/**
 * Shared dispatch maps through a real nginx: locations (in two servers) whose candidates have
 * the same shape read one `map $pc_k`, each with its own paths and values carried in $pc_k and
 * compared by backreference; values the composite cannot carry ("$", a leading "@") and values
 * with regex characters keep their exact-match meaning; precedence holds.
 */
import * as fs from 'fs';
import { httpRequest, type HttpRequestOptions } from '../../e2e/support/http';
import { defaultNginxBinary, nginxCapabilities } from '../src/apply/nginx-binary';
import { Harness, freePort } from './apply-harness';
import * as f from './model-fixtures';

// The project's nginx, and Debian's 1.22 where installed (the config must load on both).
const OLD = '/usr/sbin/nginx';
const binaries = [defaultNginxBinary(), ...(fs.existsSync(OLD) && OLD !== defaultNginxBinary() ? [OLD] : [])];

const BACKENDS = ['a1', 'a2', 'q1', 'q2', 'rest1', 'rest2', 'dot', 'dollar', 'at', 'first', 'second', 'h-a', 'h-rest'];

for (const binary of binaries) describe(`nginx ${binary}`, () => {
  let h: Harness;
  let port: number;
  let files: Record<string, string>;

  async function who(host: string, path: string, options: HttpRequestOptions = {}): Promise<string | number> {
    const res = await httpRequest(port, path, { host, ...options });
    if (res.status === 200 && res.json && typeof res.json.backend === 'string') return res.json.backend;
    return res.status;
  }

  beforeAll(async () => {
    const saved = process.env.PORTCULLIS_NGINX;
    process.env.PORTCULLIS_NGINX = binary;
    try {
      h = await Harness.create(BACKENDS);
    } finally {
      if (saved === undefined) delete process.env.PORTCULLIS_NGINX;
      else process.env.PORTCULLIS_NGINX = saved;
    }
    const caps = nginxCapabilities(binary);
    port = await freePort();
    const be = (name: string) => f.backend(name, h.port(name));
    const H = (name: string, value: string) => ({ name, type: 'Exact' as const, value });
    const shaped = (i: number, more = {}) =>
      f.route(`s${i}`, [
        f.rule(0, [f.prefix(`/s${i}/api`, { headers: [H('X-T', `t${i}`)] })], [be(`a${i}`)]),
        f.rule(1, [f.prefix(`/s${i}/api`, { queryParams: [H('k', `v${i}`)] })], [be(`q${i}`)]),
        f.rule(2, [f.prefix(`/s${i}`)], [be(`rest${i}`)]),
      ], more);
    const values = f.route('values', [
      f.rule(0, [f.prefix('/v/api', { headers: [H('X-T', 'a.b+c')] })], [be('dot')]),
      f.rule(1, [f.prefix('/v/api', { headers: [H('X-T', 'x$y')] })], [be('dollar')]),
      f.rule(2, [f.prefix('/v/api', { headers: [H('X-T', '@rule_default_values_0')] })], [be('at')]),
    ]);
    // Same path and header count: the older rule (lower index) wins when both hold.
    const prec = f.route('prec', [
      f.rule(0, [f.prefix('/p/api', { headers: [H('X-A', '1')] })], [be('first')]),
      f.rule(1, [f.prefix('/p/api', { headers: [H('X-B', '1')] })], [be('second')]),
    ]);
    const other = f.route('other', [
      f.rule(0, [f.prefix('/s1/api', { headers: [H('X-T', 'h')] })], [be('h-a')]),
      f.rule(1, [f.prefix('/s1')], [be('h-rest')]),
    ], { hostnames: ['other.test'] });
    const graph = f.graph([f.listener(port, [shaped(1), shaped(2), values, prec, other].map((r) => f.attach(r)))]);
    graph.nginx = { http2On: caps.http2On, h2cPorts: [] };
    const config = h.render(graph, { tempPathModules: caps.tempPathModules });
    files = config.files;
    const result = await h.nginx.start(config);
    if (!result.ok) throw new Error(result.message);
  });

  afterAll(async () => {
    await h?.close();
  });

  test('locations of the same shape share one map and no location has an if', () => {
    const maps = files['maps.conf'].match(/^map \$pc_k (\$pc_d\w+)/gm) ?? [];
    const uses = [...files['servers.conf'].matchAll(/error_page 418 = (\$pc_d\w+);/g)].map((m) => m[1]);
    expect(uses.length).toBeGreaterThan(maps.length);
    expect(new Set(uses).size).toBe(maps.length);
    expect(files['servers.conf']).not.toMatch(/\bif \(\$pc_k/);
  });

  test('each location answers by its own paths and values', async () => {
    for (const i of [1, 2]) {
      const j = 3 - i;
      expect(await who('any.test', `/s${i}/api`, { headers: { 'X-T': `t${i}` } })).toBe(`a${i}`);
      expect(await who('any.test', `/s${i}/api/x`, { headers: { 'X-T': `t${i}` } })).toBe(`a${i}`);
      expect(await who('any.test', `/s${i}/api`, { headers: { 'X-T': `t${j}` } })).toBe(`rest${i}`);
      expect(await who('any.test', `/s${i}/apix`, { headers: { 'X-T': `t${i}` } })).toBe(`rest${i}`);
      // A decoded newline right after the path is no segment boundary (the composite's $uri).
      expect(await who('any.test', `/s${i}/api%0A`, { headers: { 'X-T': `t${i}` } })).toBe(`rest${i}`);
      expect(await who('any.test', `/s${i}/api%0A/x`, { headers: { 'X-T': `t${i}` } })).toBe(`rest${i}`);
      expect(await who('any.test', `/s${i}/api?a=1&k=v${i}`)).toBe(`q${i}`);
      expect(await who('any.test', `/s${i}/api?k=v${j}`)).toBe(`rest${i}`);
      expect(await who('any.test', `/s${i}/api?k=v${i}x`)).toBe(`rest${i}`);
      expect(await who('any.test', `/s${i}x`)).toBe(404);
    }
    // Another server reads the same kind of location with its own values.
    expect(await who('other.test', '/s1/api', { headers: { 'X-T': 'h' } })).toBe('h-a');
    expect(await who('other.test', '/s1/api', { headers: { 'X-T': 't1' } })).toBe('h-rest');
  });

  test('values with regex characters, "$" or a leading "@" match exactly', async () => {
    expect(await who('any.test', '/v/api', { headers: { 'X-T': 'a.b+c' } })).toBe('dot');
    expect(await who('any.test', '/v/api', { headers: { 'X-T': 'aXbbc' } })).toBe(404);
    expect(await who('any.test', '/v/api', { headers: { 'X-T': 'x$y' } })).toBe('dollar');
    expect(await who('any.test', '/v/api', { headers: { 'X-T': 'x' } })).toBe(404);
    expect(await who('any.test', '/v/api', { headers: { 'X-T': '@rule_default_values_0' } })).toBe('at');
  });

  test('precedence among candidates holds', async () => {
    expect(await who('any.test', '/p/api', { headers: { 'X-A': '1', 'X-B': '1' } })).toBe('first');
    expect(await who('any.test', '/p/api', { headers: { 'X-B': '1' } })).toBe('second');
  });
});
