/**
 * ModelMemo: a build that reuses unchanged servers must render exactly what a fresh build
 * renders, over a run of random changes (routes replaced, removed, added, re-timestamped).
 */
import { buildModel, ModelMemo } from '../src/model';
import { renderConfig } from '../src/render';
import type { HTTPRouteNode } from '../src/graph/types';
import * as f from './model-fixtures';
import { randomRoutes, rng } from './random-routes';

const HOSTS = 4;
const render = (model: ReturnType<typeof buildModel>) => renderConfig(model, { listenAddress: '127.0.0.1', prefix: '/tmp/portcullis-memo-test' }).files;

function routeSet(r: () => number, n: number, tag: string): HTTPRouteNode[] {
  const out: HTTPRouteNode[] = [];
  while (out.length < n) for (const route of randomRoutes(r)) out.push({ ...route, name: `${tag}-${out.length}`, hostnames: [`h${out.length % HOSTS}.test`] });
  return out.slice(0, n);
}

test('a memoised build renders byte-identical to a fresh one across random changes, and reuses the untouched servers', () => {
  for (let seed = 1; seed <= 20; seed++) {
    const r = rng(seed * 7919);
    let routes = routeSet(r, 16, 's');
    const memo = new ModelMemo();
    let reused = 0;
    for (let step = 0; step < 15; step++) {
      const graph = f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]);
      const memoised = render(buildModel(graph, undefined, memo));
      const fresh = render(buildModel(graph));
      expect(memoised).toEqual(fresh);
      reused += memo.stats.reused;
      // Each change touches one route, so one hostname's server: names are derived from content,
      // so no other server is built again because the changed one took or freed a name.
      if (step > 0) expect(memo.stats.built).toBeLessThanOrEqual(1);
      // One change: replace a route's rules, drop one, add one, or make one older.
      const i = Math.floor(r() * routes.length);
      const what = r();
      routes = [...routes];
      if (what < 0.4) routes[i] = { ...routeSet(r, 1, `x${step}`)[0], name: routes[i].name, hostnames: routes[i].hostnames };
      else if (what < 0.6) routes.splice(i, 1);
      else if (what < 0.8) routes.push(routeSet(r, 1, `n${seed}-${step}`)[0]);
      else routes[i] = { ...routes[i], creationTimestamp: '2025-06-01T00:00:00.000Z' };
    }
    expect(reused).toBeGreaterThan(0);
  }
});
