/**
 * RateLimitPolicy through the real controller CLI (standalone, file provider) and real nginx:
 * delays within burst, rejections beyond it, reject codes, dry run, per-client-address keys,
 * Gateway and route limits together, and the log lines nginx writes for each.
 * Each test has its own route and policy (its own zones), so tests do not share counters.
 * Timing is asserted with wide margins: a delay under test is >= 500 ms, an undelayed answer is
 * expected well under it.
 */
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { gateway, httpRoute, rule, type Manifest } from '../support/manifests';
import { freePort } from '../support/ports';
import { condition, findStatus, routeParent, waitForStatus } from '../support/status';
import { errorLogLine, rateLimitPolicy, statuses, target, timedRequest, volley } from './support';

const path = (value: string) => [{ path: { type: 'PathPrefix', value } }];
const route = (name: string, gatewayName = 'gw') => httpRoute(name, { rules: [rule('ok', path(`/${name}`))] }, gatewayName);
const NAMES = ['within', 'burst', 'noburst', 'code429', 'dryrun', 'sources'];
// Gateway `gw2` carries a Gateway-wide limit; its routes test both levels together.
const GW2_ROUTES = ['layered', 'gwonly'];

const policies: Manifest[] = [
  rateLimitPolicy('rl-within', [target('within')], [{ rate: '1r/s', burst: 5 }]),
  rateLimitPolicy('rl-burst', [target('burst')], [{ rate: '2r/s', burst: 2 }]),
  rateLimitPolicy('rl-noburst', [target('noburst')], [{ rate: '1r/s' }]),
  rateLimitPolicy('rl-429', [target('code429')], [{ rate: '1r/s' }], { rejectCode: 429, logLevel: 'warn' }),
  rateLimitPolicy('rl-dryrun', [target('dryrun')], [{ rate: '1r/s' }], { dryRun: true }),
  rateLimitPolicy('rl-sources', [target('sources')], [{ rate: '1r/s' }]),
  rateLimitPolicy('rl-layered', [target('layered')], [{ rate: '1r/s', burst: 5 }]),
  rateLimitPolicy('rl-gateway', [target('gw2', 'Gateway')], [{ rate: '10r/s', burst: 10 }]),
];

let gw: GatewayFixture;
let gw2Port: number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  gw2Port = await freePort();
  gw = await startGatewayFixture({
    backends: ['ok'],
    files: {
      'gw2.yaml': [gateway('gw2', [{ name: 'http', port: gw2Port }])],
      'routes.yaml': [...NAMES.map((n) => route(n)), ...GW2_ROUTES.map((n) => route(n, 'gw2'))],
      'policies.yaml': policies,
    },
  });
  await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'RateLimitPolicy', 'rl-gateway'));
}, 60000);

afterAll(async () => {
  await gw?.close();
});

test('the policies are Accepted and their targets report RateLimitPolicyAffected', async () => {
  const docs = await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'RateLimitPolicy', 'rl-burst'));
  for (const p of policies) {
    const ancestors = findStatus(docs, 'RateLimitPolicy', p.metadata.name)?.status.ancestors;
    expect(ancestors).toHaveLength(1);
    expect(condition(ancestors[0].conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
  }
  expect(condition(findStatus(docs, 'Gateway', 'gw')?.status.conditions, 'RateLimitPolicyAffected')).toBeUndefined();
  expect(condition(findStatus(docs, 'Gateway', 'gw2')?.status.conditions, 'RateLimitPolicyAffected')).toMatchObject({ status: 'True', reason: 'PolicyAffected' });
  expect(condition(routeParent(findStatus(docs, 'HTTPRoute', 'burst'), 'gw')?.conditions, 'RateLimitPolicyAffected')).toMatchObject({ status: 'True' });
});

test('requests within the rate pass without delay', async () => {
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(1100); // 1r/s: one request per second is within the rate
    const r = await timedRequest(gw.port, '/within');
    expect(r.status).toBe(200);
    expect(r.endMs).toBeLessThan(700); // a delay would be ~1000 ms
  }
});

