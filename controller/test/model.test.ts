/** buildModel with plain Graph data: servers, locations, conditions, precedence, upstreams. */
import { buildModel, finalizeModel } from '../src/model';
import { MAX_LOCATION_CANDIDATES } from '../src/model/locations';
import { DISABLED_TIMEOUT, proxyTimeout } from '../src/model/timeouts';
import { splitBuckets } from '../src/model/upstreams';
import { greaterThanRegex, sizeBytes } from '../src/model/bodylimit';
import type { Location, NginxModel, Server } from '../src/model/types';
import { simulate } from './model-simulate';
import * as f from './model-fixtures';

const H = (name: string, value: string, type: 'Exact' | 'RegularExpression' = 'Exact') => ({ name, type, value });

function server(model: NginxModel, port: number, name?: string): Server {
  const s = model.servers.find((x) => x.port === port && (name === undefined ? x.defaultServer : x.serverNames.includes(name)));
  if (!s) throw new Error(`no server ${port} ${name}`);
  return s;
}

function location(s: Server, match: 'exact' | 'prefix', path: string): Location {
  const l = s.locations.find((x) => x.match === match && x.path === path);
  if (!l) throw new Error(`no location ${match} ${path} in ${s.locations.map((x) => x.match + ' ' + x.path).join(', ')}`);
  return l;
}

describe('servers per (port, hostname)', () => {
  test('one catch-all default server per port plus one server per hostname', () => {
    const r1 = f.route('r1', [f.rule(0, [f.prefix('/')], [f.backend('a', 9000)])], { hostnames: ['a.test', '*.wild.test'] });
    const model = buildModel(f.graph([f.listener(80, [f.attach(r1)]), f.listener(81, [])]));
    expect(model.servers.map((s) => [s.port, s.defaultServer, s.serverNames])).toEqual([
      [80, true, []],
      [80, false, ['*.wild.test']],
      [80, false, ['a.test']],
      [81, true, []],
    ]);
    // The default server of a port where no route covers every host answers 404.
    expect(location(server(model, 80), 'prefix', '/').action).toEqual({ kind: 'status', code: 404 });
    expect(location(server(model, 81), 'prefix', '/').action).toEqual({ kind: 'status', code: 404 });
  });

  test('invalid listeners and unaccepted gateways are not rendered', () => {
    const model = buildModel(f.graph([f.listener(80, [], { valid: false })]));
    expect(model.servers).toEqual([]);
    expect(buildModel(f.graph([f.listener(80, [])], { accepted: false })).servers).toEqual([]);
  });

  test('a listener hostname gets its own server, fed only by that listener', () => {
    const general = f.route('general', [f.rule(0, [f.prefix('/')], [f.backend('g', 9000)])], { hostnames: ['foo.test'] });
    const specific = f.route('specific', [f.rule(0, [f.prefix('/s')], [f.backend('s', 9001)])]);
    const model = buildModel(
      f.graph([f.listener(80, [f.attach(general)]), f.listener(80, [f.attach(specific, ['foo.test'])], { hostname: 'foo.test', name: 'foo' })]),
    );
    const foo = server(model, 80, 'foo.test');
    expect(foo.ruleLocations.map((r) => r.source.name)).toEqual(['specific']);
  });

  test('routes without hostnames also serve named hosts, ranked after hostname-specific routes', () => {
    const named = f.route('named', [f.rule(0, [f.prefix('/', { headers: [H('x', '1')] })], [f.backend('n', 9000)])], { hostnames: ['foo.test'] });
    const any = f.route('any', [f.rule(0, [f.exact('/')], [f.backend('a', 9001)])]);
    const model = buildModel(f.graph([f.listener(80, [f.attach(named), f.attach(any)])]));
    // Exact "/" of the any-host route ranks below the named host's PathPrefix "/" + header.
    expect(simulate(model, 80, { host: 'foo.test', path: '/', headers: { x: '1' } })).toBe('default/named#0');
    expect(simulate(model, 80, { host: 'foo.test', path: '/' })).toBe('default/any#0');
    expect(simulate(model, 80, { host: 'foo.test', path: '/other' })).toBe(404);
    expect(simulate(model, 80, { host: 'bar.test', path: '/' })).toBe('default/any#0');
    expect(location(server(model, 80), 'exact', '/').action.kind).toBe('proxy');
  });
});

