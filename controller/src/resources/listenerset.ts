import { z } from 'zod';
import { GATEWAY_API_GROUP, type ListenerSet } from './types';
import { objectMetaSchema } from './metadata';
import { listenersSchema } from './gateway';
import { group, kind, namespaceName, objectName } from './validation';

/** ListenerSet (gateway.networking.k8s.io/v1): the CRD's defaults and checks. */
export const listenerSetSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('ListenerSet'),
  metadata: objectMetaSchema,
  spec: z.object({
    parentRef: z.object({ group: group().default(GATEWAY_API_GROUP), kind: kind().default('Gateway'), name: objectName(), namespace: namespaceName().optional() }),
    listeners: listenersSchema('ListenerSet'),
  }),
}) satisfies z.ZodType<ListenerSet, unknown>;
