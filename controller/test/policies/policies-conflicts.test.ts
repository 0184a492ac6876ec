import { computePolicies, locationPolicies } from '../../src/policies';
import { accepted, client, gateway, gwRef, proxy, rateLimit, route, routeRef, rules } from './helpers';

const at = (effective: ReturnType<typeof computePolicies>['effective'], r = 'r', gw = 'gw') =>
  locationPolicies(effective, { namespace: 'default', name: gw }, { namespace: 'default', name: r });

describe('RateLimitPolicy conflicts on one target', () => {
  it('the older policy wins a field both set; the other is Conflicted, names the winner and is not applied', () => {
    const older = rateLimit('older', [routeRef()], { ...rules({ rate: '5r/s' }), rejectCode: 429 });
    const newer = rateLimit('newer', [routeRef()], { ...rules({ rate: '1r/s' }), rejectCode: 503 });
    // Input order must not matter: newest first.
    const result = computePolicies({ policies: [newer, older], targets: [gateway(), route()] });

    expect(accepted(result.statuses, 'older', 'r')).toMatchObject({ status: 'True', reason: 'Accepted' });
    const lost = accepted(result.statuses, 'newer', 'r');
    expect(lost).toMatchObject({ status: 'False', reason: 'Conflicted' });
    expect(lost.message).toContain('RateLimitPolicy default/older');
    expect(lost.message).toContain('rateLimit.rejectCode');

    const rl = at(result.effective).rateLimit!;
    expect(rl.limits).toEqual([{ zone: 'default_rl_older_rule0' }]);
    expect(rl.rejectCode).toBe(429);
    expect(result.effective.zones.map((z) => z.id)).toEqual(['default_rl_older_rule0']);
  });

  it('same creation time: the name that sorts first wins', () => {
    const created = '2026-02-01T00:00:00Z';
    const b = rateLimit('bravo', [routeRef()], { dryRun: true }, { created });
    const a = rateLimit('alpha', [routeRef()], { dryRun: false }, { created });
    const result = computePolicies({ policies: [b, a], targets: [gateway(), route()] });
    expect(accepted(result.statuses, 'alpha', 'r').reason).toBe('Accepted');
    expect(accepted(result.statuses, 'bravo', 'r')).toMatchObject({ status: 'False', reason: 'Conflicted' });
  });

  it('policies setting different fields (or only rules) do not conflict: their limits add up', () => {
    const a = rateLimit('a', [routeRef()], { ...rules({ rate: '5r/s', burst: 3 }), logLevel: 'warn' });
    const b = rateLimit('b', [routeRef()], { ...rules({ rate: '1r/m' }, { rate: '2r/s', key: '$http_x_user' }), rejectCode: 429 });
    const result = computePolicies({ policies: [a, b], targets: [gateway(), route()] });
    expect(accepted(result.statuses, 'a', 'r').reason).toBe('Accepted');
    expect(accepted(result.statuses, 'b', 'r').reason).toBe('Accepted');
    expect(at(result.effective).rateLimit).toEqual({
      limits: [{ zone: 'default_rl_a_rule0', burst: 3 }, { zone: 'default_rl_b_rule0' }, { zone: 'default_rl_b_rule1' }],
      dryRun: false,
      logLevel: 'warn',
      rejectCode: 429,
    });
  });

  it('a conflict on one target does not stop the policy on its other targets', () => {
    const owner = rateLimit('owner', [routeRef('r1')], { rejectCode: 429, ...rules({}) });
    const shared = rateLimit('shared', [routeRef('r1'), routeRef('r2')], { rejectCode: 503, ...rules({ rate: '1r/s' }) });
    const result = computePolicies({ policies: [owner, shared], targets: [gateway(), route('r1'), route('r2')] });
    expect(accepted(result.statuses, 'shared', 'r1').reason).toBe('Conflicted');
    expect(accepted(result.statuses, 'shared', 'r2').reason).toBe('Accepted');
    expect(at(result.effective, 'r2').rateLimit!.limits).toEqual([{ zone: 'default_rl_shared_rule0' }]);
    expect(at(result.effective, 'r1').rateLimit!.limits).toEqual([{ zone: 'default_rl_owner_rule0' }]);
    // The zone exists once, shared by every target of the policy.
    expect(result.effective.zones.map((z) => z.id)).toEqual(['default_rl_owner_rule0', 'default_rl_shared_rule0']);
  });
});

describe('ProxySettingsPolicy and ClientSettingsPolicy conflicts (as NGINX Gateway Fabric: same field set -> the younger loses entirely)', () => {
  it('two ProxySettingsPolicies setting bufferSize on one Gateway', () => {
    const a = proxy('a', [gwRef()], { bufferSize: '8k' });
    const b = proxy('b', [gwRef()], { bufferSize: '16k', disable: true });
    const result = computePolicies({ policies: [a, b], targets: [gateway()] });
    expect(accepted(result.statuses, 'b', 'gw')).toMatchObject({ reason: 'Conflicted' });
    expect(accepted(result.statuses, 'b', 'gw').message).toContain('buffering.bufferSize');
    // b's disable is not applied either: the loser is rejected as a whole on that target.
    expect(result.effective.gateways['default/gw'].proxy).toEqual({ bufferSize: '8k' });
  });

  it('two ProxySettingsPolicies with disjoint fields merge', () => {
    const a = proxy('a', [gwRef()], { bufferSize: '8k' });
    const b = proxy('b', [gwRef()], { disable: true });
    const result = computePolicies({ policies: [a, b], targets: [gateway()] });
    expect(result.effective.gateways['default/gw'].proxy).toEqual({ bufferSize: '8k', buffering: false });
  });

  it('two ClientSettingsPolicies on one route', () => {
    const a = client('a', routeRef(), '1k');
    const b = client('b', routeRef(), '2k');
    const result = computePolicies({ policies: [b, a], targets: [gateway(), route()] });
    expect(accepted(result.statuses, 'b', 'r').reason).toBe('Conflicted');
    expect(at(result.effective).clientMaxBodySize).toBe('1k');
  });

  it('different kinds on one target never conflict', () => {
    const result = computePolicies({
      policies: [client('c', routeRef(), '1k'), proxy('p', [routeRef()], { bufferSize: '8k' }), rateLimit('l', [routeRef()], { rejectCode: 429 })],
      targets: [gateway(), route()],
    });
    for (const name of ['c', 'p', 'l']) expect(accepted(result.statuses, name, 'r').reason).toBe('Accepted');
  });
});