describe('locations', () => {
  const model = buildModel(
    f.graph([
      f.listener(80, [
        f.attach(
          f.route('r', [
            f.rule(0, [f.prefix('/x/')], [f.backend('a', 9000)]),
            f.rule(1, [f.exact('/y')], [f.backend('b', 9001)]),
            f.rule(2, [f.prefix('/x/deep', { method: 'POST' })], [f.backend('c', 9002)]),
          ]),
        ),
      ]),
    ]),
  );
  const s = server(model, 80);

  test('PathPrefix /x/ -> "= /x" and "/x/" when both proxy; one "/x/deep" when it must dispatch; Exact /y -> "= /y"; always "/"', () => {
    expect(s.locations.map((l) => `${l.match} ${l.path}`).sort()).toEqual(['exact /x', 'prefix /x/', 'exact /y', 'prefix /', 'prefix /x/deep'].sort());
  });

  test('the folded "/x/deep" location tests the segment: /x/deeper goes to the shorter prefix', () => {
    expect(simulate(model, 80, { path: '/x/deep', method: 'POST' })).toBe('default/r#2');
    expect(simulate(model, 80, { path: '/x/deep/', method: 'POST' })).toBe('default/r#2');
    expect(simulate(model, 80, { path: '/x/deeper', method: 'POST' })).toBe('default/r#0');
    expect(simulate(model, 80, { path: '/x/deep%0A', method: 'POST' })).toBe('default/r#0');
  });

  test('a decoded newline in the path cannot pass the segment test', () => {
    // simulate() takes the decoded $uri: "/x/deep\n/" is not /x/deep followed by "/".
    expect(simulate(model, 80, { path: '/x/deep\n/', method: 'POST' })).toBe('default/r#0');
    expect(simulate(model, 80, { path: '/x/deep/\n', method: 'POST' })).toBe('default/r#2');
  });

  test('a location whose best candidate has no condition proxies directly', () => {
    expect(location(s, 'exact', '/x').action).toMatchObject({ kind: 'proxy', source: { name: 'r', ruleIndex: 0 } });
    expect(location(s, 'exact', '/y').action).toMatchObject({ kind: 'proxy', source: { ruleIndex: 1 } });
  });

  test('a location with conditions dispatches, falling back to the shorter prefix', () => {
    expect(location(s, 'prefix', '/x/deep').action.kind).toBe('dispatch');
    expect(simulate(model, 80, { path: '/x/deep/1', method: 'POST' })).toBe('default/r#2');
    expect(simulate(model, 80, { path: '/x/deep/1', method: 'GET' })).toBe('default/r#0');
  });

  test('a location nothing can match answers 404', () => {
    expect(location(s, 'prefix', '/').action).toEqual({ kind: 'status', code: 404 });
  });

  test('every rule has its own named location, carrying its source for policies', () => {
    expect(s.ruleLocations.map((r) => [r.name, r.source])).toEqual([
      ['@rule_default_r_0', { namespace: 'default', name: 'r', ruleIndex: 0 }],
      ['@rule_default_r_1', { namespace: 'default', name: 'r', ruleIndex: 1 }],
      ['@rule_default_r_2', { namespace: 'default', name: 'r', ruleIndex: 2 }],
    ]);
    expect(s.ruleLocations[0].settings).toEqual({});
  });

  test('invalid rules are skipped', () => {
    const bad = { ...f.rule(0, [f.prefix('/')], [f.backend('a', 9000)]), valid: false };
    const m = buildModel(f.graph([f.listener(80, [f.attach(f.route('r', [bad]))])]));
    expect(server(m, 80).ruleLocations).toEqual([]);
  });
});

/** What the conditions read: map sources and dispatch composites. */
function sources(model: NginxModel): string[] {
  const keys = model.servers.flatMap((s) => s.locations.flatMap((l) => (l.action.kind === 'dispatch' ? [l.action.key] : [])));
  return [...model.maps.map((m) => m.source), ...keys];
}