test('with burst, excess requests are delayed one interval apart until the burst is spent, then rejected with 503', async () => {
  // 2r/s, burst 2: the first passes, the next two wait ~500 ms and ~1000 ms, the rest are rejected at once.
  const rs = await volley(gw.port, '/burst', 5);
  expect(statuses(rs)).toEqual([200, 200, 200, 503, 503]);
  const ok = rs.filter((r) => r.status === 200).map((r) => r.endMs);
  const rejected = rs.filter((r) => r.status === 503).map((r) => r.endMs);
  // Nominal 0, 500, 1000 ms; bounds leave room for a slow first answer on a loaded machine.
  expect(ok[1]).toBeGreaterThanOrEqual(350);
  expect(ok[2] - ok[1]).toBeGreaterThanOrEqual(250);
  expect(ok[2]).toBeGreaterThanOrEqual(800);
  // Rejections do not wait for the delayed requests.
  for (const t of rejected) expect(t).toBeLessThan(ok[1]);
  // A delayed request is logged at warn, a rejection at the default level (error).
  expect(await errorLogLine(gw.stateDir, /\[warn\].*delaying request, excess: [\d.]+, by zone "default_rl_rl-burst_rule0"/)).toBeTruthy();
  expect(await errorLogLine(gw.stateDir, /\[error\].*limiting requests, excess: [\d.]+ by zone "default_rl_rl-burst_rule0"/)).toBeTruthy();
});

test('without burst every excess request is rejected at once (503 by default, an HTML page naming it)', async () => {
  const rs = await volley(gw.port, '/noburst', 3);
  expect(statuses(rs)).toEqual([200, 503, 503]);
  for (const r of rs) expect(r.endMs).toBeLessThan(800);
  expect(rs.find((r) => r.status === 503)!.text).toMatch(/503/);
});

test('rejectCode 429 is honoured and the rejection is logged at the configured logLevel (warn)', async () => {
  const rs = await volley(gw.port, '/code429', 3);
  expect(statuses(rs)).toEqual([200, 429, 429]);
  expect(await errorLogLine(gw.stateDir, /\[warn\].*limiting requests, excess: [\d.]+ by zone "default_rl_rl-429_rule0"/)).toBeTruthy();
});

test('dryRun passes everything (undelayed) but still counts and logs the excess', async () => {
  const rs = await volley(gw.port, '/dryrun', 5);
  expect(statuses(rs)).toEqual([200, 200, 200, 200, 200]);
  for (const r of rs) expect(r.endMs).toBeLessThan(800);
  expect(await errorLogLine(gw.stateDir, /limiting requests, dry run, excess: [\d.]+ by zone "default_rl_rl-dryrun_rule0"/)).toBeTruthy();
});

test('clients with different source addresses are limited separately ($binary_remote_addr)', async () => {
  const [from2, from3] = await Promise.all([
    volley(gw.port, '/sources', 2, { localAddress: '127.0.0.2' }),
    volley(gw.port, '/sources', 2, { localAddress: '127.0.0.3' }),
  ]);
  expect(statuses(from2)).toEqual([200, 503]);
  expect(statuses(from3)).toEqual([200, 503]);
  const fromOther = await timedRequest(gw.port, '/sources', { localAddress: '127.0.0.4' });
  expect(fromOther.status).toBe(200);
});

test('a route at 1r/s under a Gateway at 10r/s: the lower rate governs, responses about 1 s apart', async () => {
  const rs = await volley(gw2Port, '/layered', 3);
  expect(statuses(rs)).toEqual([200, 200, 200]);
  // Nominal 0, 1000, 2000 ms (10r/s alone would give 0, 100, 200).
  expect(rs[1].endMs).toBeGreaterThanOrEqual(800);
  expect(rs[2].endMs - rs[1].endMs).toBeGreaterThanOrEqual(600);
  expect(rs[2].endMs).toBeGreaterThanOrEqual(1700);
  expect(rs[2].endMs).toBeLessThan(5000);
});

test("a route without a policy of its own gets the Gateway's limit (10r/s: ~100 ms apart, not 1 s)", async () => {
  const rs = await volley(gw2Port, '/gwonly', 3);
  expect(statuses(rs)).toEqual([200, 200, 200]);
  expect(rs[2].endMs).toBeGreaterThanOrEqual(150);
  expect(rs[2].endMs).toBeLessThan(900);
});
