import { z } from 'zod';
import { GATEWAY_API_GROUP, type HTTPRoute, type HTTPRouteFilter } from './types';
import { objectMetaSchema } from './metadata';
import { backendRefFields, checkFilterList, filterSchema, requireServicePort } from './filters';
import { sessionPersistenceSchema } from './session-persistence';
import { checkRouteRules, duration, durationMs, group, headerName, hostname, kind, namespaceName, objectName, pathValueProblem, portNumber, sectionName } from './validation';

export const parentReferenceSchema = z.object({
  group: group().default(GATEWAY_API_GROUP),
  kind: kind().default('Gateway'),
  namespace: namespaceName().optional(),
  name: objectName(),
  sectionName: sectionName().optional(),
  port: portNumber().optional(),
});

const pathMatchSchema = z
  .object({
    type: z.enum(['Exact', 'PathPrefix', 'RegularExpression']).default('PathPrefix'),
    value: z.string().max(1024).default('/'),
  })
  .superRefine((path, ctx) => {
    if (path.type === 'RegularExpression') return;
    const problem = pathValueProblem(path.value);
    if (problem) ctx.addIssue({ code: 'custom', path: ['value'], message: problem });
  });

const headerMatchSchema = z.object({
  type: z.enum(['Exact', 'RegularExpression']).default('Exact'),
  name: headerName(),
  value: z.string().min(1).max(4096),
});

const queryParamMatchSchema = z.object({
  type: z.enum(['Exact', 'RegularExpression']).default('Exact'),
  name: headerName(),
  value: z.string().min(1).max(1024),
});

/** Exact duplicates are rejected as the CRD's list-map does; case-variants are the graph's business. */
function uniqueNames<T extends { name: string }>(items: T[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate entry with name "${item.name}"` });
    seen.add(item.name);
  });
}

const routeMatchSchema = z.object({
  path: pathMatchSchema.prefault({}),
  headers: z.array(headerMatchSchema).max(16).default([]).superRefine(uniqueNames),
  queryParams: z.array(queryParamMatchSchema).max(16).default([]).superRefine(uniqueNames),
  method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']).optional(),
});


const backendRefSchema = z
  .object({
    ...backendRefFields,
    filters: z.array(filterSchema).max(16).default([]).superRefine(checkFilterList),
  })
  .superRefine(requireServicePort);

const usesPrefixReplacement = (filters: HTTPRouteFilter[], type: 'requestRedirect' | 'urlRewrite') =>
  filters.some((f) => f[type]?.path?.type === 'ReplacePrefixMatch');

const ruleSchema = z
  .object({
  name: sectionName().optional(),
  matches: z.array(routeMatchSchema).max(64).prefault([{}]),
  filters: z.array(filterSchema).max(16).default([]).superRefine(checkFilterList),
  backendRefs: z.array(backendRefSchema).max(16).default([]),
  timeouts: z
    .object({ request: duration().optional(), backendRequest: duration().optional() })
    .superRefine((t, ctx) => {
      if (t.request !== undefined && t.backendRequest !== undefined && durationMs(t.request) !== 0 && durationMs(t.backendRequest) > durationMs(t.request)) {
        ctx.addIssue({ code: 'custom', path: ['backendRequest'], message: 'backendRequest timeout cannot be longer than request timeout' });
      }
    })
    .optional(),
  retry: z
    .object({
      codes: z
        .array(z.number().int().min(400).max(599))
        .optional()
        .superRefine((codes, ctx) => {
          if (codes && new Set(codes).size !== codes.length) ctx.addIssue({ code: 'custom', message: 'duplicate status codes (the list is a set)' });
        }),
      attempts: z.number().int().min(1).optional(),
      backoff: duration().optional(),
    })
    .optional(),
  sessionPersistence: sessionPersistenceSchema.optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.backendRefs.length > 0 && rule.filters.some((f) => f.type === 'RequestRedirect')) {
      ctx.addIssue({ code: 'custom', path: ['filters'], message: 'RequestRedirect filter must not be used together with backendRefs' });
    }
    const onePrefix = rule.matches.length === 1 && rule.matches[0].path.type === 'PathPrefix';
    if (onePrefix) return;
    for (const type of ['requestRedirect', 'urlRewrite'] as const) {
      const name = type === 'requestRedirect' ? 'RequestRedirect' : 'URLRewrite';
      if (usesPrefixReplacement(rule.filters, type)) {
        ctx.addIssue({ code: 'custom', path: ['filters'], message: `When using ${name} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified` });
      }
      if (rule.backendRefs.some((b) => usesPrefixReplacement(b.filters, type))) {
        ctx.addIssue({ code: 'custom', path: ['backendRefs'], message: `Within backendRefs, when using ${name} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified` });
      }
    }
  });

function sameParent(a: z.infer<typeof parentReferenceSchema>, b: z.infer<typeof parentReferenceSchema>): boolean {
  return a.group === b.group && a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

export const httpRouteSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('HTTPRoute'),
  metadata: objectMetaSchema,
  spec: z
    .object({
      parentRefs: z
        .array(parentReferenceSchema)
        .max(32)
        .default([])
        .superRefine((refs, ctx) => {
          refs.forEach((ref, i) => {
            for (let j = 0; j < i; j++) {
              const other = refs[j];
              if (!sameParent(ref, other)) continue;
              if (ref.sectionName === undefined && ref.port === undefined) {
                ctx.addIssue({ code: 'custom', path: [i], message: 'sectionName or port must be specified when parentRefs includes 2 or more references to the same parent' });
              } else if ((ref.sectionName ?? '') === (other.sectionName ?? '') && (ref.port ?? 0) === (other.port ?? 0)) {
                ctx.addIssue({ code: 'custom', path: [i], message: 'sectionName or port must be unique when parentRefs includes 2 or more references to the same parent' });
              }
            }
          });
        }),
      hostnames: z.array(hostname()).max(16).default([]),
      rules: z
        .array(ruleSchema)
        .max(16)
        .prefault([{}])
        .superRefine(checkRouteRules),
    })
    .prefault({}),
}) satisfies z.ZodType<HTTPRoute, unknown>;
