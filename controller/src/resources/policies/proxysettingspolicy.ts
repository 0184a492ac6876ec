import { z } from 'zod';
import { bufferSize, MESSAGES, policyEnvelope, targetRefsSchema, type ObjectMeta, type TargetRef } from './common';
import { sizeBytes } from './size';
import type { SchemaStandIn } from '../standin';

export interface ProxyBuffering {
  disable?: boolean;
  bufferSize?: string;
  buffers?: { number: number; size: string };
  busyBuffersSize?: string;
}

const positiveSize = () => bufferSize().refine((v) => sizeBytes(v) > 0, { message: 'must be greater than 0' });

/**
 * The spec's rule: busyBuffersSize > bufferSize and < number*size - size, checked when the
 * fields sit in one policy. nginx also wants busyBuffersSize >= buffers.size; checked too so a
 * single policy can never fail a reload. Values merged across policies are checked later
 * (controller/src/policies/proxysettings/buffers.ts) against what nginx itself enforces.
 */
export function busyBufferProblems(b: ProxyBuffering): string[] {
  if (b.busyBuffersSize === undefined) return [];
  const busy = sizeBytes(b.busyBuffersSize);
  const problems: string[] = [];
  if (b.bufferSize !== undefined && busy <= sizeBytes(b.bufferSize)) problems.push(MESSAGES.busyAboveBufferSize);
  if (b.buffers !== undefined) {
    const size = sizeBytes(b.buffers.size);
    if (busy >= b.buffers.number * size - size) problems.push(MESSAGES.busyBelowBuffers);
    if (busy < size) problems.push(MESSAGES.busyAtLeastOneBuffer);
  }
  return problems;
}

export const proxyBufferingSchema = z
  .strictObject({
    disable: z.boolean().optional(),
    bufferSize: positiveSize().optional(),
    buffers: z
      .strictObject({
        // nginx needs at least 2 ("there must be at least 2 proxy_buffers"); 256 as NGF caps it.
        number: z.number().int().min(2).max(256),
        size: positiveSize(),
      })
      .optional(),
    busyBuffersSize: positiveSize().optional(),
  })
  .superRefine((b, ctx) => {
    for (const message of busyBufferProblems(b)) ctx.addIssue({ code: 'custom', path: ['busyBuffersSize'], message });
  });

export const proxySettingsPolicySchema = z.object({
  ...policyEnvelope('ProxySettingsPolicy'),
  spec: z.strictObject({
    targetRefs: targetRefsSchema,
    buffering: proxyBufferingSchema.optional(),
  }),
});

/** `schemaProblem` is never set: this kind has no stand-in (POLICY_STAND_INS, resources/policies/index.ts, says why). */
export interface ProxySettingsPolicy extends SchemaStandIn {
  apiVersion: string;
  kind: 'ProxySettingsPolicy';
  metadata: ObjectMeta;
  spec: { targetRefs: TargetRef[]; buffering?: ProxyBuffering };
}
