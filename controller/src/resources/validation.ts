/**
 * Field formats as the Gateway API CRDs (and the core API for Services) define them.
 * Each helper returns a zod schema whose error says what the format is.
 */
import { z } from 'zod';

const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS_SUBDOMAIN = `${DNS_LABEL}(\\.${DNS_LABEL})*`;

export const HOSTNAME_RE = new RegExp(`^(\\*\\.)?${DNS_SUBDOMAIN}$`);
export const SECTION_NAME_RE = new RegExp(`^${DNS_SUBDOMAIN}$`);
export const NAMESPACE_RE = new RegExp(`^${DNS_LABEL}$`);
export const GROUP_RE = new RegExp(`^$|^${DNS_SUBDOMAIN}$`);
export const KIND_RE = /^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
/** RFC 7230 token: the characters a header (or query parameter) name may hold. */
export const HEADER_NAME_RE = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;
export const CONTROLLER_NAME_RE = new RegExp(`^${DNS_SUBDOMAIN}\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$`);
export const PROTOCOL_RE = new RegExp(`^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|${DNS_SUBDOMAIN}\\/[A-Za-z0-9]+$`);
/** Characters allowed in Exact / PathPrefix values. */
export const PATH_CHARS_RE = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/;
const IPV4_RE = /^\d{1,3}(\.\d{1,3}){3}$/;

export const hostname = () =>
  z
    .string()
    .min(1)
    .max(253)
    .regex(HOSTNAME_RE, {
      message: `must be a lowercase RFC 1123 hostname, optionally prefixed by a "*." wildcard label (${HOSTNAME_RE.source})`,
    })
    .refine((v) => !IPV4_RE.test(v), { message: 'IP addresses are not allowed as hostnames' });

export const sectionName = () =>
  z.string().min(1).max(253).regex(SECTION_NAME_RE, { message: `must be a lowercase RFC 1123 subdomain (${SECTION_NAME_RE.source})` });

export const namespaceName = () =>
  z.string().min(1).max(63).regex(NAMESPACE_RE, { message: `must be a lowercase RFC 1123 label (${NAMESPACE_RE.source})` });

/** Object names: Kubernetes object names are lowercase RFC 1123 subdomains. */
export const objectName = () =>
  z.string().min(1).max(253).regex(SECTION_NAME_RE, { message: `must be a lowercase RFC 1123 subdomain (${SECTION_NAME_RE.source})` });

export const group = () => z.string().max(253).regex(GROUP_RE, { message: `must be empty or a DNS subdomain (${GROUP_RE.source})` });

export const kind = () => z.string().min(1).max(63).regex(KIND_RE, { message: `must match ${KIND_RE.source}` });

export const portNumber = () => z.number().int().min(1).max(65535);

export const headerName = () =>
  z.string().min(1).max(256).regex(HEADER_NAME_RE, { message: `must be an HTTP token (${HEADER_NAME_RE.source})` });

/** Rules the Gateway API applies to Exact and PathPrefix values (its CEL rules, in order). */
export function pathValueProblem(value: string): string | undefined {
  if (!value.startsWith('/')) return "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']";
  for (const bad of ['//', '/./', '/../', '%2f', '%2F', '#']) {
    if (value.includes(bad)) return `must not contain '${bad}' when type one of ['Exact', 'PathPrefix']`;
  }
  for (const bad of ['/..', '/.']) {
    if (value.endsWith(bad)) return `must not end with '${bad}' when type one of ['Exact', 'PathPrefix']`;
  }
  if (!PATH_CHARS_RE.test(value)) {
    return `must only contain valid characters (matching ${PATH_CHARS_RE.source}) for types ['Exact', 'PathPrefix']`;
  }
  return undefined;
}

export const labels = () => z.record(z.string(), z.string());

/** Gateway API Duration: 1 to 4 parts of up to 5 digits with h, m, s or ms (GEP-2257). */
export const DURATION_RE = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
export const duration = () => z.string().regex(DURATION_RE, { message: 'must be a Gateway API duration such as 10s, 1m30s or 500ms' });

/** Milliseconds in a Gateway API duration (already validated). */
export function durationMs(value: string): number {
  let total = 0;
  for (const [, n, unit] of value.matchAll(/([0-9]+)(h|ms|m|s)/g)) total += Number(n) * { h: 3_600_000, m: 60_000, s: 1000, ms: 1 }[unit as 'h' | 'm' | 's' | 'ms'];
  return total;
}

/**
 * The Gateway API's limits across the rules of one route (HTTPRoute and GRPCRoute alike):
 * fewer than 128 matches in all, and rule names unique within the route.
 */
export function checkRouteRules(rules: readonly { name?: string; matches: readonly unknown[] }[], ctx: z.RefinementCtx): void {
  const total = rules.reduce((n, r) => n + r.matches.length, 0);
  if (total > 128) ctx.addIssue({ code: 'custom', message: `While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128 (got ${total})` });
  const names = new Set<string>();
  rules.forEach((r, i) => {
    if (r.name === undefined) return;
    if (names.has(r.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'Rule name must be unique within the route' });
    names.add(r.name);
  });
}
