import { computePolicies } from '../../src/policies';
import { parsePolicyDocs } from '../../src/resources/policies';
import { gateway, route } from './helpers';

const API = 'gateway.portcullis.dev/v1alpha1';
const ref = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' };

describe('parsePolicyDocs', () => {
  const parsed = parsePolicyDocs([
    { source: 'a.yaml', doc: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r' } } },
    { source: 'a.yaml', doc: { apiVersion: API, kind: 'ClientSettingsPolicy', metadata: { name: 'ok', generation: 2 }, spec: { targetRef: ref, body: { maxSize: '1k' } } } },
    { source: 'b.yaml', doc: { apiVersion: API, kind: 'ClientSettingsPolicy', metadata: { name: 'ok' }, spec: { targetRef: ref } } },
    { source: 'b.yaml', doc: { kind: 'List', items: [{ apiVersion: API, kind: 'RateLimitPolicy', metadata: { name: 'bad', namespace: 'default', generation: 3 }, spec: { targetRefs: [ref], rateLimit: { rejectCode: 200 } } }] } },
    { source: 'c.yaml', doc: { apiVersion: API, kind: 'TimeoutPolicy', metadata: { name: 'x' } } },
    { source: 'c.yaml', doc: null },
  ]);

  it('keeps valid policies typed, invalid ones with their document, and reports duplicates and unknown kinds', () => {
    expect(parsed.policies.map((p) => `${p.kind}/${p.metadata.name}/${p.metadata.generation}`)).toEqual(['ClientSettingsPolicy/ok/2']);
    expect(parsed.invalid).toEqual([
      expect.objectContaining({ kind: 'RateLimitPolicy', namespace: 'default', name: 'bad', generation: 3, message: 'spec.rateLimit.rejectCode: Too small: expected number to be >=400' }),
    ]);
    expect(parsed.errors.map((e) => e.message)).toEqual([
      'ClientSettingsPolicy default/ok is already defined in a.yaml; this copy is ignored',
      expect.stringContaining('has no kind TimeoutPolicy'),
    ]);
  });

  it('feeds computePolicies: the invalid policy reports its error on its target', () => {
    const result = computePolicies({ policies: parsed.policies, invalid: parsed.invalid, targets: [gateway(), route()] });
    const bad = result.statuses.find((s) => s.name === 'bad')!;
    expect(bad.status).toEqual({
      ancestors: [
        expect.objectContaining({
          ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default', name: 'r' },
          conditions: [expect.objectContaining({ status: 'False', reason: 'Invalid', message: 'The policy is invalid: spec.rateLimit.rejectCode: Too small: expected number to be >=400', observedGeneration: 3 })],
        }),
      ],
    });
  });
});
