/**
 * A Gateway's spec.tls: the client certificate it presents to backends (backend.clientCertificateRef,
 * used where a BackendTLSPolicy makes the connection TLS) and the validation of client
 * certificates on its HTTPS listeners (frontend.default, frontend.perPort by port number).
 */
import type { FrontendValidation, Gateway, Listener } from '../resources/types';
import { gatewayConditions, listenerConditions } from '../conditions';
import type { GraphCondition } from './types';
import type { CertificateIndex, ListenerCertificate } from './tls';
import { type CABundle, type CAIndex, joinBundles } from './ca-certificates';

/** How an HTTPS listener checks client certificates. */
export interface ClientValidation {
  ca: CABundle;
  /**
   * AllowValidOnly: a client without a certificate the CAs vouch for is refused. AllowInsecureFallback:
   * a certificate is asked for, and the connection is served whatever the client sends.
   */
  mode: FrontendValidation['mode'];
}

/** The Gateway's client certificate towards backends, and its ResolvedRefs condition (none when unset). */
export function backendClientCertificate(gateway: Gateway, certificates: CertificateIndex): { certificate?: ListenerCertificate; conditions: GraphCondition[] } {
  const ref = gateway.spec.tls?.backend?.clientCertificateRef;
  if (!ref) return { conditions: [] };
  const r = certificates.resolveSecret('Gateway', gateway.metadata.namespace, ref, 'spec.tls.backend.clientCertificateRef');
  if (!r.ok) return { conditions: [gatewayConditions.unresolvedRefs(r.reason === 'RefNotPermitted' ? 'RefNotPermitted' : 'InvalidClientCertificateRef', r.message)] };
  return { certificate: r.certificate, conditions: [gatewayConditions.resolvedRefs()] };
}

/** The validation that applies to a listener's port: its perPort entry, else the default. */
function validationFor(gateway: Gateway, listener: Listener): FrontendValidation | undefined {
  const frontend = gateway.spec.tls?.frontend;
  if (!frontend) return undefined;
  const perPort = frontend.perPort.find((p) => p.port === listener.port);
  return perPort ? perPort.tls.validation : frontend.default?.validation;
}

/**
 * An HTTPS listener's client validation, or the conditions saying why it cannot have it. Other
 * protocols are not validated (an HTTP listener on a port named in perPort is left alone).
 */
export function frontendValidation(gateway: Gateway, listener: Listener, ca: CAIndex): { validation?: ClientValidation; problem?: GraphCondition[] } {
  if (listener.protocol !== 'HTTPS') return {};
  const v = validationFor(gateway, listener);
  if (!v) return {};
  const field = gateway.spec.tls!.frontend!.perPort.some((p) => p.port === listener.port) ? `spec.tls.frontend.perPort[port ${listener.port}].tls.validation` : 'spec.tls.frontend.default.validation';
  const bundles: CABundle[] = [];
  const problems: { reason: 'InvalidCACertificateRef' | 'InvalidCACertificateKind' | 'RefNotPermitted'; message: string }[] = [];
  v.caCertificateRefs.forEach((ref, i) => {
    const r = ca.resolve(ref, { kind: 'Gateway', namespace: gateway.metadata.namespace }, `${field}.caCertificateRefs[${i}]`);
    if (r.ok) bundles.push(r.bundle);
    else problems.push({ reason: r.reason === 'InvalidKind' ? 'InvalidCACertificateKind' : r.reason, message: r.message });
  });
  const message = problems.map((p) => p.message).join('; ');
  if (bundles.length === 0) return { problem: listenerConditions.noValidCACertificate(problems[0].reason, message) };
  return { validation: { ca: joinBundles(bundles), mode: v.mode }, ...(problems.length > 0 ? { problem: listenerConditions.invalidCACertificateRef(problems[0].reason, message) } : {}) };
}

/** Gateway condition: some HTTPS listener serves clients whose certificate it could not verify. */
export function insecureFallbackCondition(gateway: Gateway): GraphCondition[] {
  const f = gateway.spec.tls?.frontend;
  if (!f) return [];
  const ports = f.perPort.filter((p) => p.tls.validation?.mode === 'AllowInsecureFallback').map((p) => String(p.port));
  const byDefault = f.default?.validation?.mode === 'AllowInsecureFallback';
  if (!byDefault && ports.length === 0) return [];
  const where = [...(byDefault ? ['the default'] : []), ...(ports.length ? [`port(s) ${ports.join(', ')}`] : [])].join(' and ');
  return [gatewayConditions.insecureFrontendValidationMode(`Client certificate validation of ${where} is AllowInsecureFallback: clients without a valid certificate are served`)];
}
