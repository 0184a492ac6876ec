import { z } from 'zod';
import { bodySize, policyEnvelope, targetRefSchema, type ObjectMeta, type TargetRef } from './common';
import type { SchemaStandIn } from '../standin';

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

/** `schemaProblem` is never set: this kind has no stand-in (POLICY_STAND_INS, resources/policies/index.ts, says why). */
export interface ClientSettingsPolicy extends SchemaStandIn {
  apiVersion: string;
  kind: 'ClientSettingsPolicy';
  metadata: ObjectMeta;
  spec: { targetRef: TargetRef; body?: { maxSize?: string } };
}
