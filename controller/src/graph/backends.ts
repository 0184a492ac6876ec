import { GATEWAY_API_GROUP, SERVICE_NAME_LABEL, type EndpointSlice, type HTTPBackendRef, type ReferenceGrant, type ResourceSet, type Service, type ServicePort } from '../resources/types';
import type { BackendEndpoint, BackendRef } from './types';
import { InferencePoolIndex, isInferencePoolRef, resolveInferencePool } from './inferencepools';
import { BackendTLSIndex } from './backendtls';
import { CAIndex } from './ca-certificates';

/** The backend resources of the last index built, and that index's version. */
let lastWorld:
  | { services: Service[]; slices: EndpointSlice[]; grants: ReferenceGrant[]; pools: unknown[]; pods: unknown[]; tls: unknown[]; inference: boolean; version: number }
  | undefined;

/**
 * What BackendTLSPolicies resolve from: the policies and the ConfigMaps and Secrets their CA refs
 * name. Other ConfigMaps and Secrets do not matter to a backend: their churn keeps the rules.
 */
function tlsWorld(set: ResourceSet): unknown[] {
  const policies = set.backendTLSPolicies ?? [];
  if (policies.length === 0) return [];
  const named = new Set<string>();
  for (const p of policies) for (const r of p.spec.validation.caCertificateRefs) named.add(`${r.kind}/${p.metadata.namespace}/${r.name}`);
  const out: unknown[] = [...policies];
  for (const c of set.configMaps ?? []) if (named.has(`ConfigMap/${c.metadata.namespace}/${c.metadata.name}`)) out.push(c);
  for (const s of set.secrets ?? []) if (named.has(`Secret/${s.metadata.namespace}/${s.metadata.name}`)) out.push(s);
  return out;
}

