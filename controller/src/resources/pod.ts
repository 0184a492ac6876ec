import { z } from 'zod';
import type { Pod } from './types';
import { objectMetaSchema } from './metadata';

/**
 * Core Pod, read for InferencePools only: labels, status.podIP and the Ready condition. Every
 * other field (spec, containers...) is dropped, so a Pod from `kubectl get -o yaml` parses.
 */
export const podSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('Pod'),
  metadata: objectMetaSchema.extend({ deletionTimestamp: z.union([z.string(), z.date()]).transform(String).optional() }),
  status: z
    .object({
      phase: z.string().optional(),
      podIP: z.string().optional(),
      podIPs: z.array(z.object({ ip: z.string() })).optional(),
      conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional(),
    })
    .prefault({}),
}) satisfies z.ZodType<Pod, unknown>;
