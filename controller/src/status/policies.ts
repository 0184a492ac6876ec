import { GATEWAY_API_GROUP } from '../resources/types';
import { POLICY_API_VERSION, type PolicyKind, type TargetKind } from '../resources/policies';

export { looseTargetRefs } from '../resources/policies';
import type { PolicyAncestorStatus, PolicyReason, StatusCondition, StatusReport, TargetAffected } from '../conditions/types';

export interface AncestorOutcome {
  kind: TargetKind;
  namespace: string;
  name: string;
  reason: PolicyReason;
  message: string;
}

export function acceptedCondition(reason: PolicyReason, message: string, generation: number): StatusCondition {
  return { type: 'Accepted', status: reason === 'Accepted' ? 'True' : 'False', reason, message, observedGeneration: generation };
}

/** status.ancestors: one entry per target, in targetRefs order. */
export function policyStatus(
  policy: { kind: PolicyKind; namespace: string; name: string; generation: number },
  outcomes: AncestorOutcome[],
  controllerName: string,
): StatusReport {
  const ancestors: PolicyAncestorStatus[] = outcomes.map((o) => ({
    ancestorRef: { group: GATEWAY_API_GROUP, kind: o.kind, namespace: o.namespace, name: o.name },
    controllerName,
    conditions: [acceptedCondition(o.reason, o.message, policy.generation)],
  }));
  return {
    apiVersion: POLICY_API_VERSION,
    kind: policy.kind,
    namespace: policy.namespace,
    name: policy.name,
    generation: policy.generation,
    status: { ancestors },
  };
}

/** `<Kind>Affected` True / PolicyAffected, as NGINX Gateway Fabric words it. */
export function affectedCondition(kind: PolicyKind, targetGeneration: number): StatusCondition {
  return {
    type: `${kind}Affected`,
    status: 'True',
    reason: 'PolicyAffected',
    message: `The ${kind} is applied to the resource`,
    observedGeneration: targetGeneration,
  };
}

/**
 * The target statuses with their `<Kind>Affected` conditions added: a Gateway's in
 * status.conditions, a route's in each status.parents[].conditions. Targets no policy affects are
 * returned as they are, so the condition disappears once the last policy goes. Pure: reports
 * that change are copied.
 */
export function withAffected(reports: StatusReport[], affected: TargetAffected[]): StatusReport[] {
  if (affected.length === 0) return reports;
  const byKey = new Map(affected.map((a) => [`${a.kind}/${a.namespace}/${a.name}`, a.conditions]));
  return reports.map((r) => {
    const extra = byKey.get(`${r.kind}/${r.namespace ?? 'default'}/${r.name}`);
    if (!extra) return r;
    const status = r.status as { conditions?: StatusCondition[]; parents?: { conditions?: StatusCondition[] }[] };
    const add = (conditions: StatusCondition[] | undefined) => [...(conditions ?? []).filter((c) => !extra.some((e) => e.type === c.type)), ...extra];
    if (r.kind === 'Gateway') return { ...r, status: { ...status, conditions: add(status.conditions) } };
    if (!Array.isArray(status.parents)) return r;
    return { ...r, status: { ...status, parents: status.parents.map((p) => ({ ...p, conditions: add(p.conditions) })) } };
  });
}
