import type { Graph } from '../graph/types';
import { policyTargetRefs, type Policy, type TargetKind } from '../resources/policies';
import { targetKey } from './keys';
import type { PolicyTarget } from './types';

/** One targetRef of one policy, resolved against the targets that exist. */
export interface Attachment {
  policy: Policy;
  /** Position in targetRefs (0 for ClientSettingsPolicy's single targetRef). */
  refIndex: number;
  kind: TargetKind;
  namespace: string;
  name: string;
  key: string;
  /** Undefined: TargetNotFound. */
  target?: PolicyTarget;
}

/** Per policy (in input order), per targetRef (in spec order). */
export function resolveTargets(policies: Policy[], targets: PolicyTarget[]): Attachment[][] {
  const byKey = new Map<string, PolicyTarget>();
  for (const t of targets) byKey.set(targetKey(t.kind, t.namespace, t.name), t);
  return policies.map((policy) =>
    policyTargetRefs(policy).map((ref, refIndex) => {
      const namespace = policy.metadata.namespace;
      const key = targetKey(ref.kind, namespace, ref.name);
      return { policy, refIndex, kind: ref.kind, namespace, name: ref.name, key, target: byKey.get(key) };
    }),
  );
}

/**
 * The targets policies may attach to, from the graph: our Gateways (accepted or not) and every
 * route that references one of them, with the Gateways it is accepted on.
 */
export function targetsFromGraph(graph: Graph): PolicyTarget[] {
  const targets: PolicyTarget[] = [];
  for (const gw of [...graph.gateways, ...graph.rejectedGateways]) {
    targets.push({ kind: 'Gateway', namespace: gw.namespace, name: gw.name, generation: gw.generation });
  }
  const rendered = new Set(graph.gateways.map((gw) => `${gw.namespace}/${gw.name}`));
  for (const route of graph.routes) {
    const gateways = new Map<string, { namespace: string; name: string }>();
    for (const parent of route.parents) {
      if (!parent.accepted || !parent.gateway) continue;
      const key = `${parent.gateway.namespace}/${parent.gateway.name}`;
      if (rendered.has(key)) gateways.set(key, parent.gateway);
    }
    targets.push({ kind: route.kind ?? 'HTTPRoute', namespace: route.namespace, name: route.name, generation: route.generation, gateways: [...gateways.values()] });
  }
  return targets;
}