function sameObjects<T>(a: T[], b: T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Services and their EndpointSlices, indexed once per graph build. */
export class BackendIndex {
  private services = new Map<string, Service>();
  private slices = new Map<string, EndpointSlice[]>();
  private grants: ReferenceGrant[];
  private grantsByNamespace?: Map<string, ReferenceGrant[]>;
  private resolved = new Map<string, BackendEndpoint[]>();
  /**
   * Same number, same answers: the index was built from the very same Service, EndpointSlice and
   * ReferenceGrant objects (parsed resources are reused while their documents are unchanged),
   * so what it resolved for an earlier graph still holds (see rules.ts).
   */
  readonly version: number;
  /** Set when the inference extension is enabled: InferencePools and their Pods. */
  readonly inference?: InferencePoolIndex;
  /** BackendTLSPolicies by the Service ports they target. */
  readonly tls: BackendTLSIndex;

  constructor(set: ResourceSet, options: { inferenceExtension?: boolean } = {}) {
    const pools = set.inferencePools ?? [];
    const pods = set.pods ?? [];
    const inference = options.inferenceExtension === true;
    const tls = tlsWorld(set);
    if (
      lastWorld &&
      sameObjects(lastWorld.services, set.services) &&
      sameObjects(lastWorld.slices, set.endpointSlices) &&
      sameObjects(lastWorld.grants, set.referenceGrants) &&
      sameObjects(lastWorld.tls, tls) &&
      lastWorld.inference === inference &&
      (!inference || (sameObjects(lastWorld.pools, pools) && sameObjects(lastWorld.pods, pods)))
    ) {
      this.version = lastWorld.version;
    } else {
      this.version = (lastWorld?.version ?? 0) + 1;
      lastWorld = { services: [...set.services], slices: [...set.endpointSlices], grants: [...set.referenceGrants], pools: [...pools], pods: [...pods], tls, inference, version: this.version };
    }
    this.tls = new BackendTLSIndex(set, new CAIndex(set));
    if (inference) this.inference = new InferencePoolIndex(set, this);
    this.grants = set.referenceGrants;
    for (const s of set.services) this.services.set(`${s.metadata.namespace}/${s.metadata.name}`, s);
    for (const slice of set.endpointSlices) {
      const service = slice.metadata.labels[SERVICE_NAME_LABEL];
      if (!service) continue;
      const key = `${slice.metadata.namespace}/${service}`;
      const list = this.slices.get(key) ?? [];
      list.push(slice);
      this.slices.set(key, list);
    }
  }

  /** Does a ReferenceGrant in `namespace` let routes of `fromKind` in `fromNamespace` refer to Service `name`? */
  serviceGranted(fromNamespace: string, namespace: string, name: string, fromKind = 'HTTPRoute'): boolean {
    return this.granted(fromNamespace, namespace, '', 'Service', name, fromKind);
  }

  /** Does a ReferenceGrant in `namespace` let routes of `fromKind` in `fromNamespace` refer to `group`/`kind` `name`? */
  granted(fromNamespace: string, namespace: string, group: string, kind: string, name: string, fromKind = 'HTTPRoute'): boolean {
    if (!this.grantsByNamespace) {
      // Indexed on first use: each cross-namespace backendRef looks at its namespace's grants only.
      this.grantsByNamespace = new Map();
      for (const g of this.grants) {
        const list = this.grantsByNamespace.get(g.metadata.namespace);
        if (list) list.push(g);
        else this.grantsByNamespace.set(g.metadata.namespace, [g]);
      }
    }
    return (this.grantsByNamespace.get(namespace) ?? []).some(
      (g) =>
        g.spec.from.some((f) => f.group === GATEWAY_API_GROUP && f.kind === fromKind && f.namespace === fromNamespace) &&
        g.spec.to.some((t) => t.group === group && t.kind === kind && (t.name === undefined || t.name === name)),
    );
  }

  service(namespace: string, name: string): Service | undefined {
    return this.services.get(`${namespace}/${name}`);
  }

  /** Whether any EndpointSlice names this Service (none: a hand-written Service without slices). */
  hasSlices(service: Service): boolean {
    return this.slices.has(`${service.metadata.namespace}/${service.metadata.name}`);
  }

  /**
   * Ready endpoints of one Service port. The slice port is found by the Service port's name
   * (that is how EndpointSlices name ports); a slice that lists no ports falls back to a
   * numeric targetPort (or the port itself), which hand-written standalone slices often omit.
   * Endpoints whose `ready` is unset count as ready, as the EndpointSlice API says.
   */
  endpoints(service: Service, port: ServicePort): BackendEndpoint[] {
    // Many routes share a few Services: resolve each Service port once per build (the array is shared, read-only).
    const key = `${service.metadata.namespace}/${service.metadata.name}:${port.port}`;
    let cached = this.resolved.get(key);
    if (!cached) this.resolved.set(key, (cached = this.resolve(service, port)));
    return cached;
  }

  private resolve(service: Service, port: ServicePort): BackendEndpoint[] {
    const slices = this.slices.get(`${service.metadata.namespace}/${service.metadata.name}`) ?? [];
    const seen = new Set<string>();
    const out: BackendEndpoint[] = [];
    for (const slice of slices) {
      if (slice.addressType === 'FQDN') continue;
      let number: number | undefined;
      if (slice.ports.length === 0) number = typeof port.targetPort === 'number' ? port.targetPort : port.targetPort === undefined ? port.port : undefined;
      else number = slice.ports.find((p) => p.name === (port.name ?? '') && p.protocol === port.protocol)?.port;
      if (number === undefined) continue;
      for (const ep of slice.endpoints) {
        if (ep.conditions.ready === false) continue;
        for (const address of ep.addresses) {
          const key = `${address}:${number}`;
          if (seen.has(key)) continue;
          seen.add(key);
          out.push({ address, port: number });
        }
      }
    }
    return out.sort((a, b) => (a.address === b.address ? a.port - b.port : a.address < b.address ? -1 : 1));
  }
}

// Not a closure in resolveBackend: tsx (esbuild keepNames) names each closure it creates, a
// defineProperty per backendRef.
function failedBackend(base: BackendRef, path: string, invalidReason: string, message: string): BackendRef {
  return { ...base, invalidReason, invalidMessage: `${path}: ${message}` };
}

/**
 * appProtocols a route kind can speak to (Service port appProtocol, KEP-3726): nginx proxies
 * HTTPRoutes over HTTP/1.1 (WebSocket included), or over h2c (grpc_pass) to a kubernetes.io/h2c
 * port, and GRPCRoutes over h2c; anything else is reported.
 */
const APP_PROTOCOLS: Record<string, string[]> = {
  HTTPRoute: ['http', 'kubernetes.io/ws', 'kubernetes.io/h2c'],
  GRPCRoute: ['kubernetes.io/h2c', 'grpc', 'h2c'],
};

/** appProtocols of a port spoken to over TLS: usable when a BackendTLSPolicy says how. */
const TLS_APP_PROTOCOLS = new Set(['https', 'kubernetes.io/https']);

/** Resolve one backendRef of a route (of kind `routeKind`) in `routeNamespace`. */
export function resolveBackend(ref: Omit<HTTPBackendRef, 'filters'>, routeNamespace: string, index: BackendIndex, path: string, routeKind = 'HTTPRoute'): BackendRef {
  const namespace = ref.namespace ?? routeNamespace;
  const base: BackendRef = { namespace, name: ref.name, group: ref.group, kind: ref.kind, port: ref.port, weight: ref.weight, valid: false, endpoints: [] };

  if (isInferencePoolRef(ref.group, ref.kind)) return resolveInferencePool(base, routeNamespace, index, path);
  if (ref.group !== '' || ref.kind !== 'Service') {
    return failedBackend(base, path, 'InvalidKind', `kind ${ref.group ? `${ref.group}/` : ''}${ref.kind} is not supported; only core Service backends are`);
  }
  if (namespace !== routeNamespace && !index.serviceGranted(routeNamespace, namespace, ref.name, routeKind)) {
    return failedBackend(base, path, 'RefNotPermitted', `Service ${namespace}/${ref.name} is in another namespace and no ReferenceGrant there allows ${routeKind}s from ${routeNamespace}`);
  }
  const service = index.service(namespace, ref.name);
  if (!service) return failedBackend(base, path, 'BackendNotFound', `Service ${namespace}/${ref.name} not found`);
  if (service.spec.type === 'ExternalName') return failedBackend(base, path, 'UnsupportedValue', `Service ${namespace}/${ref.name} is of type ExternalName, which is not supported`);
  if (ref.port === undefined) return failedBackend(base, path, 'UnsupportedValue', 'port is required for a Service backend');
  const port = service.spec.ports.find((p) => p.port === ref.port);
  if (!port) return failedBackend(base, path, 'BackendNotFound', `Service ${namespace}/${ref.name} has no port ${ref.port}`);
  // Routes of whole connections (TLSRoute, TCPRoute, UDPRoute) pass bytes through, whatever the port speaks.
  const tls = APP_PROTOCOLS[routeKind] && index.tls.size > 0 ? index.tls.forPort(service, port) : undefined;
  const tlsPolicies = APP_PROTOCOLS[routeKind] && index.tls.size > 0 ? index.tls.policiesOf(service, port) : undefined;
  if (port.appProtocol !== undefined && APP_PROTOCOLS[routeKind] && !APP_PROTOCOLS[routeKind].includes(port.appProtocol) && !(tls && TLS_APP_PROTOCOLS.has(port.appProtocol.toLowerCase()))) {
    return failedBackend(
      base,
      path,
      'UnsupportedProtocol',
      `Service ${namespace}/${ref.name} port ${ref.port} has appProtocol ${port.appProtocol}, which a ${routeKind} cannot use (supported: ${(APP_PROTOCOLS[routeKind] ?? []).join(', ')}; https with a BackendTLSPolicy)`,
    );
  }
  return { ...base, valid: true, endpoints: index.endpoints(service, port), ...(routeKind === 'HTTPRoute' && port.appProtocol === 'kubernetes.io/h2c' ? { h2c: true } : {}), ...(tls ? { tls } : {}), ...(tlsPolicies?.length ? { tlsPolicies } : {}) };
}
