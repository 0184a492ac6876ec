/**
 * The partial `nginx -t`: only server blocks that are not byte-identical to the live
 * generation's are checked (with the whole http level); what spans servers is left to the reload.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CHECK_CONF, CHECK_SERVERS_CONF, partialCheck, serverBlocks, splitServer } from '../src/apply/check';
import { httpRequest } from '../../e2e/support/http';
import { Harness, freePort } from './apply-harness';
import * as f from './model-fixtures';

const main = 'http {\n    include maps.conf;\n    include servers.conf;\n}\n';
const a = 'server {\n    listen 1;\n}\n\n';
const b = 'server {\n    listen 2;\n}\n\n';
const b2 = 'server {\n    listen 2;\n    server_name "x";\n}\n\n';

describe('partialCheck', () => {
  test('server blocks split at each top-level "server {"', () => {
    expect(serverBlocks(a + b)).toEqual([a, b]);
  });

  test('checks the changed and new server blocks only, with the same main file', () => {
    const p = partialCheck({ 'nginx.conf': main, 'servers.conf': a + b }, { 'nginx.conf': main, 'servers.conf': a + b2 + 'server {\n    listen 3;\n}\n' })!;
    expect(p.changed).toBe(2);
    expect(p.total).toBe(3);
    expect(p.files[CHECK_SERVERS_CONF]).toBe(b2 + 'server {\n    listen 3;\n}\n');
    expect(p.files[CHECK_CONF]).toBe(main.replace('include servers.conf;', `include ${CHECK_SERVERS_CONF};`));
  });

  test('reads everything on the first start, when the main file changed, or when servers.conf holds more than server blocks', () => {
    expect(partialCheck(undefined, { 'nginx.conf': main, 'servers.conf': a })).toBeUndefined();
    expect(partialCheck({ 'nginx.conf': main, 'servers.conf': a }, { 'nginx.conf': main + '# x\n', 'servers.conf': a })).toBeUndefined();
    expect(partialCheck({ 'nginx.conf': main, 'servers.conf': a }, { 'nginx.conf': main, 'servers.conf': 'map $a $b {}\n' + a })).toBeUndefined();
  });
});

describe('partialCheck inside one server (many routes on one host)', () => {
  const loc = (p: string, body = 'return 200;') => `\n\n    location ${JSON.stringify(p)} {\n        ${body}\n    }`;
  const server = (...locations: string[]) => `server {\n    listen 1 default_server;\n    server_name "";\n${locations.join('')}\n}\n\n`;
  const tricky = loc('/a', 'if ($x ~ "^(?:[^\\n]*\\n){2}\\"}{") { return 418; } # a } in a comment\n        set $y a#b;');

  test('splitServer: the server\'s own directives, then its locations; braces in quotes and comments do not count', () => {
    const named = '\n\n    # a rule\n    location @r1 {\n        return 204;\n    }';
    const parts = splitServer(server(tricky, loc('/b'), named))!;
    // Each item starts after the one before it ends (here: the newline after server_name).
    expect(parts.locations).toEqual(['\n' + tricky, loc('/b'), named]);
    expect(parts.head).toBe('server {\n    listen 1 default_server;\n    server_name "";\n}\n\n');
    expect(splitServer('server {\n    location / { "unterminated;\n}\n')).toBeUndefined();
    expect(splitServer('server {\n    listen 1;\n')).toBeUndefined();
  });

  test('a changed server with the head of a live one is checked with its new locations only', () => {
    const before = server(loc('/a'), loc('/b'));
    const after = server(loc('/a'), loc('/b'), loc('/c'));
    const p = partialCheck({ 'nginx.conf': main, 'servers.conf': before }, { 'nginx.conf': main, 'servers.conf': after }, 0)!;
    expect(p.changed).toBe(1);
    expect(p.newLocations).toBe(1);
    expect(p.files[CHECK_SERVERS_CONF]).toBe(server(loc('/c')));
    // A changed location is new text: checked.
    const edited = server(loc('/a', 'return 201;'), loc('/b'));
    expect(partialCheck({ 'nginx.conf': main, 'servers.conf': before }, { 'nginx.conf': main, 'servers.conf': edited }, 0)!.newLocations).toBe(1);
  });

  test('a server whose own directives changed, or small servers, are checked whole', () => {
    const before = server(loc('/a'));
    const after = server(loc('/a')).replace('server_name "";', 'server_name "";\n    client_max_body_size 1m;');
    const p = partialCheck({ 'nginx.conf': main, 'servers.conf': before }, { 'nginx.conf': main, 'servers.conf': after }, 0)!;
    expect(p.files[CHECK_SERVERS_CONF]).toBe(after);
    expect(p.newLocations).toBeUndefined();
    const small = partialCheck({ 'nginx.conf': main, 'servers.conf': before }, { 'nginx.conf': main, 'servers.conf': server(loc('/a'), loc('/b')) })!;
    expect(small.files[CHECK_SERVERS_CONF]).toBe(server(loc('/a'), loc('/b')));
    expect(small.newLocations).toBeUndefined();
  });
});

describe('with nginx', () => {
  let h: Harness;
  let port: number;
  const render = (backend: string, host: string) =>
    h.render(f.graph([f.listener(port, [f.attach(f.route('r', [f.rule(0, [f.prefix('/')], [f.backend(backend, h.port(backend))])], { hostnames: [host] }))])]));
  const who = async (host: string) => {
    const res = await httpRequest(port, '/', { host });
    return res.status === 200 && res.json ? res.json.backend : res.status;
  };

  beforeEach(async () => {
    h = await Harness.create(['one', 'two'], { checkBeforeReload: true });
    port = await freePort();
    expect(await h.nginx.start(render('one', 'a.test'))).toEqual({ ok: true });
  });
  afterEach(async () => {
    await h.close();
  });

  test('a broken changed server block is refused by the check; the last good config keeps serving', async () => {
    const next = render('two', 'a.test');
    next.files['servers.conf'] = next.files['servers.conf'].replace('server_name "a.test";', 'server_name "a.test";\n    no_such_directive on;');
    const result = await h.nginx.apply(next);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(/no_such_directive/);
    expect(h.log.records.some((r) => r.msg === 'nginx -t reads the changed server blocks only')).toBe(true);
    expect(await who('a.test')).toBe('one');
  });

  test('a conflict between servers that the partial check cannot see is refused by the reload, and reported', async () => {
    const next = render('two', 'a.test');
    const blocks = serverBlocks(next.files['servers.conf']);
    const defaultServer = blocks.find((blk) => blk.includes('default_server'))!;
    // A second default server on the port: new text (checked alone it is fine), nginx refuses it with the first.
    next.files['servers.conf'] += defaultServer.replace('server_name "";', 'server_name "other.test";');
    const result = await h.nginx.apply(next);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(/duplicate default server/);
    expect(await who('a.test')).toBe('one');
    expect(fs.readFileSync(path.join(h.prefix, 'conf', 'upstreams.conf'), 'utf8')).toContain(String(h.port('one')));
    // And the next good change still goes through.
    expect(await h.nginx.apply(render('two', 'a.test'))).toEqual({ ok: true });
    expect(await who('a.test')).toBe('two');
  });

  describe('one host with many routes (checked by location)', () => {
    // Routes without hostnames: one server block, big enough to be checked in part.
    const routes = (n: number, backend: string) =>
      Array.from({ length: n }, (_, i) => f.attach(f.route(`r${i}`, [f.rule(0, [f.prefix(`/p${i}z`, { headers: [{ type: 'Exact', name: 'X-T', value: `t${i}` }] })], [f.backend(backend, h.port(backend))])], { hostnames: [] })));
    const renderMany = (n: number, backend = 'one') => h.render(f.graph([f.listener(port, routes(n, backend))]));

    beforeEach(async () => {
      expect(await h.nginx.apply(renderMany(300))).toEqual({ ok: true });
      expect(renderMany(300).files['servers.conf'].length).toBeGreaterThan(32 * 1024);
    });

    test('an added route is checked alone and served', async () => {
      expect(await h.nginx.apply(renderMany(301))).toEqual({ ok: true });
      const check = h.log.records.filter((r) => r.msg === 'nginx -t reads the changed server blocks only').pop();
      expect(check?.fields).toMatchObject({ changed: 1, servers: 1 });
      expect(Number(check?.fields?.newLocations)).toBeGreaterThan(0);
      expect(Number(check?.fields?.newLocations)).toBeLessThan(5);
      const res = await httpRequest(port, '/p300z', { headers: { 'X-T': 't300' } });
      expect(res.status === 200 && res.json?.backend).toBe('one');
    });

    test('a broken new location is refused by the check; the last good config keeps serving', async () => {
      const next = renderMany(301);
      next.files['servers.conf'] = next.files['servers.conf'].replace('location "/p300z" {', 'location "/p300z" {\n        no_such_directive on;');
      const result = await h.nginx.apply(next);
      expect(!result.ok && result.message).toMatch(/no_such_directive/);
      expect((await httpRequest(port, '/p1z', { headers: { 'X-T': 't1' } })).json?.backend).toBe('one');
    });

    test('a new location that clashes with an unchanged one is refused by the reload, and reported', async () => {
      const next = renderMany(301, 'two');
      // The same path as a live location: alone it is valid, with the server nginx refuses it.
      next.files['servers.conf'] = next.files['servers.conf'].replace('location "/p300z" {', 'location "/p1z" {');
      const result = await h.nginx.apply(next);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.message).toMatch(/duplicate location "\/p1z"/);
      expect((await httpRequest(port, '/p1z', { headers: { 'X-T': 't1' } })).json?.backend).toBe('one');
      expect(await h.nginx.apply(renderMany(301, 'two'))).toEqual({ ok: true });
      expect((await httpRequest(port, '/p1z', { headers: { 'X-T': 't1' } })).json?.backend).toBe('two');
    });
  });
});
