import { computePolicies, withAffected } from '../../src/policies';
import type { StatusReport } from '../../src/graph/types';
import { gateway, gwRef, proxy, rateLimit, route, routeRef, rules } from './helpers';

const cond = (type: string) => ({ type, status: 'True' as const, reason: 'Accepted', message: '', observedGeneration: 1 });
const reports = (): StatusReport[] => [
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', namespace: 'default', name: 'gw', generation: 1, status: { conditions: [cond('Accepted')], listeners: [] } },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    namespace: 'default',
    name: 'a',
    generation: 1,
    status: { parents: [{ parentRef: { name: 'gw' }, conditions: [cond('Accepted')] }, { parentRef: { name: 'gw2' }, conditions: [cond('Accepted')] }] },
  },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace: 'default', name: 'b', generation: 1, status: { parents: [{ parentRef: { name: 'gw' }, conditions: [] }] } },
];

describe('<Kind>Affected on the targets', () => {
  it('a Gateway gets it in status.conditions, a route in every parent; others are left alone', () => {
    const result = computePolicies({
      policies: [rateLimit('gw-rl', [gwRef()], rules({})), proxy('r-ps', [routeRef('a')], { bufferSize: '8k' })],
      targets: [gateway(), route('a'), route('b')],
    });
    const out = withAffected(reports(), result.affected);
    const types = (c: { type: string }[]) => c.map((x) => x.type);
    expect(types((out[0].status as any).conditions)).toEqual(['Accepted', 'RateLimitPolicyAffected']);
    for (const p of (out[1].status as any).parents) expect(types(p.conditions)).toEqual(['Accepted', 'ProxySettingsPolicyAffected']);
    expect(out[2]).toEqual(reports()[2]);
    expect((out[0].status as any).conditions[1]).toMatchObject({ status: 'True', reason: 'PolicyAffected' });
  });

  it('is gone once no policy affects the target (nothing added, nothing kept)', () => {
    const result = computePolicies({ policies: [], targets: [gateway(), route('a'), route('b')] });
    expect(withAffected(reports(), result.affected)).toEqual(reports());
  });
});
