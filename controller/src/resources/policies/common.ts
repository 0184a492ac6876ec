import { z } from 'zod';
import { objectMetaSchema } from '../metadata';
import { GATEWAY_API_GROUP, type ObjectMeta } from '../types';
import { objectName } from '../validation';
import { BODY_SIZE_PATTERN, BODY_SIZE_RE, BUFFER_SIZE_PATTERN, BUFFER_SIZE_RE } from './size';

export const POLICY_GROUP = 'gateway.portcullis.dev';
export const POLICY_VERSION = 'v1alpha1';
export const POLICY_API_VERSION = `${POLICY_GROUP}/${POLICY_VERSION}`;

/**
 * Every policy kind may name the routes of whole connections too: what a kind does not do there
 * is a condition on the policy (policies/<kind>/: unsupported), not a refusal at the API server.
 */
export const TARGET_KINDS = ['Gateway', 'HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];
export type RouteTargetKind = Exclude<TargetKind, 'Gateway'>;
export const ROUTE_KINDS: readonly RouteTargetKind[] = ['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute'];
/** Routes of HTTP requests: where the request-level policies act. */
export const HTTP_ROUTE_KINDS: readonly RouteTargetKind[] = ['HTTPRoute', 'GRPCRoute'];

/** A Gateway API LocalPolicyTargetReference: the target lives in the policy's namespace. */
export interface TargetRef {
  group: typeof GATEWAY_API_GROUP;
  kind: TargetKind;
  name: string;
}

export const targetRefSchema = z.strictObject({
  group: z.literal(GATEWAY_API_GROUP, { message: `must be ${GATEWAY_API_GROUP}` }),
  kind: z.enum(TARGET_KINDS, { message: `must be one of ${TARGET_KINDS.join(', ')}` }),
  name: objectName(),
});

/**
 * The targets an invalid document names, read without trusting its shape: only entries with
 * a known kind and a string name count (its status ancestors, and its stand-in's targets).
 */
export function looseTargetRefs(doc: unknown): { kind: TargetKind; name: string }[] {
  const spec = (doc as { spec?: { targetRefs?: unknown; targetRef?: unknown } } | null)?.spec;
  const raw = Array.isArray(spec?.targetRefs) ? spec.targetRefs : spec?.targetRef !== undefined ? [spec.targetRef] : [];
  const out: { kind: TargetKind; name: string }[] = [];
  const seen = new Set<string>();
  for (const ref of raw) {
    const r = ref as { kind?: unknown; name?: unknown } | null;
    if (typeof r?.kind !== 'string' || typeof r.name !== 'string' || r.name === '') continue;
    if (!(TARGET_KINDS as readonly string[]).includes(r.kind)) continue;
    const key = `${r.kind}/${r.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ kind: r.kind as TargetKind, name: r.name });
    if (out.length === 16) break; // Gateway API caps status.ancestors at 16
  }
  return out;
}

/** Messages shared with the CRDs' CEL rules (charts/portcullis/crds), word for word. */
export const MESSAGES = {
  mixedTargets: 'must not mix kind Gateway with route kinds (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute)',
  duplicateTarget: 'kind and name combination must be unique',
  busyAboveBufferSize: 'busyBuffersSize must be greater than bufferSize',
  busyBelowBuffers: 'busyBuffersSize must be less than buffers.number * buffers.size - buffers.size',
  busyAtLeastOneBuffer: 'busyBuffersSize must be at least buffers.size',
  zoneTooSmall: 'zoneSize must be at least 32k (nginx needs 8 memory pages per zone)',
  zoneTooLarge: 'zoneSize must be at most 1024m',
  clientAddressGatewayOnly: 'clientAddress may only be set by a policy whose targets are Gateways',
  trustedCIDRsRequired: 'trustedCIDRs is required when source is XForwardedFor or ProxyProtocol',
  trustedCIDRsUnused: 'trustedCIDRs must not be set when source is Connection',
} as const;

/** targetRefs of RateLimitPolicy, ProxySettingsPolicy and IPAccessPolicy: 1..16, unique, Gateway or routes. */
export const targetRefsSchema = z
  .array(targetRefSchema)
  .min(1)
  .max(16)
  .superRefine((refs, ctx) => {
    const hasGateway = refs.some((r) => r.kind === 'Gateway');
    const hasRoute = refs.some((r) => r.kind !== 'Gateway');
    if (hasGateway && hasRoute) ctx.addIssue({ code: 'custom', message: MESSAGES.mixedTargets });
    const seen = new Set<string>();
    refs.forEach((ref, i) => {
      const key = `${ref.kind}/${ref.name}`;
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i], message: `${MESSAGES.duplicateTarget} (${key} appears twice)` });
      seen.add(key);
    });
  });

export const bufferSize = () =>
  z.string().max(16).regex(BUFFER_SIZE_RE, {
    message: `must be a size: bytes, or a number with unit k or m, e.g. 4k, 16k, 1m (${BUFFER_SIZE_PATTERN})`,
  });

export const bodySize = () =>
  z.string().max(16).regex(BODY_SIZE_RE, {
    message: `must be a size: bytes, or a number with unit k, m or g, e.g. 1048576, 512k, 10m (${BODY_SIZE_PATTERN})`,
  });

export { objectMetaSchema };
export type { ObjectMeta };

/** `kind: <Kind>` with our group only; other groups never reach these schemas. */
export function policyEnvelope<K extends string>(kind: K) {
  return {
    apiVersion: z.literal(POLICY_API_VERSION, { message: `must be ${POLICY_API_VERSION}` }),
    kind: z.literal(kind),
    metadata: objectMetaSchema,
    // Status is written by the controller; a manifest that carries one is not an error.
    status: z.unknown().optional(),
  };
}
