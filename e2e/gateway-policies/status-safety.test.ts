/**
 * Policy statuses (ancestors, Conflicted naming the winner, TargetNotFound, Invalid,
 * `<Kind>Affected` added and removed), a route policy on one of two routes sharing host and path,
 * and the two changes nginx would refuse to reload with (a rate-limit key changed on a live zone,
 * busy buffers broken only by merging two policies): caught before nginx, with every other
 * change still applied. Real controller CLI, real nginx.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { httpRoute, rule, type Manifest } from '../support/manifests';
import { condition, findStatus, readStatus, routeParent, type StatusDoc } from '../support/status';
import { proxySettingsPolicy, clientSettingsPolicy, rateLimitPolicy, statuses, target, timedRequest, volley } from './support';

const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];
const route = (name: string, backend = 'ok') => httpRoute(name, { rules: [rule(backend, prefix(`/${name}`))] });

let gw: GatewayFixture;
let docs: StatusDoc[];

const ancestor = (kind: string, name: string, i = 0) => findStatus(docs, kind, name)?.status?.ancestors?.[i];
const accepted = (kind: string, name: string, i = 0) => condition(ancestor(kind, name, i)?.conditions, 'Accepted');
const routeConditions = (name: string) => routeParent(findStatus(docs, 'HTTPRoute', name), 'gw')?.conditions;

const KEY_V1 = rateLimitPolicy('rl-key', [target('keyed')], [{ key: '$binary_remote_addr', rate: '1r/s', zoneSize: '1m' }]);
const BUSY_V1 = proxySettingsPolicy('busy', [target('buffy')], { busyBuffersSize: '8k' });

beforeAll(async () => {
  gw = await startGatewayFixture({
    backends: ['ok', 'a', 'b'],
    files: {
      'routes.yaml': [
        ...['conf', 'tie', 'multi1', 'multi2', 'aff', 'keyed', 'buffy'].map((n) => route(n)),
        // A/B split on one host and path: route ab-a takes requests with x-variant: a.
        httpRoute('ab-a', { rules: [rule('a', [{ path: { type: 'PathPrefix', value: '/ab' }, headers: [{ name: 'x-variant', value: 'a' }] }])] }),
        httpRoute('ab-b', { rules: [rule('b', prefix('/ab'))] }),
      ],
      'policies.yaml': [
        rateLimitPolicy('old', [target('conf')], [{ rate: '1r/s' }], { rejectCode: 429, creationTimestamp: '2024-01-01T00:00:00Z' }),
        rateLimitPolicy('new', [target('conf')], [{ rate: '100r/s' }], { rejectCode: 420, creationTimestamp: '2025-01-01T00:00:00Z' }),
        rateLimitPolicy('tie-b', [target('tie')], [{ rate: '10r/s' }], { dryRun: true, creationTimestamp: '2024-06-01T00:00:00Z' }),
        rateLimitPolicy('tie-a', [target('tie')], [{ rate: '10r/s' }], { dryRun: false, creationTimestamp: '2024-06-01T00:00:00Z' }),
        rateLimitPolicy('multi', [target('multi1'), target('ghost'), target('multi2')], [{ rate: '10r/s' }]),
        rateLimitPolicy('bad-rate', [target('multi1')], [{ rate: '10 per second' }]),
        rateLimitPolicy('mixed', [target('gw', 'Gateway'), target('multi1')], [{ rate: '10r/s' }]),
        rateLimitPolicy('ab', [target('ab-a')], [{ rate: '1r/s' }]),
        // Gateway: 4 x 4k body buffers, so busy buffers may be at most 12k.
        proxySettingsPolicy('gw-buffers', [target('gw', 'Gateway')], { buffers: { number: 4, size: '4k' } }),
      ],
      'key.yaml': [KEY_V1],
      'busy.yaml': [BUSY_V1],
    },
  });
  docs = await readStatus(gw.stateDir);
}, 60000);

afterAll(async () => {
  await gw?.close();
});

describe('statuses', () => {
  test('one ancestor per target with controllerName and observedGeneration; TargetNotFound for a missing one', () => {
    const ancestors = findStatus(docs, 'RateLimitPolicy', 'multi')!.status.ancestors;
    expect(ancestors.map((a: any) => a.ancestorRef)).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default', name: 'multi1' },
      { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default', name: 'ghost' },
      { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default', name: 'multi2' },
    ]);
    for (const a of ancestors) expect(a.controllerName).toBe('gateway.portcullis.dev/controller');
    expect(accepted('RateLimitPolicy', 'multi', 0)).toMatchObject({ status: 'True', reason: 'Accepted', observedGeneration: 1 });
    expect(accepted('RateLimitPolicy', 'multi', 1)).toMatchObject({ status: 'False', reason: 'TargetNotFound' });
    expect(accepted('RateLimitPolicy', 'multi', 1)!.message).toMatch(/HTTPRoute default\/ghost/);
    expect(accepted('RateLimitPolicy', 'multi', 2)).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(accepted('RateLimitPolicy', 'multi', 0)!.lastTransitionTime).toEqual(expect.any(String));
  });

  test('the older policy wins a conflict; the other is Conflicted, names the winner and is not applied', async () => {
    expect(accepted('RateLimitPolicy', 'old')).toMatchObject({ status: 'True', reason: 'Accepted' });
    const lost = accepted('RateLimitPolicy', 'new')!;
    expect(lost).toMatchObject({ status: 'False', reason: 'Conflicted' });
    expect(lost.message).toMatch(/default\/old/);
    expect(lost.message).toMatch(/rejectCode/);
    // old's 1r/s and 429 are in force, not new's 100r/s / 420.
    expect(statuses(await volley(gw.port, '/conf', 2))).toEqual([200, 429]);
  });

  test('equal creation times: the name decides (tie-a before tie-b)', () => {
    expect(accepted('RateLimitPolicy', 'tie-a')).toMatchObject({ status: 'True' });
    expect(accepted('RateLimitPolicy', 'tie-b')).toMatchObject({ status: 'False', reason: 'Conflicted' });
    expect(accepted('RateLimitPolicy', 'tie-b')!.message).toMatch(/default\/tie-a/);
  });

  test('invalid policies are Accepted False / Invalid on each target they name, with the field at fault', () => {
    expect(accepted('RateLimitPolicy', 'bad-rate')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(accepted('RateLimitPolicy', 'bad-rate')!.message).toMatch(/rate/);
    expect(accepted('RateLimitPolicy', 'mixed')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(accepted('RateLimitPolicy', 'mixed')!.message).toMatch(/targetRefs/);
  });

  test('<Kind>Affected appears on a target when a policy applies and disappears when it goes', async () => {
    expect(condition(routeConditions('aff'), 'ClientSettingsPolicyAffected')).toBeUndefined();
    await gw.write('affect.yaml', [clientSettingsPolicy('aff-body', target('aff'), '10')]);
    docs = await readStatus(gw.stateDir);
    expect(condition(routeConditions('aff'), 'ClientSettingsPolicyAffected')).toMatchObject({ status: 'True', reason: 'PolicyAffected' });
    expect((await timedRequest(gw.port, '/aff', { body: 'x'.repeat(11) })).status).toBe(413);
    await gw.remove('affect.yaml');
    docs = await readStatus(gw.stateDir);
    expect(condition(routeConditions('aff'), 'ClientSettingsPolicyAffected')).toBeUndefined();
    expect(findStatus(docs, 'ClientSettingsPolicy', 'aff-body')).toBeUndefined();
    expect((await timedRequest(gw.port, '/aff', { body: 'x'.repeat(11) })).status).toBe(200);
  });
});

test('a policy on one of two routes sharing host and path (A/B by header) applies to that route only', async () => {
  const a = await volley(gw.port, '/ab', 3, { headers: { 'x-variant': 'a' } });
  expect(statuses(a)).toEqual([200, 503, 503]);
  expect(JSON.parse(a.find((r) => r.status === 200)!.text).backend).toBe('a');
  const b = await volley(gw.port, '/ab', 3);
  expect(statuses(b)).toEqual([200, 200, 200]);
  for (const r of b) expect(JSON.parse(r.text).backend).toBe('b');
});

async function nginxServing(): Promise<void> {
  docs = await readStatus(gw.stateDir);
  expect(condition(findStatus(docs, 'Gateway', 'gw')?.status.conditions, 'Programmed')).toMatchObject({ status: 'True' });
  const log = await fs.readFile(path.join(gw.stateDir, 'nginx', 'logs', 'error.log'), 'utf8');
  expect(log).not.toMatch(/\[emerg\]/);
  expect(gw.controller.logs.some((l) => /nginx rejected/.test(l.msg))).toBe(false);
}

test('changing the key of a live zone never reaches nginx: the zone keeps its key, other changes apply, the policy says how to fix it', async () => {
  expect(statuses(await volley(gw.port, '/keyed', 2))).toEqual([200, 503]);
  const changed = rateLimitPolicy('rl-key', [target('keyed')], [{ key: '$http_x_k', rate: '1r/s', zoneSize: '1m' }]);
  await gw.write('key.yaml', [changed, route('key-later')]); // plus an unrelated new route
  await nginxServing();
  expect((await timedRequest(gw.port, '/key-later')).status).toBe(200);
  const c = accepted('RateLimitPolicy', 'rl-key')!;
  expect(c).toMatchObject({ status: 'False', reason: 'Invalid' });
  expect(c.message).toMatch(/key/);
  expect(c.message).toMatch(/zoneSize together with key|delete this policy and create it again/);
  expect(gw.controller.logs.some((l) => l.msg === 'policy not applied' && l.name === 'rl-key' && l.level === 'warn')).toBe(true);
  expect(condition(routeConditions('keyed'), 'RateLimitPolicyAffected')).toMatchObject({ status: 'True' });
  // Still limited by client address (the new key would leave header-less requests unlimited).
  await new Promise((r) => setTimeout(r, 1100));
  expect(statuses(await volley(gw.port, '/keyed', 2))).toEqual([200, 503]);

  // The fix the message gives: change zoneSize with the key.
  const fixed = rateLimitPolicy('rl-key', [target('keyed')], [{ key: '$http_x_k', rate: '1r/s', zoneSize: '2m' }]);
  await gw.write('key.yaml', [fixed, route('key-later')]);
  await nginxServing();
  expect(accepted('RateLimitPolicy', 'rl-key')).toMatchObject({ status: 'True', reason: 'Accepted' });
  expect(statuses(await volley(gw.port, '/keyed', 3))).toEqual([200, 200, 200]);
  expect(statuses(await volley(gw.port, '/keyed', 2, { headers: { 'x-k': 'one' } }))).toEqual([200, 503]);
}, 30000);

test('busy buffers broken only by merging Gateway and route policies: the location keeps its last valid settings, other changes apply', async () => {
  const servers = () => fs.readFile(path.join(gw.stateDir, 'nginx', 'conf', 'servers.conf'), 'utf8');
  const buffyBlock = (text: string) => text.slice(text.indexOf('default/buffy rule 0'), text.indexOf('}', text.indexOf('default/buffy rule 0')));
  expect(buffyBlock(await servers())).toMatch(/proxy_busy_buffers_size "8k"/);
  // 16k is fine on its own, but with the Gateway's 4 x 4k buffers it exceeds (4 - 1) x 4k = 12k.
  await gw.write('busy.yaml', [proxySettingsPolicy('busy', [target('buffy')], { busyBuffersSize: '16k' }), route('busy-later')]);
  await nginxServing();
  expect((await timedRequest(gw.port, '/busy-later')).status).toBe(200);
  expect((await timedRequest(gw.port, '/buffy')).status).toBe(200);
  const c = accepted('ProxySettingsPolicy', 'busy')!;
  expect(c).toMatchObject({ status: 'False', reason: 'Invalid' });
  expect(c.message).toMatch(/busyBuffersSize/);
  expect(c.message).toMatch(/gw-buffers/);
  expect(c.message).toMatch(/Fix:/);
  expect(buffyBlock(await servers())).toMatch(/proxy_busy_buffers_size "8k"/);

  await gw.write('busy.yaml', [proxySettingsPolicy('busy', [target('buffy')], { busyBuffersSize: '12k' }), route('busy-later')]);
  await nginxServing();
  expect(accepted('ProxySettingsPolicy', 'busy')).toMatchObject({ status: 'True', reason: 'Accepted' });
  expect(buffyBlock(await servers())).toMatch(/proxy_busy_buffers_size "12k"/);
}, 30000);
