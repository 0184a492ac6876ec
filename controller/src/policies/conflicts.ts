import type { Policy } from '../resources/policies';
import { comparePolicies, policyKey } from './keys';
import { KIND_MODULES } from './kinds';
import type { Attachment } from './targets';

/**
 * Fields two policies of one kind on one target cannot both set (NGINX Gateway Fabric's rule),
 * as each kind's module says (e.g. RateLimitPolicy's rules never conflict: they add up).
 */
export function exclusiveFields(policy: Policy): string[] {
  return KIND_MODULES[policy.kind].exclusiveFields(policy);
}

export interface Conflict {
  winner: Policy;
  /** spec fields both set, e.g. ["rateLimit.rejectCode"]. */
  fields: string[];
}

export interface TargetPolicies {
  /** Applied policies on this target, highest priority first. */
  applied: Attachment[];
  /** Losers: not applied on this target. */
  conflicted: Map<Attachment, Conflict>;
}

/**
 * Group attachments by (policy kind, target) and resolve conflicts: policies in priority
 * order (oldest creationTimestamp, then namespace, then name); a policy that sets a field an
 * applied higher-priority policy also sets loses on that target, entirely.
 */
export function resolveConflicts(attachments: Attachment[]): Map<string, TargetPolicies> {
  const groups = new Map<string, Attachment[]>();
  for (const a of attachments) {
    if (!a.target) continue;
    const key = `${a.policy.kind}|${a.key}`;
    const list = groups.get(key);
    if (list) list.push(a);
    else groups.set(key, [a]);
  }
  const out = new Map<string, TargetPolicies>();
  for (const [key, list] of groups) {
    // A policy naming the same target twice is refused by its schema; dedupe defensively.
    const unique = [...new Map(list.map((a) => [policyKey(a.policy), a])).values()];
    unique.sort((x, y) => comparePolicies(x.policy, y.policy));
    const applied: Attachment[] = [];
    const conflicted = new Map<Attachment, Conflict>();
    for (const candidate of unique) {
      const fields = exclusiveFields(candidate.policy);
      let lost: Conflict | undefined;
      for (const winner of applied) {
        const theirs = new Set(exclusiveFields(winner.policy));
        const shared = fields.filter((f) => theirs.has(f));
        if (shared.length > 0) {
          lost = { winner: winner.policy, fields: shared };
          break;
        }
      }
      if (lost) conflicted.set(candidate, lost);
      else applied.push(candidate);
    }
    out.set(key, { applied, conflicted });
  }
  return out;
}
