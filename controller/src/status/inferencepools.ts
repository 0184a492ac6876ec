/**
 * InferencePool status.parents: one entry per Gateway of ours that a route referencing the pool
 * names, with the v1 API's Accepted and ResolvedRefs conditions. A pool no route of ours uses
 * reports no parents (the inference conformance suite expects the entry to go when the route does).
 */
import { GATEWAY_API_GROUP, INFERENCE_API_GROUP } from '../resources/types';
import type { Graph, GraphCondition, InferencePoolNode, StatusReport } from '../graph/types';

const cond = (type: string, status: 'True' | 'False', reason: string, message: string): GraphCondition => ({ type, status, reason, message });

export const inferencePoolConditions = {
  accepted: () => cond('Accepted', 'True', 'Accepted', 'The InferencePool is accepted by the Gateway'),
  routeNotAccepted: () => cond('Accepted', 'False', 'HTTPRouteNotAccepted', 'No HTTPRoute referencing the InferencePool is accepted by the Gateway'),
  resolvedRefs: (builtin: boolean) =>
    cond('ResolvedRefs', 'True', 'ResolvedRefs', builtin ? 'No endpointPickerRef: the gateway picks endpoints itself (built-in picker)' : 'The endpoint picker reference is resolved'),
  invalidExtensionRef: (msg: string) => cond('ResolvedRefs', 'False', 'InvalidExtensionRef', msg),
};

function poolParents(pool: InferencePoolNode, controllerName: string) {
  return pool.parents.map((p) => ({
    parentRef: { group: GATEWAY_API_GROUP, kind: 'Gateway', namespace: p.gateway.namespace, name: p.gateway.name },
    controllerName,
    conditions: [
      p.routeAccepted ? inferencePoolConditions.accepted() : inferencePoolConditions.routeNotAccepted(),
      pool.picker ? inferencePoolConditions.resolvedRefs(pool.picker.kind === 'builtin') : inferencePoolConditions.invalidExtensionRef(pool.pickerProblem ?? 'invalid endpointPickerRef'),
    ].map((c) => ({ ...c, observedGeneration: pool.generation })),
  }));
}

/** Statuses of every InferencePool in the graph (none when the extension is disabled). */
export function inferencePoolStatuses(graph: Graph, controllerName: string): StatusReport[] {
  return (graph.inferencePools ?? []).map((pool) => ({
    apiVersion: `${INFERENCE_API_GROUP}/v1`,
    kind: 'InferencePool',
    namespace: pool.namespace,
    name: pool.name,
    generation: pool.generation,
    status: { parents: poolParents(pool, controllerName) },
  }));
}
