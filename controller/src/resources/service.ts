import { z } from 'zod';
import type { Service } from './types';
import { objectMetaSchema } from './metadata';
import { labels, portNumber } from './validation';

const IANA_SVC_NAME_RE = /^(?=.*[a-z])[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const servicePortSchema = z.object({
  name: z.string().max(63).optional(),
  protocol: z.enum(['TCP', 'UDP', 'SCTP']).default('TCP'),
  appProtocol: z.string().optional(),
  port: portNumber(),
  targetPort: z
    .union([portNumber(), z.string().max(15).regex(IANA_SVC_NAME_RE, { message: 'must be a port number or an IANA service name' })])
    .optional(),
  nodePort: z.number().int().optional(),
});

export const serviceSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('Service'),
  metadata: objectMetaSchema,
  spec: z
    .object({
      type: z.string().optional(),
      clusterIP: z.string().optional(),
      selector: labels().optional(),
      ports: z
        .array(servicePortSchema)
        .default([])
        .superRefine((ports, ctx) => {
          const names = new Set<string>();
          ports.forEach((p, i) => {
            if (ports.length > 1 && !p.name) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'name is required when a Service has more than one port' });
            if (p.name && names.has(p.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate port name "${p.name}"` });
            if (p.name) names.add(p.name);
          });
        }),
    })
    .prefault({}),
}) satisfies z.ZodType<Service, unknown>;
