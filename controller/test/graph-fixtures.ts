/** Manifest builders for graph tests: documents go through parseManifests like real input. */
import { parseManifests, type ParsedResources } from '../src/resources';
import { DEFAULT_CONTROLLER_NAME } from '../src/graph';

export const GW_API = 'gateway.networking.k8s.io/v1';

export const gatewayClass = (name = 'portcullis', controllerName = DEFAULT_CONTROLLER_NAME) => ({
  apiVersion: GW_API,
  kind: 'GatewayClass',
  metadata: { name },
  spec: { controllerName },
});

export const gateway = (name: string, listeners: object[], extra: { namespace?: string; className?: string; generation?: number; addresses?: object[] } = {}) => ({
  apiVersion: GW_API,
  kind: 'Gateway',
  metadata: { name, namespace: extra.namespace ?? 'default', generation: extra.generation ?? 1 },
  spec: { gatewayClassName: extra.className ?? 'portcullis', listeners, ...(extra.addresses ? { addresses: extra.addresses } : {}) },
});

export const http = (name: string, port = 80, extra: object = {}) => ({ name, port, protocol: 'HTTP', ...extra });

export const route = (name: string, spec: object, extra: { namespace?: string; generation?: number; creationTimestamp?: string } = {}) => ({
  apiVersion: GW_API,
  kind: 'HTTPRoute',
  metadata: { name, namespace: extra.namespace ?? 'default', generation: extra.generation ?? 1, creationTimestamp: extra.creationTimestamp ?? '2026-01-01T00:00:00Z' },
  spec,
});

export const service = (name: string, ports: object[], namespace = 'default', extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace },
  spec: { ports, ...extra },
});

export const slice = (name: string, serviceName: string, endpoints: object[], ports: object[], namespace = 'default') => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace, labels: { 'kubernetes.io/service-name': serviceName } },
  addressType: 'IPv4',
  endpoints,
  ports,
});

export function parse(...docs: object[]): ParsedResources {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `doc-${i}.yaml`, doc })));
  if (parsed.invalid.length > 0 || parsed.errors.length > 0) {
    throw new Error(`fixture did not parse: ${JSON.stringify([...parsed.invalid, ...parsed.errors])}`);
  }
  return parsed;
}
