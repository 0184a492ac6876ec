import * as path from 'path';
import { promises as fs } from 'fs';
import { stringify } from 'yaml';

/**
 * Builders for the manifests e2e tests write: plain objects in the Gateway API's own shape,
 * so a test reads like the YAML a user would write.
 */

export const GATEWAY_API = 'gateway.networking.k8s.io/v1';
export const CONTROLLER_NAME = 'gateway.portcullis.dev/controller';

export type Manifest = Record<string, any>;

export function gatewayClass(name = 'portcullis', controllerName = CONTROLLER_NAME): Manifest {
  return { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name }, spec: { controllerName } };
}

export interface ListenerSpec {
  name: string;
  port: number;
  protocol?: string;
  hostname?: string;
  allowedRoutes?: unknown;
  tls?: unknown;
}

export function gateway(name: string, listeners: ListenerSpec[], className = 'portcullis', namespace?: string): Manifest {
  return {
    apiVersion: GATEWAY_API,
    kind: 'Gateway',
    metadata: { name, ...(namespace ? { namespace } : {}) },
    spec: {
      gatewayClassName: className,
      listeners: listeners.map((l) => ({ protocol: 'HTTP', ...l })),
    },
  };
}

export interface RouteSpec {
  parentRefs?: Manifest[];
  hostnames?: string[];
  rules: Manifest[];
  namespace?: string;
  creationTimestamp?: string;
}

export function httpRoute(name: string, spec: RouteSpec, gatewayName = 'gw'): Manifest {
  return {
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: {
      name,
      ...(spec.namespace ? { namespace: spec.namespace } : {}),
      ...(spec.creationTimestamp ? { creationTimestamp: spec.creationTimestamp } : {}),
    },
    spec: {
      parentRefs: spec.parentRefs ?? [{ name: gatewayName }],
      ...(spec.hostnames ? { hostnames: spec.hostnames } : {}),
      rules: spec.rules,
    },
  };
}

/** A rule sending to one backend Service (named like the echo backend) on port 80. */
export function rule(backend: string | { name: string; weight?: number; port?: number; kind?: string; group?: string }[], matches?: Manifest[]): Manifest {
  const refs = typeof backend === 'string' ? [{ name: backend, port: 80 }] : backend.map((b) => ({ port: 80, ...b }));
  return { ...(matches ? { matches } : {}), backendRefs: refs };
}

/**
 * A Service named `name` (port 80) and its EndpointSlice pointing at address:port: how a
 * loopback echo backend appears to the gateway as if it were a cluster service.
 */
export function serviceFor(name: string, port: number, address = '127.0.0.1', namespace?: string): Manifest[] {
  const ns = namespace ? { namespace } : {};
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, ...ns },
      spec: { ports: [{ name: 'http', port: 80, targetPort: port, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-1`, ...ns, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port, protocol: 'TCP' }],
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
    },
  ];
}

export function toYaml(docs: Manifest[]): string {
  return docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join('');
}

/**
 * Writes a manifest file the way an editor that saves atomically would (temp file + rename),
 * so the controller never reads half a file.
 */
export async function writeManifests(dir: string, file: string, docs: Manifest[] | string): Promise<void> {
  const target = path.join(dir, file);
  const tmp = path.join(dir, `.${file}.tmp`);
  await fs.writeFile(tmp, typeof docs === 'string' ? docs : toYaml(docs));
  await fs.rename(tmp, target);
}

export async function removeManifests(dir: string, file: string): Promise<void> {
  await fs.rm(path.join(dir, file), { force: true });
}
