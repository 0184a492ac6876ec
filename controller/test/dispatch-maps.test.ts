/**
 * Dispatch as shared maps (model/matching.ts dispatchComposite): a location sets $pc_k and goes
 * to the named location a `map $pc_k $pc_d...` names; the map's regexes depend on the shape of
 * the candidates only (their paths and values are fields of $pc_k), so locations that read
 * alike share one map and nginx compiles its regexes once. What a request is sent to, and the
 * order in which candidates are tried, must not change.
 */
import { buildModel } from '../src/model';
import { dispatchComposite, MAX_ALTERNATIVES, type Alternative, type Condition } from '../src/model/matching';
import type { NginxModel } from '../src/model/types';
import { renderConfig } from '../src/render';
import * as f from './model-fixtures';
import { jsRegex, simulate, topLevelAlternatives } from './model-simulate';

const H = (name: string, value: string, type: 'Exact' | 'RegularExpression' = 'Exact') => ({ name, type, value });

/** The target a dispatch sends `key` (its fields already expanded) to: PCRE's reading of the map. */
function dispatchOf(regexes: string[], key: string): string | undefined {
  for (const regex of regexes) {
    // Branch reset: each alternative numbers its groups from 1; the first that matches wins.
    for (const alternative of topLevelAlternatives(regex.slice(4, -1))) {
      const m = jsRegex('^' + alternative.replace(/\\g\{(\d+)\}/g, '\\$1')).exec(key);
      if (m) return m[1];
    }
  }
  return undefined;
}

/** The composite nginx builds for `key` from these variable values. */
function expand(key: string, vars: Record<string, string>): string {
  return key
    .split('\n')
    .map((field) => (field.startsWith('$') ? vars[field] ?? '' : field))
    .join('\n');
}

const header = (value: string): Condition => ({ field: '$http_x_t', test: 'equals', fragment: value.replace(/[^A-Za-z0-9]/g, (c) => `\\${c}`), literal: value });
const segment = (path: string): Condition => ({ field: '$uri', test: 'segment', fragment: path.replace(/[^A-Za-z0-9]/g, (c) => `\\${c}`), literal: path });

