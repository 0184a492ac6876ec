/** buildModel with plain Graph data: servers, locations, conditions, precedence, upstreams. */
import { buildModel } from '../src/model';
import { splitBuckets } from '../src/model/upstreams';
import type { Location, MapBlock, NginxModel, Server } from '../src/model/types';
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

function decision(model: NginxModel, l: Location): MapBlock {
  if (l.action.kind !== 'dispatch') throw new Error(`location ${l.path} does not dispatch: ${l.action.kind}`);
  const variable = l.action.variable;
  return model.maps.find((m) => m.variable === variable)!;
}

function mapOf(model: NginxModel, variable: string): MapBlock {
  return model.maps.find((m) => m.variable === variable)!;
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
    const m = decision(model, location(server(model, 80, 'foo.test'), 'prefix', '/'));
    // Exact "/" of the any-host route ranks below the named host's header match.
    const root = decision(model, location(server(model, 80, 'foo.test'), 'exact', '/'));
    expect(root.entries.map((e) => e.value)).toEqual(['@rule_default_named_0']);
    expect(root.default).toBe('@rule_default_any_0');
    expect(m.default).toBe('@portcullis_404');
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

  test('PathPrefix /x/ -> "= /x" and "/x/"; Exact /y -> "= /y"; always "/"', () => {
    expect(s.locations.map((l) => `${l.match} ${l.path}`).sort()).toEqual(
      ['exact /x', 'prefix /x/', 'exact /y', 'prefix /', 'exact /x/deep', 'prefix /x/deep/'].sort(),
    );
  });

  test('a location whose best candidate has no condition proxies directly', () => {
    expect(location(s, 'exact', '/x').action).toMatchObject({ kind: 'proxy', source: { name: 'r', ruleIndex: 0 } });
    expect(location(s, 'exact', '/y').action).toMatchObject({ kind: 'proxy', source: { ruleIndex: 1 } });
  });

  test('a location with conditions dispatches, falling back to the shorter prefix', () => {
    const m = decision(model, location(s, 'prefix', '/x/deep/'));
    expect(m.entries.map((e) => e.value)).toEqual(['@rule_default_r_2']);
    expect(m.default).toBe('@rule_default_r_0');
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

describe('conditions', () => {
  function onlyRule(match: ReturnType<typeof f.match>) {
    const model = buildModel(f.graph([f.listener(80, [f.attach(f.route('r', [f.rule(0, [match], [f.backend('a', 9000)])]))])]));
    const m = decision(model, location(server(model, 80), 'prefix', '/'));
    return { model, m };
  }

  test('query names are matched case-sensitively on $args, not with $arg_', () => {
    const { model, m } = onlyRule(f.prefix('/', { queryParams: [H('Mode', 'a b')] }));
    const cond = mapOf(model, m.source);
    expect(cond.source).toBe('$args');
    expect(cond.entries[0].regex).toBe('(?:^|&)Mode=a(?:\\+|%20)b(?:&|$)');
    expect(new RegExp(cond.entries[0].regex).test('x=1&Mode=a+b')).toBe(true);
    expect(new RegExp(cond.entries[0].regex).test('mode=a+b')).toBe(false);
  });

  test('header names go through $http_ (case-insensitive), exact values as an anchored, escaped regex', () => {
    const { model, m } = onlyRule(f.prefix('/', { headers: [H('X-Env-Name', 'a.b"c$')] }));
    const cond = mapOf(model, m.source);
    expect(cond.source).toBe('$http_x_env_name');
    expect(cond.entries[0].regex).toBe('^a\\.b\\"c\\$$');
    expect(new RegExp(cond.entries[0].regex).test('a.b"c$')).toBe(true);
    expect(new RegExp(cond.entries[0].regex).test('aXb"c$')).toBe(false);
  });

  test('method is compared exactly (HEAD is not GET)', () => {
    const { model, m } = onlyRule(f.prefix('/', { method: 'GET' }));
    const cond = mapOf(model, m.source);
    expect(cond).toMatchObject({ source: '$request_method', entries: [{ regex: '^GET$', value: '1' }] });
  });

  test('only the first entry per header name counts', () => {
    const { model, m } = onlyRule(f.prefix('/', { headers: [H('X-A', '1'), H('x-a', '2')] }));
    expect(m.source).toMatch(/^\$pc_\d+$/);
    expect(mapOf(model, m.source).entries[0].regex).toBe('^1$');
  });

  test('a header name nginx cannot read is reported and its element never matches', () => {
    const model = buildModel(
      f.graph([f.listener(80, [f.attach(f.route('r', [f.rule(0, [f.prefix('/', { headers: [H('X.Dot', '1')] })], [f.backend('a', 9000)])]))])]),
    );
    expect(model.warnings.join()).toMatch(/X\.Dot/);
    expect(location(server(model, 80), 'prefix', '/').action).toEqual({ kind: 'status', code: 404 });
  });
});

describe('precedence in decision maps', () => {
  test('method > most headers > most query params > older route > name', () => {
    const older = f.route('b-older', [f.rule(0, [f.prefix('/', { queryParams: [H('q', '1')] })], [f.backend('a', 9000)])]);
    const newer = f.route('a-newer', [
      f.rule(0, [f.prefix('/', { queryParams: [H('q', '1')] })], [f.backend('a', 9000)]),
      f.rule(1, [f.prefix('/', { headers: [H('h', '1')] })], [f.backend('a', 9000)]),
      f.rule(2, [f.prefix('/', { method: 'GET' })], [f.backend('a', 9000)]),
      f.rule(3, [f.prefix('/', { headers: [H('h', '1'), H('i', '1')] })], [f.backend('a', 9000)]),
    ]);
    const model = buildModel(f.graph([f.listener(80, [f.attach(newer), f.attach(older)])]));
    const m = decision(model, location(server(model, 80), 'prefix', '/'));
    expect(m.entries.map((e) => e.value)).toEqual([
      '@rule_default_a-newer_2',
      '@rule_default_a-newer_3',
      '@rule_default_a-newer_1',
      '@rule_default_b-older_0',
      '@rule_default_a-newer_0',
    ]);
  });

  test('equal creation times fall back to namespace/name', () => {
    const t = '2026-01-01T00:00:00.000Z';
    const b = f.route('b', [f.rule(0, [f.prefix('/', { method: 'GET' })], [f.backend('a', 9000)])], { creationTimestamp: t });
    const a = f.route('a', [f.rule(0, [f.prefix('/', { method: 'GET' })], [f.backend('a', 9000)])], { creationTimestamp: t });
    const model = buildModel(f.graph([f.listener(80, [f.attach(b), f.attach(a)])]));
    const m = decision(model, location(server(model, 80), 'prefix', '/'));
    expect(m.entries.map((e) => e.value)).toEqual(['@rule_default_a_0', '@rule_default_b_0']);
  });
});

describe('backends', () => {
  test('one upstream per backend with its endpoints and keepalive', () => {
    const b = f.backend('svc', 9000, { endpoints: [{ address: '127.0.0.1', port: 9000 }, { address: '::1', port: 9000 }, { address: '127.0.0.1', port: 9000 }] });
    const model = buildModel(f.graph([f.listener(80, [f.attach(f.route('r', [f.rule(0, [f.prefix('/')], [b])]))])]));
    expect(model.upstreams).toEqual([
      { name: 'b_default__svc_80', backend: 'default/svc:80', servers: [{ address: '127.0.0.1', port: 9000 }, { address: '::1', port: 9000 }], keepalive: 16 },
    ]);
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
      { key: '$request_id', variable: '$ps_0', buckets: [{ percent: '33.33', value: 'b_default__a_80' }, { percent: '*', value: 'b_default__b_80' }] },
    ]);
    expect(model.upstreams.map((u) => u.name)).not.toContain('b_default__c_80');
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
      { kind: 'split', variable: '$ps_0', invalidShare: true, noEndpointsShare: false },
      { kind: 'status', code: 500 },
    ]);
  });
});
