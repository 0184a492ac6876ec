import { combineRateLimits, computePolicies, locationPolicies } from '../../src/policies';
import { client, gateway, gwRef, proxy, rateLimit, route, routeRef, rules } from './helpers';

const at = (effective: ReturnType<typeof computePolicies>['effective'], r = 'r', gw = 'gw') =>
  locationPolicies(effective, { namespace: 'default', name: gw }, { namespace: 'default', name: r });

describe('ProxySettingsPolicy: per-field inheritance', () => {
  it('route fields override the Gateway fields they set; unset fields inherit', () => {
    const result = computePolicies({
      policies: [proxy('gw-p', [gwRef()], { bufferSize: '8k', buffers: { number: 8, size: '8k' }, disable: true }), proxy('r-p', [routeRef()], { bufferSize: '16k', busyBuffersSize: '32k' })],
      targets: [gateway(), route(), route('other')],
    });
    expect(at(result.effective).proxy).toEqual({ bufferSize: '16k', buffers: { number: 8, size: '8k' }, buffering: false, busyBuffersSize: '32k' });
    // A route without its own policy takes the Gateway's.
    expect(at(result.effective, 'other').proxy).toEqual({ bufferSize: '8k', buffers: { number: 8, size: '8k' }, buffering: false });
  });

  it('a route can turn buffering back on', () => {
    const result = computePolicies({ policies: [proxy('g', [gwRef()], { disable: true }), proxy('r', [routeRef()], { disable: false })], targets: [gateway(), route()] });
    expect(at(result.effective).proxy).toEqual({ buffering: true });
  });

  it('a route attached to two Gateways merges with each Gateway separately', () => {
    const result = computePolicies({
      policies: [proxy('a', [gwRef('a')], { bufferSize: '8k' }), proxy('r', [routeRef()], { disable: true })],
      targets: [gateway('a'), gateway('b'), route('r', ['a', 'b'])],
    });
    expect(at(result.effective, 'r', 'a').proxy).toEqual({ bufferSize: '8k', buffering: false });
    expect(at(result.effective, 'r', 'b').proxy).toEqual({ buffering: false });
  });
});

describe('ClientSettingsPolicy: the route wins', () => {
  it('route maxSize overrides the Gateway; other routes keep the Gateway value', () => {
    const result = computePolicies({ policies: [client('g', gwRef(), '10m'), client('r', routeRef(), '1024')], targets: [gateway(), route(), route('other')] });
    expect(at(result.effective).clientMaxBodySize).toBe('1024');
    expect(at(result.effective, 'other').clientMaxBodySize).toBe('10m');
  });
});

describe('RateLimitPolicy: Gateway and route limits apply together', () => {
  it('a route location carries the Gateway limits and its own; nodelay is never set (excess within burst is delayed)', () => {
    const result = computePolicies({
      policies: [rateLimit('gw-rl', [gwRef()], rules({ rate: '10r/s', burst: 20 })), rateLimit('r-rl', [routeRef()], rules({ rate: '1r/s' }))],
      targets: [gateway(), route(), route('other')],
    });
    expect(at(result.effective).rateLimit).toEqual({
      limits: [{ zone: 'default_rl_gw-rl_rule0', burst: 20 }, { zone: 'default_rl_r-rl_rule0' }],
      dryRun: false,
      logLevel: 'error',
      rejectCode: 503,
    });
    expect(at(result.effective, 'other').rateLimit!.limits).toEqual([{ zone: 'default_rl_gw-rl_rule0', burst: 20 }]);
    expect(result.effective.zones).toEqual([
      { id: 'default_rl_gw-rl_rule0', key: '$binary_remote_addr', size: '10m', rate: '10r/s' },
      { id: 'default_rl_r-rl_rule0', key: '$binary_remote_addr', size: '10m', rate: '1r/s' },
    ]);
  });

  it("rejectCode and logLevel: the route's value wins when both set one; otherwise the one that is set", () => {
    const gw = { limits: [{ zone: 'g' }], rejectCode: 429, logLevel: 'notice' as const };
    expect(combineRateLimits(gw, { limits: [{ zone: 'r' }], rejectCode: 466 })).toMatchObject({ rejectCode: 466, logLevel: 'notice' });
    expect(combineRateLimits(gw, { limits: [{ zone: 'r' }] })).toMatchObject({ rejectCode: 429, logLevel: 'notice' });
    // A route policy with no rules can still pick the status its clients get for the Gateway's limits.
    expect(combineRateLimits(gw, { limits: [], rejectCode: 418 })).toMatchObject({ limits: [{ zone: 'g' }], rejectCode: 418 });
  });

  it('a route cannot put the Gateway limits into dry run, and a Gateway dry run never blocks a route', () => {
    const enforced = { limits: [{ zone: 'g' }] };
    const dry = { limits: [{ zone: 'r' }], dryRun: true };
    // Route dry run under an enforcing Gateway: the Gateway's limits stay enforced here.
    expect(combineRateLimits(enforced, dry)).toMatchObject({ limits: [{ zone: 'g' }], dryRun: false });
    // Gateway dry run above an enforcing route: the route's limits are enforced, the Gateway's are not.
    expect(combineRateLimits({ ...dry, limits: [{ zone: 'g' }] }, { limits: [{ zone: 'r' }] })).toMatchObject({ limits: [{ zone: 'r' }], dryRun: false });
    // Both in dry run: everything counted, nothing blocked.
    expect(combineRateLimits({ limits: [{ zone: 'g' }], dryRun: true }, dry)).toMatchObject({ limits: [{ zone: 'g' }, { zone: 'r' }], dryRun: true });
    // dryRun on a level without limits changes nothing.
    expect(combineRateLimits(enforced, { limits: [], dryRun: true })).toMatchObject({ limits: [{ zone: 'g' }], dryRun: false });
  });

  it('GRPCRoute targets get their own location settings', () => {
    const result = computePolicies({ policies: [rateLimit('g', [routeRef('svc', 'GRPCRoute')], rules({}))], targets: [gateway(), route('svc', ['gw'], 1, 'GRPCRoute')] });
    const settings = locationPolicies(result.effective, { namespace: 'default', name: 'gw' }, { kind: 'GRPCRoute', namespace: 'default', name: 'svc' });
    expect(settings.rateLimit!.limits).toEqual([{ zone: 'default_rl_g_rule0' }]);
    // An HTTPRoute of the same name is another target.
    expect(at(result.effective, 'svc').rateLimit).toBeUndefined();
  });
});
