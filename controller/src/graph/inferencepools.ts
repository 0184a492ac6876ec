/**
 * InferencePools (inference.networking.k8s.io/v1) as backends: which pods are candidates, where
 * the pool's endpoint picker is, and the pool's status.parents. Pure: the same code serves the
 * file provider (Pod manifests in the folder) and Kubernetes (Pods from the API server).
 */
import { INFERENCE_API_GROUP, GATEWAY_API_GROUP, type InferencePool, type Pod, type ResourceSet } from '../resources/types';
import type { BackendIndex } from './backends';
import type { BackendRef, HTTPRouteNode, InferencePoolNode, PickerTarget } from './types';

/**
 * A pod is a candidate when it has an IP, is not being deleted, and its Ready condition is True.
 * A Pod without any Ready condition (hand-written for standalone mode) counts as ready unless
 * its phase says it is not running: the API server always lists Ready once a pod is scheduled.
 */
export function podReady(pod: Pod): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  if (!pod.status.podIP) return false;
  const ready = pod.status.conditions?.find((c) => c.type === 'Ready');
  if (ready) return ready.status === 'True';
  return pod.status.phase === undefined || pod.status.phase === 'Running';
}

function hostport(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/** Pools and pods of one resource set, indexed once per graph build. */
export class InferencePoolIndex {
  private readonly pools = new Map<string, InferencePool>();
  private readonly podsByNamespace = new Map<string, Pod[]>();
  private readonly resolved = new Map<string, { endpoints: string[]; picker?: PickerTarget; problem?: string }>();

  constructor(set: ResourceSet, private readonly backends: BackendIndex) {
    for (const p of set.inferencePools ?? []) this.pools.set(`${p.metadata.namespace}/${p.metadata.name}`, p);
    for (const pod of set.pods ?? []) {
      const list = this.podsByNamespace.get(pod.metadata.namespace);
      if (list) list.push(pod);
      else this.podsByNamespace.set(pod.metadata.namespace, [pod]);
    }
  }

  all(): InferencePool[] {
    return [...this.pools.values()];
  }

  pool(namespace: string, name: string): InferencePool | undefined {
    return this.pools.get(`${namespace}/${name}`);
  }

  /** Endpoints and picker of a pool, computed once per build. */
  resolve(pool: InferencePool): { endpoints: string[]; picker?: PickerTarget; problem?: string } {
    const key = `${pool.metadata.namespace}/${pool.metadata.name}`;
    let r = this.resolved.get(key);
    if (!r) this.resolved.set(key, (r = { endpoints: this.endpoints(pool), ...this.picker(pool) }));
    return r;
  }

  /** Ready pods matching the selector in the pool's namespace, each on every targetPort. */
  private endpoints(pool: InferencePool): string[] {
    const out = new Set<string>();
    const selector = Object.entries(pool.spec.selector.matchLabels);
    for (const pod of this.podsByNamespace.get(pool.metadata.namespace) ?? []) {
      if (!selector.every(([k, v]) => pod.metadata.labels[k] === v) || !podReady(pod)) continue;
      for (const p of pool.spec.targetPorts) out.add(hostport(pod.status.podIP!, p.number));
    }
    return [...out].sort();
  }

  private picker(pool: InferencePool): { picker?: PickerTarget; problem?: string } {
    const ref = pool.spec.endpointPickerRef;
    if (!ref) return { picker: { kind: 'builtin' } };
    const ns = pool.metadata.namespace;
    if (ref.group !== '' || ref.kind !== 'Service') {
      return { problem: `spec.endpointPickerRef: kind ${ref.group ? `${ref.group}/` : ''}${ref.kind} is not supported; the endpoint picker must be a core Service` };
    }
    const service = this.backends.service(ns, ref.name);
    if (!service) return { problem: `spec.endpointPickerRef: Service ${ns}/${ref.name} not found` };
    if (service.spec.type === 'ExternalName') return { problem: `spec.endpointPickerRef: Service ${ns}/${ref.name} is of type ExternalName, which is not supported` };
    const port = service.spec.ports.find((p) => p.port === ref.port!.number);
    if (!port) return { problem: `spec.endpointPickerRef: Service ${ns}/${ref.name} has no port ${ref.port!.number}` };
    const ready = this.backends.endpoints(service, port).map((e) => hostport(e.address, e.port));
    // No EndpointSlices at all (a Service written by hand without them): its cluster IP.
    const clusterIP = service.spec.clusterIP;
    const addresses = ready.length > 0 || !clusterIP || clusterIP === 'None' || this.backends.hasSlices(service) ? ready : [hostport(clusterIP, port.port)];
    return { picker: { kind: 'service', service: `${ns}/${ref.name}:${port.port}`, addresses } };
  }
}

function failed(base: BackendRef, path: string, reason: string, message: string): BackendRef {
  return { ...base, invalidReason: reason, invalidMessage: `${path}: ${message}` };
}

/** Resolve a backendRef of kind InferencePool (the backendRef's port is ignored, as the API says). */
export function resolveInferencePool(base: BackendRef, routeNamespace: string, backends: BackendIndex, path: string): BackendRef {
  const index = backends.inference;
  if (!index) {
    return failed(base, path, 'InvalidKind', `kind ${INFERENCE_API_GROUP}/InferencePool needs the inference extension (controller flag --gateway-api-inference-extension)`);
  }
  if (base.namespace !== routeNamespace && !backends.granted(routeNamespace, base.namespace, INFERENCE_API_GROUP, 'InferencePool', base.name)) {
    return failed(base, path, 'RefNotPermitted', `InferencePool ${base.namespace}/${base.name} is in another namespace and no ReferenceGrant there allows HTTPRoutes from ${routeNamespace}`);
  }
  const pool = index.pool(base.namespace, base.name);
  if (!pool) return failed(base, path, 'BackendNotFound', `InferencePool ${base.namespace}/${base.name} not found`);
  const r = index.resolve(pool);
  if (!r.picker) return failed(base, path, 'InvalidInferencePool', `InferencePool ${base.namespace}/${base.name} is invalid: ${r.problem}`);
  return {
    ...base,
    valid: true,
    endpoints: [],
    inference: {
      pool: `${base.namespace}/${base.name}`,
      picker: r.picker,
      failureMode: pool.spec.endpointPickerRef?.failureMode ?? 'FailClose',
      endpoints: r.endpoints,
      appProtocol: pool.spec.appProtocol,
    },
  };
}

export function isInferencePoolRef(group: string, kind: string): boolean {
  return group === INFERENCE_API_GROUP && kind === 'InferencePool';
}

/**
 * Every pool with its parents: the Gateways of ours that a route referencing the pool names
 * (accepted there or not), as the inference extension's status.parents expects.
 */
export function buildInferencePools(backends: BackendIndex, routes: HTTPRouteNode[]): InferencePoolNode[] {
  const index = backends.inference;
  if (!index) return [];
  const parents = new Map<string, Map<string, { gateway: { namespace: string; name: string }; routeAccepted: boolean }>>();
  for (const route of routes) {
    const pools = new Set<string>();
    for (const rule of route.rules) {
      for (const b of rule.backends) if (isInferencePoolRef(b.group, b.kind)) pools.add(`${b.namespace}/${b.name}`);
    }
    if (pools.size === 0) continue;
    for (const p of route.parents) {
      if (!p.gateway) continue;
      const gwKey = `${p.gateway.namespace}/${p.gateway.name}`;
      for (const pool of pools) {
        let byGateway = parents.get(pool);
        if (!byGateway) parents.set(pool, (byGateway = new Map()));
        const prev = byGateway.get(gwKey);
        byGateway.set(gwKey, { gateway: p.gateway, routeAccepted: (prev?.routeAccepted ?? false) || p.accepted });
      }
    }
  }
  return index.all().map((pool) => {
    const key = `${pool.metadata.namespace}/${pool.metadata.name}`;
    const r = index.resolve(pool);
    const list = [...(parents.get(key)?.values() ?? [])].sort((a, b) =>
      a.gateway.namespace === b.gateway.namespace ? (a.gateway.name < b.gateway.name ? -1 : 1) : a.gateway.namespace < b.gateway.namespace ? -1 : 1,
    );
    return {
      namespace: pool.metadata.namespace,
      name: pool.metadata.name,
      generation: pool.metadata.generation,
      ...(r.picker ? { picker: r.picker } : {}),
      ...(r.problem ? { pickerProblem: r.problem } : {}),
      failureMode: pool.spec.endpointPickerRef?.failureMode ?? 'FailClose',
      endpoints: r.endpoints,
      parents: list,
    };
  });
}

export const INFERENCE_POOL_API_VERSION = `${INFERENCE_API_GROUP}/v1`;
export { GATEWAY_API_GROUP };
