/**
 * CA certificate bundles referenced by BackendTLSPolicy (validation.caCertificateRefs) and by a
 * Gateway's client certificate validation (spec.tls.frontend): a core ConfigMap or Secret whose
 * key `ca.crt` holds one or more PEM certificates. What fails is said as data (a reason of the
 * Gateway API and a message naming the object, never its content); the caller picks the
 * condition it belongs to.
 */
import { createHash, X509Certificate } from 'crypto';
import { GATEWAY_API_GROUP, type ConfigMap, type ReferenceGrant, type ResourceSet, type Secret } from '../resources/types';

/** The key both kinds hold the bundle under (Gateway API: "a key named ca.crt"). */
export const CA_KEY = 'ca.crt';

export interface CABundle {
  /** Content-derived, file-safe: the same bundle is one file whoever refers to it. */
  id: string;
  pem: string;
}

export type CAProblemReason = 'InvalidKind' | 'InvalidCACertificateRef' | 'RefNotPermitted';
export type CAResolution = { ok: true; bundle: CABundle } | { ok: false; reason: CAProblemReason; message: string };

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Parsed bundles by data value (ConfigMaps and Secrets are reused while unchanged). */
const checked = new Map<string, { ok: true; pem: string; id: string } | { ok: false; why: string }>();

function checkBundle(text: string | undefined): { ok: true; pem: string; id: string } | { ok: false; why: string } {
  if (text === undefined || text.trim() === '') return { ok: false, why: `has no ${CA_KEY}` };
  const hit = checked.get(text);
  if (hit) return hit;
  const blocks = text.match(PEM_BLOCK) ?? [];
  let out: { ok: true; pem: string; id: string } | { ok: false; why: string };
  if (blocks.length === 0) out = { ok: false, why: `holds no PEM certificate in ${CA_KEY}` };
  else {
    try {
      for (const b of blocks) new X509Certificate(b);
      const pem = `${blocks.join('\n')}\n`;
      out = { ok: true, pem, id: createHash('sha256').update(pem).digest('hex').slice(0, 20) };
    } catch {
      out = { ok: false, why: `holds a certificate in ${CA_KEY} that cannot be parsed` };
    }
  }
  if (checked.size > 4096) checked.clear();
  checked.set(text, out);
  return out;
}

/** ConfigMaps and Secrets by "namespace/name", indexed once per graph build. */
export class CAIndex {
  private readonly configMaps = new Map<string, ConfigMap>();
  private readonly secrets = new Map<string, Secret>();
  private readonly grants: ReferenceGrant[];

  constructor(set: Pick<ResourceSet, 'configMaps' | 'secrets' | 'referenceGrants'>) {
    for (const c of set.configMaps ?? []) this.configMaps.set(`${c.metadata.namespace}/${c.metadata.name}`, c);
    for (const s of set.secrets ?? []) this.secrets.set(`${s.metadata.namespace}/${s.metadata.name}`, s);
    this.grants = set.referenceGrants;
  }

  /** A ReferenceGrant in `namespace` lets `fromKind`s of `fromNamespace` refer to `kind` `name`. */
  granted(fromKind: string, fromNamespace: string, namespace: string, kind: string, name: string): boolean {
    return this.grants.some(
      (g) =>
        g.metadata.namespace === namespace &&
        g.spec.from.some((f) => f.group === GATEWAY_API_GROUP && f.kind === fromKind && f.namespace === fromNamespace) &&
        g.spec.to.some((t) => t.group === '' && t.kind === kind && (t.name === undefined || t.name === name)),
    );
  }

  /**
   * One reference, `field` naming it in messages. `from` is the referring object: a reference
   * into another namespace needs a ReferenceGrant there (BackendTLSPolicy refs are always local).
   */
  resolve(ref: { group: string; kind: string; name: string; namespace?: string }, from: { kind: string; namespace: string }, field: string): CAResolution {
    const namespace = ref.namespace ?? from.namespace;
    if (ref.group !== '' || (ref.kind !== 'ConfigMap' && ref.kind !== 'Secret')) {
      return { ok: false, reason: 'InvalidKind', message: `${field}: ${ref.group ? `${ref.group}/` : ''}${ref.kind} is not supported; only core ConfigMaps and Secrets (key ${CA_KEY}) are` };
    }
    if (namespace !== from.namespace && !this.granted(from.kind, from.namespace, namespace, ref.kind, ref.name)) {
      return { ok: false, reason: 'RefNotPermitted', message: `${field}: ${ref.kind} ${namespace}/${ref.name} is in another namespace and no ReferenceGrant there allows ${from.kind}s from ${from.namespace}` };
    }
    const object = ref.kind === 'ConfigMap' ? this.configMaps.get(`${namespace}/${ref.name}`) : this.secrets.get(`${namespace}/${ref.name}`);
    if (!object) return { ok: false, reason: 'InvalidCACertificateRef', message: `${field}: ${ref.kind} ${namespace}/${ref.name} not found` };
    const check = checkBundle(object.data[CA_KEY]);
    if (!check.ok) return { ok: false, reason: 'InvalidCACertificateRef', message: `${field}: ${ref.kind} ${namespace}/${ref.name} ${check.why}` };
    return { ok: true, bundle: { id: check.id, pem: check.pem } };
  }
}

/** Several bundles as one (nginx reads one file of trusted certificates). */
export function joinBundles(bundles: CABundle[]): CABundle {
  if (bundles.length === 1) return bundles[0];
  const pem = bundles.map((b) => b.pem).join('');
  return { id: createHash('sha256').update(pem).digest('hex').slice(0, 20), pem };
}