describe('conditions', () => {
  function onlyRule(match: ReturnType<typeof f.match>) {
    return buildModel(f.graph([f.listener(80, [f.attach(f.route('r', [f.rule(0, [match], [f.backend('a', 9000)])]))])]));
  }
  const hit = 'default/r#0';

  test('query names are matched case-sensitively on $args (not $arg_), values exactly, in any position', () => {
    const model = onlyRule(f.prefix('/', { queryParams: [H('Mode', 'a b'), H('x', '1')] }));
    expect(sources(model).some((src) => src.includes('$arg_'))).toBe(false);
    expect(sources(model).some((src) => src.split('\n').includes('$args'))).toBe(true);
    expect(simulate(model, 80, { path: '/?x=1&Mode=a+b' })).toBe(hit);
    expect(simulate(model, 80, { path: '/?Mode=a%20b&x=1' })).toBe(hit);
    expect(simulate(model, 80, { path: '/?mode=a+b&x=1' })).toBe(404);
    expect(simulate(model, 80, { path: '/?xMode=a+b&x=1' })).toBe(404);
    expect(simulate(model, 80, { path: '/?Mode=a+bc&x=1' })).toBe(404);
    // The first occurrence of a name decides.
    expect(simulate(model, 80, { path: '/?Mode=a+b&x=1&Mode=c' })).toBe(hit);
    expect(simulate(model, 80, { path: '/?Mode=c&x=1&Mode=a+b' })).toBe(404);
    expect(simulate(model, 80, { path: '/?x=2&Mode=a+b&x=1' })).toBe(404);
    expect(simulate(model, 80, { path: '/?Mode=a+b' })).toBe(404);
  });

  test('header names are case-insensitive ($http_), values exact with regex characters escaped', () => {
    const model = onlyRule(f.prefix('/', { headers: [H('X-Env-Name', 'a.b"c$')] }));
    expect(sources(model).some((src) => src.split('\n').includes('$http_x_env_name'))).toBe(true);
    expect(simulate(model, 80, { path: '/', headers: { 'x-env-NAME': 'a.b"c$' } })).toBe(hit);
    expect(simulate(model, 80, { path: '/', headers: { 'X-Env-Name': 'aXb"c$' } })).toBe(404);
    expect(simulate(model, 80, { path: '/', headers: { 'X-Env-Name': 'A.b"c$' } })).toBe(404);
  });

  test('exact conditions of one element are one regex over one "\\n"-joined source, with no map (no nginx variable per location)', () => {
    const model = onlyRule(f.prefix('/', { method: 'GET', headers: [H('X-A', '1')], queryParams: [H('q', '2')] }));
    expect(model.maps).toHaveLength(0);
    const action = location(server(model, 80), 'prefix', '/').action;
    // The fields, the named locations the regex captures as $1, then the values they are
    // compared with; the 404 fallback is the map's default, not in the composite.
    expect(action).toMatchObject({ kind: 'dispatch', key: '$request_method\n$http_x_a\n$args\n@rule_default_r_0\n1\n2', fallback: '@portcullis_404' });
    expect(simulate(model, 80, { path: '/?q=2', headers: { 'X-A': '1' } })).toBe(hit);
    expect(simulate(model, 80, { path: '/?q=2', method: 'HEAD', headers: { 'X-A': '1' } })).toBe(404);
  });

  test('RegularExpression header, query and path conditions', () => {
    const model = onlyRule(
      f.regex('/v[0-9]+/', { headers: [H('X-R', '^ab+c$', 'RegularExpression')], queryParams: [H('n', '^[0-9]+$', 'RegularExpression')] }),
    );
    expect(simulate(model, 80, { path: '/v2/x?n=12', headers: { 'X-R': 'abbc' } })).toBe(hit);
    expect(simulate(model, 80, { path: '/x/v2/?n=12', headers: { 'X-R': 'abbc' } })).toBe(404);
    expect(simulate(model, 80, { path: '/v2/x?n=1a', headers: { 'X-R': 'abbc' } })).toBe(404);
    expect(simulate(model, 80, { path: '/v2/x?m=12', headers: { 'X-R': 'abbc' } })).toBe(404);
    expect(simulate(model, 80, { path: '/v2/x?n=12', headers: { 'X-R': 'ac' } })).toBe(404);
  });

  test('only the first entry per header name counts', () => {
    const model = onlyRule(f.prefix('/', { headers: [H('X-A', '1'), H('x-a', '2')] }));
    expect(simulate(model, 80, { path: '/', headers: { 'X-A': '1' } })).toBe(hit);
  });

  test('a header name nginx cannot read is reported and its element never matches', () => {
    const model = onlyRule(f.prefix('/', { headers: [H('X.Dot', '1')] }));
    expect(model.warnings.join()).toMatch(/X\.Dot/);
    expect(location(server(model, 80), 'prefix', '/').action).toEqual({ kind: 'status', code: 404 });
  });
});

