/**
 * The partial `nginx -t`: only server blocks that are not byte-identical to the live
 * generation's are checked (with the whole http level); what spans servers is left to the reload.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CHECK_CONF, CHECK_SERVERS_CONF, partialCheck, serverBlocks } from '../src/apply/check';
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
    h = await Harness.create(['one', 'two']);
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
});
