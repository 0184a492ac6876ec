import { parsePolicy, type Policy } from '../../src/resources/policies';
import type { PolicyTarget } from '../../src/policies';

const GW = 'gateway.networking.k8s.io';
export const gwRef = (name = 'gw') => ({ group: GW, kind: 'Gateway', name });
export const routeRef = (name = 'r', kind = 'HTTPRoute') => ({ group: GW, kind, name });

let clock = Date.parse('2026-01-01T00:00:00Z');

/** A parsed policy; each call is one second younger than the previous unless `created` is given. */
export function policy(kind: Policy['kind'], name: string, spec: Record<string, unknown>, opts: { created?: string; generation?: number; namespace?: string } = {}): Policy {
  clock += 1000;
  const doc = {
    apiVersion: 'gateway.portcullis.dev/v1alpha1',
    kind,
    metadata: { name, namespace: opts.namespace ?? 'default', generation: opts.generation ?? 1, creationTimestamp: opts.created ?? new Date(clock).toISOString() },
    spec,
  };
  const r = parsePolicy(doc);
  if (!r.ok) throw new Error(`test policy ${name} is invalid: ${r.message}`);
  return r.policy;
}

export const rateLimit = (name: string, targets: object[], rateLimit: Record<string, unknown>, opts?: Parameters<typeof policy>[3]) =>
  policy('RateLimitPolicy', name, { targetRefs: targets, rateLimit }, opts);
export const proxy = (name: string, targets: object[], buffering: Record<string, unknown>, opts?: Parameters<typeof policy>[3]) =>
  policy('ProxySettingsPolicy', name, { targetRefs: targets, buffering }, opts);
export const client = (name: string, target: object, maxSize: string, opts?: Parameters<typeof policy>[3]) =>
  policy('ClientSettingsPolicy', name, { targetRef: target, body: { maxSize } }, opts);
export const rules = (...r: Record<string, unknown>[]) => ({ local: { rules: r.map((x) => ({ key: '$binary_remote_addr', rate: '10r/s', ...x })) } });

export const gateway = (name = 'gw', generation = 1): PolicyTarget => ({ kind: 'Gateway', namespace: 'default', name, generation });
export const route = (name = 'r', gateways = ['gw'], generation = 1, kind: 'HTTPRoute' | 'GRPCRoute' = 'HTTPRoute'): PolicyTarget => ({
  kind,
  namespace: 'default',
  name,
  generation,
  gateways: gateways.map((g) => ({ namespace: 'default', name: g })),
});

interface Ancestor {
  ancestorRef: { kind: string; name: string; namespace: string; group: string };
  controllerName: string;
  conditions: { type: string; status: string; reason: string; message: string; observedGeneration: number }[];
}

/** The Accepted condition of one policy's ancestor. */
export function accepted(statuses: { name: string; kind: string; status: Record<string, unknown> }[], policyName: string, targetName: string) {
  const s = statuses.find((x) => x.name === policyName);
  if (!s) throw new Error(`no status for ${policyName}`);
  const ancestors = s.status.ancestors as Ancestor[];
  const a = ancestors.find((x) => x.ancestorRef.name === targetName);
  if (!a) throw new Error(`no ancestor ${targetName} for ${policyName}`);
  return a.conditions.find((c) => c.type === 'Accepted')!;
}
