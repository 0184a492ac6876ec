import { z } from 'zod';
import { bodySize, policyEnvelope, targetRefSchema, type ObjectMeta, type TargetRef } from './common';

export const clientSettingsPolicySchema = z.object({
  ...policyEnvelope('ClientSettingsPolicy'),
  spec: z.strictObject({
    // Singular, as the spec and NGINX Gateway Fabric have it.
    targetRef: targetRefSchema,
    body: z
      .strictObject({
        /** client_max_body_size; without unit = bytes; 0 disables the check (nginx semantics). */
        maxSize: bodySize().optional(),
      })
      .optional(),
  }),
});

export interface ClientSettingsPolicy {
  apiVersion: string;
  kind: 'ClientSettingsPolicy';
  metadata: ObjectMeta;
  spec: { targetRef: TargetRef; body?: { maxSize?: string } };
}
