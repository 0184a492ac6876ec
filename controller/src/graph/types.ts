/**
 * The Graph: resources after attachment and validation. Pure data: the model is built from it
 * (gateways -> listeners -> attached routes -> rules -> backends) and every status is computed
 * from it (conditions are already decided here; status/statuses.ts only adds observedGeneration,
 * the dataplane outcome and addresses).
 */
import type { RuleFilters } from './filters';
import type { ListenerCertificate } from './tls';
import type { BackendTLS, BackendTLSPolicyNode } from './backendtls';
import type { ClientValidation } from './gateway-tls';
import type { HTTPMethod, L4RouteKind, LabelSelector, ParentReference, PathMatchType, ValueMatchType } from '../resources/types';

import type { GraphCondition } from '../conditions/types';
export type { ConditionStatus, GraphCondition, StatusCondition, StatusReport } from '../conditions/types';

export interface ObjectRef {
  namespace: string;
  name: string;
}

// ---------------------------------------------------------------- GatewayClass

export interface GatewayClassNode {
  name: string;
  generation: number;
  controllerName: string;
  /** True when controllerName is ours and nothing else is wrong. */
  accepted: boolean;
  conditions: GraphCondition[];
}

// ---------------------------------------------------------------- Gateway + listeners

export interface GatewayNode {
  namespace: string;
  name: string;
  generation: number;
  className: string;
  /** True: the model should render this Gateway (it may still have invalid listeners). */
  accepted: boolean;
  listeners: ListenerNode[];
  /** spec.tls.backend.clientCertificateRef, resolved: presented on TLS connections to backends. */
  backendClientCertificate?: ListenerCertificate;
  /** spec.addresses values, if any (we can only serve on the controller's listen address). */
  requestedAddresses: string[];
  /** status.attachedListenerSets: ListenerSets accepted on this Gateway (absent: none point at it). */
  attachedListenerSets?: number;
  /**
   * Gateway-level conditions the graph decides. Programmed appears here only when the graph
   * already knows it is False; otherwise status/statuses.ts sets it from the dataplane result.
   */
  conditions: GraphCondition[];
}

/** A ListenerSet whose parent is a Gateway of ours. */
export interface ListenerSetNode {
  namespace: string;
  name: string;
  generation: number;
  gateway: ObjectRef;
  /** The Gateway allows it and at least one of its listeners is valid: its listeners are served. */
  accepted: boolean;
  /**
   * Its listeners, the very nodes listed in the Gateway's `listeners` (with `listenerSet` set)
   * when the Gateway allows the ListenerSet; else built for status only.
   */
  listeners: ListenerNode[];
  /** Accepted and, when already known to be False, Programmed. */
  conditions: GraphCondition[];
}

export interface SupportedKind {
  group: string;
  kind: string;
}

export interface ListenerNode {
  /** The Gateway this listener belongs to. */
  gateway: ObjectRef;
  /** Set when a ListenerSet adds this listener to the Gateway (its status is the ListenerSet's). */
  listenerSet?: ObjectRef;
  name: string;
  port: number;
  /** HTTP, HTTPS, TLS, TCP or UDP; the field keeps what the manifest said (others are invalid). */
  protocol: string;
  hostname?: string;
  /** False: the model must not render it (conflicted, unsupported protocol...). */
  valid: boolean;
  /**
   * Routes accepted on this listener that the model should render here, with their effective
   * hostnames. A route whose every hostname belongs to a more specific listener on the same
   * port (listener isolation) is counted in attachedRoutes but not listed.
   */
  routes: AttachedRoute[];
  /** status.listeners[].attachedRoutes: routes Accepted on this listener. */
  attachedRoutes: number;
  /** Routes may attach (even if the listener is otherwise invalid, e.g. conflicted). */
  attachable: boolean;
  supportedKinds: SupportedKind[];
  allowedNamespaces: 'All' | 'Same' | 'Selector';
  /** With allowedNamespaces Selector: the labels a route's Namespace must carry. */
  namespaceSelector?: LabelSelector;
  /** Accepted, ResolvedRefs, Conflicted (+ Programmed False when invalid; else status/statuses.ts adds it). */
  conditions: GraphCondition[];
  /** HTTPS, and TLS in mode Terminate: the certificates (with keys) of tls.certificateRefs, all resolved and valid. */
  certificates?: ListenerCertificate[];
  /** HTTPS listeners with spec.tls.frontend validation for their port: how client certificates are checked. */
  clientValidation?: ClientValidation;
  /** TLS listeners: Passthrough (the backend terminates TLS) or Terminate. */
  tlsMode?: 'Terminate' | 'Passthrough';
}