describe('rule timeouts', () => {
  test('backendRequest when given, else request; 0 disables (a day); none: nginx defaults', () => {
    expect(proxyTimeout(undefined)).toBeUndefined();
    expect(proxyTimeout({})).toBeUndefined();
    expect(proxyTimeout({ requestMs: 10000 })).toBe('10000ms');
    expect(proxyTimeout({ requestMs: 10000, backendRequestMs: 2500 })).toBe('2500ms');
    expect(proxyTimeout({ requestMs: 0, backendRequestMs: 2500 })).toBe('2500ms');
    expect(proxyTimeout({ requestMs: 3000, backendRequestMs: 0 })).toBe('3000ms');
    expect(proxyTimeout({ requestMs: 0 })).toBe(DISABLED_TIMEOUT);
  });

  test('a rule with a timeout gets it where it proxies; rules that differ only in it do not share a location', () => {
    const be = f.backend('a', 9000);
    const model = buildModel(
      f.graph([f.listener(80, [f.attach(f.route('t', [{ ...f.rule(0, [f.prefix('/x', { method: 'GET' })], [be]), timeouts: { requestMs: 1500 } }, f.rule(1, [f.prefix('/x')], [be])]))])]),
    );
    const s = server(model, 80);
    expect(s.ruleLocations.map((r) => [r.name, r.timeout, r.emit])).toEqual([
      ['@rule_default_t_0', '1500ms', true],
      ['@rule_default_t_1', undefined, true],
    ]);
    const inline = buildModel(f.graph([f.listener(80, [f.attach(f.route('t', [{ ...f.rule(0, [f.prefix('/x')], [be]), timeouts: { backendRequestMs: 700 } }]))])]));
    expect(location(server(inline, 80), 'prefix', '/x/').action).toMatchObject({ kind: 'proxy', timeout: '700ms' });
  });
});

describe('folding paths into a location that dispatches anyway', () => {
  const model = buildModel(
    f.graph([
      f.listener(80, [
        f.attach(
          f.route('folded', [
            f.rule(0, [f.prefix('/', { headers: [H('X-Root', '1')] })], [f.backend('a', 9000)]),
            f.rule(1, [f.prefix('/f7', { headers: [H('X-F', '1')] })], [f.backend('b', 9001)]),
            f.rule(2, [f.prefix('/f70')], [f.backend('c', 9002)]),
            f.rule(3, [f.exact('/f7/login', { method: 'POST' })], [f.backend('d', 9003)]),
          ]),
        ),
      ]),
    ]),
  );
  const s = server(model, 80);

  test('one location holds them all', () => {
    expect(s.locations.map((l) => `${l.match} ${l.path}`)).toEqual(['prefix /']);
  });

  test('segments and exact paths still decide', () => {
    expect(simulate(model, 80, { path: '/f70/x' })).toBe('default/folded#2');
    expect(simulate(model, 80, { path: '/f700' })).toBe(404);
    expect(simulate(model, 80, { path: '/f7x', headers: { 'X-F': '1' } })).toBe(404);
    expect(simulate(model, 80, { path: '/f7/login', method: 'POST' })).toBe('default/folded#3');
    expect(simulate(model, 80, { path: '/f7/login/', method: 'POST' })).toBe(404);
  });

  test('a location takes at most MAX_LOCATION_CANDIDATES; the others get locations of their own', () => {
    const rules = Array.from({ length: MAX_LOCATION_CANDIDATES + 3 }, (_, i) => f.rule(i + 1, [f.prefix(`/p${i}`)], [f.backend('b', 9001)]));
    const m = buildModel(f.graph([f.listener(80, [f.attach(f.route('many', [f.rule(0, [f.prefix('/', { method: 'PUT' })], [f.backend('a', 9000)]), ...rules]))])]));
    const root = location(server(m, 80), 'prefix', '/').action;
    expect(root.kind === 'dispatch' && root.targets.length).toBe(MAX_LOCATION_CANDIDATES);
    expect(server(m, 80).locations.length).toBeGreaterThan(1);
    for (let i = 0; i < MAX_LOCATION_CANDIDATES + 3; i++) expect(simulate(m, 80, { path: `/p${i}/x` })).toBe(`default/many#${i + 1}`);
  });
});

