/**
 * GRPCRoute (gateway.networking.k8s.io/v1): parsed with every CRD default and validation rule
 * applied, as for HTTPRoute. Filters are kept as given (the graph decides which it supports).
 */
import { backendRefFields, filterSchema as httpFilterSchema, requireServicePort } from './filters';
import { z } from 'zod';
import { objectMetaSchema } from './metadata';
import { parentReferenceSchema } from './httproute';
import type { HTTPBackendRef, HTTPRouteFilter, ObjectMeta, ParentReference, SessionPersistence, ValueMatchType } from './types';
import { sessionPersistenceSchema } from './session-persistence';
import { checkRouteRules, headerName, hostname, sectionName } from './validation';

export interface GRPCMethodMatch {
  /** Default Exact. */
  type: ValueMatchType;
  service?: string;
  method?: string;
}

export interface GRPCHeaderMatch {
  type: ValueMatchType;
  name: string;
  value: string;
}

export interface GRPCRouteMatch {
  method?: GRPCMethodMatch;
  headers: GRPCHeaderMatch[];
}

/** The same shape as an HTTPRoute's: a BackendRef with HTTP filters. */
export type GRPCBackendRef = HTTPBackendRef;

export interface GRPCRouteRule {
  name?: string;
  /** [] = every call. */
  matches: GRPCRouteMatch[];
  filters: HTTPRouteFilter[];
  backendRefs: GRPCBackendRef[];
  sessionPersistence?: SessionPersistence;
}

export interface GRPCRoute {
  apiVersion: string;
  kind: 'GRPCRoute';
  metadata: ObjectMeta;
  spec: {
    parentRefs: ParentReference[];
    hostnames: string[];
    rules: GRPCRouteRule[];
  };
}

// The CRD's own patterns for Exact values (a fully qualified service, a method name).
const SERVICE_RE = /^(?:\.?[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)$/;
const METHOD_RE = /^[A-Za-z_][A-Za-z_0-9]*$/;

const methodMatchSchema = z
  .object({
    type: z.enum(['Exact', 'RegularExpression']).default('Exact'),
    service: z.string().max(1024).optional(),
    method: z.string().max(1024).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.service === undefined && m.method === undefined) {
      ctx.addIssue({ code: 'custom', message: 'One or both of service or method must be specified' });
    }
    if (m.type !== 'Exact') return;
    if (m.service !== undefined && !SERVICE_RE.test(m.service)) {
      ctx.addIssue({ code: 'custom', path: ['service'], message: `service must be a fully qualified gRPC service name (${SERVICE_RE.source}) when type is Exact` });
    }
    if (m.method !== undefined && !METHOD_RE.test(m.method)) {
      ctx.addIssue({ code: 'custom', path: ['method'], message: `method must be a gRPC method name (${METHOD_RE.source}) when type is Exact` });
    }
  });

const headerMatchSchema = z.object({
  type: z.enum(['Exact', 'RegularExpression']).default('Exact'),
  name: headerName(),
  value: z.string().min(1).max(4096),
});

const matchSchema = z.object({
  method: methodMatchSchema.optional(),
  headers: z
    .array(headerMatchSchema)
    .max(16)
    .default([])
    .superRefine((headers, ctx) => {
      const seen = new Set<string>();
      headers.forEach((h, i) => {
        if (seen.has(h.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate entry with name "${h.name}"` });
        seen.add(h.name);
      });
    }),
});

const GRPC_FILTER_TYPES = ['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror', 'ExtensionRef'] as const;
const filterSchema = httpFilterSchema.refine((f) => (GRPC_FILTER_TYPES as readonly string[]).includes(f.type), {
  path: ['type'],
  message: `GRPCRoute filter type must be one of ${GRPC_FILTER_TYPES.join(', ')}`,
});

const backendRefSchema = z
  .object({
    ...backendRefFields,
    filters: z.array(filterSchema).max(16).default([]),
  })
  .superRefine(requireServicePort);

const ruleSchema = z.object({
  name: sectionName().optional(),
  matches: z.array(matchSchema).max(64).default([]),
  filters: z
    .array(filterSchema)
    .max(16)
    .default([])
    .superRefine((filters, ctx) => {
      for (const once of ['RequestHeaderModifier', 'ResponseHeaderModifier']) {
        if (filters.filter((f) => f.type === once).length > 1) ctx.addIssue({ code: 'custom', message: `${once} filter cannot be repeated` });
      }
    }),
  backendRefs: z.array(backendRefSchema).max(16).default([]),
  sessionPersistence: sessionPersistenceSchema.optional(),
});

export const grpcRouteSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('GRPCRoute'),
  metadata: objectMetaSchema,
  spec: z
    .object({
      parentRefs: z.array(parentReferenceSchema).max(32).default([]),
      hostnames: z.array(hostname()).max(16).default([]),
      rules: z
        .array(ruleSchema)
        .max(16)
        .default([])
        .superRefine(checkRouteRules),
    })
    .prefault({}),
}) satisfies z.ZodType<GRPCRoute, unknown>;
