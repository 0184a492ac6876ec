/**
 * The nginx model: what nginx must do, already decided, as plain data. render/ turns it into
 * config text without taking any decision; policies set the `settings` fields at the
 * level they apply (http, server, location, per-rule named location).
 */
import type { GrpcErrorPage } from './grpc';

import type { LimitReqZone, PolicySettings } from '../policies/directives';
export type { LimitReq, LimitReqZone, PolicySettings } from '../policies/directives';

import type { LocationFilters } from './filters';

/** Which HTTPRoute rule a proxying location serves: lets policies find their places. */
export interface RuleSource {
  namespace: string;
  name: string;
  ruleIndex: number;
}

export interface ObjectKey {
  namespace: string;
  name: string;
}

/**
 * HTTPRoute rules[].retry as nginx does it (model/retry.ts): on which failures a request goes on
 * to the next server of its upstream, in how many tries at most, within how long. The target's
 * upstreams list every endpoint often enough for `tries` (nginx never tries a server entry twice
 * for one request), so a backend with one endpoint is retried too.
 */
export interface TargetRetry {
  /** proxy_next_upstream / grpc_next_upstream arguments (error, timeout, http_500, ...). */
  conditions: string[];
  /** proxy_next_upstream_tries: the first attempt and the retries. */
  tries: number;
  /** proxy_next_upstream_timeout: the rule's request timeout, bounding all attempts together. */
  timeout?: string;
}

/**
 * rules[].sessionPersistence as nginx does it (model/session.ts): the target's upstreams (and
 * weighted split) hash on `key`; `header` hands a new token to a client that sent none. Its two
 * maps (maps.conf) are collected from the targets that use it, so a kept target brings them along.
 */
/**
 * A BackendTLSPolicy's connection settings (proxy_ssl_* / grpc_ssl_*): the backend is spoken to
 * over TLS with SNI `name`, its certificate verified against `trusted` and `name` (or `san`).
 */
export interface TargetTLS {
  name: string;
  /**
   * proxy_ssl_verify_san ("dns:NAME" / "uri:URI", our nginx patch): the certificate must carry
   * one of these subjectAltNames, checked instead of `name` (BackendTLSPolicy subjectAltNames).
   */
  san?: string[];
  /** proxy_ssl_trusted_certificate: a file of secretFiles (relative) or the system bundle (absolute). */
  trusted: string;
  /** The content of `trusted` when it is one of ours (written with the config). */
  pem?: string;
  /**
   * proxy_ssl_certificate/_key: the PEM file (certificate + key) of the client certificate the
   * server's Gateway presents to backends (spec.tls.backend.clientCertificateRef).
   */
  certificate?: string;
}

export interface TargetSession {
  /** A map variable: the client's token, or a new one ($request_id). */
  key: string;
  /** Set-Cookie, or the session header's name. */
  header: string;
  /** A map variable: the header's value for a client without a token, else "" (not sent). */
  set: string;
  /** $http_cookie, or the session header's variable. */
  source: string;
  /** Cookie sessions: a regex of $http_cookie that captures the token. */
  tokenRegex?: string;
  /** What `set` holds for a client without a token (render/format.ts complexValue parts). */
  newValue: (string | { v: string })[];
}

/** Where a rule sends a request. */
export type ProxyTarget =
  /** One backend: proxy_pass to this upstream. */
  | { kind: 'upstream'; upstream: string; retry?: TargetRetry; session?: TargetSession; tls?: TargetTLS }
  /**
   * Several weighted backends: proxy_pass to the upstream named by a split_clients variable.
   * Shares that belong to invalid backends hold the value "" (answered 500); shares of backends
   * without ready endpoints hold the value "!" (answered 502).
   */
  | { kind: 'split'; variable: string; invalidShare: boolean; noEndpointsShare: boolean; retry?: TargetRetry; session?: TargetSession; tls?: TargetTLS }
  /**
   * InferencePool backends: the request goes to the inference hop next to nginx, which asks the
   * pool's endpoint picker and proxies to the chosen pod. `pool` is the hop's pool description
   * (model/inference.ts); with several weighted pools `poolVariable` names a split_clients
   * variable holding one such description per share ("" for invalid shares, answered 500).
   */
  | { kind: 'inference'; hop: true; pool?: string; poolVariable?: string; poolInvalidShare: boolean }
  /**
   * Several weighted backends, some with filters of their own (backendRef filters): each share
   * goes to a named location of its own (RuleLocation.dispatchedBy), which applies that
   * backend's filters and proxies to it. `dispatchVariable` is a split_clients variable naming
   * those locations ("" for invalid shares, answered 500; "!" without endpoints, 502).
   */
  | { kind: 'backends'; dispatchVariable: string; invalidShare: boolean; noEndpointsShare: boolean }
  /** No backend can take the request. */
  | { kind: 'status'; code: number };

