/**
 * Certificates of HTTPS listeners (tls.mode Terminate): each certificateRef must name a core
 * Secret of type kubernetes.io/tls whose tls.crt is a PEM certificate (chain) and tls.key the
 * PEM private key of that certificate; a Secret in another namespace needs a ReferenceGrant
 * there from Gateways of the listener's namespace. What fails is reported on the listener
 * (ResolvedRefs False: InvalidCertificateRef or RefNotPermitted) and the listener is not served.
 * Messages name Secrets, never their content.
 */
import { createPrivateKey, X509Certificate } from 'crypto';
import { GATEWAY_API_GROUP, type Gateway, type Listener, type ReferenceGrant, type ResourceSet, type Secret } from '../resources/types';
import type { GraphCondition } from './types';
import { listenerConditions } from '../conditions';

export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

/** One certificate and its key, as nginx reads them (one PEM file holds both). */
export interface ListenerCertificate {
  /** File-safe and unique per Secret: "<namespace>_<name>". */
  id: string;
  pem: string;
}

const PEM_CERTIFICATE_BEGIN = '-----BEGIN CERTIFICATE-----';
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Validation of a Secret's data, by Secret object (parsed Secrets are reused while unchanged). */
const checked = new WeakMap<Secret, { ok: true; pem: string } | { ok: false; reason: string }>();

function checkTlsSecret(secret: Secret): { ok: true; pem: string } | { ok: false; reason: string } {
  const hit = checked.get(secret);
  if (hit) return hit;
  let out: { ok: true; pem: string } | { ok: false; reason: string };
  const crt = secret.data['tls.crt'];
  const key = secret.data['tls.key'];
  if (secret.type !== TLS_SECRET_TYPE) out = { ok: false, reason: `is of type "${secret.type}", not ${TLS_SECRET_TYPE}` };
  else if (!crt || !key) out = { ok: false, reason: 'has no tls.crt or no tls.key' };
  else {
    try {
      // nginx reads every certificate of the chain and refuses the whole configuration when one
      // is unreadable, so each must parse here, not only the first.
      const blocks = crt.match(PEM_CERTIFICATE) ?? [];
      if (blocks.length === 0 || blocks.length !== crt.split(PEM_CERTIFICATE_BEGIN).length - 1) throw new Error('unreadable chain');
      const cert = new X509Certificate(blocks[0] as string);
      for (const b of blocks.slice(1)) new X509Certificate(b);
      const privateKey = createPrivateKey(key);
      if (!cert.checkPrivateKey(privateKey)) out = { ok: false, reason: 'holds a tls.key that does not belong to its tls.crt' };
      else out = { ok: true, pem: `${crt.trim()}\n${key.trim()}\n` };
    } catch {
      out = { ok: false, reason: 'holds a tls.crt or tls.key that is not a valid PEM certificate / private key' };
    }
  }
  checked.set(secret, out);
  return out;
}

export class CertificateIndex {
  private secrets = new Map<string, Secret>();
  constructor(private readonly set: Pick<ResourceSet, 'secrets' | 'referenceGrants'>) {
    for (const s of set.secrets ?? []) this.secrets.set(`${s.metadata.namespace}/${s.metadata.name}`, s);
  }

  private granted(fromKind: string, fromNamespace: string, namespace: string, name: string): boolean {
    return this.set.referenceGrants.some(
      (g: ReferenceGrant) =>
        g.metadata.namespace === namespace &&
        g.spec.from.some((f) => f.group === GATEWAY_API_GROUP && f.kind === fromKind && f.namespace === fromNamespace) &&
        g.spec.to.some((t) => t.group === '' && t.kind === 'Secret' && (t.name === undefined || t.name === name)),
    );
  }

  /**
   * One reference to a certificate and key Secret, from an object of `fromKind` in
   * `fromNamespace` (a Secret elsewhere needs a ReferenceGrant there). `field` names it in messages.
   */
  resolveSecret(
    fromKind: string,
    fromNamespace: string,
    ref: { group: string; kind: string; name: string; namespace?: string },
    field: string,
  ): { ok: true; certificate: ListenerCertificate } | { ok: false; reason: 'Invalid' | 'RefNotPermitted'; message: string } {
    const namespace = ref.namespace ?? fromNamespace;
    if (ref.group !== '' || ref.kind !== 'Secret') {
      return { ok: false, reason: 'Invalid', message: `${field}: ${ref.group ? `${ref.group}/` : ''}${ref.kind} is not supported, only core Secrets` };
    }
    if (namespace !== fromNamespace && !this.granted(fromKind, fromNamespace, namespace, ref.name)) {
      return { ok: false, reason: 'RefNotPermitted', message: `${field}: Secret ${namespace}/${ref.name} is in another namespace and no ReferenceGrant there allows ${fromKind}s from ${fromNamespace}` };
    }
    const secret = this.secrets.get(`${namespace}/${ref.name}`);
    if (!secret) return { ok: false, reason: 'Invalid', message: `${field}: Secret ${namespace}/${ref.name} not found` };
    const check = checkTlsSecret(secret);
    if (!check.ok) return { ok: false, reason: 'Invalid', message: `${field}: Secret ${namespace}/${ref.name} ${check.reason}` };
    return { ok: true, certificate: { id: `${namespace}_${ref.name}`, pem: check.pem } };
  }

  /**
   * The listener's certificates, or the conditions saying why it has none. A listener of a
   * ListenerSet refers to Secrets from the ListenerSet's namespace, so a ReferenceGrant must name
   * ListenerSet (not Gateway) as the kind it allows.
   */
  resolve(owner: ListenerOwner, listener: Listener): { certificates: ListenerCertificate[] } | { problem: GraphCondition[] } {
    const tls = listener.tls;
    if (!tls || tls.certificateRefs.length === 0) {
      return { problem: listenerConditions.invalidCertificateRef(`Listener ${listener.name}: tls.certificateRefs is empty (tls.options alone cannot provide a certificate)`) };
    }
    const certificates: ListenerCertificate[] = [];
    for (const [i, ref] of tls.certificateRefs.entries()) {
      const r = this.resolveSecret(owner.kind, owner.namespace, ref, `tls.certificateRefs[${i}]`);
      if (!r.ok) return { problem: r.reason === 'RefNotPermitted' ? listenerConditions.certificateRefNotPermitted(r.message) : listenerConditions.invalidCertificateRef(r.message) };
      certificates.push(r.certificate);
    }
    return { certificates };
  }
}

/** The object a listener is written in: its namespace and kind are where certificate references start from. */
export interface ListenerOwner {
  kind: 'Gateway' | 'ListenerSet';
  namespace: string;
}
