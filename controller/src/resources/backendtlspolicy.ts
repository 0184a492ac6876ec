/**
 * BackendTLSPolicy (gateway.networking.k8s.io/v1): how the gateway speaks TLS to a Service's
 * endpoints. The schema checks the shape and the API's own CEL rules (caCertificateRefs or
 * wellKnownCACertificates, not both; a SubjectAltName's value matches its type); whether the
 * references resolve and what nginx can verify is decided in graph/backendtls.ts.
 */
import { z } from 'zod';
import type { BackendTLSPolicy } from './types';
import { objectMetaSchema } from './metadata';
import { looseObject, looseString, standInMeta, type StandIn } from './standin';
import { group, hostname, kind, objectName, sectionName } from './validation';

const subjectAltNameSchema = z
  .object({
    type: z.enum(['Hostname', 'URI']),
    hostname: z.string().optional(),
    // Their formats (and lengths) are checked in graph/backendtls.ts: a value that fails makes
    // the policy Invalid and its backends fail closed instead of the policy being dropped.
    uri: z.string().optional(),
  })
  .superRefine((san, ctx) => {
    if (san.type === 'Hostname' && !san.hostname) ctx.addIssue({ code: 'custom', path: ['hostname'], message: 'SubjectAltName element must contain Hostname, if Type is set to Hostname' });
    if (san.type !== 'Hostname' && san.hostname) ctx.addIssue({ code: 'custom', path: ['hostname'], message: 'SubjectAltName element must not contain Hostname, if Type is not set to Hostname' });
    if (san.type === 'URI' && !san.uri) ctx.addIssue({ code: 'custom', path: ['uri'], message: 'SubjectAltName element must contain URI, if Type is set to URI' });
    if (san.type !== 'URI' && san.uri) ctx.addIssue({ code: 'custom', path: ['uri'], message: 'SubjectAltName element must not contain URI, if Type is not set to URI' });
  });

export const backendTLSPolicySchema = z.object({
  apiVersion: z.string(),
  kind: z.literal('BackendTLSPolicy'),
  metadata: objectMetaSchema,
  spec: z.object({
    targetRefs: z
      .array(z.object({ group: group(), kind: kind(), name: objectName(), sectionName: sectionName().optional() }))
      .min(1)
      .max(16),
    validation: z
      .object({
        caCertificateRefs: z.array(z.object({ group: group(), kind: kind(), name: objectName() })).max(8).default([]),
        wellKnownCACertificates: z.string().max(253).optional(),
        hostname: hostname().refine((h) => !h.startsWith('*.'), { message: 'must be a hostname without a wildcard' }),
        subjectAltNames: z.array(subjectAltNameSchema).max(5).default([]),
      })
      .superRefine((v, ctx) => {
        const refs = v.caCertificateRefs.length > 0;
        const known = v.wellKnownCACertificates !== undefined && v.wellKnownCACertificates !== '';
        if (refs && known) ctx.addIssue({ code: 'custom', message: 'must not contain both CACertificateRefs and WellKnownCACertificates' });
        if (!refs && !known) ctx.addIssue({ code: 'custom', message: 'must specify either CACertificateRefs or WellKnownCACertificates' });
      }),
    options: z.record(z.string(), z.string()).optional(),
  }),
}) satisfies z.ZodType<BackendTLSPolicy, unknown>;

/**
 * What stands in for a BackendTLSPolicy that fails its schema but names Services it targets:
 * dropping it would leave those Services spoken to in plain text, so the stand-in carries the
 * schema's message and the graph makes the policy not Accepted (Invalid) and its backends fail
 * closed (500), as for a valid policy nginx cannot enforce. Only what the graph needs to find the
 * targets is read, leniently; undefined when no target can be read.
 */
export const failClosedBackendTLSPolicy: StandIn<BackendTLSPolicy> = (doc, problem) => {
  const targetRefs: BackendTLSPolicy['spec']['targetRefs'] = [];
  const spec = looseObject(doc.spec);
  for (const raw of Array.isArray(spec.targetRefs) ? spec.targetRefs : []) {
    const r = looseObject(raw);
    const name = looseString(r.name);
    if (!name) continue;
    const sectionName = looseString(r.sectionName);
    targetRefs.push({ group: looseString(r.group) ?? '', kind: looseString(r.kind) ?? 'Service', name, ...(sectionName ? { sectionName } : {}) });
  }
  const metadata = standInMeta(doc);
  if (!metadata || targetRefs.length === 0) return undefined;
  return {
    apiVersion: looseString(doc.apiVersion) ?? '',
    kind: 'BackendTLSPolicy',
    metadata,
    spec: { targetRefs, validation: { caCertificateRefs: [], hostname: '', subjectAltNames: [] } },
    schemaProblem: problem,
  };
};
