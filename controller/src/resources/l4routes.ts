/**
 * TLSRoute, TCPRoute and UDPRoute (gateway.networking.k8s.io v1 in Gateway API v1.6; the older
 * v1alpha2/v1alpha3 versions the CRDs still serve read the same): routes of whole connections,
 * with no matches, one rule and weighted backendRefs. A TLSRoute also names the SNI hostnames
 * it serves. Parsed with the CRD's defaults and validation rules applied.
 */
import { z } from 'zod';
import { objectMetaSchema } from './metadata';
import { backendRefFields, requireServicePort } from './filters';
import { parentReferenceSchema } from './httproute';
import type { BackendRef, ObjectMeta, ParentReference } from './types';
import { hostname, sectionName } from './validation';

export type L4RouteKind = 'TLSRoute' | 'TCPRoute' | 'UDPRoute';

export interface L4RouteRule {
  name?: string;
  /** No filters on routes of whole connections. */
  backendRefs: BackendRef[];
}

export interface L4Route<K extends L4RouteKind = L4RouteKind> {
  apiVersion: string;
  kind: K;
  metadata: ObjectMeta;
  spec: {
    parentRefs: ParentReference[];
    /** TLSRoute: the SNI names served (at least one); [] for TCPRoute and UDPRoute. */
    hostnames: string[];
    rules: L4RouteRule[];
  };
}

export type TLSRoute = L4Route<'TLSRoute'>;
export type TCPRoute = L4Route<'TCPRoute'>;
export type UDPRoute = L4Route<'UDPRoute'>;

const IP_LIKE = /^(\d{1,3}(\.\d{1,3}){3}|.*:.*)$/;

const backendRefSchema = z.object(backendRefFields).superRefine(requireServicePort);

const ruleSchema = z.object({
  name: sectionName().optional(),
  backendRefs: z.array(backendRefSchema).min(1).max(16),
});

function l4RouteSchema<K extends L4RouteKind>(routeKind: K) {
  const hostnames =
    routeKind === 'TLSRoute'
      ? z
          .array(hostname())
          .min(1)
          .max(1024)
          .refine((hs) => hs.every((h) => !IP_LIKE.test(h)), { message: 'Hostnames cannot contain an IP' })
      : z.array(z.never()).max(0).default([]);
  return z.object({
    apiVersion: z.string(),
    kind: z.literal(routeKind),
    metadata: objectMetaSchema,
    spec: z.object({
      parentRefs: z.array(parentReferenceSchema).max(32).default([]),
      hostnames,
      // The CRDs allow exactly one rule (v1); v1alpha2 allowed 16, the first is the one served.
      rules: z.array(ruleSchema).min(1).max(16),
    }),
  }) satisfies z.ZodType<L4Route<K>, unknown>;
}

export const tlsRouteSchema = l4RouteSchema('TLSRoute');
export const tcpRouteSchema = l4RouteSchema('TCPRoute');
export const udpRouteSchema = l4RouteSchema('UDPRoute');
