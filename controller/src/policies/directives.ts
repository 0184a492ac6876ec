/**
 * The nginx directives policies set, as the model carries them (model/types.ts re-exports these
 * types), and how EffectivePolicies become them. The model looks up which settings apply where
 * (model/policy-settings.ts); what the settings say is decided here.
 */
import { DEFAULT_LOG_LEVEL, DEFAULT_REJECT_CODE } from '../resources/policies';
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

/** One proxying location's settings as model fields (only what policies set). */
export function toPolicySettings(p: LocationPolicies): PolicySettings {
  const s: PolicySettings = {};
  if (p.rateLimit) {
    s.limitReq = p.rateLimit.limits.map((l) => (l.burst !== undefined ? { zone: l.zone, burst: l.burst } : { zone: l.zone }));
    // nginx's defaults (off, error, 503) are left out: policies never set these at server or
    // http level, so a location without them gets the defaults (a third less config text).
    if (p.rateLimit.dryRun) s.limitReqDryRun = true;
    if (p.rateLimit.logLevel !== DEFAULT_LOG_LEVEL) s.limitReqLogLevel = p.rateLimit.logLevel;
    if (p.rateLimit.rejectCode !== DEFAULT_REJECT_CODE) s.limitReqStatus = p.rateLimit.rejectCode;
  }
  if (p.proxy) {
    if (p.proxy.buffering !== undefined) s.proxyBuffering = p.proxy.buffering;
    if (p.proxy.bufferSize !== undefined) s.proxyBufferSize = p.proxy.bufferSize;
    if (p.proxy.buffers !== undefined) s.proxyBuffers = { ...p.proxy.buffers };
    if (p.proxy.busyBuffersSize !== undefined) s.proxyBusyBuffersSize = p.proxy.busyBuffersSize;
  }
  if (p.clientMaxBodySize !== undefined) s.clientMaxBodySize = p.clientMaxBodySize;
  return s;
}