describe('nginx variables do not grow with routes', () => {
  const routes = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      f.attach(
        f.route(`r${i}`, [
          f.rule(0, [f.prefix(`/r${i}`, { headers: [H('X-T', `t${i}`)] }), f.prefix(`/r${i}`, { queryParams: [H('q', `${i}`)] })], [f.backend('a', 9000)]),
          f.rule(1, [f.exact(`/r${i}/login`, { method: 'POST' })], [f.backend('a', 9000)]),
        ]),
      ),
    );

  test('exact conditions: no map ($uri itself for segment tests) whatever the routes, every dispatching location sets the one composite variable', () => {
    for (const n of [10, 100]) {
      const model = buildModel(f.graph([f.listener(80, routes(n))]));
      expect(model.maps.map((m) => m.variable)).toEqual([]);
      const s = server(model, 80);
      // Exact /r7/login (POST) is folded into location /r7, which dispatches anyway (/r70.../r79
      // are not: /r7 is their longest location string prefix, but not a segment of theirs); the
      // composites read the same few variables whatever the number of routes.
      const r7 = location(s, 'prefix', '/r7').action;
      expect(r7.kind).toBe('dispatch');
      const fields = s.locations.flatMap((l) => (l.action.kind === 'dispatch' ? l.action.key.split('\n') : []));
      expect([...new Set(fields.filter((x) => x.startsWith('$')))].sort()).toEqual(['$args', '$http_x_t', '$request_method', '$uri']);
      expect(r7.kind === 'dispatch' && r7.key.split('\n')).toContain('@rule_default_r7_1');
      expect(s.locations.some((l) => l.path === '/r7/login')).toBe(false);
      if (n === 100) expect(location(s, 'prefix', '/r70').action.kind).toBe('dispatch');
      expect(simulate(model, 80, { path: '/r7/x?q=7' })).toBe('default/r7#0');
      expect(simulate(model, 80, { path: '/r7/login', method: 'POST' })).toBe('default/r7#1');
      expect(simulate(model, 80, { path: '/r7/x?q=8' })).toBe(404);
    }
  });

  test('RegularExpression paths: one map per run (hostname key) per server, whatever the number of locations', () => {
    const named = f.route('named', [f.rule(0, [f.regex('/n/[0-9]+')], [f.backend('a', 9000)]), f.rule(1, [f.prefix('/b', { method: 'PUT' })], [f.backend('a', 9000)])], {
      hostnames: ['foo.test'],
    });
    const any = f.route('any', [f.rule(0, [f.regex('/n/1'), f.regex('/b/[0-9]+')], [f.backend('a', 9000)]), f.rule(1, [f.prefix('/')], [f.backend('a', 9000)])]);
    const model = buildModel(f.graph([f.listener(80, [f.attach(named), f.attach(any), ...routes(20)])]));
    const runs = model.maps.filter((m) => m.variable.startsWith('$pc_s'));
    // foo.test: a run for its own regex and one for the any-host regexes; default server: one.
    expect(runs).toHaveLength(3);
    expect(simulate(model, 80, { host: 'foo.test', path: '/n/1' })).toBe('default/named#0');
    expect(simulate(model, 80, { host: 'foo.test', path: '/b/2', method: 'PUT' })).toBe('default/named#1');
    expect(simulate(model, 80, { host: 'foo.test', path: '/b/2' })).toBe('default/any#0');
    expect(simulate(model, 80, { host: 'foo.test', path: '/b/x' })).toBe('default/any#1');
    expect(simulate(model, 80, { host: 'bar.test', path: '/n/1' })).toBe('default/any#0');
    expect(simulate(model, 80, { host: 'bar.test', path: '/n/2' })).toBe('default/any#1');
    expect(simulate(model, 80, { host: 'bar.test', path: '/r3/x', headers: { 'X-T': 't3' } })).toBe('default/r3#0');
  });
});

