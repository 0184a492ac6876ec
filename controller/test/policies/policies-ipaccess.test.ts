import { accessDecision, accessGeo, accessLines, computePolicies, locationPolicies, toPolicySettings } from '../../src/policies';
import { canonicalNetwork } from '../../src/resources/policies';
import { accepted, gateway, gwRef, policy, route, routeRef } from './helpers';
import { nginxTest } from './nginx-check';

const ip = (name: string, targets: object[], spec: Record<string, unknown>, opts?: Parameters<typeof policy>[3]) => policy('IPAccessPolicy', name, { targetRefs: targets, ...spec }, opts);
const at = (effective: ReturnType<typeof computePolicies>['effective'], r = 'r', gw = 'gw') =>
  locationPolicies(effective, { namespace: 'default', name: gw }, { namespace: 'default', name: r });

describe('IPAccessPolicy networks', () => {
  it.each([
    ['10.1.2.3/8', '10.0.0.0/8'],
    ['192.0.2.7', '192.0.2.7/32'],
    ['2001:DB8::1/32', '2001:db8:0:0:0:0:0:0/32'],
    ['::1', '0:0:0:0:0:0:0:1/128'],
    ['::/0', '0:0:0:0:0:0:0:0/0'],
    ['fe80::1:2/64', 'fe80:0:0:0:0:0:0:0/64'],
  ])('%s is the network %s (host bits cleared, as nginx reads it without a warning)', (text, canonical) => {
    expect(canonicalNetwork(text)).toBe(canonical);
  });
});

describe('IPAccessPolicy: the most specific listed network decides', () => {
  const cases: [string, { allow?: string[]; deny?: string[] }, string, 'served' | 'refused'][] = [
    ['no allow: an unlisted address is served', { deny: ['10.0.0.0/8'] }, '192.0.2.1', 'served'],
    ['a denied address is refused', { deny: ['10.0.0.0/8'] }, '10.9.9.9', 'refused'],
    ['allow set: an unlisted address is refused', { allow: ['10.0.0.0/8'] }, '192.0.2.1', 'refused'],
    ['an allowed address is served', { allow: ['10.0.0.0/8'] }, '10.1.1.1', 'served'],
    ['a smaller denied network inside an allowed one is refused', { allow: ['10.0.0.0/8'], deny: ['10.1.0.0/16'] }, '10.1.2.3', 'refused'],
    ['a smaller allowed network inside a denied one is served', { allow: ['10.1.2.3'], deny: ['10.0.0.0/8'] }, '10.1.2.3', 'served'],
    ['the same network in both lists is refused', { allow: ['10.0.0.0/8'], deny: ['10.0.0.0/8'] }, '10.1.2.3', 'refused'],
    ['IPv6 allowed', { allow: ['2001:db8::/32'] }, '2001:db8::7', 'served'],
    ['IPv6 unlisted with allow set', { allow: ['2001:db8::/32'] }, '2001:db9::7', 'refused'],
    ['an IPv4 list does not hold IPv6 addresses', { deny: ['0.0.0.0/0'] }, '::1', 'served'],
  ];
  it.each(cases)('%s', (_n, access, address, expected) => {
    const result = computePolicies({ policies: [ip('p', [routeRef()], access)], targets: [gateway(), route()] });
    expect(accessDecision(at(result.effective).ipAccess!, address)).toBe(expected);
  });

  it('the geo block lists each network once, refused (1) or served (0), default refused when allow is set', () => {
    const geo = accessGeo({ allow: ['10.0.0.0/8', '2001:db8:0:0:0:0:0:0/32'], deny: ['10.0.0.0/8', '10.1.0.0/16'] });
    expect(geo.refuseByDefault).toBe(true);
    expect(geo.entries).toEqual([
      { network: '10.0.0.0/8', refuse: true },
      { network: '10.1.0.0/16', refuse: true },
      { network: '2001:db8:0:0:0:0:0:0/32', refuse: false },
    ]);
    expect(geo.variable).toMatch(/^\$pc_ip_[0-9a-f]{12}$/);
    // Identity by content: the same lists, the same variable.
    expect(accessGeo({ allow: ['2001:db8:0:0:0:0:0:0/32', '10.0.0.0/8'], deny: ['10.1.0.0/16', '10.0.0.0/8'] }).variable).toBe(geo.variable);
  });

  it('nginx accepts the geo block and the location check, IPv4 and IPv6 alike', () => {
    const geo = accessGeo({ allow: ['10.0.0.0/8', '2001:db8:0:0:0:0:0:0/32'], deny: ['10.1.0.0/16'] });
    const block = `geo ${geo.variable} {\n default 1;\n${geo.entries.map((e) => ` "${e.network}" ${e.refuse ? 1 : 0};`).join('\n')}\n}`;
    expect(nginxTest(block, `if (${geo.variable}) { return 403; }`)).toEqual({ ok: true, output: '' });
  });
});

