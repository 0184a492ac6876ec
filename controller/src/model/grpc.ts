/**
 * What gRPC needs of the nginx model: GRPCRoute precedence, and nginx's own error answers
 * turned into gRPC statuses on servers that carry GRPCRoutes (a gRPC client cannot read an
 * HTML error page: it wants HTTP 200 with grpc-status and grpc-message in the trailers).
 */
import type { RouteMatch, RouteRule } from '../graph/types';
import type { ProxyTarget } from './types';
import type { HostKey } from './hosts';

/**
 * GRPCRoute spec order: hostname (non-wildcard characters, then characters), characters of the
 * matching service, of the matching method, number of header matches; route age, name and
 * rule order come from the stable sort (as for HTTPRoute). Bigger = better; fits 2^53.
 */
export function grpcPrecedenceKey(hostKey: HostKey, match: RouteMatch): number {
  const g = match.grpc ?? { serviceChars: 0, methodChars: 0 };
  let k = Math.min(hostKey[0], 255);
  k = k * 256 + Math.min(hostKey[1], 255);
  k = k * 1025 + Math.min(g.serviceChars, 1024);
  k = k * 1025 + Math.min(g.methodChars, 1024);
  return k * 32 + Math.min(new Set(match.headers.map((h) => h.name.toLowerCase())).size, 31);
}

/** One nginx-generated HTTP status and the gRPC status a client gets instead. */
export interface GrpcErrorPage {
  code: number;
  grpcStatus: number;
  message: string;
  /** The named location answering it. */
  location: string;
}

/**
 * nginx's statuses as gRPC codes: the gRPC project's HTTP-to-gRPC table, except where nginx
 * tells us more than the HTTP code does (429/413: the client sent too much, RESOURCE_EXHAUSTED;
 * 504/408: a deadline passed, DEADLINE_EXCEEDED; 404: no route for the method, UNIMPLEMENTED).
 */
const GRPC_STATUS: Record<number, [number, string]> = {
  400: [13, 'bad request'],
  401: [16, 'unauthenticated'],
  403: [7, 'permission denied'],
  404: [12, 'no route for this method'],
  405: [12, 'method not allowed'],
  408: [4, 'request timeout'],
  413: [8, 'request body too large'],
  414: [13, 'request URI too long'],
  429: [8, 'rate limit exceeded'],
  431: [13, 'request headers too large'],
  500: [13, 'internal error'],
  502: [14, 'backend unavailable'],
  503: [14, 'service unavailable'],
  504: [4, 'backend timeout'],
};

/** gRPC status for an HTTP status nginx produces (UNKNOWN when no better one exists). */
export function grpcStatusFor(code: number): [number, string] {
  return GRPC_STATUS[code] ?? [2, `HTTP status ${code}`];
}

/** The error pages of a gRPC server: the usual statuses plus any reject code its policies set. */
export function grpcErrorPages(extraCodes: Iterable<number>): GrpcErrorPage[] {
  const codes = new Set(Object.keys(GRPC_STATUS).map(Number));
  for (const c of extraCodes) if (c >= 400 && c <= 599) codes.add(c);
  return [...codes]
    .sort((a, b) => a - b)
    .map((code) => {
      const [grpcStatus, message] = grpcStatusFor(code);
      return { code, grpcStatus, message, location: `@portcullis_grpc_${code}` };
    });
}

/**
 * A GRPCRoute rule whose backends all have weight 0 can take no call: gRPC clients get
 * UNAVAILABLE (the Gateway API's GRPCRoute conformance), so nginx answers 503, not the 500
 * (INTERNAL) an HTTPRoute gets; undefined: the usual target.
 */
export function grpcNoWeightTarget(rule: Pick<RouteRule, 'backends'>): ProxyTarget | undefined {
  if (rule.backends.length > 0 && rule.backends.every((b) => !(b.weight > 0))) return { kind: 'status', code: 503 };
  return undefined;
}
