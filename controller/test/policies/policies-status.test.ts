import { computePolicies, targetsFromGraph } from '../../src/policies';
import type { Graph } from '../../src/graph/types';
import { client, gateway, gwRef, proxy, rateLimit, route, routeRef, rules } from './helpers';

describe('policy status.ancestors', () => {
  it('one ancestor per target with ancestorRef, controllerName, Accepted and observedGeneration', () => {
    const p = rateLimit('rl', [routeRef('a'), routeRef('missing'), routeRef('g', 'GRPCRoute')], rules({}), { generation: 4 });
    const result = computePolicies({ policies: [p], targets: [gateway(), route('a'), route('g', ['gw'], 1, 'GRPCRoute')] });
    expect(result.statuses).toEqual([
      {
        apiVersion: 'gateway.portcullis.dev/v1alpha1',
        kind: 'RateLimitPolicy',
        namespace: 'default',
        name: 'rl',
        generation: 4,
        status: {
          ancestors: [
            {
              ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default', name: 'a' },
              controllerName: 'gateway.portcullis.dev/controller',
              conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'The policy is accepted', observedGeneration: 4 }],
            },
            {
              ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default', name: 'missing' },
              controllerName: 'gateway.portcullis.dev/controller',
              conditions: [
                {
                  type: 'Accepted',
                  status: 'False',
                  reason: 'TargetNotFound',
                  message: 'HTTPRoute default/missing does not exist or references no Gateway of this controller',
                  observedGeneration: 4,
                },
              ],
            },
            {
              ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: 'default', name: 'g' },
              controllerName: 'gateway.portcullis.dev/controller',
              conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'The policy is accepted', observedGeneration: 4 }],
            },
          ],
        },
      },
    ]);
  });

  it('targets are looked up in the policy namespace only', () => {
    const p = client('c', gwRef(), '1k', { namespace: 'team-a' });
    const result = computePolicies({ policies: [p], targets: [gateway()] });
    const ancestors = result.statuses[0].status.ancestors as { ancestorRef: { namespace: string }; conditions: { reason: string }[] }[];
    expect(ancestors[0].ancestorRef.namespace).toBe('team-a');
    expect(ancestors[0].conditions[0].reason).toBe('TargetNotFound');
    expect(result.effective.gateways).toEqual({});
  });

  it('a policy that failed its schema gets Invalid on every target it names', () => {
    const result = computePolicies({
      policies: [],
      invalid: [
        {
          kind: 'RateLimitPolicy',
          namespace: 'default',
          name: 'bad',
          generation: 2,
          message: 'spec.rateLimit.rejectCode: Too big: expected number to be <=599',
          doc: { spec: { targetRefs: [{ kind: 'HTTPRoute', name: 'r' }, { kind: 'Service', name: 'x' }, 'junk'] } },
        },
      ],
      targets: [gateway(), route()],
    });
    const ancestors = result.statuses[0].status.ancestors as { ancestorRef: { name: string }; conditions: { status: string; reason: string; message: string; observedGeneration: number }[] }[];
    expect(ancestors.map((a) => a.ancestorRef.name)).toEqual(['r']);
    expect(ancestors[0].conditions[0]).toEqual({
      type: 'Accepted',
      status: 'False',
      reason: 'Invalid',
      message: 'The policy is invalid: spec.rateLimit.rejectCode: Too big: expected number to be <=599',
      observedGeneration: 2,
    });
    expect(result.affected).toEqual([]);
  });
});

describe('<Kind>Affected on targets', () => {
  it('True / PolicyAffected per kind with the target generation; only on targets, not on routes under a Gateway', () => {
    const result = computePolicies({
      policies: [rateLimit('rl', [gwRef()], rules({})), proxy('ps', [gwRef()], { disable: true }), client('cs', routeRef(), '1k')],
      targets: [gateway('gw', 7), route('r', ['gw'], 3), route('plain')],
    });
    expect(result.affected).toEqual([
      {
        kind: 'Gateway',
        namespace: 'default',
        name: 'gw',
        conditions: [
          { type: 'ProxySettingsPolicyAffected', status: 'True', reason: 'PolicyAffected', message: 'The ProxySettingsPolicy is applied to the resource', observedGeneration: 7 },
          { type: 'RateLimitPolicyAffected', status: 'True', reason: 'PolicyAffected', message: 'The RateLimitPolicy is applied to the resource', observedGeneration: 7 },
        ],
      },
      {
        kind: 'HTTPRoute',
        namespace: 'default',
        name: 'r',
        conditions: [{ type: 'ClientSettingsPolicyAffected', status: 'True', reason: 'PolicyAffected', message: 'The ClientSettingsPolicy is applied to the resource', observedGeneration: 3 }],
      },
    ]);
  });

  it('disappears when the last policy affecting the target goes', () => {
    const a = client('a', routeRef(), '1k');
    const withPolicy = computePolicies({ policies: [a], targets: [gateway(), route()] });
    expect(withPolicy.affected.map((t) => t.name)).toEqual(['r']);
    expect(computePolicies({ policies: [], targets: [gateway(), route()] }).affected).toEqual([]);
  });
});

describe('targetsFromGraph', () => {
  it('takes our Gateways and the Gateways each route is accepted on', () => {
    const graph = {
      gatewayClasses: [],
      gateways: [{ namespace: 'default', name: 'gw', generation: 2 }],
      rejectedGateways: [{ namespace: 'default', name: 'broken', generation: 1 }],
      routes: [
        {
          namespace: 'default',
          name: 'r',
          generation: 5,
          parents: [
            { accepted: true, gateway: { namespace: 'default', name: 'gw' } },
            { accepted: false, gateway: { namespace: 'default', name: 'gw2' } },
            { accepted: true, gateway: { namespace: 'default', name: 'broken' } },
          ],
        },
      ],
    } as unknown as Graph;
    expect(targetsFromGraph(graph)).toEqual([
      { kind: 'Gateway', namespace: 'default', name: 'gw', generation: 2 },
      { kind: 'Gateway', namespace: 'default', name: 'broken', generation: 1 },
      { kind: 'HTTPRoute', namespace: 'default', name: 'r', generation: 5, gateways: [{ namespace: 'default', name: 'gw' }] },
    ]);
  });
});
