/**
 * Rate limits: what each target level contributes, how a route location combines its
 * Gateway's limits with its own, and which zones nginx can load without refusing the reload.
 */
import { DEFAULT_LOG_LEVEL, DEFAULT_REJECT_CODE, DEFAULT_ZONE_SIZE, sizeBytes, type RateLimitLogLevel, type RateLimitPolicy } from '../../resources/policies';
import { zoneId } from '../keys';
import type { LocationRateLimit, RateLimitRef, RateLimitZone } from '../types';

/** The rate-limit settings one target (a Gateway or a route) gets from its applied policies. */
export interface RateLimitLevel {
  limits: RateLimitRef[];
  dryRun?: boolean;
  logLevel?: RateLimitLogLevel;
  rejectCode?: number;
}

/** Policies in priority order; conflicts are resolved, so at most one sets each of dryRun/logLevel/rejectCode. */
export function rateLimitLevel(policies: RateLimitPolicy[]): RateLimitLevel | undefined {
  if (policies.length === 0) return undefined;
  const level: RateLimitLevel = { limits: [] };
  for (const p of policies) {
    const rl = p.spec.rateLimit;
    (rl?.local?.rules ?? []).forEach((rule, i) => {
      const ref: RateLimitRef = { zone: zoneId(p.metadata.namespace, p.metadata.name, i) };
      if (rule.burst !== undefined && rule.burst > 0) ref.burst = rule.burst;
      level.limits.push(ref);
    });
    level.dryRun ??= rl?.dryRun;
    level.logLevel ??= rl?.logLevel;
    level.rejectCode ??= rl?.rejectCode;
  }
  return level;
}

/**
 * One location's limits from its Gateway level and its route level. Both sets apply (nginx
 * runs every limit_req of the location; the lowest rate governs). nginx has one dry-run switch,
 * one log level and one reject status per location, so:
 * - dryRun: a route cannot switch the Gateway's enforced limits to dry run, and a Gateway in dry
 *   run must not start blocking a route's traffic; when one level is in dry run and the other
 *   enforces, the dry-run level's limits are left out of this location (they could only be
 *   enforced or relax the others). A dryRun set by a level without limits changes nothing.
 * - logLevel and rejectCode: the route's value when it sets one, else the Gateway's, else nginx's
 *   defaults (error, 503) - the status a client sees belongs to the API it calls, and
 *   NGINX Gateway Fabric users see the route's code win too.
 */
export function combineRateLimits(gateway: RateLimitLevel | undefined, route: RateLimitLevel | undefined): LocationRateLimit | undefined {
  const levels = [gateway, route].filter((l): l is RateLimitLevel => l !== undefined);
  const withLimits = levels.filter((l) => l.limits.length > 0);
  if (withLimits.length === 0) return undefined;
  const enforced = withLimits.filter((l) => l.dryRun !== true);
  const kept = enforced.length > 0 && enforced.length < withLimits.length ? enforced : withLimits;
  const dryRun = kept.every((l) => l.dryRun === true);
  return {
    limits: kept.flatMap((l) => l.limits),
    dryRun,
    logLevel: route?.logLevel ?? gateway?.logLevel ?? DEFAULT_LOG_LEVEL,
    rejectCode: route?.rejectCode ?? gateway?.rejectCode ?? DEFAULT_REJECT_CODE,
  };
}

/** The zones a policy's rules define (defaults as NGINX Gateway Fabric: size 10m). */
export function policyZones(policy: RateLimitPolicy): RateLimitZone[] {
  return (policy.spec.rateLimit?.local?.rules ?? []).map((rule, i) => ({
    id: zoneId(policy.metadata.namespace, policy.metadata.name, i),
    key: rule.key,
    size: rule.zoneSize ?? DEFAULT_ZONE_SIZE,
    rate: rule.rate,
  }));
}

export interface KeyChange {
  zone: RateLimitZone;
  /** The definition nginx keeps running, which this configuration keeps too. */
  kept: RateLimitZone;
}

/**
 * nginx reuses a shared memory zone across a reload when its name and size are unchanged, and
 * then refuses the whole reload if the key differs ("limit_req ... uses the ... key while
 * previously it used the ... key"); `nginx -t` does not see it. A zone whose key changed while
 * its size stayed keeps its previous definition; any other change (rate, size, a new zone)
 * goes through.
 */
export function checkZoneKeys(next: RateLimitZone[], previous: RateLimitZone[] | undefined): { zones: RateLimitZone[]; changes: KeyChange[] } {
  const before = new Map((previous ?? []).map((z) => [z.id, z]));
  const changes: KeyChange[] = [];
  const zones = next.map((zone) => {
    const old = before.get(zone.id);
    if (old && old.key !== zone.key && sizeBytes(old.size) === sizeBytes(zone.size)) {
      changes.push({ zone, kept: old });
      return old;
    }
    return zone;
  });
  return { zones, changes };
}
