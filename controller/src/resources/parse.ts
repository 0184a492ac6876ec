import type { z } from 'zod';
import { formatIssues } from './errors';
import { endpointSliceSchema } from './endpointslice';
import { gatewaySchema } from './gateway';
import { listenerSetSchema } from './listenerset';
import { gatewayClassSchema } from './gatewayclass';
import { grpcRouteSchema } from './grpcroute';
import { httpRouteSchema } from './httproute';
import { tcpRouteSchema, tlsRouteSchema, udpRouteSchema } from './l4routes';
import { parseHttpRouteFast } from './httproute-fast';
import { namespaceSchema } from './namespace';
import { referenceGrantSchema } from './referencegrant';
import { secretSchema } from './secret';
import { configMapSchema } from './configmap';
import { backendTLSPolicySchema, failClosedBackendTLSPolicy } from './backendtlspolicy';
import { serviceSchema } from './service';
import { inferencePoolSchema } from './inferencepool';
import { podSchema } from './pod';
import type { InvalidResource, ManifestDoc, ParsedResources, ResourceSet } from './types';
import { GATEWAY_API_GROUP, INFERENCE_API_GROUP } from './types';
import { isPolicyGroup } from './policies';
import { isKnownAcyclic, isReadOnlyDocument } from './readonly';

interface KindEntry {
  apiVersions: string[];
  namespaced: boolean;
  schema: z.ZodType;
  list: keyof ResourceSet;
  /** What `schema` would return, computed without zod when that is surely the answer; else undefined. */
  fast?: (doc: unknown) => unknown;
  /**
   * A resource that stands in for a document that fails (schema or apiVersion) when dropping it
   * would fail open; it goes into the set beside the document's `invalid` entry.
   */
  standIn?: (doc: Record<string, unknown>, message: string) => unknown;
}

/** The kinds we read, the versions we accept for each, and where they go in the set. */
const KINDS: Record<string, KindEntry> = {
  GatewayClass: { apiVersions: [`${GATEWAY_API_GROUP}/v1`, `${GATEWAY_API_GROUP}/v1beta1`], namespaced: false, schema: gatewayClassSchema, list: 'gatewayClasses' },
  Gateway: { apiVersions: [`${GATEWAY_API_GROUP}/v1`, `${GATEWAY_API_GROUP}/v1beta1`], namespaced: true, schema: gatewaySchema, list: 'gateways' },
  ListenerSet: { apiVersions: [`${GATEWAY_API_GROUP}/v1`], namespaced: true, schema: listenerSetSchema, list: 'listenerSets' },
  HTTPRoute: { apiVersions: [`${GATEWAY_API_GROUP}/v1`, `${GATEWAY_API_GROUP}/v1beta1`], namespaced: true, schema: httpRouteSchema, list: 'httpRoutes', fast: parseHttpRouteFast },
  GRPCRoute: { apiVersions: [`${GATEWAY_API_GROUP}/v1`], namespaced: true, schema: grpcRouteSchema, list: 'grpcRoutes' },
  TLSRoute: { apiVersions: [`${GATEWAY_API_GROUP}/v1`, `${GATEWAY_API_GROUP}/v1alpha3`, `${GATEWAY_API_GROUP}/v1alpha2`], namespaced: true, schema: tlsRouteSchema, list: 'tlsRoutes' },
  TCPRoute: { apiVersions: [`${GATEWAY_API_GROUP}/v1`, `${GATEWAY_API_GROUP}/v1alpha2`], namespaced: true, schema: tcpRouteSchema, list: 'tcpRoutes' },
  UDPRoute: { apiVersions: [`${GATEWAY_API_GROUP}/v1`, `${GATEWAY_API_GROUP}/v1alpha2`], namespaced: true, schema: udpRouteSchema, list: 'udpRoutes' },
  Service: { apiVersions: ['v1'], namespaced: true, schema: serviceSchema, list: 'services' },
  EndpointSlice: { apiVersions: ['discovery.k8s.io/v1'], namespaced: true, schema: endpointSliceSchema, list: 'endpointSlices' },
  Namespace: { apiVersions: ['v1'], namespaced: false, schema: namespaceSchema, list: 'namespaces' },
  ReferenceGrant: { apiVersions: [`${GATEWAY_API_GROUP}/v1beta1`, `${GATEWAY_API_GROUP}/v1`], namespaced: true, schema: referenceGrantSchema, list: 'referenceGrants' },
  InferencePool: { apiVersions: [`${INFERENCE_API_GROUP}/v1`], namespaced: true, schema: inferencePoolSchema, list: 'inferencePools' },
  Pod: { apiVersions: ['v1'], namespaced: true, schema: podSchema, list: 'pods' },
  Secret: { apiVersions: ['v1'], namespaced: true, schema: secretSchema, list: 'secrets' },
  ConfigMap: { apiVersions: ['v1'], namespaced: true, schema: configMapSchema, list: 'configMaps' },
  BackendTLSPolicy: { apiVersions: [`${GATEWAY_API_GROUP}/v1`, `${GATEWAY_API_GROUP}/v1alpha3`], namespaced: true, schema: backendTLSPolicySchema, list: 'backendTLSPolicies', standIn: failClosedBackendTLSPolicy },
};

