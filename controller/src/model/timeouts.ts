/**
 * HTTPRoute rules[].timeouts -> nginx.
 *
 * nginx has no deadline for a whole request or a whole backend exchange: it bounds each wait
 * instead (connecting, each write of the request, each read of the response). The rule's
 * timeout becomes those three waits, which gives the Gateway API's answer (504) when a backend
 * does not start answering in time (what its conformance tests check); a backend that keeps
 * sending, slowly, is not cut off at the deadline. backendRequest applies when given (the API
 * keeps it within request), else request; 0 disables a timeout, which nginx cannot do: a day
 * stands for it.
 */
import type { RouteRule } from '../graph/types';

/** What "no timeout" becomes (nginx reads 0 as "time out at once"). */
export const DISABLED_TIMEOUT = '1d';

export function proxyTimeout(timeouts: RouteRule['timeouts']): string | undefined {
  if (!timeouts) return undefined;
  const given = [timeouts.backendRequestMs, timeouts.requestMs].filter((t): t is number => t !== undefined);
  if (given.length === 0) return undefined;
  const enabled = given.filter((t) => t > 0);
  if (enabled.length === 0) return DISABLED_TIMEOUT;
  return `${Math.min(...enabled)}ms`;
}

/**
 * The wait for each attempt of a rule that retries: its backendRequest timeout when given (the
 * API's per-attempt deadline), else its request timeout; the request timeout then bounds all
 * attempts together (proxy_next_upstream_timeout, model/retry.ts).
 */
export function attemptTimeout(timeouts: RouteRule['timeouts']): string | undefined {
  if (!timeouts) return undefined;
  const t = timeouts.backendRequestMs ?? timeouts.requestMs;
  if (t === undefined) return undefined;
  return t > 0 ? `${t}ms` : DISABLED_TIMEOUT;
}
