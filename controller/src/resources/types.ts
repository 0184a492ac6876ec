/**
 * Typed resources after parsing: every default the Gateway API CRDs (and the core API) define
 * is already applied, so later stages never re-default.
 */

import type { GRPCRoute } from './grpcroute';
export type { GRPCRoute } from './grpcroute';
import type { TCPRoute, TLSRoute, UDPRoute } from './l4routes';
import type { SchemaStandIn } from './standin';
export type { SchemaStandIn } from './standin';
export type { L4Route, L4RouteKind, TCPRoute, TLSRoute, UDPRoute } from './l4routes';

export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';
export const CORE_GROUP = '';

export interface ObjectMeta {
  name: string;
  /** Defaults to "default" for namespaced kinds. */
  namespace: string;
  /** Filled by the provider (starts at 1, grows on spec change). */
  generation: number;
  /** ISO timestamp; the manifest's own or the provider's first-seen time. */
  creationTimestamp: string;
  uid?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Cluster-scoped kinds (GatewayClass) have no namespace. */
export type ClusterObjectMeta = Omit<ObjectMeta, 'namespace'>;

// ---------------------------------------------------------------- GatewayClass

export interface GatewayClass {
  apiVersion: string;
  kind: 'GatewayClass';
  metadata: ClusterObjectMeta;
  spec: {
    controllerName: string;
    description?: string;
    parametersRef?: { group: string; kind: string; name: string; namespace?: string };
  };
}

// ---------------------------------------------------------------- Gateway

export type FromNamespaces = 'All' | 'Same' | 'Selector';

export interface RouteGroupKind {
  /** Defaults to gateway.networking.k8s.io. */
  group: string;
  kind: string;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface AllowedRoutes {
  namespaces: { from: FromNamespaces; selector?: LabelSelector };
  /** Empty: the kinds the listener's protocol supports. */
  kinds: RouteGroupKind[];
}

export interface Listener {
  name: string;
  hostname?: string;
  port: number;
  /** Any string is accepted by the schema; unsupported protocols are reported per listener. */
  protocol: string;
  /** HTTPS listeners: Terminate with certificates from Secrets (graph/tls.ts). */
  tls?: ListenerTLS;
  allowedRoutes: AllowedRoutes;
}

export interface SecretObjectReference {
  /** Default "" (core). */
  group: string;
  /** Default Secret. */
  kind: string;
  name: string;
  namespace?: string;
}

export interface ListenerTLS {
  mode: 'Terminate' | 'Passthrough';
  certificateRefs: SecretObjectReference[];
  options?: Record<string, string>;
}

export interface GatewaySpecAddress {
  type: string;
  value: string;
}

export interface Gateway {
  apiVersion: string;
  kind: 'Gateway';
  metadata: ObjectMeta;
  spec: {
    gatewayClassName: string;
    listeners: Listener[];
    addresses: GatewaySpecAddress[];
    /** spec.tls: the client certificate towards backends and client certificate validation. */
    tls?: GatewayTLSConfig;
    /** spec.allowedListeners: which namespaces' ListenerSets may add listeners (absent: none). */
    allowedListeners?: AllowedListeners;
  };
}

export interface AllowedListeners {
  namespaces: { from: 'None' | 'Same' | 'All' | 'Selector'; selector?: LabelSelector };
}

// ---------------------------------------------------------------- ListenerSet

/** Listeners added to a Gateway from another object (GEP-1713), possibly of another namespace. */
export interface ListenerSet {
  apiVersion: string;
  kind: 'ListenerSet';
  metadata: ObjectMeta;
  spec: {
    /** The Gateway (namespace defaults to the ListenerSet's). */
    parentRef: { group: string; kind: string; name: string; namespace?: string };
    listeners: Listener[];
  };
}

/** A reference to a CA bundle (ConfigMap or Secret, key ca.crt). */
export interface CACertificateReference {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface FrontendValidation {
  caCertificateRefs: CACertificateReference[];
  /** AllowValidOnly (default): a client without a valid certificate is refused. */
  mode: 'AllowValidOnly' | 'AllowInsecureFallback';
}

export interface GatewayTLSConfig {
  backend?: { clientCertificateRef?: SecretObjectReference };
  frontend?: {
    default?: { validation?: FrontendValidation };
    perPort: { port: number; tls: { validation?: FrontendValidation } }[];
  };
}

// ---------------------------------------------------------------- HTTPRoute

export interface ParentReference {
  /** Default gateway.networking.k8s.io. */
  group: string;
  /** Default Gateway. */
  kind: string;
  /** Absent: the route's namespace. */
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export type PathMatchType = 'Exact' | 'PathPrefix' | 'RegularExpression';
export type ValueMatchType = 'Exact' | 'RegularExpression';

export interface HTTPPathMatch {
  type: PathMatchType;
  value: string;
}

export interface HTTPHeaderMatch {
  type: ValueMatchType;
  name: string;
  value: string;
}

export interface HTTPQueryParamMatch {
  type: ValueMatchType;
  name: string;
  value: string;
}

export type HTTPMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'CONNECT' | 'OPTIONS' | 'TRACE' | 'PATCH';

export interface HTTPRouteMatch {
  /** Always present after defaulting (PathPrefix "/"). */
  path: HTTPPathMatch;
  headers: HTTPHeaderMatch[];
  queryParams: HTTPQueryParamMatch[];
  method?: HTTPMethod;
}

export type { HTTPRouteFilter, HTTPHeaderFilter, HTTPHeader, HTTPPathModifier, HTTPRequestRedirectFilter, HTTPURLRewriteFilter, HTTPRequestMirrorFilter, HTTPCORSFilter, HTTPExternalAuthFilter, BackendObjectReference, BackendRef } from './filters';
import type { BackendRef, HTTPRouteFilter } from './filters';

/** An HTTPRoute's (and a GRPCRoute's) BackendRef: group "" and kind Service by default, weight 1. */
export interface HTTPBackendRef extends BackendRef {
  filters: HTTPRouteFilter[];
}

export interface HTTPRouteRule {
  name?: string;
  /** Default [{ path: { type: PathPrefix, value: "/" } }]. */
  matches: HTTPRouteMatch[];
  filters: HTTPRouteFilter[];
  backendRefs: HTTPBackendRef[];
  timeouts?: { request?: string; backendRequest?: string };
  /** rules[].retry: status codes (400-599, a set), attempts (>= 1) and backoff, each optional. */
  retry?: { codes?: number[]; attempts?: number; backoff?: string };
  sessionPersistence?: SessionPersistence;
}

export interface SessionPersistence {
  sessionName?: string;
  absoluteTimeout?: string;
  /** Default Cookie. */
  type: 'Cookie' | 'Header';
  /** lifetimeType defaults to Session. */
  cookieConfig?: { lifetimeType: 'Permanent' | 'Session' };
}

export interface HTTPRoute {
  apiVersion: string;
  kind: 'HTTPRoute';
  metadata: ObjectMeta;
  spec: {
    parentRefs: ParentReference[];
    hostnames: string[];
    /** Default [{ matches: [PathPrefix /], backendRefs: [] }]. */
    rules: HTTPRouteRule[];
  };
}

// ---------------------------------------------------------------- Service / EndpointSlice

export interface ServicePort {
  name?: string;
  protocol: string;
  appProtocol?: string;
  port: number;
  /** Number or a container port name; absent means the same as port. */
  targetPort?: number | string;
}

export interface Service {
  apiVersion: string;
  kind: 'Service';
  metadata: ObjectMeta;
  spec: {
    type?: string;
    clusterIP?: string;
    selector?: Record<string, string>;
    ports: ServicePort[];
  };
}

export interface EndpointPort {
  /** "" when the Service port is unnamed. */
  name: string;
  port?: number;
  protocol: string;
  appProtocol?: string;
}

export interface Endpoint {
  addresses: string[];
  conditions: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
}

export interface EndpointSlice {
  apiVersion: string;
  kind: 'EndpointSlice';
  metadata: ObjectMeta;
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: Endpoint[];
  ports: EndpointPort[];
}

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

// ---------------------------------------------------------------- Namespace

/** Core Namespace: its labels are what listener namespace selectors match. */
export interface Namespace {
  apiVersion: string;
  kind: 'Namespace';
  metadata: ClusterObjectMeta;
}

// ---------------------------------------------------------------- Secret

/** A core Secret with its data decoded (text). Never logged. */
export interface ConfigMap {
  apiVersion: string;
  kind: 'ConfigMap';
  metadata: ObjectMeta;
  data: Record<string, string>;
}

/** A stand-in (resources/standin.ts) for a document that fails its schema makes its Services fail closed. */
export interface BackendTLSPolicy extends SchemaStandIn {
  apiVersion: string;
  kind: 'BackendTLSPolicy';
  metadata: ObjectMeta;
  spec: {
    targetRefs: { group: string; kind: string; name: string; sectionName?: string }[];
    validation: {
      caCertificateRefs: { group: string; kind: string; name: string }[];
      wellKnownCACertificates?: string;
      hostname: string;
      subjectAltNames: { type: 'Hostname' | 'URI'; hostname?: string; uri?: string }[];
    };
    options?: Record<string, string>;
  };
}

export interface Secret {
  apiVersion: string;
  kind: 'Secret';
  metadata: ObjectMeta;
  /** e.g. kubernetes.io/tls; default Opaque. */
  type: string;
  /** data (base64-decoded) and stringData merged. */
  data: Record<string, string>;
}

// ---------------------------------------------------------------- ReferenceGrant

/** Lets resources in `from` namespaces refer to `to` objects in the grant's own namespace. */
export interface ReferenceGrant {
  apiVersion: string;
  kind: 'ReferenceGrant';
  metadata: ObjectMeta;
  spec: {
    from: { group: string; kind: string; namespace: string }[];
    /** name absent: every object of that group/kind in the namespace. */
    to: { group: string; kind: string; name?: string }[];
  };
}

// ---------------------------------------------------------------- InferencePool / Pod

export const INFERENCE_API_GROUP = 'inference.networking.k8s.io';

export type InferencePoolFailureMode = 'FailOpen' | 'FailClose';

/** inference.networking.k8s.io/v1 InferencePool, CRD defaults applied. */
export interface InferencePool {
  apiVersion: string;
  kind: 'InferencePool';
  metadata: ObjectMeta;
  spec: {
    selector: { matchLabels: Record<string, string> };
    /** 1..8 unique ports: every ready pod serves on each (one endpoint per pod and port). */
    targetPorts: { number: number }[];
    /** Default http (HTTP/1.1). */
    appProtocol: 'http' | 'kubernetes.io/h2c';
    /** Optional since v1.6.0; absent here means the built-in picker. */
    endpointPickerRef?: {
      /** Default "". */
      group: string;
      /** Default Service. */
      kind: string;
      name: string;
      port?: { number: number };
      /** Default FailClose. */
      failureMode: InferencePoolFailureMode;
    };
  };
}

/** Core Pod: only what InferencePools need (labels, IP, readiness). */
export interface Pod {
  apiVersion: string;
  kind: 'Pod';
  metadata: ObjectMeta & { deletionTimestamp?: string };
  status: {
    phase?: string;
    podIP?: string;
    podIPs?: { ip: string }[];
    conditions?: { type: string; status: string }[];
  };
}

// ---------------------------------------------------------------- parse results

export interface ResourceSet {
  gatewayClasses: GatewayClass[];
  gateways: Gateway[];
  httpRoutes: HTTPRoute[];
  /** Optional so callers that build a set by hand need not name it. */
  grpcRoutes?: GRPCRoute[];
  /** Routes of whole connections (absent: none). */
  tlsRoutes?: TLSRoute[];
  tcpRoutes?: TCPRoute[];
  udpRoutes?: UDPRoute[];
  services: Service[];
  endpointSlices: EndpointSlice[];
  referenceGrants: ReferenceGrant[];
  namespaces: Namespace[];
  /** Read only with the inference extension enabled (absent: none). */
  inferencePools?: InferencePool[];
  /** Candidates of InferencePools (absent: none). */
  pods?: Pod[];
  /** Certificates of HTTPS listeners (absent: none). */
  secrets?: Secret[];
  /** CA bundles (key ca.crt) that certificate validation refers to (absent: none). */
  configMaps?: ConfigMap[];
  backendTLSPolicies?: BackendTLSPolicy[];
  /** Listeners added to Gateways (absent: none). */
  listenerSets?: ListenerSet[];
}

export interface ManifestDoc {
  /** File the document came from (for messages). */
  source: string;
  doc: unknown;
}

/** A document identifiable by kind + name that failed its schema: it gets a status condition. */
export interface InvalidResource {
  apiVersion: string;
  kind: string;
  /** Absent for cluster-scoped kinds. */
  namespace?: string;
  name: string;
  generation: number;
  creationTimestamp?: string;
  /** Field path + problem, e.g. `spec.rules[0].matches[1].path.type: Invalid option ...`. */
  message: string;
  source: string;
  /**
   * A stand-in for it is in the set (resources/standin.ts: an invalid BackendTLSPolicy that
   * names its targets): its status comes from the graph, which makes those targets fail closed.
   */
  standIn?: boolean;
  /** Routes: the parentRefs that could be read, so status.parents can carry the error; a ListenerSet: its parentRef, if readable. */
  parentRefs?: { group?: string; kind?: string; namespace?: string; name: string; sectionName?: string; port?: number }[];
}

/** A document we cannot attribute to a resource (no kind or name, not an object...): log only. */
export interface ManifestError {
  source: string;
  /** Position of the document inside the input list. */
  index: number;
  message: string;
}

/** A document of a kind we do not handle: logged, not fatal. */
export interface IgnoredDocument {
  source: string;
  apiVersion: string;
  kind: string;
  name?: string;
}

export interface ParsedResources {
  set: ResourceSet;
  invalid: InvalidResource[];
  errors: ManifestError[];
  ignored: IgnoredDocument[];
}