/** A per-rule named location (`location @name`) that proxies: policies set per rule go here. */
export interface RuleLocation {
  /** Starts with "@". */
  name: string;
  source: RuleSource;
  target: ProxyTarget;
  settings: PolicySettings;
  /**
   * The rule's `timeouts` as an nginx time for proxy_connect/send/read_timeout (model/timeouts.ts);
   * unset: nginx's defaults.
   */
  timeout?: string;
  /** The rule's filters (model/filters.ts): header changes, rewrite, redirect, mirrors, CORS. */
  filters?: LocationFilters;
  /**
   * Set by finalizeModel when settings.clientMaxBodySize is: a map variable that is "1" when
   * Content-Length exceeds it (nginx does not check Content-Length in named locations).
   */
  bodyLimitVariable?: string;
  /**
   * Set by finalizeModel: some location dispatches here. A rule that every location proxies
   * inline needs no named location in the config (each location costs nginx memory).
   */
  referenced?: boolean;
  /**
   * Set by finalizeModel: the named location nginx uses for this rule. Rules whose named
   * locations would read the same (same target, settings and body limit) share one, named
   * after the first of them: every location costs nginx ~10 KB and ~20 µs per load.
   */
  nginxName?: string;
  /** Set by finalizeModel: this rule's server renders the shared named location here. */
  emit?: boolean;
  /** A GRPCRoute rule: grpc_pass (h2c) instead of proxy_pass. */
  grpc?: boolean;
  /**
   * One backend of a rule whose backendRefs have filters of their own: the name of the rule's
   * location, which sends this backend's share here (target kind 'backends'). Always rendered,
   * never shared with another rule's location.
   */
  dispatchedBy?: string;
}

/** What a path location does with a request. */
export type LocationAction =
  /**
   * Candidates carry conditions (model/matching.ts): set the dispatch key variable to `key`
   * and go to the named location `variable` names: a map (NginxModel.dispatchMaps) from the
   * key through `regexes`, the first that matches capturing the name as $1 (the last one
   * always matches: it captures `fallback`, a rule's named location or the 404 location).
   */
  | {
      kind: 'dispatch';
      /** "\n"-joined nginx variables, literal values and named-location names (the fallback's last). */
      key: string;
      /** One map entry each, in order (one regex holds at most MAX_ALTERNATIVES candidates). */
      regexes: string[];
      /** The map's variable: named after `regexes`, so locations that read alike share it. */
      variable: string;
      fallback: string;
      /** Named locations the regex and fallback may send to, best first (see also `runs`). */
      targets: string[];
      /** Per-server maps of RegularExpression-path candidates the regex reads. */
      runs: DispatchRun[];
      /** Set by finalizeModel: `key` and `fallback` with the shared named locations (nginxName). */
      nginxKey?: string;
      nginxFallback?: string;
    }
  /** The best candidate has no condition: proxy right here (no redirect). */
  | { kind: 'proxy'; source: RuleSource; target: ProxyTarget; settings: PolicySettings; timeout?: string; grpc?: boolean; filters?: LocationFilters }
  /** Nothing can match here. */
  | { kind: 'status'; code: number };

/** A per-server map naming the location of the first matching RegularExpression-path candidate of a run ("" = none). */
export interface DispatchRun {
  variable: string;
  /** Named locations it may name (the same array for every location reading it). */
  targets: string[];
}

export interface Location {
  /** 'exact' renders `location = path`, 'prefix' renders `location path`. */
  match: 'exact' | 'prefix';
  path: string;
  action: LocationAction;
  settings: PolicySettings;
}

export interface Server {
  port: number;
  /**
   * HTTPS: the PEM files (certificate + key, paths relative to the config directory) for this
   * server name; a name no HTTPS listener holds a certificate for refuses the handshake.
   */
  tls?: { certificates: string[]; clientValidation?: ServerClientValidation } | { rejectHandshake: true };
  /** HTTPS: answer 421 when the SNI map variable (NginxModel.sniMaps) is not this key. */
  misdirected?: { variable: string; key: string };
  /** Exact or wildcard names (`*.example.com`); empty for the catch-all default server. */
  serverNames: string[];
  defaultServer: boolean;
  /** Gateways whose listeners feed this server (Gateway-level policies apply here). */
  gateways: ObjectKey[];
  /**
   * IPAccessPolicy clientAddress of the server's Gateway: realip's set_real_ip_from /
   * real_ip_header (real_ip_recursive on), and `listen ... proxy_protocol` for ProxyProtocol.
   */
  clientAddress?: ServerClientAddress;
  locations: Location[];
  ruleLocations: RuleLocation[];
  settings: PolicySettings;
  /**
   * Set when the server's routes are GRPCRoutes: nginx's error statuses are answered as gRPC
   * statuses (model/grpc.ts), error_page applying again after the dispatch's own redirect.
   */
  grpcErrors?: GrpcErrorPage[];
  /** nginx < 1.25.1 only: `listen ... http2` (the port carries GRPCRoutes alone). */
  http2Listen?: boolean;
  /**
   * Set by finalizeModel: error_page applies again after a redirect by error_page (a rule's
   * location that dispatches to its backends' locations is itself reached through one).
   */
  recursiveErrorPages?: boolean;
}

