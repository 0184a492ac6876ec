import { z } from 'zod';
import { labels, namespaceName, objectName } from './validation';

/** Time the provider did not fill in: deterministic, so parsing stays pure. */
export const UNKNOWN_CREATION_TIMESTAMP = '1970-01-01T00:00:00.000Z';

const timestamp = z.union([z.string(), z.date()]).transform((value, ctx) => {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) {
    ctx.addIssue({ code: 'custom', message: 'must be an RFC 3339 timestamp' });
    return z.NEVER;
  }
  return date.toISOString();
});

const common = {
  name: objectName(),
  generation: z.number().int().min(1).default(1),
  creationTimestamp: timestamp.default(UNKNOWN_CREATION_TIMESTAMP),
  uid: z.string().optional(),
  labels: labels().default({}),
  annotations: labels().default({}),
};

export const objectMetaSchema = z.object({ ...common, namespace: namespaceName().default('default') });

export const clusterObjectMetaSchema = z.object(common);
