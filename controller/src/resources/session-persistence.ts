import { z } from 'zod';
import type { SessionPersistence } from './types';
import { duration } from './validation';

/** rules[].sessionPersistence of HTTPRoute and GRPCRoute, with the CRD's defaults and rules. */
export const sessionPersistenceSchema = z
  .object({
    sessionName: z.string().min(1).max(128).optional(),
    absoluteTimeout: duration().optional(),
    type: z.enum(['Cookie', 'Header']).default('Cookie'),
    cookieConfig: z.object({ lifetimeType: z.enum(['Permanent', 'Session']).default('Session') }).optional(),
  })
  .superRefine((sp, ctx) => {
    if (sp.cookieConfig?.lifetimeType === 'Permanent' && sp.absoluteTimeout === undefined) {
      ctx.addIssue({ code: 'custom', message: 'AbsoluteTimeout must be specified when cookie lifetimeType is Permanent' });
    }
    if (sp.cookieConfig !== undefined && sp.type !== 'Cookie') ctx.addIssue({ code: 'custom', message: 'cookieConfig can only be set with type Cookie' });
  }) satisfies z.ZodType<SessionPersistence, unknown>;
