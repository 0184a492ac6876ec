/**
 * Core ConfigMaps, for CA certificate bundles (BackendTLSPolicy's and a Gateway's frontend
 * validation caCertificateRefs read the key `ca.crt`). Only `data` is kept; whether a value is a
 * usable PEM bundle is the graph's business (graph/ca-certificates.ts).
 */
import { z } from 'zod';
import type { ConfigMap } from './types';
import { objectMetaSchema } from './metadata';

export const configMapSchema = z
  .object({
    apiVersion: z.string(),
    kind: z.literal('ConfigMap'),
    metadata: objectMetaSchema,
    data: z.record(z.string(), z.string()).nullish(),
  })
  .transform((c): ConfigMap => ({ apiVersion: c.apiVersion, kind: 'ConfigMap', metadata: c.metadata, data: c.data ?? {} }));
