/**
 * Location texts kept between renders (render/location-cache.ts): a render that reuses them
 * must be byte-identical to a render with nothing kept, over random route changes, on one
 * hostless server (every route in one server block) and on several hostnames.
 */
import { buildModel, ModelMemo } from '../src/model';
import { renderConfig, renderContext } from '../src/render';
import { templates } from '../src/render/templates';
import { clearLocationCache, locationCacheStats } from '../src/render/location-cache';
import type { HTTPRouteNode } from '../src/graph/types';
import * as f from './model-fixtures';
import { randomRoutes, rng } from './random-routes';

const options = { listenAddress: '127.0.0.1', prefix: '/tmp/portcullis-render-cache-test' };

function routeSet(r: () => number, n: number, tag: string, hosts: number): HTTPRouteNode[] {
  const out: HTTPRouteNode[] = [];
  while (out.length < n) for (const route of randomRoutes(r)) out.push({ ...route, name: `${tag}-${out.length}`, hostnames: hosts ? [`h${out.length % hosts}.test`] : [] });
  return out.slice(0, n);
}

for (const hosts of [0, 3]) {
  test(`kept location texts render the same as a fresh render across random changes (${hosts ? `${hosts} hostnames` : 'one hostless server'})`, () => {
    const before = { ...locationCacheStats };
    for (let seed = 1; seed <= 12; seed++) {
      const r = rng(seed * 104729 + hosts);
      let routes = routeSet(r, 24, 's', hosts);
      const memo = new ModelMemo();
      clearLocationCache();
      for (let step = 0; step < 12; step++) {
        const graph = f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]);
        const kept = renderConfig(buildModel(graph, undefined, memo), options).files['servers.conf'];
        // The whole template with nothing kept (and no per-server texts of servers-cache.ts).
        clearLocationCache();
        const fresh = templates()['servers.conf'](renderContext(buildModel(graph), options));
        expect(kept).toEqual(fresh);
        // One change: replace a route's rules, drop one, add one, or make one older.
        const i = Math.floor(r() * routes.length);
        const what = r();
        routes = [...routes];
        if (what < 0.4) routes[i] = { ...routeSet(r, 1, `x${step}`, hosts)[0], name: routes[i].name, hostnames: routes[i].hostnames };
        else if (what < 0.6) routes.splice(i, 1);
        else if (what < 0.8) routes.push(routeSet(r, 1, `n${seed}-${step}`, hosts)[0]);
        else routes[i] = { ...routes[i], creationTimestamp: '2025-06-01T00:00:00.000Z' };
      }
    }
    // Texts were reused (not only rendered and stored).
    expect(locationCacheStats.hits - before.hits).toBeGreaterThan(100);
  });
}
