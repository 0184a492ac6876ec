/**
 * The kinds the Kubernetes provider lists and watches: one line each. A kind whose API the
 * server does not serve (its CRD is not installed: InferencePool without the inference
 * extension) is treated as empty and looked for again now and then, so installing the CRD
 * later needs no restart.
 */
import { GATEWAY_API_GROUP } from '../../resources/types';
import { POLICY_GROUP, POLICY_VERSION } from '../../resources/policies/common';

export interface WatchedKind {
  group: string; // '' for the core group
  version: string;
  kind: string;
  /** The resource name in URLs (lower-case plural). */
  plural: string;
  namespaced: boolean;
  /**
   * We write this kind's status: its status and a status-only change (same generation and
   * metadata) are not handed to the pipeline, so our own status writes do not re-trigger it.
   */
  statusWritten: boolean;
}

const gw = (kind: string, plural: string, namespaced: boolean, version = 'v1'): WatchedKind => ({ group: GATEWAY_API_GROUP, version, kind, plural, namespaced, statusWritten: true });
const policy = (kind: string, plural: string): WatchedKind => ({ group: POLICY_GROUP, version: POLICY_VERSION, kind, plural, namespaced: true, statusWritten: true });
const core = (group: string, version: string, kind: string, plural: string, namespaced: boolean): WatchedKind => ({ group, version, kind, plural, namespaced, statusWritten: false });

export const WATCHED_KINDS: readonly WatchedKind[] = [
  gw('GatewayClass', 'gatewayclasses', false),
  gw('Gateway', 'gateways', true),
  gw('ListenerSet', 'listenersets', true),
  gw('HTTPRoute', 'httproutes', true),
  gw('GRPCRoute', 'grpcroutes', true),
  gw('TLSRoute', 'tlsroutes', true),
  gw('TCPRoute', 'tcproutes', true),
  gw('UDPRoute', 'udproutes', true),
  gw('ReferenceGrant', 'referencegrants', true, 'v1beta1'),
  gw('BackendTLSPolicy', 'backendtlspolicies', true),
  policy('ClientSettingsPolicy', 'clientsettingspolicies'),
  policy('IPAccessPolicy', 'ipaccesspolicies'),
  policy('ProxySettingsPolicy', 'proxysettingspolicies'),
  policy('RateLimitPolicy', 'ratelimitpolicies'),
  { group: 'inference.networking.k8s.io', version: 'v1', kind: 'InferencePool', plural: 'inferencepools', namespaced: true, statusWritten: true },
  core('', 'v1', 'Service', 'services', true),
  core('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices', true),
  core('', 'v1', 'Secret', 'secrets', true),
  core('', 'v1', 'ConfigMap', 'configmaps', true),
  core('', 'v1', 'Namespace', 'namespaces', false),
  core('', 'v1', 'Pod', 'pods', true),
];

/** Read only with --gateway-api-inference-extension: InferencePools and the Pods they select. */
const INFERENCE_KINDS = new Set(['InferencePool', 'Pod']);

/** The kinds to watch: without the inference extension, nothing of it is listed or watched. */
export function watchedKinds(options: { inferenceExtension?: boolean }): WatchedKind[] {
  return WATCHED_KINDS.filter((k) => options.inferenceExtension || !INFERENCE_KINDS.has(k.kind));
}

export function apiVersionOf(k: { group: string; version: string }): string {
  return k.group ? `${k.group}/${k.version}` : k.version;
}

/** The collection URL of a kind, across all namespaces (or in one). */
export function collectionPath(k: WatchedKind, namespace?: string): string {
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  return k.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${k.plural}` : `${base}/${k.plural}`;
}

/** The URL of one object (with `/status` for its status subresource). */
export function objectPath(k: WatchedKind, namespace: string | undefined, name: string, subresource?: 'status'): string {
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  const ns = k.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
  return `${base}${ns}/${k.plural}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

export function kindByName(kind: string): WatchedKind | undefined {
  return WATCHED_KINDS.find((k) => k.kind === kind);
}