/** Kinds whose invalid documents still get route statuses (their parentRefs are read leniently; a ListenerSet's parentRef too). */
const ROUTE_KINDS = new Set(['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']);

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type LooseParentRef = NonNullable<InvalidResource['parentRefs']>[number];

function looseParentRef(r: unknown): LooseParentRef | undefined {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  if (!isObject(r) || !str(r.name)) return undefined;
  const ref: LooseParentRef = { name: str(r.name) as string };
  if (str(r.group) !== undefined) ref.group = str(r.group);
  if (str(r.kind) !== undefined) ref.kind = str(r.kind);
  if (str(r.namespace) !== undefined) ref.namespace = str(r.namespace);
  if (str(r.sectionName) !== undefined) ref.sectionName = str(r.sectionName);
  if (typeof r.port === 'number') ref.port = r.port;
  return ref;
}

/**
 * The parents of a document that failed its schema, read leniently (status needs them): a
 * route's spec.parentRefs, a ListenerSet's spec.parentRef.
 */
function looseParentRefs(doc: Record<string, unknown>, kind: string): InvalidResource['parentRefs'] {
  const spec = isObject(doc.spec) ? doc.spec : {};
  if (kind === 'ListenerSet') {
    const ref = looseParentRef(spec.parentRef);
    return ref ? [ref] : undefined;
  }
  if (!Array.isArray(spec.parentRefs)) return undefined;
  return spec.parentRefs.map(looseParentRef).filter((r): r is LooseParentRef => r !== undefined);
}

function generationOf(meta: Record<string, unknown>): number {
  const g = meta.generation;
  return typeof g === 'number' && Number.isInteger(g) && g >= 1 ? g : 1;
}

/**
 * Schema outcomes of read-only documents (see readonly.ts), by document object: a reconcile
 * re-validates only the documents its provider handed out anew (zod is most of the parse time).
 * Entries live as long as their documents. Parsed resources are shared between calls, so later
 * stages must treat them as read-only (they do: the graph builds its own nodes).
 */
type Outcome = { ok: true; data: unknown } | { ok: false; message: string; standIn?: unknown };
const outcomes = new WeakMap<object, Outcome>();

function validate(entry: KindEntry, doc: unknown, acyclic: boolean): Outcome {
  try {
    // A cycle (YAML aliases can make one) or a value JSON cannot hold is no manifest.
    if (!acyclic) JSON.stringify(doc);
  } catch (e) {
    return { ok: false, message: `document cannot be read as JSON: ${(e as Error).message}` };
  }
  const fast = entry.fast?.(doc);
  if (fast !== undefined) return { ok: true, data: fast };
  const parsed = entry.schema.safeParse(doc);
  if (parsed.success) return { ok: true, data: parsed.data };
  const message = formatIssues(parsed.error);
  const standIn = entry.standIn?.(doc as Record<string, unknown>, message);
  return standIn === undefined ? { ok: false, message } : { ok: false, message, standIn };
}

// A plain function, not a closure per document: tsx (esbuild keepNames) names every closure it
// creates, which costs a defineProperty per call.
function invalidResource(
  doc: Record<string, unknown>,
  meta: Record<string, unknown>,
  apiVersion: string,
  kind: string,
  namespace: string | undefined,
  name: string,
  source: string,
  message: string,
): InvalidResource {
  return {
    apiVersion,
    kind,
    namespace,
    name,
    generation: generationOf(meta),
    creationTimestamp: typeof meta.creationTimestamp === 'string' ? meta.creationTimestamp : undefined,
    message,
    source,
    ...(ROUTE_KINDS.has(kind) || kind === 'ListenerSet' ? { parentRefs: looseParentRefs(doc, kind) } : {}),
  };
}

