/**
 * Names and labels of the objects provisioned for a Gateway. The base name is
 * `<gateway>-<gatewayClass>` (as NGINX Gateway Fabric names its objects, so operators find
 * them next to the Gateway); names longer than a DNS label (63) are cut and end in a hash of
 * the full name, so two long Gateways never share objects.
 */
import { createHash } from 'crypto';

export const MAX_NAME = 63;
export const MANAGED_BY = 'portcullis';
/** The Gateway API's label for infrastructure made for a Gateway (GEP-1762). */
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';
export const APP_NAME = 'portcullis-gateway';

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** A DNS label: cut to 63 characters with an 8-hex hash of the whole name at the end. */
export function dnsLabel(name: string): string {
  if (name.length <= MAX_NAME) return name;
  const head = name.slice(0, MAX_NAME - 9).replace(/[-.]+$/, '');
  return `${head}-${shortHash(name)}`;
}

export function baseName(gatewayName: string, className: string): string {
  return dnsLabel(`${gatewayName}-${className}`);
}

/** The ConfigMap that carries what the agent needs besides its flags (the controller's CA). */
export function agentConfigName(base: string): string {
  return dnsLabel(`${base}-agent`);
}

/** Labels our objects carry and the Deployment selects its pods by (never overridden). */
export function selectorLabels(gatewayName: string, base: string): Record<string, string> {
  // Label values are at most 63 characters too.
  return {
    'app.kubernetes.io/name': APP_NAME,
    'app.kubernetes.io/instance': base,
    [GATEWAY_NAME_LABEL]: dnsLabel(gatewayName),
  };
}

export function ownLabels(gatewayName: string, base: string): Record<string, string> {
  return { ...selectorLabels(gatewayName, base), 'app.kubernetes.io/managed-by': MANAGED_BY };
}
