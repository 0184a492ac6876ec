/**
 * HTTPRoute rules[].retry (graph/retry.ts kept what nginx can do) -> proxy_next_upstream.
 *
 * Connection errors and timeouts are retried whenever a rule has a retry stanza; the codes
 * given add their http_NNN conditions. non_idempotent: the Gateway API retries a request
 * whatever its method, and nginx otherwise never retries a POST, LOCK or PATCH once sent.
 * With retries, the rule's backendRequest timeout bounds each attempt and its request timeout
 * all of them together (model/timeouts.ts).
 */
import type { RouteRule } from '../graph/types';
import type { TargetRetry } from './types';

export function targetRetry(rule: RouteRule): TargetRetry | undefined {
  if (!rule.retry) return undefined;
  const out: TargetRetry = {
    conditions: ['error', 'timeout', ...rule.retry.codes.map((c) => `http_${c}`), 'non_idempotent'],
    tries: rule.retry.attempts + 1,
  };
  const requestMs = rule.timeouts?.requestMs;
  if (requestMs !== undefined && requestMs > 0) out.timeout = `${requestMs}ms`;
  return out;
}

export function retrySignature(r: TargetRetry | undefined): string {
  return r ? `${r.conditions.join(',')}/${r.tries}/${r.timeout ?? ''}` : '';
}
