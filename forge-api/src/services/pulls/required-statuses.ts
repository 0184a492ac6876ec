/**
 * Whether a pull request's head passes the commit statuses its base branch requires (Gitea's
 * IsPullCommitStatusPass and MergeRequiredContextsCommitStatus): with no protection rule, or a
 * rule whose status check is off, nothing is required; otherwise the newest status of every
 * context counts, narrowed to the rule's context globs when it names some. A required glob no
 * status matches keeps the state pending (or failure, when a matched one failed).
 */
import { compileGlob } from '../glob';
import { combineStates } from '../git-data/statuses';
import type { ProtectionRule } from '../branch-protection';

export interface LatestStatus {
  context: string;
  state: string;
}

/** The state the required contexts give (Gitea's MergeRequiredContextsCommitStatus). */
export function requiredContextsState(statuses: LatestStatus[], contexts: string[]): string {
  if (!statuses.length) return 'pending';
  if (!contexts.length) return combineStates(statuses.map((s) => s.state));
  const matched: LatestStatus[] = [];
  let allMatched = true;
  for (const pattern of new Set(contexts)) {
    let match: (s: string) => boolean;
    try {
      const glob = compileGlob(pattern);
      match = (s) => glob.match(s);
    } catch {
      continue; // Gitea logs a glob that does not compile and leaves it out
    }
    const these = statuses.filter((s) => match(s.context));
    matched.push(...these);
    if (!these.length) allMatched = false;
  }
  if (!matched.length) return 'pending';
  const state = combineStates(matched.map((s) => s.state));
  if (allMatched || state === 'failure') return state;
  return 'pending';
}

/** Gitea's IsPullCommitStatusPass for the rule of the base branch (null: no rule). */
export function statusChecksPass(rule: ProtectionRule | null, statuses: LatestStatus[]): boolean {
  if (!rule || !rule.settings.enable_status_check) return true;
  return requiredContextsState(statuses, rule.settings.status_check_contexts ?? []) === 'success';
}
