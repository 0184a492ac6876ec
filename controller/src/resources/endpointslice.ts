import { z } from 'zod';
import type { EndpointSlice } from './types';
import { objectMetaSchema } from './metadata';
import { portNumber } from './validation';

export const endpointSliceSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('EndpointSlice'),
  metadata: objectMetaSchema,
  addressType: z.enum(['IPv4', 'IPv6', 'FQDN']),
  endpoints: z
    .array(
      z.object({
        addresses: z.array(z.string().min(1)).min(1).max(100),
        conditions: z
          .object({ ready: z.boolean().optional(), serving: z.boolean().optional(), terminating: z.boolean().optional() })
          .default({}),
        hostname: z.string().optional(),
        nodeName: z.string().optional(),
      }),
    )
    .max(1000)
    .nullish()
    .transform((v) => v ?? []),
  ports: z
    .array(
      z.object({
        name: z.string().max(63).default(''),
        port: portNumber().optional(),
        protocol: z.enum(['TCP', 'UDP', 'SCTP']).default('TCP'),
        appProtocol: z.string().optional(),
      }),
    )
    .max(100)
    .default([]),
}) satisfies z.ZodType<EndpointSlice, unknown>;