describe('IPAccessPolicy: per-field merge (Gateway defaults, route overrides)', () => {
  it("a route's deny joins its Gateway's allow; a route without a policy keeps the Gateway's lists", () => {
    const result = computePolicies({
      policies: [ip('g', [gwRef()], { allow: ['10.0.0.0/8'], deny: ['10.9.0.0/16'] }), ip('r', [routeRef()], { deny: ['10.1.0.0/16'] })],
      targets: [gateway(), route(), route('other')],
    });
    expect(at(result.effective).ipAccess).toEqual({ allow: ['10.0.0.0/8'], deny: ['10.1.0.0/16'] });
    expect(at(result.effective, 'other').ipAccess).toEqual({ allow: ['10.0.0.0/8'], deny: ['10.9.0.0/16'] });
    expect(toPolicySettings(at(result.effective)).ipAccess?.refuseByDefault).toBe(true);
  });

  it('a route can open what its Gateway allows to everyone', () => {
    const result = computePolicies({ policies: [ip('g', [gwRef()], { allow: ['10.0.0.0/8'] }), ip('r', [routeRef()], { allow: ['0.0.0.0/0', '::/0'] })], targets: [gateway(), route()] });
    expect(accessDecision(at(result.effective).ipAccess!, '192.0.2.1')).toBe('served');
  });

  it("clientAddress stays the Gateway's: it is in the Gateway's own place, not in a route's", () => {
    const result = computePolicies({
      policies: [ip('g', [gwRef()], { clientAddress: { source: 'XForwardedFor', trustedCIDRs: ['127.0.0.1'] } }), ip('r', [routeRef()], { deny: ['10.0.0.0/8'] })],
      targets: [gateway(), route()],
    });
    expect(result.effective.gateways['default/gw'].clientAddress).toEqual({ source: 'XForwardedFor', trustedCIDRs: ['127.0.0.1/32'] });
    expect(result.effective.routes['HTTPRoute/default/r']['default/gw'].clientAddress).toBeUndefined();
  });

  it('two policies on one target setting the same list: the older wins, the other is Conflicted; different lists combine', () => {
    const result = computePolicies({
      policies: [
        ip('old', [routeRef()], { deny: ['10.0.0.0/8'] }, { created: '2026-01-01T00:00:00Z' }),
        ip('new', [routeRef()], { deny: ['192.0.2.0/24'] }, { created: '2026-01-02T00:00:00Z' }),
        ip('allow', [routeRef()], { allow: ['10.0.0.0/8'] }, { created: '2026-01-03T00:00:00Z' }),
      ],
      targets: [gateway(), route()],
    });
    expect(accepted(result.statuses, 'old', 'r').reason).toBe('Accepted');
    expect(accepted(result.statuses, 'allow', 'r').reason).toBe('Accepted');
    const lost = accepted(result.statuses, 'new', 'r');
    expect(lost).toMatchObject({ status: 'False', reason: 'Conflicted' });
    expect(lost.message).toContain('IPAccessPolicy default/old');
    expect(at(result.effective).ipAccess).toEqual({ allow: ['10.0.0.0/8'], deny: ['10.0.0.0/8'] });
    expect(result.affected.find((t) => t.name === 'r')?.conditions.map((c) => c.type)).toEqual(['IPAccessPolicyAffected']);
  });
});

