/**
 * Conditions as the Gateway API names them (types and reasons from apis/v1), with our messages.
 * Grouped per object so each builder reads like the status it produces.
 */
import type { GraphCondition } from './types';

export const cond = (type: string, status: 'True' | 'False', reason: string, message: string): GraphCondition => ({ type, status, reason, message });

export const gatewayClassConditions = {
  accepted: () => cond('Accepted', 'True', 'Accepted', 'The GatewayClass is accepted'),
  parametersIgnored: (msg: string) =>
    cond('Accepted', 'True', 'InvalidParameters', `The GatewayClass is accepted, but parametersRef is ignored: ${msg}`),
  supportedVersion: () => cond('SupportedVersion', 'True', 'SupportedVersion', 'The Gateway API version is supported'),
  invalidParameters: (msg: string) => cond('Accepted', 'False', 'InvalidParameters', msg),
};

export const gatewayConditions = {
  accepted: () => cond('Accepted', 'True', 'Accepted', 'The Gateway is accepted'),
  acceptedSomeListenersInvalid: () => cond('Accepted', 'True', 'ListenersNotValid', 'The Gateway has at least one valid listener'),
  noValidListeners: (): GraphCondition[] => [
    cond('Accepted', 'False', 'ListenersNotValid', 'The Gateway has no valid listeners'),
    cond('Programmed', 'False', 'Invalid', 'The Gateway has no valid listeners'),
  ],
  unsupportedAddress: (msg: string): GraphCondition[] => [
    cond('Accepted', 'False', 'UnsupportedAddress', msg),
    cond('Programmed', 'False', 'Invalid', msg),
  ],
  invalidParameters: (msg: string) => cond('Accepted', 'False', 'InvalidParameters', msg),
  invalid: (msg: string): GraphCondition[] => [cond('Accepted', 'False', 'Invalid', msg), cond('Programmed', 'False', 'Invalid', msg)],
  programmed: () => cond('Programmed', 'True', 'Programmed', 'The Gateway is programmed'),
  notProgrammed: (nginxMessage: string) =>
    cond('Programmed', 'False', 'Invalid', `The Gateway is not programmed due to a failure to reload nginx with the configuration: ${nginxMessage}`),
  addressNotUsable: (msg: string) => cond('Programmed', 'False', 'AddressNotUsable', msg),
  resolvedRefs: () => cond('ResolvedRefs', 'True', 'ResolvedRefs', 'All references are resolved'),
  /** spec.tls.backend.clientCertificateRef cannot be used: reason InvalidClientCertificateRef or RefNotPermitted. */
  unresolvedRefs: (reason: 'InvalidClientCertificateRef' | 'RefNotPermitted', msg: string) => cond('ResolvedRefs', 'False', reason, msg),
  insecureFrontendValidationMode: (msg: string) => cond('InsecureFrontendValidationMode', 'True', 'ConfigurationChanged', msg),
};

export const listenerSetConditions = {
  accepted: () => cond('Accepted', 'True', 'Accepted', 'The ListenerSet is accepted'),
  acceptedSomeListenersInvalid: () => cond('Accepted', 'True', 'ListenersNotValid', 'The ListenerSet has at least one valid listener'),
  notAllowed: (msg: string): GraphCondition[] => [cond('Accepted', 'False', 'NotAllowed', msg), cond('Programmed', 'False', 'NotAllowed', msg)],
  parentNotAccepted: (msg: string): GraphCondition[] => [cond('Accepted', 'False', 'ParentNotAccepted', msg), cond('Programmed', 'False', 'ParentNotAccepted', msg)],
  noValidListeners: (): GraphCondition[] => [
    cond('Accepted', 'False', 'ListenersNotValid', 'The ListenerSet has no valid listeners'),
    cond('Programmed', 'False', 'ListenersNotValid', 'The ListenerSet has no valid listeners'),
  ],
  programmed: () => cond('Programmed', 'True', 'Programmed', 'The ListenerSet is programmed'),
  notProgrammed: (msg: string) => cond('Programmed', 'False', 'Invalid', msg),
  invalid: (msg: string): GraphCondition[] => [cond('Accepted', 'False', 'Invalid', msg), cond('Programmed', 'False', 'Invalid', msg)],
};

