/**
 * The nginx directives policies set, as the model carries them (model/types.ts re-exports these
 * types), and how EffectivePolicies become them. The model looks up which settings apply where
 * (model/policy-settings.ts); what the settings say is decided here.
 */
import type { AccessGeo } from './ipaccess/access';
import { KINDS } from './kinds';
import type { EffectivePolicies, LocationPolicies } from './types';

/** Directives a policy may set. Every field is optional: unset means "nginx's default / inherited". */
export interface PolicySettings {
  /** limit_req lines (one per zone). nginx does not inherit these into a level that has its own. */
  limitReq?: LimitReq[];
  /** limit_req_status (4xx/5xx). */
  limitReqStatus?: number;
  /** limit_req_log_level: info | notice | warn | error. */
  limitReqLogLevel?: 'info' | 'notice' | 'warn' | 'error';
  /** limit_req_dry_run on|off. */
  limitReqDryRun?: boolean;
  /** proxy_buffering on|off. */
  proxyBuffering?: boolean;
  /** proxy_buffer_size, e.g. "4k". */
  proxyBufferSize?: string;
  /** proxy_buffers <number> <size>. */
  proxyBuffers?: { number: number; size: string };
  /** proxy_busy_buffers_size. */
  proxyBusyBuffersSize?: string;
  /** client_max_body_size ("0" disables the check; unit-less = bytes). */
  clientMaxBodySize?: string;
  /** IPAccessPolicy: `if (<geo variable>) { return 403; }`, the geo block at http level. */
  ipAccess?: AccessGeo;
}

export interface LimitReq {
  zone: string;
  /** Omitted: excess requests are rejected at once. With burst they are delayed (no nodelay). */
  burst?: number;
}

/** limit_req_zone at http level. */
export interface LimitReqZone {
  name: string;
  /** An nginx variable such as $binary_remote_addr. */
  key: string;
  /** Shared memory size, e.g. "10m". */
  size: string;
  /** e.g. "10r/s" or "30r/m". */
  rate: string;
}

/** http-level `limit_req_zone` lines. */
export function modelZones(effective: EffectivePolicies): LimitReqZone[] {
  return effective.zones.map((z) => ({ name: z.id, key: z.key, size: z.size, rate: z.rate }));
}

/** One proxying location's settings as model fields (only what policies set), kind by kind. */
export function toPolicySettings(p: LocationPolicies): PolicySettings {
  const s: PolicySettings = {};
  for (const kind of KINDS) kind.generate(p, s);
  return s;
}
