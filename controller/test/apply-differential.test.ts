/**
 * Random route sets through a real nginx: each request's answering backend must be the rule the
 * Gateway API's rules pick (random-routes.ts computes it from the routes), 404 when none.
 */
import { httpRequest } from '../../e2e/support/http';
import { Harness, freePort } from './apply-harness';
import * as f from './model-fixtures';
import { expected, randomRequest, randomRoutes, requestPath, rng } from './random-routes';

const BACKENDS = Array.from({ length: 4 }, (_, i) => Array.from({ length: 4 }, (_, k) => `s${i}-${k}`)).flat();
let h: Harness;
let port: number;

beforeAll(async () => {
  h = await Harness.create(BACKENDS);
  port = await freePort();
});

afterAll(async () => {
  await h?.close();
});

test('real nginx routes like the Gateway API on random route sets', async () => {
  let checked = 0;
  for (let seed = 1001; seed <= 1025; seed++) {
    const r = rng(seed);
    const routes = randomRoutes(r, (name) => h.port(name));
    const config = h.render(f.graph([f.listener(port, routes.map((rt) => f.attach(rt)))]));
    const result = await h.nginx.apply(config);
    if (!result.ok) throw new Error(`seed ${seed}: nginx refused the config: ${result.message}`);
    for (let q = 0; q < 40; q++) {
      const req = randomRequest(r);
      const res = await httpRequest(port, requestPath(req), { method: req.method, headers: req.headers });
      const got = res.status === 200 && typeof res.json?.backend === 'string' ? res.json.backend : res.status;
      const want = expected(routes, req);
      const wantBackend = typeof want === 'number' ? want : `s${want.split('/r')[1].replace('#', '-')}`;
      if (got !== wantBackend) {
        throw new Error(`seed ${seed}: ${req.method} ${requestPath(req)} ${JSON.stringify(req.headers)} -> nginx ${got}, Gateway API ${want}\nroutes: ${JSON.stringify(routes.map((rt) => rt.rules.map((ru) => ru.matches)))}`);
      }
      checked++;
    }
  }
  expect(checked).toBe(25 * 40);
});