describe('policies on the routes of whole connections (TLSRoute, TCPRoute, UDPRoute)', () => {
  const l4 = (name: string, kind: 'TLSRoute' | 'TCPRoute' | 'UDPRoute') => ({ ...route(name), kind });

  it.each(['RateLimitPolicy', 'ProxySettingsPolicy'] as const)('%s on a TCPRoute, UDPRoute or TLSRoute is Invalid, saying it has nothing to act on there', (kind) => {
    const spec = kind === 'RateLimitPolicy' ? { rateLimit: { local: { rules: [{ key: '$binary_remote_addr', rate: '1r/s' }] } } } : { buffering: { disable: true } };
    const result = computePolicies({
      policies: [policy(kind, 'p', { targetRefs: [routeRef('t', 'TCPRoute'), routeRef('u', 'UDPRoute'), routeRef('s', 'TLSRoute')], ...spec })],
      targets: [gateway(), l4('t', 'TCPRoute'), l4('u', 'UDPRoute'), l4('s', 'TLSRoute')],
    });
    for (const [name, k] of [['t', 'TCPRoute'], ['u', 'UDPRoute'], ['s', 'TLSRoute']]) {
      const c = accepted(result.statuses, 'p', name);
      expect(c).toMatchObject({ status: 'False', reason: 'Invalid' });
      expect(c.message).toContain(`a ${k} carries whole connections without HTTP`);
    }
    expect(result.effective.routes).toEqual({});
    expect(result.affected).toEqual([]);
  });

  it('ClientSettingsPolicy on a TLSRoute is Invalid too', () => {
    const result = computePolicies({ policies: [policy('ClientSettingsPolicy', 'c', { targetRef: routeRef('s', 'TLSRoute'), body: { maxSize: '1k' } })], targets: [gateway(), l4('s', 'TLSRoute')] });
    expect(accepted(result.statuses, 'c', 's')).toMatchObject({ status: 'False', reason: 'Invalid' });
  });

  it('IPAccessPolicy applies to TCPRoutes and UDPRoutes; on a TLSRoute it is Invalid (the address is checked before the server name picks the route)', () => {
    const result = computePolicies({
      policies: [ip('p', [routeRef('t', 'TCPRoute'), routeRef('u', 'UDPRoute'), routeRef('s', 'TLSRoute')], { deny: ['10.0.0.0/8'] })],
      targets: [gateway(), l4('t', 'TCPRoute'), l4('u', 'UDPRoute'), l4('s', 'TLSRoute')],
    });
    expect(accepted(result.statuses, 'p', 't').reason).toBe('Accepted');
    expect(accepted(result.statuses, 'p', 'u').reason).toBe('Accepted');
    const tls = accepted(result.statuses, 'p', 's');
    expect(tls).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(tls.message).toContain('Attach it to the Gateway');
    expect(locationPolicies(result.effective, { namespace: 'default', name: 'gw' }, { kind: 'TCPRoute', namespace: 'default', name: 't' }).ipAccess).toEqual({ deny: ['10.0.0.0/8'] });
    expect(result.affected.map((a) => `${a.kind}/${a.name}`).sort()).toEqual(['TCPRoute/t', 'UDPRoute/u']);
  });

  it("stream allow/deny lines (first match wins) decide as the geo lookup does, on random networks and addresses", () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
    const v4 = () => `10.${rnd(4)}.${rnd(4)}.${rnd(256)}`;
    for (let round = 0; round < 200; round++) {
      const list = () => Array.from({ length: rnd(4) }, () => canonicalNetwork(`${v4()}/${8 + rnd(25)}`));
      const allow = list();
      const deny = list();
      const access = { ...(allow.length ? { allow: [...new Set(allow)].sort() } : {}), ...(deny.length ? { deny: [...new Set(deny)].sort() } : {}) };
      const lines = accessLines(access);
      for (let i = 0; i < 20; i++) {
        const address = v4();
        const hit = lines.rules.find((r) => accessDecision({ deny: [r.network] }, address) === 'refused');
        const byLines = hit ? (hit.refuse ? 'refused' : 'served') : lines.refuseByDefault ? 'refused' : 'served';
        expect([access, address, byLines]).toEqual([access, address, accessDecision(access, address)]);
      }
    }
  });
});
