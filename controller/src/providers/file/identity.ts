/** How the provider names a resource: what an API server would use as its identity. */

export interface ResourceId {
  group: string; // '' for the core group (apiVersion "v1")
  kind: string;
  namespace: string; // '' when not given (cluster-scoped kinds, or the parser's default)
  name: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The identity of a manifest document, or undefined when it has no kind/name to name it by. */
export function identify(doc: unknown): ResourceId | undefined {
  if (!isRecord(doc)) return undefined;
  const { apiVersion, kind, metadata } = doc;
  if (typeof kind !== 'string' || !kind || !isRecord(metadata)) return undefined;
  if (typeof metadata.name !== 'string' || !metadata.name) return undefined;
  return {
    group: typeof apiVersion === 'string' ? groupOf(apiVersion) : '',
    kind,
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : '',
    name: metadata.name,
  };
}

export function keyOf(id: ResourceId): string {
  return `${id.group}/${id.kind}/${id.namespace}/${id.name}`;
}

/**
 * What counts as the "spec" for generation: everything but apiVersion, kind, metadata and
 * status. For kinds with a spec that is exactly the spec; for kinds without one
 * (EndpointSlice keeps endpoints/ports at the top level) it is their content, as Kubernetes
 * does for resources without a status subresource. Labels and annotations do not count.
 */
export function specOf(doc: unknown): unknown {
  if (!isRecord(doc)) return doc;
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k !== 'apiVersion' && k !== 'kind' && k !== 'metadata' && k !== 'status') rest[k] = v;
  }
  return rest;
}

/** JSON with object keys sorted, so two equal specs written in a different order compare equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  return JSON.stringify(value) ?? 'null';
}
