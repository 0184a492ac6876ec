import { z } from 'zod';
import type { Namespace } from './types';
import { clusterObjectMetaSchema } from './metadata';

/** Only labels matter: listeners with allowedRoutes.namespaces.from Selector select on them. */
export const namespaceSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('Namespace'),
  metadata: clusterObjectMetaSchema,
}) satisfies z.ZodType<Namespace, unknown>;
