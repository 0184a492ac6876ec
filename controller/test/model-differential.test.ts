/**
 * The model (as nginx reads it, model-simulate) routes like the Gateway API on random route sets.
 * apply-differential.test.ts does the same through a real nginx.
 */
import { buildModel } from '../src/model';
import { simulate } from './model-simulate';
import * as f from './model-fixtures';
import { expected, randomRequest, randomRoutes, requestPath, rng } from './random-routes';

test('the model routes like the Gateway API on random route sets (folding, segments, exact paths)', () => {
  let checked = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed);
    const routes = randomRoutes(r);
    const model = buildModel(f.graph([f.listener(80, routes.map((rt) => f.attach(rt)))]));
    for (let q = 0; q < 40; q++) {
      const req = randomRequest(r);
      const got = simulate(model, 80, { path: requestPath(req), method: req.method, headers: req.headers });
      const want = expected(routes, req);
      if (got !== want) {
        throw new Error(`seed ${seed}: ${req.method} ${requestPath(req)} ${JSON.stringify(req.headers)} -> model ${got}, Gateway API ${want}\nroutes: ${JSON.stringify(routes.map((rt) => rt.rules.map((ru) => ru.matches)))}`);
      }
      checked++;
    }
  }
  expect(checked).toBe(300 * 40);
});
