import { z } from 'zod';
import { bufferSize, MESSAGES, policyEnvelope, targetRefsSchema, type ObjectMeta, type TargetRef } from './common';
import { isKnownKeyVariable, KEY_PATTERN, KEY_RE, keyVariables } from './nginx-variables';
import { MAX_ZONE_BYTES, MIN_ZONE_BYTES, sizeBytes } from './size';
import type { SchemaStandIn } from '../standin';

export const RATE_PATTERN = '^[1-9][0-9]{0,5}r/[sm]$';
export const LOG_LEVELS = ['info', 'notice', 'warn', 'error'] as const;
export type RateLimitLogLevel = (typeof LOG_LEVELS)[number];

/** Defaults as NGINX Gateway Fabric applies them when a rule omits the field. */
export const DEFAULT_ZONE_SIZE = '10m';
/** nginx limit_req_status accepts 400..599; without a policy value nginx answers 503. */
export const DEFAULT_REJECT_CODE = 503;
export const DEFAULT_LOG_LEVEL: RateLimitLogLevel = 'error';

const ruleSchema = z.strictObject({
  zoneSize: bufferSize()
    .refine((v) => sizeBytes(v) >= MIN_ZONE_BYTES, { message: MESSAGES.zoneTooSmall })
    .refine((v) => sizeBytes(v) <= MAX_ZONE_BYTES, { message: MESSAGES.zoneTooLarge })
    .optional(),
  key: z
    .string()
    .min(1)
    .max(256)
    .regex(KEY_RE, { message: `must be text and $variables without spaces, quotes or ;{}#\\ (${KEY_PATTERN})` })
    .superRefine((key, ctx) => {
      for (const name of keyVariables(key)) {
        if (!isKnownKeyVariable(name)) {
          ctx.addIssue({
            code: 'custom',
            message: `unknown nginx variable $${name}; use e.g. $binary_remote_addr, $http_<header>, $arg_<name> or $cookie_<name>`,
          });
        }
      }
    }),
  rate: z
    .string()
    .max(16)
    .regex(new RegExp(RATE_PATTERN), { message: 'must be <n>r/s or <n>r/m with n from 1 to 999999, e.g. 10r/s' }),
  burst: z.number().int().min(0).max(1_000_000).optional(),
});

export const rateLimitPolicySchema = z.object({
  ...policyEnvelope('RateLimitPolicy'),
  spec: z.strictObject({
    targetRefs: targetRefsSchema,
    rateLimit: z
      .strictObject({
        local: z.strictObject({ rules: z.array(ruleSchema).max(16).optional() }).optional(),
        dryRun: z.boolean().optional(),
        logLevel: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }).optional(),
        rejectCode: z.number().int().min(400).max(599).optional(),
      })
      .optional(),
  }),
});

export interface RateLimitRule {
  zoneSize?: string;
  key: string;
  rate: string;
  burst?: number;
}

/** `schemaProblem` is never set: this kind has no stand-in (POLICY_STAND_INS, resources/policies/index.ts, says why). */
export interface RateLimitPolicy extends SchemaStandIn {
  apiVersion: string;
  kind: 'RateLimitPolicy';
  metadata: ObjectMeta;
  spec: {
    targetRefs: TargetRef[];
    rateLimit?: {
      local?: { rules?: RateLimitRule[] };
      dryRun?: boolean;
      logLevel?: RateLimitLogLevel;
      rejectCode?: number;
    };
  };
}