/**
 * ssl_client_certificate / ssl_verify_client of an HTTPS server (Gateway spec.tls.frontend).
 * AllowValidOnly (`required`): ssl_verify_client on against `ca`, and a client that fails has its
 * connection closed. AllowInsecureFallback: optional_no_ca without CAs: a certificate is asked
 * for and every client is served. nginx cannot serve a request whose certificate failed its
 * check with other errors than an unknown issuer (400 instead), so with fallback nothing is
 * checked: nothing in the configuration acts on the outcome.
 */
export type ServerClientValidation = { ca: string; required: true } | { required: false };

export interface UpstreamServer {
  address: string;
  port: number;
}

export interface Upstream {
  name: string;
  /** The backend it stands for (namespace/name:port), for people reading the config. */
  backend: string;
  servers: UpstreamServer[];
  keepalive: number;
  /** `hash <variable> consistent` (session persistence) instead of round robin. */
  hash?: string;
}

/** A `map` block. Keys are regexes (rendered with a leading `~`), checked in order. */
export interface MapBlock {
  /** The source: nginx variables, possibly concatenated ("$c1$c2"). */
  source: string;
  /** The variable it defines, with `$`. */
  variable: string;
  entries: MapEntry[];
  default: string;
}

/**
 * `map $pc_k <variable> { volatile; "~regex" $1; ... default @portcullis_404; }`: the named
 * location of a dispatching location (LocationAction 'dispatch'). Volatile: $pc_k is set anew
 * by each location a request passes through.
 */
export interface DispatchMap {
  variable: string;
  regexes: string[];
}

export interface MapEntry {
  /** A PCRE regex matched case-sensitively against the source. */
  regex: string;
  /** A literal value or a capture reference ($1). */
  value: string;
  /** Set by finalizeModel when the value names a rule's named location: the shared one. */
  nginxValue?: string;
}

export interface SplitClients {
  /** Hashed key, e.g. $request_id. */
  key: string;
  variable: string;
  /** Percent strings like "33.33" with the last bucket taking the rest ("*"). */
  buckets: { percent: string | '*'; value: string }[];
}

export interface HttpContext {
  limitReqZones: LimitReqZone[];
  settings: PolicySettings;
  /** `http2 on`: HTTP/1.1 and h2c (gRPC) on every port (nginx >= 1.25.1). */
  http2?: boolean;
}

export interface ServerClientAddress {
  header: 'X-Forwarded-For' | 'proxy_protocol';
  /** Networks of the proxies whose header is believed (canonical). */
  trusted: string[];
  proxyProtocol: boolean;
}

export interface NginxModel {
  /** Set by finalizeModel: the geo blocks of IPAccessPolicies the locations read, one per variable. */
  accessGeos?: import('../policies/ipaccess/access').AccessGeo[];
  /** HTTPS ports: `map $ssl_server_name <variable> { hostnames; ... }` naming the listener group of each SNI. */
  sniMaps?: { variable: string; entries: { name: string; key: string }[]; default: string }[];
  /** Certificate files by path relative to the config directory (secret: never logged). */
  secretFiles?: Record<string, string>;
  http: HttpContext;
  /** Set by finalizeModel: the maps of RequestHeaderModifier `add`s (model/filters.ts), one per header and value. */
  headerAppends?: import('./filters').HeaderAppendMap[];
  /** Some rule proxies to InferencePools: the inference hop's upstream is rendered. */
  inferenceHop?: boolean;
  maps: MapBlock[];
  /** Set by finalizeModel: the dispatch maps of every server's locations, one per variable. */
  dispatchMaps?: DispatchMap[];
  splitClients: SplitClients[];
  /** Session persistence: the maps that read each session's token (model/session.ts). */
  sessionMaps?: TargetSession[];
  upstreams: Upstream[];
  servers: Server[];
  /** TLS, TCP and UDP listeners (nginx's stream context; model/streams.ts); absent: none. */
  stream?: import('./streams').StreamModel;
  /** Things the model could not express (e.g. a header name nginx cannot read); for the log. */
  warnings: string[];
}
