/**
 * Routes' parts and locations' actions kept between builds of one server
 * (model/location-memo.ts): a memoised build must give exactly the model a fresh build gives,
 * over random changes of a server that changes on every step (all routes on one hostless
 * listener, or on a few hostnames), with RegularExpression paths (per-server run maps), regex
 * header and query values (numbered flag and query maps), weighted backends and backends
 * without endpoints (split_clients and upstreams).
 */
import { buildModel, ModelMemo, type NginxModel } from '../src/model';
import { renderConfig } from '../src/render';
import { clearLocationCache } from '../src/render/location-cache';
import type { HTTPRouteNode, RouteRule } from '../src/graph/types';
import * as f from './model-fixtures';
import { randomRoutes, rng } from './random-routes';

const options = { listenAddress: '127.0.0.1', prefix: '/tmp/portcullis-location-memo-test' };

/** A rule made richer: a regex header or query value, two weighted backends, no endpoints. */
function enrich(r: () => number, rule: RouteRule): RouteRule {
  const out: RouteRule = { ...rule, matches: rule.matches.map((m) => ({ ...m })) };
  const m = out.matches[0];
  const what = r();
  if (what < 0.15) m.headers = [{ name: 'X-R', type: 'RegularExpression', value: r() < 0.5 ? '[0-9]+' : 'a.*' }];
  else if (what < 0.3) m.queryParams = [{ name: r() < 0.5 ? 'v' : 'w', type: 'RegularExpression', value: r() < 0.5 ? '[0-9]+' : 'x.*' }];
  // More RegularExpression paths: runs of them become per-server maps, numbered across servers.
  if (r() < 0.2) out.matches[out.matches.length - 1] = f.regex(r() < 0.5 ? '/a/[0-9]+' : '/(ab|b)/x', { method: r() < 0.5 ? 'GET' : undefined });
  const b = r();
  if (b < 0.15) out.backends = [f.backend(`w${Math.floor(r() * 3)}`, 9001, { weight: 1 }), f.backend(`w${Math.floor(r() * 3) + 3}`, 9002, { weight: 3 })];
  else if (b < 0.25) out.backends = [f.backend(`e${Math.floor(r() * 3)}`, undefined)];
  return out;
}

function routeSet(r: () => number, n: number, tag: string, hosts: number): HTTPRouteNode[] {
  const out: HTTPRouteNode[] = [];
  while (out.length < n) {
    for (const route of randomRoutes(r)) {
      out.push({ ...route, name: `${tag}-${out.length}`, hostnames: hosts ? [`h${out.length % hosts}.test`] : [], rules: route.rules.map((rule) => enrich(r, rule)) });
    }
  }
  return out.slice(0, n);
}

const render = (model: NginxModel) => {
  clearLocationCache();
  return renderConfig(model, options).files;
};

for (const hosts of [0, 3]) {
  test(`a build keeping routes' parts and locations' actions equals a fresh build across random changes (${hosts ? `${hosts} hostnames` : 'one hostless server'})`, () => {
    const totals = { routesReused: 0, routesBuilt: 0, actionsReused: 0, actionsBuilt: 0 };
    for (let seed = 1; seed <= 8; seed++) {
      const r = rng(seed * 7561 + hosts);
      let routes = routeSet(r, 30, 's', hosts);
      const memo = new ModelMemo();
      for (let step = 0; step < 12; step++) {
        const graph = f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]);
        const memoised = buildModel(graph, undefined, memo);
        const fresh = buildModel(graph);
        expect(memoised).toEqual(fresh);
        expect(render(memoised)).toEqual(render(fresh));
        for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += memo.stats[k];
        // One change: new rules for a route, one removed, one added (newest: last in order), one
        // made the oldest (first in order), a backend's endpoints changed (same matches, new rules
        // arrays for the routes using it).
        const i = Math.floor(r() * routes.length);
        const what = r();
        routes = [...routes];
        if (what < 0.25) routes[i] = { ...routeSet(r, 1, `x${step}`, hosts)[0], name: routes[i].name, hostnames: routes[i].hostnames };
        else if (what < 0.4) routes.splice(i, 1);
        else if (what < 0.65) routes.push(routeSet(r, 1, `n${step}`, hosts)[0]);
        else if (what < 0.8) routes[i] = { ...routes[i], creationTimestamp: '2025-06-01T00:00:00.000Z' };
        else {
          // A backend's endpoints changed: as the graph does, every route using it gets new rules.
          const name = routes[i].rules[0]?.backends[0]?.name;
          const flip = (b: RouteRule['backends'][number]) => (b.name === name ? { ...b, endpoints: b.endpoints.length ? [] : [{ address: '127.0.0.1', port: 9003 }] } : b);
          routes = routes.map((rt) => (rt.rules.some((rule) => rule.backends.some((b) => b.name === name)) ? { ...rt, rules: rt.rules.map((rule) => ({ ...rule, backends: rule.backends.map(flip) })) } : rt));
        }
      }
    }
    // Most of each build was kept, and some of it had to be built again.
    expect(totals.routesReused).toBeGreaterThan(2 * totals.routesBuilt);
    expect(totals.actionsReused).toBeGreaterThan(totals.actionsBuilt / 4);
    expect(totals.routesBuilt).toBeGreaterThan(0);
  });
}

