/**
 * RateLimitPolicy: rules add up across policies and levels (every limit_req of a location
 * applies); dryRun, logLevel and rejectCode are one per target (conflicts) and one per location
 * (merge.ts says how a route's and its Gateway's combine); each rule is a limit_req_zone at http
 * level whose key nginx cannot change while the zone runs.
 */
import { DEFAULT_LOG_LEVEL, DEFAULT_REJECT_CODE, type RateLimitPolicy } from '../../resources/policies';
import type { PolicyKindModule } from '../kind';
import { policyKey } from '../keys';
import type { Attachment } from '../targets';
import { checkZoneKeys, combineRateLimits, policyZones, rateLimitLevel, type RateLimitLevel } from './merge';
import { httpOnly } from '../unsupported';

export { checkZoneKeys, combineRateLimits, policyZones, rateLimitLevel, type KeyChange, type RateLimitLevel } from './merge';

export const rateLimitPolicies: PolicyKindModule<RateLimitLevel> = {
  kind: 'RateLimitPolicy',
  unsupported: httpOnly('RateLimitPolicy'),

  // Rules never conflict: they add up.
  exclusiveFields(policy) {
    const rl = (policy as RateLimitPolicy).spec.rateLimit ?? {};
    return (['dryRun', 'logLevel', 'rejectCode'] as const).filter((f) => rl[f] !== undefined).map((f) => `rateLimit.${f}`);
  },

  level(applied) {
    return rateLimitLevel(applied.map((a) => a.policy as RateLimitPolicy));
  },

  merge(place, out) {
    const rateLimit = combineRateLimits(place.gateway, place.route);
    if (rateLimit) out.rateLimit = rateLimit;
  },

  /** Every rule of a policy applied somewhere; a changed key keeps the live zone. */
  zones(accepted, previous, ctx) {
    const byPolicy = new Map<string, { policy: RateLimitPolicy; applied: Attachment[] }>();
    for (const a of accepted) {
      const entry = byPolicy.get(policyKey(a.policy)) ?? { policy: a.policy as RateLimitPolicy, applied: [] };
      entry.applied.push(a);
      byPolicy.set(policyKey(a.policy), entry);
    }
    const byZone = new Map<string, { applied: Attachment[]; ruleIndex: number }>();
    const wanted = [...byPolicy.values()].flatMap(({ policy, applied }) =>
      policyZones(policy).map((z, ruleIndex) => {
        byZone.set(z.id, { applied, ruleIndex });
        return z;
      }),
    );
    const check = checkZoneKeys(wanted, previous);
    for (const { zone, kept } of check.changes) {
      const owner = byZone.get(zone.id)!;
      const message =
        `spec.rateLimit.local.rules[${owner.ruleIndex}].key changed from "${kept.key}" to "${zone.key}" while zoneSize stays ${zone.size}: ` +
        `nginx cannot change the key of its running zone ${zone.id}, so that zone keeps its previous settings ` +
        `(key "${kept.key}", zoneSize ${kept.size}, rate ${kept.rate}); the rest of this policy is applied. ` +
        `To use the new key, change zoneSize together with key, or delete this policy and create it again.`;
      for (const a of owner.applied) ctx.invalidate(a, message, true);
    }
    return check.zones;
  },

  generate(settings, out) {
    const rl = settings.rateLimit;
    if (!rl) return;
    out.limitReq = rl.limits.map((l) => (l.burst !== undefined ? { zone: l.zone, burst: l.burst } : { zone: l.zone }));
    // nginx's defaults (off, error, 503) are left out: policies never set these at server or
    // http level, so a location without them gets the defaults (a third less config text).
    if (rl.dryRun) out.limitReqDryRun = true;
    if (rl.logLevel !== DEFAULT_LOG_LEVEL) out.limitReqLogLevel = rl.logLevel;
    if (rl.rejectCode !== DEFAULT_REJECT_CODE) out.limitReqStatus = rl.rejectCode;
  },
};
