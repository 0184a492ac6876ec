/**
 * HTTPRoute filters (gateway.networking.k8s.io/v1, standard channel v1.6) as the CRD validates
 * them: each filter type has its own field, which must be set for that type and only for it.
 * What the CRD cannot see (header names nginx cannot read, values that would break a header,
 * combinations with the rule's matches) is the graph's business (graph/filters.ts).
 */
import { z } from 'zod';
import { group, headerName, kind, namespaceName, objectName, portNumber } from './validation';

const PRECISE_HOSTNAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const CORS_ORIGIN_RE = /(^\*$)|(^(http(s)?):\/\/(((\*\.)?([a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$)/;

export const preciseHostname = () =>
  z.string().min(1).max(253).regex(PRECISE_HOSTNAME_RE, { message: `must be a lowercase RFC 1123 hostname without wildcard (${PRECISE_HOSTNAME_RE.source})` });

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface HTTPHeaderFilter {
  set: HTTPHeader[];
  add: HTTPHeader[];
  remove: string[];
}

export interface HTTPPathModifier {
  type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}

export interface BackendObjectReference {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
  port?: number;
}

/** A route rule's BackendRef (the API's type): a BackendObjectReference with a weight (default 1). */
export interface BackendRef extends BackendObjectReference {
  weight: number;
}

export interface HTTPRequestRedirectFilter {
  scheme?: 'http' | 'https';
  hostname?: string;
  path?: HTTPPathModifier;
  port?: number;
  statusCode: 301 | 302 | 303 | 307 | 308;
}

export interface HTTPURLRewriteFilter {
  hostname?: string;
  path?: HTTPPathModifier;
}

export interface HTTPRequestMirrorFilter {
  backendRef: BackendObjectReference;
  percent?: number;
  fraction?: { numerator: number; denominator: number };
}

export interface HTTPExternalAuthFilter {
  protocol: 'HTTP' | 'GRPC';
  backendRef: BackendObjectReference;
  grpc?: { allowedHeaders: string[] };
  http?: { path?: string; allowedHeaders: string[]; allowedResponseHeaders: string[] };
  forwardBody?: { maxSize: number };
}

export interface HTTPCORSFilter {
  allowOrigins: string[];
  allowCredentials?: boolean;
  allowMethods: string[];
  allowHeaders: string[];
  exposeHeaders: string[];
  maxAge: number;
}

export interface LocalObjectReference {
  group: string;
  kind: string;
  name: string;
}

export type HTTPRouteFilterType = 'RequestHeaderModifier' | 'ResponseHeaderModifier' | 'RequestMirror' | 'RequestRedirect' | 'URLRewrite' | 'ExtensionRef' | 'CORS' | 'ExternalAuth';

export interface HTTPRouteFilter {
  type: HTTPRouteFilterType;
  requestHeaderModifier?: HTTPHeaderFilter;
  responseHeaderModifier?: HTTPHeaderFilter;
  requestMirror?: HTTPRequestMirrorFilter;
  requestRedirect?: HTTPRequestRedirectFilter;
  urlRewrite?: HTTPURLRewriteFilter;
  cors?: HTTPCORSFilter;
  extensionRef?: LocalObjectReference;
  externalAuth?: HTTPExternalAuthFilter;
}

/** The CRD's list-map on `name`: an exact duplicate is rejected (case variants: graph). */
function uniqueHeaderNames(items: HTTPHeader[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate entry with name "${item.name}"` });
    seen.add(item.name);
  });
}

const headerSchema = z.object({ name: headerName(), value: z.string().min(1).max(4096) });

const headerFilterSchema = z.object({
  set: z.array(headerSchema).max(16).default([]).superRefine(uniqueHeaderNames),
  add: z.array(headerSchema).max(16).default([]).superRefine(uniqueHeaderNames),
  remove: z
    .array(headerName())
    .max(16)
    .default([])
    .superRefine((names, ctx) => {
      if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: 'remove must not list a header twice' });
    }),
});

const pathModifierSchema = z
  .object({
    type: z.enum(['ReplaceFullPath', 'ReplacePrefixMatch']),
    replaceFullPath: z.string().max(1024).optional(),
    replacePrefixMatch: z.string().max(1024).optional(),
  })
  .superRefine((p, ctx) => {
    if (p.type === 'ReplaceFullPath' && p.replaceFullPath === undefined) ctx.addIssue({ code: 'custom', message: "replaceFullPath must be specified when type is set to 'ReplaceFullPath'" });
    if (p.replaceFullPath !== undefined && p.type !== 'ReplaceFullPath') ctx.addIssue({ code: 'custom', message: "type must be 'ReplaceFullPath' when replaceFullPath is set" });
    if (p.type === 'ReplacePrefixMatch' && p.replacePrefixMatch === undefined) ctx.addIssue({ code: 'custom', message: "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'" });
    if (p.replacePrefixMatch !== undefined && p.type !== 'ReplacePrefixMatch') ctx.addIssue({ code: 'custom', message: "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set" });
  });

/** BackendObjectReference's fields, shared by mirrors and every route kind's backendRefs. */
export const backendObjectReferenceFields = {
  group: group().default(''),
  kind: kind().default('Service'),
  name: objectName(),
  namespace: namespaceName().optional(),
  port: portNumber().optional(),
};

/** A route rule's BackendRef: a BackendObjectReference with a weight. */
export const backendRefFields = {
  ...backendObjectReferenceFields,
  weight: z.number().int().min(0).max(1000000).default(1),
};

/** The API's rule for every BackendObjectReference: a Service is named with its port. */
export function requireServicePort(ref: { group: string; kind: string; port?: number }, ctx: z.RefinementCtx): void {
  if (ref.group === '' && ref.kind === 'Service' && ref.port === undefined) ctx.addIssue({ code: 'custom', path: ['port'], message: 'Must have port for Service reference' });
}

export const backendObjectReferenceSchema = z.object(backendObjectReferenceFields).superRefine(requireServicePort);

const redirectSchema = z.object({
  scheme: z.enum(['http', 'https']).optional(),
  hostname: preciseHostname().optional(),
  path: pathModifierSchema.optional(),
  port: portNumber().optional(),
  statusCode: z.union([z.literal(301), z.literal(302), z.literal(303), z.literal(307), z.literal(308)]).default(302),
});

const rewriteSchema = z.object({ hostname: preciseHostname().optional(), path: pathModifierSchema.optional() });

const mirrorSchema = z
  .object({
    backendRef: backendObjectReferenceSchema,
    percent: z.number().int().min(0).max(100).optional(),
    fraction: z
      .object({ numerator: z.number().int().min(0), denominator: z.number().int().min(1).default(100) })
      .refine((f) => f.numerator <= f.denominator, { message: 'numerator must be less than or equal to denominator' })
      .optional(),
  })
  .refine((m) => !(m.percent !== undefined && m.fraction !== undefined), { message: 'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter' });

/** The CRD's pattern for externalAuth.http.path (a path's characters, percent-encoded or not). */
const AUTH_PATH_RE = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/;
const headerSet = () =>
  z
    .array(headerName())
    .max(64)
    .default([])
    .superRefine((names, ctx) => {
      if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: 'must not list a header twice' });
    });

const externalAuthSchema = z
  .object({
    protocol: z.enum(['HTTP', 'GRPC']),
    backendRef: backendObjectReferenceSchema,
    grpc: z.object({ allowedHeaders: headerSet() }).optional(),
    http: z
      .object({ path: z.string().max(1024).regex(AUTH_PATH_RE).optional(), allowedHeaders: headerSet(), allowedResponseHeaders: headerSet() })
      .optional(),
    forwardBody: z.object({ maxSize: z.number().int().min(0).default(0) }).optional(),
  })
  .superRefine((a, ctx) => {
    if (a.protocol === 'GRPC' && !a.grpc) ctx.addIssue({ code: 'custom', message: "grpc must be specified when protocol is set to 'GRPC'" });
    if (a.grpc && a.protocol !== 'GRPC') ctx.addIssue({ code: 'custom', message: "protocol must be 'GRPC' when grpc is set" });
    if (a.protocol === 'HTTP' && !a.http) ctx.addIssue({ code: 'custom', message: "http must be specified when protocol is set to 'HTTP'" });
    if (a.http && a.protocol !== 'HTTP') ctx.addIssue({ code: 'custom', message: "protocol must be 'HTTP' when http is set" });
  });

function noWildcardWithOthers(what: string) {
  return (list: string[], ctx: z.RefinementCtx) => {
    if (list.includes('*') && list.length > 1) ctx.addIssue({ code: 'custom', message: `${what} cannot contain '*' alongside other ${what === 'AllowOrigins' ? 'origins' : 'methods'}` });
    if (new Set(list).size !== list.length) ctx.addIssue({ code: 'custom', message: `${what} must not list a value twice` });
  };
}

const corsSchema = z.object({
  allowOrigins: z
    .array(z.string().max(253).regex(CORS_ORIGIN_RE, { message: 'must be "*" or <scheme>://<host>(:<port>) with scheme http or https' }))
    .max(64)
    .default([])
    .superRefine(noWildcardWithOthers('AllowOrigins')),
  allowCredentials: z.boolean().optional(),
  allowMethods: z
    .array(z.enum(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', '*']))
    .max(9)
    .default([])
    .superRefine(noWildcardWithOthers('AllowMethods')),
  allowHeaders: z.array(z.union([z.literal('*'), headerName()])).max(64).default([]).superRefine(noWildcardWithOthers('AllowHeaders')),
  exposeHeaders: z.array(z.union([z.literal('*'), headerName()])).max(64).default([]),
  maxAge: z.number().int().min(1).max(2147483647).default(5),
});

const FIELD_OF: Record<HTTPRouteFilterType, keyof HTTPRouteFilter> = {
  RequestHeaderModifier: 'requestHeaderModifier',
  ResponseHeaderModifier: 'responseHeaderModifier',
  RequestMirror: 'requestMirror',
  RequestRedirect: 'requestRedirect',
  URLRewrite: 'urlRewrite',
  ExtensionRef: 'extensionRef',
  CORS: 'cors',
  ExternalAuth: 'externalAuth',
};

export const FILTER_TYPES = Object.keys(FIELD_OF) as HTTPRouteFilterType[];

export const filterSchema = z
  .object({
    type: z.enum(FILTER_TYPES as [HTTPRouteFilterType, ...HTTPRouteFilterType[]]),
    requestHeaderModifier: headerFilterSchema.optional(),
    responseHeaderModifier: headerFilterSchema.optional(),
    requestMirror: mirrorSchema.optional(),
    requestRedirect: redirectSchema.optional(),
    urlRewrite: rewriteSchema.optional(),
    cors: corsSchema.optional(),
    extensionRef: z.object({ group: group(), kind: kind(), name: objectName() }).optional(),
    externalAuth: externalAuthSchema.optional(),
  })
  .superRefine((f, ctx) => {
    for (const [type, field] of Object.entries(FIELD_OF) as [HTTPRouteFilterType, keyof HTTPRouteFilter][]) {
      if (f[field] !== undefined && f.type !== type) ctx.addIssue({ code: 'custom', path: [field], message: `filter.${field} must be nil if the filter.type is not ${type}` });
      if (f[field] === undefined && f.type === type) ctx.addIssue({ code: 'custom', path: [field], message: `filter.${field} must be specified for ${type} filter.type` });
    }
  }) satisfies z.ZodType<HTTPRouteFilter, unknown>;

/** The CRD's rules on a filter list (rule-level and backendRef-level). */
export function checkFilterList(filters: HTTPRouteFilter[], ctx: z.RefinementCtx): void {
  const types = filters.map((f) => f.type);
  if (types.includes('RequestRedirect') && types.includes('URLRewrite')) {
    ctx.addIssue({ code: 'custom', message: 'May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both' });
  }
  for (const once of ['CORS', 'RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestRedirect', 'URLRewrite']) {
    if (types.filter((t) => t === once).length > 1) ctx.addIssue({ code: 'custom', message: `${once} filter cannot be repeated` });
  }
}
