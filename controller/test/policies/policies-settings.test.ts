import { computePolicies, modelZones } from '../../src/policies';
import { dispatchBodySize, ruleSettings, ruleSettingsOf } from '../../src/model/policy-settings';
import { client, gateway, gwRef, proxy, rateLimit, route, routeRef, rules } from './helpers';

describe('EffectivePolicies as model fields', () => {
  const result = computePolicies({
    policies: [
      rateLimit('gw-rl', [gwRef()], { ...rules({ rate: '10r/s', burst: 5 }), rejectCode: 429 }),
      proxy('gw-ps', [gwRef()], { disable: true }),
      client('gw-cs', gwRef(), '10m'),
      rateLimit('r-rl', [routeRef()], { ...rules({ rate: '1r/s', zoneSize: '1m' }), logLevel: 'warn' }),
      client('r-cs', routeRef(), '1024'),
    ],
    targets: [gateway(), gateway('other'), route('r', ['gw', 'other']), route('plain')],
  });
  const gws = [{ namespace: 'default', name: 'gw' }];

  it('zones for the http context', () => {
    expect(modelZones(result.effective)).toEqual([
      { name: 'default_rl_gw-rl_rule0', key: '$binary_remote_addr', size: '10m', rate: '10r/s' },
      { name: 'default_rl_r-rl_rule0', key: '$binary_remote_addr', size: '1m', rate: '1r/s' },
    ]);
  });

  it("a rule of a route with its own policies: Gateway + route limits, the route's body size, the Gateway's proxy fields", () => {
    expect(ruleSettings(result.effective, gws, { namespace: 'default', name: 'r', ruleIndex: 0 })).toEqual({
      limitReq: [{ zone: 'default_rl_gw-rl_rule0', burst: 5 }, { zone: 'default_rl_r-rl_rule0' }],
      limitReqLogLevel: 'warn',
      limitReqStatus: 429,
      proxyBuffering: false,
      clientMaxBodySize: '1024',
    });
  });

  it('a rule of a route without policies takes the Gateway settings; on a Gateway without policies the route keeps only its own', () => {
    expect(ruleSettings(result.effective, gws, { namespace: 'default', name: 'plain', ruleIndex: 2 })).toEqual({
      limitReq: [{ zone: 'default_rl_gw-rl_rule0', burst: 5 }],
      limitReqStatus: 429,
      proxyBuffering: false,
      clientMaxBodySize: '10m',
    });
    expect(ruleSettings(result.effective, [{ namespace: 'default', name: 'other' }], { namespace: 'default', name: 'r', ruleIndex: 0 })).toEqual({
      limitReq: [{ zone: 'default_rl_r-rl_rule0' }],
      limitReqLogLevel: 'warn',
      clientMaxBodySize: '1024',
    });
    expect(ruleSettings(result.effective, [{ namespace: 'default', name: 'other' }], { namespace: 'default', name: 'plain', ruleIndex: 0 })).toEqual({});
  });

  it('ruleSettingsOf (one server\'s many rules) answers as ruleSettings, Gateway share and all', () => {
    const none = computePolicies({ policies: [], targets: [gateway(), route('plain')] });
    for (const effective of [result.effective, none.effective]) {
      for (const gateways of [gws, [{ namespace: 'default', name: 'other' }], [{ namespace: 'default', name: 'other' }, ...gws], []]) {
        const of = ruleSettingsOf(effective, gateways);
        for (const name of ['r', 'plain', 'missing']) {
          const source = { namespace: 'default', name, ruleIndex: 0 };
          expect(of(source)).toEqual(ruleSettings(effective, gateways, source));
          expect(of(source, 'GRPCRoute')).toEqual(ruleSettings(effective, gateways, source, 'GRPCRoute'));
        }
      }
    }
  });

  it("nginx's defaults (dry run off, log level error, status 503) are left to nginx; others are set", () => {
    const r = computePolicies({
      policies: [rateLimit('dry', [routeRef('d')], { ...rules({ rate: '1r/s' }), dryRun: true, logLevel: 'info', rejectCode: 503 })],
      targets: [gateway(), route('d')],
    });
    expect(ruleSettings(r.effective, gws, { namespace: 'default', name: 'd', ruleIndex: 0 })).toEqual({
      limitReq: [{ zone: 'default_rl_dry_rule0' }],
      limitReqDryRun: true,
      limitReqLogLevel: 'info',
    });
  });

  it('a dispatching location lets through the largest body a candidate rule accepts', () => {
    expect(dispatchBodySize([undefined, undefined])).toBeUndefined();
    expect(dispatchBodySize(['1024', undefined])).toBe(String(1024 * 1024));
    expect(dispatchBodySize(['10m', '1k'])).toBe(String(10 * 1024 * 1024));
    expect(dispatchBodySize(['10m', '0'])).toBe('0');
  });
});
