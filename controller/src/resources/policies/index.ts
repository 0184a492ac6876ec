/**
 * Policy kinds of gateway.portcullis.dev/v1alpha1: schemas, types and one parse entry point
 * for resources/index.ts (parseManifests) to call for documents of our group.
 */
import type { z } from 'zod';
import { formatIssues } from '../errors';
import { clientSettingsPolicySchema, type ClientSettingsPolicy } from './clientsettingspolicy';
import { POLICY_API_VERSION, POLICY_GROUP, type TargetRef } from './common';
import { proxySettingsPolicySchema, type ProxySettingsPolicy } from './proxysettingspolicy';
import { rateLimitPolicySchema, type RateLimitPolicy } from './ratelimitpolicy';
import { failClosedIPAccessPolicy, ipAccessPolicySchema, type IPAccessPolicy } from './ipaccesspolicy';
import type { StandIn } from '../standin';

export * from './common';
export * from './size';
export * from './cidr';
export { ipAccessPolicySchema, CLIENT_ADDRESS_SOURCES, MAX_ACCESS_CIDRS, MAX_TRUSTED_CIDRS, type ClientAddress, type ClientAddressSource, type IPAccessPolicy } from './ipaccesspolicy';
export { clientSettingsPolicySchema, type ClientSettingsPolicy } from './clientsettingspolicy';
export { proxySettingsPolicySchema, busyBufferProblems, type ProxySettingsPolicy, type ProxyBuffering } from './proxysettingspolicy';
export {
  rateLimitPolicySchema,
  DEFAULT_LOG_LEVEL,
  DEFAULT_REJECT_CODE,
  DEFAULT_ZONE_SIZE,
  LOG_LEVELS,
  RATE_PATTERN,
  type RateLimitLogLevel,
  type RateLimitPolicy,
  type RateLimitRule,
} from './ratelimitpolicy';

export type Policy = RateLimitPolicy | ProxySettingsPolicy | ClientSettingsPolicy | IPAccessPolicy;
export type PolicyKind = Policy['kind'];

export const POLICY_SCHEMAS: Record<PolicyKind, z.ZodType> = {
  RateLimitPolicy: rateLimitPolicySchema,
  ProxySettingsPolicy: proxySettingsPolicySchema,
  ClientSettingsPolicy: clientSettingsPolicySchema,
  IPAccessPolicy: ipAccessPolicySchema,
};

export const POLICY_KINDS = Object.keys(POLICY_SCHEMAS) as PolicyKind[];

/**
 * The kinds whose documents that fail their schema (files are read without the CRD's
 * validation) still act on the targets they name, through a stand-in (resources/standin.ts)
 * that fails closed. Only where being dropped would open something the document closes:
 * - IPAccessPolicy: its targets refuse every client (served open, they would reach exactly the
 *   clients a broken allow or deny list was written to keep out).
 * The others fail open, their targets keep the settings they would have without the document
 * (reported Invalid on each target it names), as the safer of the two outcomes for each:
 * - RateLimitPolicy: a limit guards capacity, not access; refusing every request would be the
 *   outage the limit exists to prevent, while an unlimited route serves as before the policy.
 * - ProxySettingsPolicy: buffering tunes how responses are relayed; nginx's defaults serve.
 * - ClientSettingsPolicy: without it nginx's default body limit (1m) applies, a limit still.
 */
export const POLICY_STAND_INS: Partial<Record<PolicyKind, StandIn<Policy>>> = {
  IPAccessPolicy: failClosedIPAccessPolicy,
};

export function isPolicyKind(kind: string): kind is PolicyKind {
  return Object.prototype.hasOwnProperty.call(POLICY_SCHEMAS, kind);
}

/** True for apiVersions of our policy group (any version: a wrong version is an error, not ignored). */
export function isPolicyGroup(apiVersion: string): boolean {
  return apiVersion.startsWith(`${POLICY_GROUP}/`);
}

/** A failure carries the kind's stand-in when it has one and the document names a target. */
export type PolicyParseResult = { ok: true; policy: Policy } | { ok: false; message: string; standIn?: Policy };

function failed(kind: PolicyKind, doc: Record<string, unknown>, message: string): PolicyParseResult {
  const standIn = POLICY_STAND_INS[kind]?.(doc, message);
  return standIn === undefined ? { ok: false, message } : { ok: false, message, standIn };
}

/** Validate one document of a policy kind; the message names each failing field. */
export function parsePolicy(doc: unknown): PolicyParseResult {
  const d = (typeof doc === 'object' && doc !== null ? doc : {}) as Record<string, unknown>;
  const kind = typeof d.kind === 'string' ? d.kind : '';
  if (!isPolicyKind(kind)) return { ok: false, message: `kind: ${kind || '(none)'} is not a policy kind (${POLICY_KINDS.join(', ')})` };
  if (d.apiVersion !== POLICY_API_VERSION) {
    return failed(kind, d, `apiVersion: ${String(d.apiVersion)} is not supported for ${kind} (supported: ${POLICY_API_VERSION})`);
  }
  const parsed = POLICY_SCHEMAS[kind].safeParse(doc);
  if (!parsed.success) return failed(kind, d, formatIssues(parsed.error));
  return { ok: true, policy: parsed.data as Policy };
}

/** The targets a policy names, whatever its kind (ClientSettingsPolicy has one). */
export function policyTargetRefs(policy: Policy): TargetRef[] {
  return policy.kind === 'ClientSettingsPolicy' ? [policy.spec.targetRef] : policy.spec.targetRefs;
}
export { parsePolicyDocs, type InvalidPolicy, type ParsedPolicies } from './parse';