describe('precedence', () => {
  test('method > most headers > most query params > older route > rule order', () => {
    const older = f.route('b-older', [f.rule(0, [f.prefix('/', { queryParams: [H('q', '1')] })], [f.backend('a', 9000)])]);
    const newer = f.route('a-newer', [
      f.rule(0, [f.prefix('/', { queryParams: [H('q', '1')] })], [f.backend('a', 9000)]),
      f.rule(1, [f.prefix('/', { headers: [H('h', '1')] })], [f.backend('a', 9000)]),
      f.rule(2, [f.prefix('/', { method: 'GET' })], [f.backend('a', 9000)]),
      f.rule(3, [f.prefix('/', { headers: [H('h', '1'), H('i', '1')] })], [f.backend('a', 9000)]),
    ]);
    const model = buildModel(f.graph([f.listener(80, [f.attach(newer), f.attach(older)])]));
    const all = { h: '1', i: '1' };
    expect(simulate(model, 80, { path: '/?q=1', headers: all })).toBe('default/a-newer#2');
    expect(simulate(model, 80, { path: '/?q=1', method: 'POST', headers: all })).toBe('default/a-newer#3');
    expect(simulate(model, 80, { path: '/?q=1', method: 'POST', headers: { h: '1' } })).toBe('default/a-newer#1');
    expect(simulate(model, 80, { path: '/?q=1', method: 'POST' })).toBe('default/b-older#0');
    expect(simulate(model, 80, { path: '/', method: 'POST' })).toBe(404);
  });

  test('equal creation times fall back to namespace/name', () => {
    const t = '2026-01-01T00:00:00.000Z';
    const b = f.route('b', [f.rule(0, [f.prefix('/', { method: 'GET' })], [f.backend('a', 9000)])], { creationTimestamp: t });
    const a = f.route('a', [f.rule(0, [f.prefix('/', { method: 'GET' })], [f.backend('a', 9000)])], { creationTimestamp: t });
    const model = buildModel(f.graph([f.listener(80, [f.attach(b), f.attach(a)])]));
    expect(simulate(model, 80, { path: '/' })).toBe('default/a#0');
  });

  test('Exact > RegularExpression > longest PathPrefix', () => {
    const r = f.route('r', [
      f.rule(0, [f.prefix('/a')], [f.backend('a', 9000)]),
      f.rule(1, [f.regex('/a/[0-9]+')], [f.backend('a', 9000)]),
      f.rule(2, [f.exact('/a/1')], [f.backend('a', 9000)]),
      f.rule(3, [f.prefix('/a/1')], [f.backend('a', 9000)]),
    ]);
    const model = buildModel(f.graph([f.listener(80, [f.attach(r)])]));
    expect(simulate(model, 80, { path: '/a/1' })).toBe('default/r#2');
    expect(simulate(model, 80, { path: '/a/1/x' })).toBe('default/r#1');
    expect(simulate(model, 80, { path: '/a/x' })).toBe('default/r#0');
  });

  test('hostname specificity first: exact host > wildcard host > any host', () => {
    const any = f.route('any', [f.rule(0, [f.exact('/p')], [f.backend('a', 9000)])]);
    const wild = f.route('wild', [f.rule(0, [f.prefix('/p')], [f.backend('a', 9000)])], { hostnames: ['*.example.com'] });
    const exact = f.route('exact', [f.rule(0, [f.prefix('/', { method: 'POST' })], [f.backend('a', 9000)])], { hostnames: ['foo.example.com'] });
    const model = buildModel(f.graph([f.listener(80, [f.attach(any), f.attach(wild), f.attach(exact)])]));
    expect(simulate(model, 80, { host: 'foo.example.com', path: '/p', method: 'POST' })).toBe('default/exact#0');
    expect(simulate(model, 80, { host: 'foo.example.com', path: '/p' })).toBe('default/wild#0');
    expect(simulate(model, 80, { host: 'a.b.example.com:8080', path: '/p' })).toBe('default/wild#0');
    expect(simulate(model, 80, { host: 'example.com', path: '/p' })).toBe('default/any#0');
  });
});