/** One route accepted on one listener. */
export interface AttachedRoute {
  route: HTTPRouteNode;
  /** Effective hostnames (listener ∩ route); [] = any host. */
  hostnames: string[];
}

// ---------------------------------------------------------------- HTTPRoute

export interface HTTPRouteNode {
  /**
   * Absent: HTTPRoute. A GRPCRoute's rules are expressed as HTTP matches (graph/grpcroute.ts);
   * those of TLSRoute, TCPRoute and UDPRoute have no matches, only backends (graph/l4rules.ts).
   */
  kind?: 'HTTPRoute' | 'GRPCRoute' | L4RouteKind;
  namespace: string;
  name: string;
  generation: number;
  /** ISO; with namespace/name, the tie-breaker of route precedence. */
  creationTimestamp: string;
  /** The route's own hostnames as written ([] = any). */
  hostnames: string[];
  rules: RouteRule[];
  /** One entry per spec.parentRefs element that points at a Gateway of ours (status.parents). */
  parents: RouteParentNode[];
}

export interface RouteParentNode {
  /** parentRef with defaults applied: group, kind and namespace are always set. */
  ref: Required<Pick<ParentReference, 'group' | 'kind' | 'namespace' | 'name'>> &
    Pick<ParentReference, 'sectionName' | 'port'>;
  /** Index in spec.parentRefs. */
  index: number;
  /** The Gateway this parentRef resolved to (undefined: NoMatchingParent). */
  gateway?: ObjectRef;
  /** True when accepted by at least one listener. */
  accepted: boolean;
  /** Names of listeners this route is attached to through this parentRef. */
  listeners: string[];
  /** Accepted, ResolvedRefs (always both), and PartiallyInvalid when rules were dropped. */
  conditions: GraphCondition[];
}

export interface RouteRule {
  /** Position in spec.rules. */
  index: number;
  /** rules[].name when given. */
  name?: string;
  /** Defaulted: a rule without matches has one PathPrefix "/" match. */
  matches: RouteMatch[];
  backends: BackendRef[];
  /** false: rule dropped (e.g. a bad regex, unsupported filter); the model skips it. */
  valid: boolean;
  /** Why the rule was dropped (field path + reason). */
  invalidMessage?: string;
  /** Accepted reason when every rule is dropped for this: UnsupportedValue (default) or IncompatibleFilters. */
  invalidReason?: string;
  /** Filters of the rule, with those of its single backendRef merged in (graph/filters.ts). */
  filters?: RuleFilters;
  /**
   * Several backendRefs, some with filters of their own: per backend (same order as `backends`),
   * the rule's filters merged with that backendRef's, for the requests sent to it.
   */
  backendFilters?: (RuleFilters | undefined)[];
  /** rules[].timeouts in milliseconds when given (0 = no timeout, as the Gateway API says). */
  timeouts?: { requestMs?: number; backendRequestMs?: number };
  /** rules[].sessionPersistence as the data plane acts on it (graph/session.ts). */
  session?: RuleSession;
  /** rules[].retry as the data plane acts on it (graph/retry.ts). */
  retry?: RuleRetry;
  /** Fields of the rule that are set but not implemented (the route's Accepted condition names them). */
  unsupportedFields?: string[];
}

