import { checkZoneKeys, computePolicies } from '../../src/policies';
import { accepted, gateway, gwRef, rateLimit, route, routeRef, rules } from './helpers';
import { nginxTest } from './nginx-check';

const limit = (key: string, zoneSize = '10m', rate = '10r/s', created = '2026-03-01T00:00:00Z') =>
  rateLimit('api', [routeRef()], rules({ key, zoneSize, rate }), { created });

describe('changing the key of a live zone', () => {
  const first = computePolicies({ policies: [limit('$binary_remote_addr')], targets: [gateway(), route()] });

  it('same zoneSize: the zone keeps its running definition and the policy says how to apply the new key', () => {
    const next = computePolicies({
      policies: [limit('$http_x_user'), rateLimit('other', [gwRef()], rules({ rate: '5r/s' }))],
      targets: [gateway(), route()],
      previous: first.effective,
    });
    expect(next.effective.zones).toEqual([
      { id: 'default_rl_api_rule0', key: '$binary_remote_addr', size: '10m', rate: '10r/s' },
      // The unrelated new policy goes through.
      { id: 'default_rl_other_rule0', key: '$binary_remote_addr', size: '10m', rate: '5r/s' },
    ]);
    const cond = accepted(next.statuses, 'api', 'r');
    expect(cond).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(cond.message).toContain('spec.rateLimit.local.rules[0].key changed from "$binary_remote_addr" to "$http_x_user"');
    expect(cond.message).toContain('change zoneSize together with key, or delete this policy and create it again');
    // The old limits still act on the route, so it stays affected.
    expect(next.affected.find((t) => t.name === 'r')?.conditions.map((c) => c.type)).toEqual(['RateLimitPolicyAffected']);
    // And the condition stays until the user acts: the kept zone is the new "previous".
    const again = computePolicies({ policies: [limit('$http_x_user')], targets: [gateway(), route()], previous: next.effective });
    expect(accepted(again.statuses, 'api', 'r').reason).toBe('Invalid');
  });

  it('the same size written differently (10m = 10240k) is the same zone for nginx', () => {
    const next = computePolicies({ policies: [limit('$http_x_user', '10240k')], targets: [gateway(), route()], previous: first.effective });
    expect(next.effective.zones[0].key).toBe('$binary_remote_addr');
  });

  it('key changed with zoneSize: a new zone, no condition', () => {
    const next = computePolicies({ policies: [limit('$http_x_user', '11m')], targets: [gateway(), route()], previous: first.effective });
    expect(next.effective.zones[0]).toEqual({ id: 'default_rl_api_rule0', key: '$http_x_user', size: '11m', rate: '10r/s' });
    expect(accepted(next.statuses, 'api', 'r').reason).toBe('Accepted');
  });

  it('rate changes and first creation need nothing', () => {
    expect(checkZoneKeys([{ id: 'z', key: '$a', size: '1m', rate: '2r/s' }], [{ id: 'z', key: '$a', size: '1m', rate: '1r/s' }]).changes).toEqual([]);
    expect(checkZoneKeys([{ id: 'z', key: '$a', size: '1m', rate: '2r/s' }], undefined).changes).toEqual([]);
  });

  it('deleted then re-created (after a reload without it): the new key goes through', () => {
    const gone = computePolicies({ policies: [], targets: [gateway(), route()], previous: first.effective });
    const back = computePolicies({ policies: [limit('$http_x_user')], targets: [gateway(), route()], previous: gone.effective });
    expect(back.effective.zones[0].key).toBe('$http_x_user');
  });

  it('the zone ids and definitions load in nginx', () => {
    const http = first.effective.zones.map((z) => `limit_req_zone ${z.key} zone=${z.id}:${z.size} rate=${z.rate};`).join('\n');
    expect(nginxTest(http, 'limit_req zone=default_rl_api_rule0;').ok).toBe(true);
  });
});
