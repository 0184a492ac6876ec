/**
 * Routes' parts and locations' actions kept between builds of one server
 * (model/location-memo.ts): a memoised build must give exactly the model a fresh build gives,
 * over random changes of a server that changes on every step (all routes on one hostless
 * listener, or on a few hostnames), with RegularExpression paths (per-server run maps), regex
 * header and query values (numbered flag and query maps), weighted backends and backends
 * without endpoints (split_clients and upstream names numbered in order of first use).
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
        // made the oldest (first in order: every later route's numbers may move), one's backend
        // endpoints changed (same matches, new rules array).
        const i = Math.floor(r() * routes.length);
        const what = r();
        routes = [...routes];
        if (what < 0.25) routes[i] = { ...routeSet(r, 1, `x${step}`, hosts)[0], name: routes[i].name, hostnames: routes[i].hostnames };
        else if (what < 0.4) routes.splice(i, 1);
        else if (what < 0.65) routes.push(routeSet(r, 1, `n${step}`, hosts)[0]);
        else if (what < 0.8) routes[i] = { ...routes[i], creationTimestamp: '2025-06-01T00:00:00.000Z' };
        else routes[i] = { ...routes[i], rules: routes[i].rules.map((rule) => ({ ...rule, backends: rule.backends.map((b) => ({ ...b, endpoints: b.endpoints.length ? [] : [{ address: '127.0.0.1', port: 9003 }] })) })) };
      }
    }
    // Most of each build was kept, and some of it had to be built again.
    expect(totals.routesReused).toBeGreaterThan(2 * totals.routesBuilt);
    expect(totals.actionsReused).toBeGreaterThan(totals.actionsBuilt / 4);
    expect(totals.routesBuilt).toBeGreaterThan(0);
  });
}

test('kept actions read the run maps under their new numbers when an earlier server took one more', () => {
  // Two hostnames: a.test's server is built first, so a RegularExpression route added there
  // numbers its run $pc_s0 and b.test's run moves from $pc_s0 to $pc_s1; b.test's own routes,
  // and so its locations' inputs, are unchanged.
  const regexRoute = (name: string, host: string, path: string) =>
    f.route(name, [f.rule(0, [f.regex(path, { method: 'GET' })], [f.backend(`${name}-svc`, 9000)])], { hostnames: [host] });
  const plain = (name: string, host: string, path: string) => f.route(name, [f.rule(0, [f.prefix(path, { headers: [{ name: 'X-T', type: 'Exact', value: '1' }] })], [f.backend(`${name}-svc`, 9000)])], { hostnames: [host] });
  const b = [regexRoute('b-re', 'b.test', '/b/[0-9]+'), plain('b-1', 'b.test', '/b'), plain('b-2', 'b.test', '/c')];
  const before = [plain('a-1', 'a.test', '/a'), ...b];
  const after = [regexRoute('a-re', 'a.test', '/a/[0-9]+'), ...before];
  const memo = new ModelMemo();
  const build = (routes: HTTPRouteNode[], m?: ModelMemo) => buildModel(f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]), undefined, m);
  expect(build(before, memo)).toEqual(build(before));
  const kept = build(after, memo);
  // b.test was built again (its run's number moved) from its kept routes' parts.
  expect(memo.stats.routesReused).toBeGreaterThanOrEqual(3);
  expect(kept).toEqual(build(after));
  const bServer = kept.servers.find((s) => s.serverNames[0] === 'b.test')!;
  const keys = bServer.locations.map((l) => (l.action.kind === 'dispatch' ? l.action.key : '')).join('\n');
  expect(keys).toContain('$pc_s1');
  expect(keys).not.toContain('$pc_s0');
});
