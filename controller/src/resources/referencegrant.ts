import { z } from 'zod';
import type { ReferenceGrant } from './types';
import { objectMetaSchema } from './metadata';
import { group, kind, namespaceName, objectName } from './validation';

export const referenceGrantSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('ReferenceGrant'),
  metadata: objectMetaSchema,
  spec: z.object({
    from: z.array(z.object({ group: group(), kind: kind(), namespace: namespaceName() })).min(1).max(16),
    to: z.array(z.object({ group: group(), kind: kind(), name: objectName().optional() })).min(1).max(16),
  }),
}) satisfies z.ZodType<ReferenceGrant, unknown>;
