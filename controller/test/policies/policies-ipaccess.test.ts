import { accessDecision, accessGeo, accessLines, computePolicies, locationPolicies, toPolicySettings } from '../../src/policies';
import { canonicalNetwork, parsePolicyDocs, POLICY_KINDS, POLICY_STAND_INS } from '../../src/resources/policies';
import { KIND_MODULES } from '../../src/policies/kinds';
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

describe('IPAccessPolicy: a document that fails its schema fails closed (files are read without the CRD validation)', () => {
  const API = 'gateway.portcullis.dev/v1alpha1';
  const doc = (kind: string, name: string, spec: unknown, apiVersion = API) => ({ source: `${name}.yaml`, doc: { apiVersion, kind, metadata: { name, generation: 2 }, spec } });
  const clients = ['127.0.0.1', '10.1.2.3', '192.0.2.1', '::1', '2001:db8::1'];
  const decisions = (access: Parameters<typeof accessDecision>[0] | undefined) => clients.map((c) => (access ? accessDecision(access, c) : 'served'));
  const everyone = clients.map(() => 'refused');

  it('on a route: that route refuses every client, the policy is Invalid with the schema message on it, other routes keep their settings', () => {
    const parsed = parsePolicyDocs([doc('IPAccessPolicy', 'bad', { targetRefs: [routeRef()], deny: ['10.0.0.0/33'] })]);
    expect(parsed.invalid).toEqual([expect.objectContaining({ name: 'bad', standIn: true, message: expect.stringContaining('spec.deny[0]') })]);
    const result = computePolicies({ policies: parsed.policies, invalid: parsed.invalid, targets: [gateway(), route(), route('other')] });
    expect(decisions(at(result.effective).ipAccess)).toEqual(everyone);
    expect(at(result.effective, 'other').ipAccess).toBeUndefined();
    const c = accepted(result.statuses, 'bad', 'r');
    expect(c).toMatchObject({ status: 'False', reason: 'Invalid', observedGeneration: 2 });
    expect(c.message).toMatch(/^The policy is invalid: spec\.deny\[0\]: .*; until it is fixed, this target refuses every client/);
    expect(result.statuses.filter((s) => s.name === 'bad')).toHaveLength(1);
    expect(result.affected).toEqual([expect.objectContaining({ kind: 'HTTPRoute', name: 'r', conditions: [expect.objectContaining({ type: 'IPAccessPolicyAffected' })] })]);
  });

  it("on a Gateway: every route of the Gateway refuses every client, whatever its own lists (which fields the document meant to set is unknown), TCP routes too", () => {
    const parsed = parsePolicyDocs([
      doc('IPAccessPolicy', 'bad', { targetRefs: [gwRef()], allow: ['10.0.0.0/8'], clientAddress: { source: 'XForwardedFor' } }),
      doc('IPAccessPolicy', 'open', { targetRefs: [routeRef('own')], allow: ['0.0.0.0/0', '::/0'] }),
      doc('IPAccessPolicy', 'other-gw', { targetRefs: [gwRef('gw2')], deny: ['10.0.0.0/8'] }),
    ]);
    const tcp = { ...route('t'), kind: 'TCPRoute' as const };
    const result = computePolicies({ policies: parsed.policies, invalid: parsed.invalid, targets: [gateway(), gateway('gw2'), route(), route('own'), route('elsewhere', ['gw2']), tcp] });
    expect(decisions(at(result.effective).ipAccess)).toEqual(everyone);
    expect(decisions(at(result.effective, 'own').ipAccess)).toEqual(everyone);
    expect(decisions(locationPolicies(result.effective, { namespace: 'default', name: 'gw' }, { kind: 'TCPRoute', namespace: 'default', name: 't' }).ipAccess)).toEqual(everyone);
    expect(accessLines(at(result.effective).ipAccess!)).toEqual({ rules: [], refuseByDefault: true });
    // The route's own policy is valid: Accepted, yet its Gateway's broken one refuses.
    expect(accepted(result.statuses, 'open', 'own').reason).toBe('Accepted');
    expect(accepted(result.statuses, 'bad', 'gw')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(result.effective.gateways['default/gw'].clientAddress).toBeUndefined();
    expect(decisions(at(result.effective, 'elsewhere', 'gw2').ipAccess)).toEqual(['served', 'refused', 'served', 'served', 'served']);
  });

  it('an unsupported apiVersion fails closed the same way; a target that does not exist is named; a document naming no target is only reported', () => {
    const parsed = parsePolicyDocs([
      doc('IPAccessPolicy', 'old', { targetRefs: [routeRef(), routeRef('gone')], allow: ['10.0.0.0/8'] }, 'gateway.portcullis.dev/v1alpha0'),
      doc('IPAccessPolicy', 'none', { targetRefs: 'r', allow: ['10.0.0.0/8'] }),
    ]);
    expect(parsed.invalid.map((i) => [i.name, i.standIn])).toEqual([['old', true], ['none', undefined]]);
    const result = computePolicies({ policies: parsed.policies, invalid: parsed.invalid, targets: [gateway(), route()] });
    expect(decisions(at(result.effective).ipAccess)).toEqual(everyone);
    expect(accepted(result.statuses, 'old', 'r').message).toContain('apiVersion: gateway.portcullis.dev/v1alpha0 is not supported');
    expect(accepted(result.statuses, 'old', 'gone')).toMatchObject({ reason: 'Invalid', message: expect.stringContaining('HTTPRoute default/gone does not exist') });
    expect((result.statuses.find((s) => s.name === 'none')!.status as { ancestors: unknown[] }).ancestors).toEqual([]);
  });

  it.each([
    ['RateLimitPolicy', { targetRefs: [routeRef()], rateLimit: { rejectCode: 200, local: { rules: [{ key: '$binary_remote_addr', rate: '1r/s' }] } } }],
    ['ProxySettingsPolicy', { targetRefs: [routeRef()], buffering: { bufferSize: 'huge' } }],
    ['ClientSettingsPolicy', { targetRef: routeRef(), body: { maxSize: '-1' } }],
  ])('a %s that fails its schema fails open: reported Invalid on its target, which keeps the settings it has without it', (kind, spec) => {
    const parsed = parsePolicyDocs([doc(kind, 'bad', spec)]);
    expect(parsed.policies).toEqual([]);
    const result = computePolicies({ policies: parsed.policies, invalid: parsed.invalid, targets: [gateway(), route()] });
    expect(at(result.effective)).toEqual({});
    expect(accepted(result.statuses, 'bad', 'r')).toMatchObject({ status: 'False', reason: 'Invalid', message: expect.stringMatching(/^The policy is invalid: spec\./) });
    expect(result.affected).toEqual([]);
  });

  it('each kind with a stand-in says what it does to its targets; the others have none', () => {
    for (const kind of POLICY_KINDS) expect([kind, KIND_MODULES[kind].failsClosed !== undefined]).toEqual([kind, POLICY_STAND_INS[kind] !== undefined]);
  });

  it('nginx accepts the refuse-all geo block (a default and no network)', () => {
    const geo = accessGeo({ allow: [] });
    expect(geo).toMatchObject({ refuseByDefault: true, entries: [] });
    expect(nginxTest(`geo ${geo.variable} {\n default 1;\n}`, `if (${geo.variable}) { return 403; }`)).toEqual({ ok: true, output: '' });
  });
});
