import { z } from 'zod';
import type { GatewayClass } from './types';
import { clusterObjectMetaSchema } from './metadata';
import { CONTROLLER_NAME_RE, group, kind, namespaceName, objectName } from './validation';

export const gatewayClassSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('GatewayClass'),
  metadata: clusterObjectMetaSchema,
  spec: z.object({
    controllerName: z
      .string()
      .min(1)
      .max(253)
      .regex(CONTROLLER_NAME_RE, { message: 'must be a domain-prefixed path, e.g. example.com/controller' }),
    description: z.string().max(64).optional(),
    parametersRef: z
      .object({ group: group(), kind: kind(), name: objectName(), namespace: namespaceName().optional() })
      .optional(),
  }),
}) satisfies z.ZodType<GatewayClass, unknown>;
