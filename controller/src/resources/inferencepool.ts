import { z } from 'zod';
import type { InferencePool } from './types';
import { objectMetaSchema } from './metadata';
import { GROUP_RE, KIND_RE, portNumber } from './validation';

/** Label values as the core API allows them (the CRD repeats the rule for matchLabels). */
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * inference.networking.k8s.io/v1 InferencePool with the CRD's validation (v1.6.0) and defaults.
 * The CRDs themselves stay upstream: ../shared/tools/k8s/crds/ for tests, the release for users.
 */
export const inferencePoolSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('InferencePool'),
  metadata: objectMetaSchema,
  spec: z.object({
    selector: z.object({
      matchLabels: z
        .record(z.string(), z.string().max(63).regex(LABEL_VALUE_RE, { message: 'must be a label value' }))
        .refine((m) => Object.keys(m).length >= 1 && Object.keys(m).length <= 64, { message: 'must hold 1 to 64 labels' }),
    }),
    targetPorts: z
      .array(z.object({ number: portNumber() }))
      .min(1)
      .max(8)
      .superRefine((ports, ctx) => {
        const seen = new Set<number>();
        ports.forEach((p, i) => {
          if (seen.has(p.number)) ctx.addIssue({ code: 'custom', path: [i, 'number'], message: 'port number must be unique' });
          seen.add(p.number);
        });
      }),
    appProtocol: z.enum(['http', 'kubernetes.io/h2c']).default('http'),
    endpointPickerRef: z
      .object({
        group: z.string().max(253).regex(GROUP_RE).default(''),
        kind: z.string().min(1).max(63).regex(KIND_RE).default('Service'),
        name: z.string().min(1).max(253),
        port: z.object({ number: portNumber() }).optional(),
        failureMode: z.enum(['FailOpen', 'FailClose']).default('FailClose'),
      })
      .refine((r) => r.kind !== 'Service' || r.port !== undefined, {
        message: "port is required when kind is 'Service' or unspecified (defaults to 'Service')",
        path: ['port'],
      })
      .optional(),
  }),
}) satisfies z.ZodType<InferencePool, unknown>;