describe('backends', () => {
  test('one upstream per backend with its endpoints and keepalive', () => {
    const b = f.backend('svc', 9000, { endpoints: [{ address: '127.0.0.1', port: 9000 }, { address: '::1', port: 9000 }, { address: '127.0.0.1', port: 9000 }] });
    const model = buildModel(f.graph([f.listener(80, [f.attach(f.route('r', [f.rule(0, [f.prefix('/')], [b])]))])]));
    expect(model.upstreams).toEqual([
      { name: 'b_default__svc_80', backend: 'default/svc:80', servers: [{ address: '127.0.0.1', port: 9000 }, { address: '::1', port: 9000 }], keepalive: 64 },
    ]);
  });

  test('gRPC backends get upstreams of their own, with more idle connections kept', () => {
    // nginx hands idle backend connections out per upstream block: an HTTPRoute and a GRPCRoute
    // on one Service port must not share one, or HTTP/1.1 and h2c connections get mixed up.
    const b = f.backend('svc', 9000);
    const web = f.route('web', [f.rule(0, [f.prefix('/')], [b])], { hostnames: ['web.test'] });
    const rpc = f.route('rpc', [f.rule(0, [f.prefix('/')], [b])], { hostnames: ['rpc.test'], kind: 'GRPCRoute' });
    const model = buildModel(f.graph([f.listener(80, [f.attach(web), f.attach(rpc)])]));
    expect(model.upstreams.map((u) => [u.name, u.backend, u.keepalive]).sort()).toEqual([
      ['b_default__svc_80', 'default/svc:80', 64],
      ['g_default__svc_80', 'default/svc:80', 256],
    ]);
    const targets = (name: string) => server(model, 80, name).ruleLocations.map((r) => r.target);
    expect(targets('web.test')).toEqual([{ kind: 'upstream', upstream: 'b_default__svc_80' }]);
    expect(targets('rpc.test')).toEqual([{ kind: 'upstream', upstream: 'g_default__svc_80' }]);
  });

  test('weights become split_clients percentages; weight 0 gets no bucket', () => {
    const model = buildModel(
      f.graph([
        f.listener(80, [
          f.attach(
            f.route('r', [f.rule(0, [f.prefix('/')], [f.backend('a', 9000, { weight: 1 }), f.backend('b', 9001, { weight: 2 }), f.backend('c', 9002, { weight: 0 })])]),
          ),
        ]),
      ]),
    );
    expect(model.splitClients).toEqual([
      { key: '$request_id', variable: expect.stringMatching(/^\$ps_[0-9a-z]{1,13}$/), buckets: [{ percent: '33.33', value: 'b_default__a_80' }, { percent: '*', value: 'b_default__b_80' }] },
    ]);
    expect(model.upstreams.map((u) => u.name)).not.toContain('b_default__c_80');
  });

  test('names stand for what they name, whatever else the config holds: services whose names read alike get their own upstreams, in any order', () => {
    const route = (name: string, backend: string, path: string) => f.attach(f.route(name, [f.rule(0, [f.prefix(path)], [f.backend(backend, 9000)])]));
    const names = (routes: ReturnType<typeof route>[]) => {
      const model = buildModel(f.graph([f.listener(80, routes)]));
      return Object.fromEntries(model.upstreams.map((u) => [u.backend, u.name]));
    };
    const one = names([route('r1', 'a-b', '/x'), route('r2', 'a--b', '/y')]);
    const other = names([route('r2', 'a--b', '/y'), route('r1', 'a-b', '/x')]);
    expect(one['default/a-b:80']).toBe('b_default__a_b_80');
    expect(one['default/a--b:80']).toMatch(/^b_default__a_b_80_[0-9a-z]+$/);
    expect(other).toEqual(one);
    expect(names([route('r2', 'a--b', '/y')])).toEqual({ 'default/a--b:80': one['default/a--b:80'] });
  });

  test('split percentages never exceed 100 and tiny shares are dropped', () => {
    expect(splitBuckets([{ weight: 1, value: 'a' }, { weight: 1, value: 'b' }, { weight: 1, value: 'c' }])).toEqual([
      { percent: '33.33', value: 'a' },
      { percent: '33.33', value: 'b' },
      { percent: '*', value: 'c' },
    ]);
    expect(splitBuckets([{ weight: 1, value: 'a' }, { weight: 1000000, value: 'b' }])).toEqual([{ percent: '*', value: 'b' }]);
  });

  test('invalid backends: all invalid -> 500; a share of invalid -> that share answers 500', () => {
    const bad = f.backend('x', undefined, { valid: false });
    const g = f.graph([
      f.listener(80, [
        f.attach(
          f.route('r', [
            f.rule(0, [f.prefix('/a')], [bad]),
            f.rule(1, [f.prefix('/b')], [f.backend('ok', 9000), bad]),
            f.rule(2, [f.prefix('/c')], []),
          ]),
        ),
      ]),
    ]);
    const s = server(buildModel(g), 80);
    expect(s.ruleLocations.map((r) => r.target)).toEqual([
      { kind: 'status', code: 500 },
      { kind: 'split', variable: expect.stringMatching(/^\$ps_[0-9a-z]{1,13}$/), invalidShare: true, noEndpointsShare: false },
      { kind: 'status', code: 500 },
    ]);
  });
});

