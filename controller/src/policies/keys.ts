import type { Policy, RouteTargetKind, TargetKind } from '../resources/policies';

/** `Gateway/default/gw`, `HTTPRoute/default/r`: one key per target across kinds. */
export function targetKey(kind: TargetKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** Key of a route in EffectivePolicies.routes. */
export function routeKey(kind: RouteTargetKind, namespace: string, name: string): string {
  return targetKey(kind, namespace, name);
}

/** Key of a Gateway in EffectivePolicies.gateways and .routes[...]. */
export function gatewayKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function policyKey(policy: Pick<Policy, 'kind' | 'metadata'>): string {
  return `${policy.kind}/${policy.metadata.namespace}/${policy.metadata.name}`;
}

/** `RateLimitPolicy default/slow` for messages. */
export function policyName(policy: Pick<Policy, 'kind' | 'metadata'>): string {
  return `${policy.kind} ${policy.metadata.namespace}/${policy.metadata.name}`;
}

/** The spec's zone identifier: `<namespace>_rl_<policy_name>_rule<rule_index>` (index from 0). */
export function zoneId(namespace: string, policy: string, ruleIndex: number): string {
  return `${namespace}_rl_${policy}_rule${ruleIndex}`;
}

/** Oldest first, then namespace, then name: who wins among policies on one target. */
export function comparePolicies(a: Pick<Policy, 'metadata'>, b: Pick<Policy, 'metadata'>): number {
  const ta = a.metadata.creationTimestamp;
  const tb = b.metadata.creationTimestamp;
  const byTime = Date.parse(ta) - Date.parse(tb);
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  if (a.metadata.namespace !== b.metadata.namespace) return a.metadata.namespace < b.metadata.namespace ? -1 : 1;
  if (a.metadata.name !== b.metadata.name) return a.metadata.name < b.metadata.name ? -1 : 1;
  return 0;
}