export function emptyResourceSet(): ResourceSet {
  return { gatewayClasses: [], gateways: [], httpRoutes: [], grpcRoutes: [], tlsRoutes: [], tcpRoutes: [], udpRoutes: [], services: [], endpointSlices: [], referenceGrants: [], namespaces: [], inferencePools: [], pods: [], secrets: [], configMaps: [], backendTLSPolicies: [], listenerSets: [] };
}

/**
 * Validate manifest documents into typed resources. Pure: never throws on bad input.
 * - a known kind that fails its schema but has a name -> `invalid` (it gets a status);
 * - a document without kind/name, or not an object -> `errors` (log only);
 * - other kinds -> `ignored`; `kind: List` documents are flattened.
 * A second document with the same kind/namespace/name is reported in `errors`; the first wins.
 */
export function parseManifests(docs: ManifestDoc[]): ParsedResources {
  const result: ParsedResources = { set: emptyResourceSet(), invalid: [], errors: [], ignored: [] };
  const seen = new Map<string, string>();

  const visit = (source: string, index: number, doc: unknown, readOnly = isReadOnlyDocument(doc), acyclic = isKnownAcyclic(doc)): void => {
    if (doc === null || doc === undefined) return; // empty YAML document
    if (!isObject(doc)) {
      result.errors.push({ source, index, message: 'document is not an object' });
      return;
    }
    const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
    const kind = typeof doc.kind === 'string' ? doc.kind : '';
    if (kind === 'List' && Array.isArray(doc.items)) {
      for (const item of doc.items) visit(source, index, item, readOnly, acyclic);
      return;
    }
    if (!kind || !apiVersion) {
      result.errors.push({ source, index, message: 'document has no apiVersion or kind' });
      return;
    }
    const entry = KINDS[kind];
    const knownGroup = entry?.apiVersions.some((v) => groupOf(v) === groupOf(apiVersion));
    const meta = isObject(doc.metadata) ? doc.metadata : {};
    const name = typeof meta.name === 'string' && meta.name !== '' ? meta.name : undefined;
    // Our policy kinds are parsed by parsePolicyDocs (resources/policies): not "ignored".
    if (!entry && isPolicyGroup(apiVersion)) return;
    if (!entry || !knownGroup) {
      result.ignored.push({ source, apiVersion, kind, name });
      return;
    }
    if (!name) {
      result.errors.push({ source, index, message: `${kind} has no metadata.name` });
      return;
    }
    const namespace = entry.namespaced ? (typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : 'default') : undefined;
    const key = `${kind}/${namespace ?? ''}/${name}`;
    const first = seen.get(key);
    if (first !== undefined) {
      result.errors.push({ source, index, message: `${kind} ${namespace ? `${namespace}/` : ''}${name} is already defined in ${first}; this copy is ignored` });
      return;
    }
    seen.set(key, source);

    const fail = (message: string, standIn: unknown): void => {
      const bad = invalidResource(doc, meta, apiVersion, kind, namespace, name, source, message);
      if (standIn !== undefined) {
        bad.standIn = true;
        ((result.set[entry.list] ??= []) as unknown[]).push(standIn);
      }
      result.invalid.push(bad);
    };
    if (!entry.apiVersions.includes(apiVersion)) {
      const message = `apiVersion: ${apiVersion} is not supported for ${kind} (supported: ${entry.apiVersions.join(', ')})`;
      fail(message, entry.standIn?.(doc, message));
      return;
    }
    let outcome = readOnly ? outcomes.get(doc) : undefined;
    if (!outcome) {
      outcome = validate(entry, doc, acyclic);
      if (readOnly) outcomes.set(doc, outcome);
    }
    if (!outcome.ok) {
      fail(outcome.message, outcome.standIn);
      return;
    }
    ((result.set[entry.list] ??= []) as unknown[]).push(outcome.data);
  };

  docs.forEach((d, index) => visit(d.source, index, d.doc));
  return result;
}