export interface RuleSession {
  type: 'Cookie' | 'Header';
  /** sessionName when nginx can use it; else the model names the token after the rule. */
  name?: string;
  /** A permanent cookie's Max-Age (absoluteTimeout); without it, a session cookie. */
  maxAgeSeconds?: number;
}

export interface RuleRetry {
  /** Status codes retried besides connection errors and timeouts, ascending. */
  codes: number[];
  /** Retries after the first attempt. */
  attempts: number;
}

export interface RouteMatch {
  path: { type: PathMatchType; value: string };
  headers: { name: string; type: ValueMatchType; value: string }[];
  queryParams: { name: string; type: ValueMatchType; value: string }[];
  method?: HTTPMethod;
  /**
   * GRPCRoute matches only: the path holds the method match (/service/method), and precedence
   * counts the characters of the service and method values (GRPCRoute spec), not path types.
   */
  grpc?: { serviceChars: number; methodChars: number };
}

export interface BackendEndpoint {
  address: string;
  port: number;
}

export interface BackendRef {
  /** Resolved namespace (the route's when the ref omits it). */
  namespace: string;
  name: string;
  group: string;
  kind: string;
  port?: number;
  weight: number;
  /** false: the rule must not send traffic here (its share answers 500). */
  valid: boolean;
  /** ResolvedRefs reason: BackendNotFound, InvalidKind, UnsupportedValue, RefNotPermitted... */
  invalidReason?: string;
  invalidMessage?: string;
  /** Ready endpoints resolved through the Service's EndpointSlices ([] when none are ready). */
  endpoints: BackendEndpoint[];
  /** Set for a valid InferencePool backend: requests go through the endpoint picker. */
  inference?: InferenceBackend;
  /**
   * An HTTPRoute backend whose Service port has appProtocol kubernetes.io/h2c: spoken to over
   * HTTP/2 without TLS (grpc_pass, which carries any HTTP/2 request, not only gRPC calls).
   */
  h2c?: boolean;
  /** A BackendTLSPolicy applies: requests go out over TLS, verified as it says. */
  tls?: BackendTLS;
  /** Every BackendTLSPolicy targeting this Service port ("namespace/name"), Conflicted ones too (their status.ancestors). */
  tlsPolicies?: string[];
}

// ---------------------------------------------------------------- InferencePool

/** Where the picker of a pool is reached. */
export type PickerTarget =
  /** endpointPickerRef omitted: the gateway's built-in picker (least loaded by /metrics). */
  | { kind: 'builtin' }
  /** An external EPP (ext_proc over gRPC): the ready addresses of its Service port ([] = down). */
  | { kind: 'service'; service: string; addresses: string[] };

/** What the data plane needs to send a request to a pool. */
export interface InferenceBackend {
  /** "namespace/name" of the InferencePool. */
  pool: string;
  picker: PickerTarget;
  failureMode: 'FailOpen' | 'FailClose';
  /** Ready pods x targetPorts ("ip:port"), sorted: the candidates, and the fail-open choice. */
  endpoints: string[];
  /** spec.appProtocol: how the pods are spoken to (kubernetes.io/h2c: HTTP/2 without TLS). */
  appProtocol: 'http' | 'kubernetes.io/h2c';
}

export interface InferencePoolNode {
  namespace: string;
  name: string;
  generation: number;
  /** Resolved picker, or why the reference is invalid (ResolvedRefs False, InvalidExtensionRef). */
  picker?: PickerTarget;
  pickerProblem?: string;
  failureMode: 'FailOpen' | 'FailClose';
  endpoints: string[];
  /** Gateways of ours with a route referencing this pool, and whether such a route is accepted there. */
  parents: { gateway: ObjectRef; routeAccepted: boolean }[];
}

// ---------------------------------------------------------------- the Graph

