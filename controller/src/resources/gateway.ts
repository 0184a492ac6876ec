import { z } from 'zod';
import { GATEWAY_API_GROUP, type Gateway } from './types';
import { objectMetaSchema } from './metadata';
import { group, hostname, kind, labels, namespaceName, objectName, portNumber, PROTOCOL_RE, sectionName } from './validation';

export const labelSelectorSchema = z.object({
  matchLabels: labels().optional(),
  matchExpressions: z
    .array(
      z.object({
        key: z.string().min(1),
        operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
        values: z.array(z.string()).optional(),
      }),
    )
    .optional(),
});

const allowedRoutesSchema = z.object({
  namespaces: z
    .object({
      from: z.enum(['All', 'Same', 'Selector']).default('Same'),
      selector: labelSelectorSchema.optional(),
    })
    .prefault({}),
  kinds: z
    .array(z.object({ group: group().default(GATEWAY_API_GROUP), kind: kind() }))
    .max(8)
    .default([]),
});

export const listenerSchema = z
  .object({
    name: sectionName(),
    hostname: hostname().optional(),
    port: portNumber(),
    protocol: z.string().min(1).max(255).regex(PROTOCOL_RE, { message: 'must be a protocol name such as HTTP' }),
    tls: z
      .object({
        mode: z.enum(['Terminate', 'Passthrough']).default('Terminate'),
        certificateRefs: z
          .array(z.object({ group: group().default(''), kind: kind().default('Secret'), name: objectName(), namespace: namespaceName().optional() }))
          .max(64)
          .default([]),
        options: z.record(z.string(), z.string()).optional(),
      })
      .optional(),
    allowedRoutes: allowedRoutesSchema.prefault({}),
  })
  .superRefine((listener, ctx) => {
    if (listener.hostname !== undefined && (listener.protocol === 'TCP' || listener.protocol === 'UDP')) {
      ctx.addIssue({ code: 'custom', path: ['hostname'], message: "hostname must not be specified for protocols ['TCP', 'UDP']" });
    }
    if (listener.tls !== undefined && ['HTTP', 'TCP', 'UDP'].includes(listener.protocol)) {
      ctx.addIssue({ code: 'custom', path: ['tls'], message: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']" });
    }
    if ((listener.protocol === 'HTTPS' || listener.protocol === 'TLS') && listener.tls === undefined) {
      ctx.addIssue({ code: 'custom', path: ['tls'], message: "tls must be specified for protocols ['HTTPS', 'TLS']" });
    }
    if (listener.protocol === 'HTTPS' && listener.tls?.mode === 'Passthrough') {
      ctx.addIssue({ code: 'custom', path: ['tls', 'mode'], message: "tls mode must be Terminate for protocol HTTPS" });
    }
    if (listener.tls?.mode === 'Terminate' && listener.tls.certificateRefs.length === 0 && !listener.tls.options) {
      ctx.addIssue({ code: 'custom', path: ['tls', 'certificateRefs'], message: 'certificateRefs or options must be specified when mode is Terminate' });
    }
    if (listener.allowedRoutes.namespaces.from === 'Selector' && !listener.allowedRoutes.namespaces.selector) {
      ctx.addIssue({ code: 'custom', path: ['allowedRoutes', 'namespaces', 'selector'], message: 'selector must be specified when from is Selector' });
    }
  });

const caCertificateRefSchema = z.object({ group: group().default(''), kind: kind().default('ConfigMap'), name: objectName(), namespace: namespaceName().optional() });

const frontendValidationSchema = z.object({
  caCertificateRefs: z.array(caCertificateRefSchema).min(1).max(8),
  mode: z.enum(['AllowValidOnly', 'AllowInsecureFallback']).default('AllowValidOnly'),
});

const gatewayTlsSchema = z.object({
  backend: z
    .object({
      clientCertificateRef: z.object({ group: group().default(''), kind: kind().default('Secret'), name: objectName(), namespace: namespaceName().optional() }).optional(),
    })
    .optional(),
  frontend: z
    .object({
      default: z.object({ validation: frontendValidationSchema.optional() }).optional(),
      perPort: z
        .array(z.object({ port: portNumber(), tls: z.object({ validation: frontendValidationSchema.optional() }) }))
        .max(64)
        .default([])
        .superRefine((ports, ctx) => {
          const seen = new Set<number>();
          ports.forEach((p, i) => {
            if (seen.has(p.port)) ctx.addIssue({ code: 'custom', path: [i, 'port'], message: 'Port for TLS configuration must be unique within the Gateway' });
            seen.add(p.port);
          });
        }),
    })
    .optional(),
});

/** A Gateway's or a ListenerSet's listeners: 1-64, names unique within the owner (both CRDs' rule). */
export function listenersSchema(owner: 'Gateway' | 'ListenerSet') {
  return z
    .array(listenerSchema)
    .min(1)
    .max(64)
    .superRefine((listeners, ctx) => {
      const names = new Set<string>();
      listeners.forEach((l, i) => {
        if (names.has(l.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `Listener name must be unique within the ${owner}` });
        names.add(l.name);
      });
    });
}

export const gatewaySchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('Gateway'),
  metadata: objectMetaSchema,
  spec: z.object({
    gatewayClassName: objectName(),
    listeners: listenersSchema('Gateway').superRefine((listeners, ctx) => {
        const combos = new Set<string>();
        listeners.forEach((l, i) => {
          const combo = `${l.port}/${l.protocol}/${l.hostname ?? ''}`;
          if (combos.has(combo)) {
            ctx.addIssue({ code: 'custom', path: [i], message: 'Combination of port, protocol and hostname must be unique for each listener' });
          }
          combos.add(combo);
        });
      }),
    addresses: z
      .array(z.object({ type: z.string().min(1).max(253).default('IPAddress'), value: z.string().min(1).max(253) }))
      .max(16)
      .default([]),
    tls: gatewayTlsSchema.optional(),
    allowedListeners: z
      .object({
        namespaces: z
          .object({ from: z.enum(['None', 'Same', 'All', 'Selector']).default('None'), selector: labelSelectorSchema.optional() })
          .prefault({}),
      })
      .optional(),
  }),
}) satisfies z.ZodType<Gateway, unknown>;
