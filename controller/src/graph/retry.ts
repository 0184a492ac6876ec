/**
 * HTTPRoute rules[].retry -> what the data plane acts on, and what it cannot.
 *
 * nginx retries a request on the next upstream server (proxy_next_upstream / grpc_next_upstream)
 * after a connection error or timeout and, when asked, after a response with one of a fixed set
 * of status codes. The Gateway API's required codes (500, 502, 503, 504) are all in that set;
 * other codes, and a backoff between attempts (nginx retries at once), are reported in the
 * route's Accepted condition as ignored. Connection errors are always retried when a retry
 * stanza is given, as the API says implementations should.
 */
import type { HTTPRouteRule } from '../resources/types';
import type { RuleRetry } from './types';

/** The status codes proxy_next_upstream and grpc_next_upstream name (http_403 ... http_504). */
export const NGINX_RETRIABLE_CODES: ReadonlySet<number> = new Set([403, 404, 429, 500, 502, 503, 504]);
/** Retries made when `attempts` is not given (implementation-specific in the API). */
export const DEFAULT_RETRY_ATTEMPTS = 1;
/**
 * More retries than this are not made: each attempt needs an upstream server entry of its own
 * (model/upstreams.ts), so the bound keeps the upstream block small.
 */
export const MAX_RETRY_ATTEMPTS = 16;

export function buildRetry(retry: NonNullable<HTTPRouteRule['retry']>, inference: boolean): { retry?: RuleRetry; unsupported: string[] } {
  // The inference hop proxies to the picked pod itself; nginx only sees the hop.
  if (inference) return { unsupported: ['retry'] };
  const unsupported: string[] = [];
  const codes: number[] = [];
  (retry.codes ?? []).forEach((code, i) => {
    if (NGINX_RETRIABLE_CODES.has(code)) codes.push(code);
    else unsupported.push(`retry.codes[${i}]`);
  });
  let attempts = retry.attempts ?? DEFAULT_RETRY_ATTEMPTS;
  if (attempts > MAX_RETRY_ATTEMPTS) {
    unsupported.push(`retry.attempts (at most ${MAX_RETRY_ATTEMPTS})`);
    attempts = MAX_RETRY_ATTEMPTS;
  }
  if (retry.backoff !== undefined) unsupported.push('retry.backoff');
  return { retry: { codes: codes.sort((a, b) => a - b), attempts }, unsupported };
}
