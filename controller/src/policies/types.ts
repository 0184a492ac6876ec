/**
 * Policies after attachment, conflicts and merging: plain data the model renders as nginx
 * directives, and the statuses the policies and their targets get. Pure: no I/O here.
 */
import type { ObjectRef } from '../graph/types';
import type { GraphCondition, PolicyAncestorStatus, PolicyReason, StatusCondition, StatusReport, TargetAffected } from '../conditions/types';
import type { ClientAddress, InvalidPolicy, Policy, RateLimitLogLevel, TargetKind } from '../resources/policies';

// ---------------------------------------------------------------- input

/** A Gateway or route that exists and is handled by this controller. */
export interface PolicyTarget {
  kind: TargetKind;
  namespace: string;
  name: string;
  generation: number;
  /** Routes only: the Gateways the route is accepted on (its nginx locations live there). */
  gateways?: ObjectRef[];
}

export interface PolicyInput {
  /** Policies that passed their schema. */
  policies: Policy[];
  invalid?: InvalidPolicy[];
  /** Every target that exists (see targetsFromGraph). */
  targets: PolicyTarget[];
  /**
   * The effective policies of the configuration nginx runs now (the last one applied
   * successfully); undefined on the first run. Zones and locations whose new settings nginx
   * would refuse keep these.
   */
  previous?: EffectivePolicies;
  controllerName?: string;
  /** nginx's defaults for proxy_buffer_size / proxy_buffers depend on the memory page size. */
  pageSize?: number;
}

// ---------------------------------------------------------------- effective settings

/** `limit_req_zone <key> zone=<id>:<size> rate=<rate>;` at http level. */
export interface RateLimitZone {
  /** `<namespace>_rl_<policy_name>_rule<rule_index>` */
  id: string;
  key: string;
  /** As written in the policy (default 10m), e.g. "10m". */
  size: string;
  /** e.g. "10r/s", "30r/m". */
  rate: string;
}

/** `limit_req zone=<zone> [burst=<burst>];` - never nodelay: excess within burst is delayed. */
export interface RateLimitRef {
  zone: string;
  burst?: number;
}

/** Everything limit_req needs in one location; all four values are explicit. */
export interface LocationRateLimit {
  limits: RateLimitRef[];
  /** limit_req_dry_run on|off */
  dryRun: boolean;
  /** limit_req_log_level (nginx logs delays one level lower: error -> warn). */
  logLevel: RateLimitLogLevel;
  /** limit_req_status */
  rejectCode: number;
}

/** Only the fields a policy sets; the others keep nginx's defaults. */
export interface LocationProxySettings {
  /** proxy_buffering on|off (false when a policy sets buffering.disable: true). */
  buffering?: boolean;
  /** proxy_buffer_size */
  bufferSize?: string;
  /** proxy_buffers <number> <size> */
  buffers?: { number: number; size: string };
  /** proxy_busy_buffers_size */
  busyBuffersSize?: string;
}

/** IPAccessPolicy's lists for one place: canonical networks (host bits cleared), sorted. */
export interface LocationIpAccess {
  allow?: string[];
  deny?: string[];
}

/** The policy settings of one proxying location (a route rule's location). */
export interface LocationPolicies {
  rateLimit?: LocationRateLimit;
  proxy?: LocationProxySettings;
  /** client_max_body_size */
  clientMaxBodySize?: string;
  ipAccess?: LocationIpAccess;
  /**
   * A Gateway's own place only (EffectivePolicies.gateways): where its servers read the client
   * address from (IPAccessPolicy clientAddress); absent: the connection's peer.
   */
  clientAddress?: ClientAddress;
}

export interface EffectivePolicies {
  /** Every zone a location references, sorted by id. */
  zones: RateLimitZone[];
  /** Gateway-level settings, key `namespace/name` of the Gateway. */
  gateways: Record<string, LocationPolicies>;
  /**
   * Settings of routes that have route-level policies: key routeKey(kind, ns, name), then
   * Gateway key. Routes without own policies take their Gateway's settings; read through
   * locationPolicies().
   */
  routes: Record<string, Record<string, LocationPolicies>>;
}

// ---------------------------------------------------------------- status

export interface PolicyResult {
  effective: EffectivePolicies;
  /** One per policy (valid or invalid): status.ancestors. */
  statuses: StatusReport[];
  /** Targets some applied policy affects; a target absent here has no `<Kind>Affected` condition. */
  affected: TargetAffected[];
}

export type { InvalidPolicy };
export type { GraphCondition, ObjectRef, PolicyAncestorStatus, PolicyReason, StatusCondition, StatusReport, TargetAffected };