describe('dispatchComposite', () => {
  test('same shape, other paths and values: one regex list (one map), the values in the key, the fallback last', () => {
    const a = dispatchComposite([{ conditions: [header('t1'), segment('/r1/api')], target: '@a' }], '@fa');
    const b = dispatchComposite([{ conditions: [header('t22'), segment('/r22/api')], target: '@b' }], '@fb');
    expect(b.regexes).toEqual(a.regexes);
    expect(b.variable).toBe(a.variable);
    expect(a.variable).toMatch(/^\$pc_d[0-9a-f]{20}$/);
    expect(a.key).toBe('$http_x_t\n@a\n@fa\nt1\n/r1/api\n$uri');
    expect(b.key).toBe('$http_x_t\n@b\n@fb\nt22\n/r22/api\n$uri');
    for (const [d, t, p, to, fallback] of [[a, 't1', '/r1/api', '@a', '@fa'], [b, 't22', '/r22/api', '@b', '@fb']] as const) {
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: t, $uri: p }))).toBe(to);
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: t, $uri: `${p}/x` }))).toBe(to);
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: t, $uri: `${p}x` }))).toBe(fallback);
      // $uri is decoded (%0A is a newline): last in the key, its newline is neither "/" nor the end.
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: t, $uri: `${p}\n` }))).toBe(fallback);
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: t, $uri: `${p}\n/x` }))).toBe(fallback);
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: `${t}0`, $uri: p }))).toBe(fallback);
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: t.slice(0, -1), $uri: p }))).toBe(fallback);
    }
    // A value the key cannot carry ("$" would be a variable, "@" a named location) stays in the regex.
    const dollar = dispatchComposite([{ conditions: [header('a$b'), segment('/r1/api')], target: '@a' }], '@fa');
    const at = dispatchComposite([{ conditions: [header('@x'), segment('/r1/api')], target: '@a' }], '@fa');
    expect(dollar.key).toBe('$http_x_t\n@a\n@fa\n/r1/api\n$uri');
    expect(at.key).toBe('$http_x_t\n@a\n@fa\n/r1/api\n$uri');
    expect(dollar.variable).not.toBe(a.variable);
    expect(dispatchOf(dollar.regexes, expand(dollar.key, { $http_x_t: 'a$b', $uri: '/r1/api' }))).toBe('@a');
    expect(dispatchOf(dollar.regexes, expand(dollar.key, { $http_x_t: 'aXb', $uri: '/r1/api' }))).toBe('@fa');
    expect(dispatchOf(at.regexes, expand(at.key, { $http_x_t: '@x', $uri: '/r1/api' }))).toBe('@a');
  });

  test('the 404 fallback (undefined: the map\'s default) is neither in the key nor an alternative', () => {
    const d = dispatchComposite([{ conditions: [header('t1'), segment('/r1/api')], target: '@a' }], undefined);
    expect(d.key).toBe('$http_x_t\n@a\nt1\n/r1/api\n$uri');
    expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: 't1', $uri: '/r1/api/x' }))).toBe('@a');
    expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: 't2', $uri: '/r1/api/x' }))).toBeUndefined();
    expect(d.variable).not.toBe(dispatchComposite([{ conditions: [header('t1'), segment('/r1/api')], target: '@a' }], '@f').variable);
  });

  test('a value with regex characters compares as bytes (backreference, not a pattern)', () => {
    const d = dispatchComposite([{ conditions: [header('a.b+c')], target: '@a' }], '@f');
    expect(d.key.split('\n')).toContain('a.b+c');
    expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: 'a.b+c' }))).toBe('@a');
    expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: 'aXbbc' }))).toBe('@f');
    expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: 'a.b+cc' }))).toBe('@f');
  });

  test('precedence: the first alternative that holds wins, across regexes, whatever the targets are called', () => {
    // 2 x MAX_ALTERNATIVES + 5 candidates on the same header: the ones matching "hit" are at
    // positions 3, MAX_ALTERNATIVES + 1 and the last; each list must pick the first of them.
    const n = 2 * MAX_ALTERNATIVES + 5;
    const hits = [3, MAX_ALTERNATIVES + 1, n - 1];
    for (const names of [(i: number) => `@t${i}`, (i: number) => `@t${n - i}`]) {
      const alternatives: Alternative[] = Array.from({ length: n }, (_, i) => ({ conditions: [header(hits.includes(i) ? 'hit' : `v${i}`)], target: names(i) }));
      const d = dispatchComposite(alternatives, '@none');
      expect(d.regexes.length).toBeGreaterThan(2);
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: 'hit' }))).toBe(names(3));
      for (let skip = 0; skip < hits.length - 1; skip++) {
        // Without the earlier hits the next one wins.
        const rest = alternatives.map((a, i) => (hits.slice(0, skip + 1).includes(i) ? { ...a, conditions: [header(`gone${i}`)] } : a));
        const r = dispatchComposite(rest, '@none');
        expect(dispatchOf(r.regexes, expand(r.key, { $http_x_t: 'hit' }))).toBe(names(hits[skip + 1]));
      }
      expect(dispatchOf(d.regexes, expand(d.key, { $http_x_t: 'miss' }))).toBe('@none');
    }
  });
});

/** Routes like bench:agent's one-host case: three rules per route, paths /rN/... */
function benchRoutes(n: number) {
  return Array.from({ length: n }, (_, i) =>
    f.route(`r${i}`, [
      f.rule(0, [f.prefix(`/r${i}/api`, { headers: [H('X-Tenant', `t${i % 7}`)] }), f.prefix(`/r${i}/api`, { queryParams: [H('tenant', `t${i % 7}`)] })], [f.backend(`a${i % 5}`, 9000)]),
      f.rule(1, [f.exact(`/r${i}/login`, { method: 'POST' })], [f.backend(`b${i % 5}`, 9000)]),
      f.rule(2, [f.prefix(`/r${i}`, { queryParams: [H('v', '[0-9]+', 'RegularExpression')] }), f.prefix(`/r${i}/items`, { method: 'GET' }), f.prefix(`/r${i}`)], [f.backend(`c${i % 5}`, 9000)]),
    ]),
  );
}

