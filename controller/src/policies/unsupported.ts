import { HTTP_ROUTE_KINDS, type PolicyKind } from '../resources/policies';
import type { PolicyTarget } from './types';

/**
 * The answer of the kinds that set how HTTP requests are handled (rate limits, proxy buffering,
 * body size): a TLSRoute, TCPRoute or UDPRoute carries whole connections, with no request to
 * count, no response to buffer and no body to measure, even when the gateway terminates TLS
 * (the plaintext is proxied as bytes).
 */
export function httpOnly(kind: PolicyKind): (target: PolicyTarget) => string | undefined {
  return (target) =>
    target.kind === 'Gateway' || HTTP_ROUTE_KINDS.includes(target.kind)
      ? undefined
      : `${kind} sets how HTTP requests are handled, and a ${target.kind} carries whole connections without HTTP ` +
        `(TLS passed through, or terminated and proxied as bytes), so it has nothing to act on there: the policy is not applied to ` +
        `${target.kind} ${target.namespace}/${target.name}. It applies to HTTPRoutes and GRPCRoutes; IPAccessPolicy applies to every route kind.`;
}
