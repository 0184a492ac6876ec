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

/**
 * servers.conf.hbs walks a server's locations with eachLocation (kept texts) and only the
 * `emittedRules` of its rule locations (render/templates.ts): the rules it leaves out must be
 * those the loop body writes nothing for. Compared with the same template walking every location
 * and rule location with Handlebars' `each`, over random routes plus rules with mirrors (their
 * locations are written whether or not the rule's own location is), backendRef filters (a
 * location per backend) and weighted backends.
 */
test('the servers.conf loops over kept location texts and emitted rules render what plain loops over every location and rule do', async () => {
  const { compileTemplate, readTemplate } = await import('../src/render/templates');
  const source = readTemplate('servers.conf.hbs');
  expect(source).toContain('{{#each (emittedRules ruleLocations)}}');
  // ...and Handlebars' own loop over the locations instead of eachLocation (no kept texts).
  expect(source).toContain('{{#eachLocation locations}}');
  const everyRule = compileTemplate(
    source.replace('{{#each (emittedRules ruleLocations)}}', '{{#each ruleLocations}}').replace('{{#eachLocation locations}}', '{{#each locations}}').replace('{{/eachLocation}}', '{{/each}}'),
  );
  const mirror = (percent: number) => ({ mirrors: [{ backend: f.backend('mirror', 9090), percent }] });
  let compared = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const r = rng(seed * 7919);
    const routes = routeSet(r, 16, 'm', seed % 2 ? 0 : 3).map((rt, i) => {
      if (i % 3 !== 0) return rt;
      // Mirrors on some rules, on a backendRef of a split rule on others.
      const rules = rt.rules.map((rule, k) =>
        k % 2 === 0
          ? { ...rule, filters: mirror(i % 2 ? 100 : 25) }
          : { ...rule, backends: [f.backend('a', 8081, { weight: 1 }), f.backend('b', 8082, { weight: 3 })], backendFilters: [mirror(50), undefined] },
      );
      return { ...rt, rules };
    });
    const graph = f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]);
    const context = renderContext(buildModel(graph), options);
    // Twice: with nothing kept, then with every location's text kept from the first.
    clearLocationCache();
    const text = templates()['servers.conf'](context);
    expect(text).toEqual(everyRule(context));
    expect(templates()['servers.conf'](context)).toEqual(text);
    if (text.includes('copies of requests for a RequestMirror filter')) compared++;
  }
  // The mirrors' locations were among what was compared.
  expect(compared).toBeGreaterThan(4);
});

/**
 * A kept text is found by comparing the whole location and every @root field that is not a list
 * with the ones it was rendered from, so a field the block reads that no list names (one added to
 * the model later, here fields the model does not have) can never bring back a stale text.
 */
test('a kept location text is not reused when any field the block reads changed, one added to the model later too', async () => {
  const { compileTemplate } = await import('../src/render/templates');
  const block = compileTemplate('{{#each servers}}{{#eachLocation locations}}{{path}} {{later}} {{action.later}} {{@root.later}}\n{{/eachLocation}}{{/each}}');
  const routes = [
    f.route('a', [f.rule(0, [f.prefix('/p', { headers: [{ type: 'Exact', name: 'x', value: '1' }] })], [f.backend('a', 8081)])]),
    f.route('b', [f.rule(0, [f.prefix('/p')], [f.backend('b', 8082)])]),
  ];
  const model = buildModel(f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]));
  const location = model.servers[0].locations.find((l) => l.path === '/p' && l.action.kind === 'dispatch')!;
  expect(location).toBeDefined();
  const fields = location as unknown as Record<string, unknown>;
  const action = location.action as unknown as Record<string, unknown>;
  const render = (root: string) => block({ servers: model.servers, later: root });
  const line = (text: string) => text.split('\n').find((l) => l.startsWith('/p '));
  clearLocationCache();
  expect(line(render('r1'))).toBe('/p   r1');
  const hits = locationCacheStats.hits;
  expect(line(render('r1'))).toBe('/p   r1');
  expect(locationCacheStats.hits).toBeGreaterThan(hits);
  fields.later = 'l1';
  expect(line(render('r1'))).toBe('/p l1  r1');
  action.later = 'a1';
  expect(line(render('r1'))).toBe('/p l1 a1 r1');
  expect(line(render('r2'))).toBe('/p l1 a1 r2');
  // Back to a content rendered before: its kept text is right again.
  delete fields.later;
  delete action.later;
  expect(line(render('r1'))).toBe('/p   r1');
});
