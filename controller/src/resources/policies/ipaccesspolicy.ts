import { z } from 'zod';
import { CIDR_MAX_LENGTH, CIDR_PATTERN, CIDR_RE } from './cidr';
import { looseString, standInMeta, type SchemaStandIn, type StandIn } from '../standin';
import { GATEWAY_API_GROUP } from '../types';
import { looseTargetRefs, MESSAGES, policyEnvelope, targetRefsSchema, type ObjectMeta, type TargetRef } from './common';

/** Where the client address IPAccessPolicy checks comes from (a Gateway's setting). */
export const CLIENT_ADDRESS_SOURCES = ['Connection', 'XForwardedFor', 'ProxyProtocol'] as const;
export type ClientAddressSource = (typeof CLIENT_ADDRESS_SOURCES)[number];

/** Entries per allow or deny list: nginx's geo lookup is a radix tree, so the cap is for the CRD's size. */
export const MAX_ACCESS_CIDRS = 256;
/** Proxies in front of the Gateway whose X-Forwarded-For or PROXY header is believed. */
export const MAX_TRUSTED_CIDRS = 64;

export interface ClientAddress {
  source: ClientAddressSource;
  trustedCIDRs?: string[];
}

export const cidr = () => z.string().max(CIDR_MAX_LENGTH).regex(CIDR_RE, { message: `must be an IPv4 or IPv6 address, optionally with a prefix length, e.g. 10.0.0.0/8, 2001:db8::/32 (${CIDR_PATTERN})` });

const cidrList = (max: number) => z.array(cidr()).min(1).max(max);

export const clientAddressSchema = z
  .strictObject({
    source: z.enum(CLIENT_ADDRESS_SOURCES, { message: `must be one of ${CLIENT_ADDRESS_SOURCES.join(', ')}` }),
    trustedCIDRs: cidrList(MAX_TRUSTED_CIDRS).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.source !== 'Connection' && c.trustedCIDRs === undefined) ctx.addIssue({ code: 'custom', path: ['trustedCIDRs'], message: MESSAGES.trustedCIDRsRequired });
    if (c.source === 'Connection' && c.trustedCIDRs !== undefined) ctx.addIssue({ code: 'custom', path: ['trustedCIDRs'], message: MESSAGES.trustedCIDRsUnused });
  });

export const ipAccessPolicySchema = z.object({
  ...policyEnvelope('IPAccessPolicy'),
  spec: z
    .strictObject({
      targetRefs: targetRefsSchema,
      allow: cidrList(MAX_ACCESS_CIDRS).optional(),
      deny: cidrList(MAX_ACCESS_CIDRS).optional(),
      clientAddress: clientAddressSchema.optional(),
    })
    .superRefine((spec, ctx) => {
      if (spec.clientAddress !== undefined && spec.targetRefs.some((t) => t.kind !== 'Gateway')) {
        ctx.addIssue({ code: 'custom', path: ['clientAddress'], message: MESSAGES.clientAddressGatewayOnly });
      }
    }),
});

/** A stand-in (resources/standin.ts) for a document that fails its schema refuses every client of its targets. */
export interface IPAccessPolicy extends SchemaStandIn {
  apiVersion: string;
  kind: 'IPAccessPolicy';
  metadata: ObjectMeta;
  spec: { targetRefs: TargetRef[]; allow?: string[]; deny?: string[]; clientAddress?: ClientAddress };
}

/**
 * What stands in for an IPAccessPolicy that fails its schema but names its targets: dropping it
 * would serve them to every client, the opposite of what a broken allow or deny list was
 * written for, so the stand-in names the same targets with no lists and policies/ipaccess
 * makes them refuse every client until the document is fixed.
 */
export const failClosedIPAccessPolicy: StandIn<IPAccessPolicy> = (doc, problem) => {
  const metadata = standInMeta(doc);
  const targetRefs = looseTargetRefs(doc).map((r): TargetRef => ({ group: GATEWAY_API_GROUP, kind: r.kind, name: r.name }));
  if (!metadata || targetRefs.length === 0) return undefined;
  return { apiVersion: looseString(doc.apiVersion) ?? '', kind: 'IPAccessPolicy', metadata, spec: { targetRefs }, schemaProblem: problem };
};