describe('shared dispatch maps in the model', () => {
  const built = new Map<number, NginxModel>();
  const model = (n: number) => {
    if (!built.has(n)) built.set(n, buildModel(f.graph([f.listener(80, benchRoutes(n).map((r) => f.attach(r)))])));
    return built.get(n)!;
  };

  test('the number of dispatch maps does not grow with the routes; every dispatching location names one', () => {
    const small = model(40);
    const large = model(400);
    const dispatching = (m: NginxModel) => m.servers.flatMap((s) => s.locations).filter((l) => l.action.kind === 'dispatch');
    // One location per route: /rN hosts its own /rN/api, /rN/login and /rN/items (and not
    // /rN0.../rN9, whose segment it is not), but for the few that "/" hosts.
    expect(dispatching(large).length).toBeGreaterThanOrEqual(400);
    expect(dispatching(large).length).toBeLessThan(420);
    expect(large.dispatchMaps!.length).toBeLessThanOrEqual(small.dispatchMaps!.length + 2);
    expect(large.dispatchMaps!.length).toBeLessThan(20);
    const variables = new Set(large.dispatchMaps!.map((m) => m.variable));
    for (const l of dispatching(large)) expect(variables.has((l.action as { variable: string }).variable)).toBe(true);
    // Rendered: one map block per variable, no `if` in any dispatching location.
    const files = renderConfig(large, { listenAddress: '127.0.0.1', prefix: '/tmp/portcullis-dispatch-maps-test' }).files;
    expect(files['maps.conf'].match(/^map \$pc_k /gm)).toHaveLength(large.dispatchMaps!.length);
    expect(files['servers.conf']).not.toMatch(/if \(\$pc_k/);
  });

  test('each location still sends requests by its own paths and values (routes share maps)', () => {
    const m = model(400);
    for (const i of [0, 7, 10, 123, 399]) {
      const t = `t${i % 7}`;
      expect(simulate(m, 80, { path: `/r${i}/api`, headers: { 'X-Tenant': t } })).toBe(`default/r${i}#0`);
      expect(simulate(m, 80, { path: `/r${i}/api/x?tenant=${t}` })).toBe(`default/r${i}#0`);
      expect(simulate(m, 80, { path: `/r${i}/api`, headers: { 'X-Tenant': `t${(i + 1) % 7}` } })).toBe(`default/r${i}#2`);
      expect(simulate(m, 80, { path: `/r${i}/apix`, headers: { 'X-Tenant': t } })).toBe(`default/r${i}#2`);
      expect(simulate(m, 80, { path: `/r${i}/login`, method: 'POST' })).toBe(`default/r${i}#1`);
      expect(simulate(m, 80, { path: `/r${i}/login` })).toBe(`default/r${i}#2`);
      expect(simulate(m, 80, { path: `/r${i}/items/1`, method: 'GET' })).toBe(`default/r${i}#2`);
      expect(simulate(m, 80, { path: `/r${i}x` })).toBe(404);
    }
  });
});

describe('RegularExpression paths in their server\'s run map', () => {
  const be = f.backend('b', 8080);
  const long = '/l/' + 'a'.repeat(2000) + '[0-9]+';
  const values = { method: 'GET' as const, headers: [H('X-A', 'x'.repeat(2000))] };
  const m = buildModel(
    f.graph([
      f.listener(80, [
        f.attach(f.route('short', [f.rule(0, [f.regex('/s/[0-9]+', { method: 'GET' })], [be])])),
        f.attach(f.route('long', [f.rule(0, [f.regex(long, values)], [be])])),
      ]),
    ]),
  );

  test('the regex is an entry of the run map on $uri, the key\'s last field; with values too long beside it, a flag map of its own', () => {
    const run = m.maps.find((x) => x.variable.startsWith('$pc_s'))!;
    expect(run.source.split('\n').pop()).toBe('$uri');
    expect(run.entries.map((e) => e.regex)).toContainEqual(expect.stringMatching(/\{3\}\(\?:\/s\/\[0-9\]\+\)\)$/));
    const flags = m.maps.filter((x) => x.source === '$uri' && x.variable.startsWith('$pc_r'));
    expect(flags.map((x) => x.entries[0].regex)).toEqual([`^(?:${long})`]);
  });

  test('every map entry fits one nginx parameter (4 KB), and both routes still match', () => {
    const files = renderConfig(m, { listenAddress: '127.0.0.1', prefix: '/tmp/portcullis-dispatch-maps-test' }).files;
    const longest = Math.max(...[...files['maps.conf'].matchAll(/"(?:[^"\\]|\\.)*"/g)].map((x) => x[0].length));
    expect(longest).toBeLessThan(4000);
    expect(simulate(m, 80, { path: '/s/12' })).toBe('default/short#0');
    expect(simulate(m, 80, { path: long.replace('[0-9]+', '7'), headers: { 'X-A': 'x'.repeat(2000) } })).toBe('default/long#0');
    expect(simulate(m, 80, { path: long.replace('[0-9]+', '7') })).toBe(404);
  });
});