export interface Graph {
  /** Every GatewayClass whose controllerName is ours. */
  gatewayClasses: GatewayClassNode[];
  /** Gateways whose class is ours and Accepted: what the model renders. */
  gateways: GatewayNode[];
  /** Gateways whose class is ours but that are not accepted (status only). */
  rejectedGateways: GatewayNode[];
  /** Every HTTPRoute and GRPCRoute that references one of our Gateways (accepted or not). */
  routes: HTTPRouteNode[];
  /** Every BackendTLSPolicy, with its conditions and ancestors (status.ancestors). */
  backendTLSPolicies?: BackendTLSPolicyNode[];
  /** Every ListenerSet whose parentRef names a Gateway of ours (absent: none). */
  listenerSets?: ListenerSetNode[];
  /** With the inference extension enabled: every InferencePool (status.parents). */
  inferencePools?: InferencePoolNode[];
  /** What the nginx that will serve the config can do (graph/routekinds.ts); absent: a modern nginx. */
  nginx?: NginxCapabilities;
}

export interface NginxCapabilities {
  /**
   * nginx >= 1.25.1: `http2 on` serves HTTP/1.1 and h2c on one port. Older: a port is either
   * HTTP/1.1 or (`listen ... http2`) h2c only.
   */
  http2On: boolean;
  /** The version text, for messages ("1.22.1"). */
  version?: string;
  /** Old nginx only: ports that carry GRPCRoutes alone and so listen with `http2`. */
  h2cPorts: number[];
}

export interface BuildGraphOptions {
  controllerName: string;
  /** --gateway-api-inference-extension: InferencePool backends are resolved (else InvalidKind). */
  inferenceExtension?: boolean;
  /** Default: a modern nginx (http2On true). */
  nginx?: { http2On: boolean; version?: string };
  /**
   * Each Gateway has its own nginx and address (Kubernetes provisioning): listeners of
   * different Gateways never conflict. Default false: one nginx serves every Gateway on one
   * address (standalone), so a newer Gateway's listener that cannot share a port is Conflicted.
   */
  dataplanePerGateway?: boolean;
  /**
   * Ports the data plane found held by another process: standalone's concern every Gateway
   * (one address for all), an agent's its own Gateway (`gateway`). Listeners on them are not
   * Accepted (PortUnavailable) and not served, so the other listeners are; the data plane tries
   * a port again once it is free.
   */
  unavailablePorts?: readonly UnavailablePort[];
}

/** A port (per transport: TCP and UDP ports are distinct) the data plane could not listen on. */
export interface UnavailablePort {
  port: number;
  transport: 'TCP' | 'UDP';
  /** "namespace/name" of the one Gateway whose data plane holds it (agents); absent: every Gateway. */
  gateway?: string;
  /** Why, in the data plane's words (nginx's bind error), for the listener's condition. */
  reason: string;
}

export const DEFAULT_CONTROLLER_NAME = 'gateway.portcullis.dev/controller';

// ---------------------------------------------------------------- statuses

export interface DataplaneResult {
  programmed: boolean;
  /** nginx's message when programmed is false. */
  message?: string;
  /**
   * Programmed False reason: Invalid (nginx refused the config; the default) or Pending (no
   * data plane has applied it yet, e.g. its agents are starting); with Pending, `message` is
   * the whole condition message.
   */
  reason?: 'Invalid' | 'Pending';
  /** Addresses the Gateways are reachable on (IPs as IPAddress, names as Hostname). */
  addresses: string[];
  /**
   * The Gateway's `spec.infrastructure.parametersRef` could not be used (missing ConfigMap, bad
   * key): its Accepted condition becomes False, reason InvalidParameters, with this message.
   */
  invalidParameters?: string;
}

/**
 * What a data plane that reads parameters says of a GatewayClass's `spec.parametersRef`:
 * undefined when it has no verdict (standalone mode, where parametersRef is ignored).
 */
export type ParametersVerdict = { valid: true } | { valid: false; message: string };
