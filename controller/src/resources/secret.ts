/**
 * Core Secrets, for the certificates of HTTPS listeners. Only what a certificateRef needs is
 * kept (type and the data); whether the data is a usable certificate and key is the graph's
 * business (graph/tls.ts), so a Secret is never "invalid" for holding other things. Messages
 * about a Secret never quote its data.
 */
import { z } from 'zod';
import type { Secret } from './types';
import { objectMetaSchema } from './metadata';

const BASE64_RE = /^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/;

export const secretSchema = z
  .object({
    apiVersion: z.string(),
    kind: z.literal('Secret'),
    metadata: objectMetaSchema,
    type: z.string().max(253).default('Opaque'),
    data: z.record(z.string(), z.string().regex(BASE64_RE, { message: 'must be base64' })).default({}),
    /** Write-only convenience of the API: merged into data, its values win. */
    stringData: z.record(z.string(), z.string()).optional(),
  })
  .transform((s): Secret => {
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(s.data)) data[k] = Buffer.from(v, 'base64').toString('utf8');
    for (const [k, v] of Object.entries(s.stringData ?? {})) data[k] = v;
    return { apiVersion: s.apiVersion, kind: 'Secret', metadata: s.metadata, type: s.type, data };
  });