export const listenerConditions = {
  accepted: () => cond('Accepted', 'True', 'Accepted', 'The Listener is accepted'),
  resolvedRefs: () => cond('ResolvedRefs', 'True', 'ResolvedRefs', 'All references are resolved'),
  noConflicts: () => cond('Conflicted', 'False', 'NoConflicts', 'No conflicts'),
  programmed: () => cond('Programmed', 'True', 'Programmed', 'The Listener is programmed'),
  notProgrammed: (msg: string) => cond('Programmed', 'False', 'Invalid', msg),
  unsupportedProtocol: (msg: string): GraphCondition[] => [
    cond('Accepted', 'False', 'UnsupportedProtocol', msg),
    cond('Programmed', 'False', 'Invalid', msg),
  ],
  unsupportedValue: (msg: string): GraphCondition[] => [
    cond('Accepted', 'False', 'UnsupportedValue', msg),
    cond('Programmed', 'False', 'Invalid', msg),
  ],
  invalidRouteKinds: (msg: string): GraphCondition[] => [
    cond('ResolvedRefs', 'False', 'InvalidRouteKinds', msg),
    cond('Programmed', 'False', 'Invalid', msg),
  ],
  invalidCertificateRef: (msg: string): GraphCondition[] => [
    cond('ResolvedRefs', 'False', 'InvalidCertificateRef', msg),
    cond('Programmed', 'False', 'Invalid', msg),
  ],
  certificateRefNotPermitted: (msg: string): GraphCondition[] => [
    cond('ResolvedRefs', 'False', 'RefNotPermitted', msg),
    cond('Programmed', 'False', 'Invalid', msg),
  ],
  /**
   * Client certificate validation of the listener's port names no usable CA certificate: the
   * listener is not served (it would otherwise accept clients it was told to refuse).
   */
  noValidCACertificate: (reason: 'InvalidCACertificateRef' | 'InvalidCACertificateKind' | 'RefNotPermitted', msg: string): GraphCondition[] => [
    cond('Accepted', 'False', 'NoValidCACertificate', msg),
    cond('ResolvedRefs', 'False', reason, msg),
    cond('Programmed', 'False', 'Invalid', msg),
  ],
  /** Some CA certificate references of the validation are unusable; the others are used. */
  invalidCACertificateRef: (reason: 'InvalidCACertificateRef' | 'InvalidCACertificateKind' | 'RefNotPermitted', msg: string): GraphCondition[] => [cond('ResolvedRefs', 'False', reason, msg)],
  /** The port is held by another process (or may not be bound): Accepted False PortUnavailable. */
  portUnavailable: (msg: string): GraphCondition[] => [
    cond('Accepted', 'False', 'PortUnavailable', msg),
    cond('Programmed', 'False', 'Invalid', msg),
  ],
  protocolConflict: (msg: string): GraphCondition[] => [
    cond('Accepted', 'False', 'ProtocolConflict', msg),
    cond('Conflicted', 'True', 'ProtocolConflict', msg),
    cond('Programmed', 'False', 'ProtocolConflict', msg),
  ],
  hostnameConflict: (msg: string): GraphCondition[] => [
    cond('Accepted', 'False', 'HostnameConflict', msg),
    cond('Conflicted', 'True', 'HostnameConflict', msg),
    cond('Programmed', 'False', 'HostnameConflict', msg),
  ],
};

export const routeConditions = {
  accepted: () => cond('Accepted', 'True', 'Accepted', 'The Route is accepted'),
  /**
   * Accepted, with fields set that this implementation does not act on (as NGINX Gateway Fabric
   * reports them): the route is served without them, and its status says so.
   */
  acceptedUnsupportedField: (msg: string) => cond('Accepted', 'True', 'UnsupportedField', `The following unsupported parameters were ignored: ${msg}`),
  noMatchingParent: (msg: string) => cond('Accepted', 'False', 'NoMatchingParent', msg),
  notAllowedByListeners: (msg: string) => cond('Accepted', 'False', 'NotAllowedByListeners', msg),
  noMatchingListenerHostname: (msg: string) => cond('Accepted', 'False', 'NoMatchingListenerHostname', msg),
  unsupportedValue: (msg: string) => cond('Accepted', 'False', 'UnsupportedValue', msg),
  incompatibleFilters: (msg: string) => cond('Accepted', 'False', 'IncompatibleFilters', msg),
  partiallyInvalid: (msg: string) => cond('PartiallyInvalid', 'True', 'UnsupportedValue', `Dropped Rule(s): ${msg}`),
  resolvedRefs: () => cond('ResolvedRefs', 'True', 'ResolvedRefs', 'All references are resolved'),
  unresolvedRefs: (reason: string, msg: string) => cond('ResolvedRefs', 'False', reason, msg),
};

/** Add conditions, a later one replacing an earlier one of the same type. */
export function mergeConditions(base: GraphCondition[], overrides: GraphCondition[]): GraphCondition[] {
  const out = base.filter((c) => !overrides.some((o) => o.type === c.type));
  for (const o of overrides) {
    const i = out.findIndex((c) => c.type === o.type);
    if (i >= 0) out[i] = o;
    else out.push(o);
  }
  return out;
}