test('a server is kept whole when another server takes new maps: names stand for content, not order', () => {
  // Two hostnames: a.test's server is built first, so a RegularExpression route added there
  // registers its run map and flag before b.test's; b.test's routes are unchanged, and so are
  // its maps' names.
  const regexRoute = (name: string, host: string, path: string) =>
    f.route(name, [f.rule(0, [f.regex(path, { method: 'GET' })], [f.backend(`${name}-svc`, 9000)])], { hostnames: [host] });
  const plain = (name: string, host: string, path: string) => f.route(name, [f.rule(0, [f.prefix(path, { headers: [{ name: 'X-T', type: 'Exact', value: '1' }] })], [f.backend(`${name}-svc`, 9000)])], { hostnames: [host] });
  const b = [regexRoute('b-re', 'b.test', '/b/[0-9]+'), plain('b-1', 'b.test', '/b'), plain('b-2', 'b.test', '/c')];
  const before = [plain('a-1', 'a.test', '/a'), ...b];
  const after = [regexRoute('a-re', 'a.test', '/a/[0-9]+'), ...before];
  const memo = new ModelMemo();
  const build = (routes: HTTPRouteNode[], m?: ModelMemo) => buildModel(f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]), undefined, m);
  const first = build(before, memo);
  expect(first).toEqual(build(before));
  const kept = build(after, memo);
  expect(kept).toEqual(build(after));
  // a.test built again, b.test (and the catch-all server, if any) kept as they were.
  expect(memo.stats.built).toBe(1);
  expect(memo.stats.reused).toBe(first.servers.length - 1);
  const runs = (m: NginxModel) => m.servers.find((s) => s.serverNames[0] === 'b.test')!.locations.flatMap((l) => (l.action.kind === 'dispatch' ? l.action.runs.map((r) => r.variable) : []));
  expect(runs(kept).length).toBeGreaterThan(0);
  expect(runs(kept)).toEqual(runs(first));
  expect(kept.maps.map((m) => m.variable)).toEqual(expect.arrayContaining(runs(kept)));
});

test('a route kept by the memos is one equal in every field but its parents: a field nobody listed still counts', () => {
  // One hostless server: any change rebuilds the server, and the route memo decides per route.
  const route = f.route('r', [f.rule(0, [f.prefix('/r')], [f.backend('r-svc', 9000)])]);
  const other = f.route('o', [f.rule(0, [f.prefix('/o')], [f.backend('o-svc', 9000)])]);
  const memo = new ModelMemo();
  const build = (routes: HTTPRouteNode[], m?: ModelMemo) => buildModel(f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]), undefined, m);
  build([route, other], memo);
  // The same rules array, a new route node equal but for its parents and one field the node
  // type does not have yet (as a field added to the graph later would be): rebuilt, not kept.
  const renamed = { ...route, parents: [], futureField: 'x' } as HTTPRouteNode;
  const next = build([renamed, other], memo);
  expect(next).toEqual(build([renamed, other]));
  expect(memo.stats.routesBuilt).toBe(1);
  expect(memo.stats.routesReused).toBe(1);
  // Equal in everything the parts are built from (its parents may differ): kept.
  build([{ ...renamed, parents: [] }, other], memo);
  expect(memo.stats.routesReused + memo.stats.reused).toBeGreaterThan(0);
  expect(memo.stats.routesBuilt).toBe(0);
});