describe('per-rule body limits', () => {
  test('greaterThanRegex(n) matches exactly the integers above n (leading zeros allowed)', () => {
    for (const n of [0, 1, 9, 10, 99, 100, 109, 1048576, 2999]) {
      const re = new RegExp(greaterThanRegex(n));
      for (let x = Math.max(0, n - 120); x <= n + 120; x++) expect([x, re.test(String(x))]).toEqual([x, x > n]);
      expect(re.test('00' + String(n + 1))).toBe(true);
      expect(re.test(String(n * 10 + 5))).toBe(true);
      expect(re.test('')).toBe(false);
    }
  });

  test('sizes: unit-less is bytes, k/m/g are powers of 1024', () => {
    expect([sizeBytes('100'), sizeBytes('8k'), sizeBytes('1M'), sizeBytes('0')]).toEqual([100, 8192, 1048576, 0]);
    expect(() => sizeBytes('1x')).toThrow(/nginx size/);
  });
});

test('routes "a.b" and "a-b" get distinct named locations', () => {
  const r1 = f.route('a.b', [f.rule(0, [f.prefix('/', { method: 'GET' })], [f.backend('x', 9000)])]);
  const r2 = f.route('a-b', [f.rule(0, [f.prefix('/', { method: 'POST' })], [f.backend('y', 9001)])]);
  const model = buildModel(f.graph([f.listener(80, [f.attach(r1), f.attach(r2)])]));
  expect(simulate(model, 80, { path: '/' })).toBe('default/a.b#0');
  expect(simulate(model, 80, { path: '/', method: 'POST' })).toBe('default/a-b#0');
});

/**
 * Rules share a named location when everything it renders from is equal: that is every field of
 * the rule location but the few that name it, so a field added to the model later counts without
 * being listed anywhere.
 */
test('rules share a named location only while every field is equal, one added to the model later too', () => {
  const rule = (name: string, method: 'GET' | 'POST') => f.route(name, [f.rule(0, [f.prefix('/', { method })], [f.backend('x', 9000)])]);
  const model = buildModel(f.graph([f.listener(80, [f.attach(rule('one', 'GET')), f.attach(rule('two', 'POST'))])]));
  const [one, two] = model.servers[0].ruleLocations;
  expect([one.referenced, two.referenced]).toEqual([true, true]);
  expect(two.nginxName).toBe(one.nginxName);
  (two as unknown as Record<string, unknown>).later = 'differs';
  finalizeModel(model);
  expect(two.nginxName).not.toBe(one.nginxName);
  expect(simulate(model, 80, { path: '/', method: 'POST' })).toBe('default/two#0');
  (one as unknown as Record<string, unknown>).later = 'differs';
  finalizeModel(model);
  expect(two.nginxName).toBe(one.nginxName);
});
