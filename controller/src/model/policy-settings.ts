/**
 * Which policy settings apply to which location: the model asks here, per server, for the
 * settings of each rule it builds (the settings themselves come from policies/directives.ts).
 */
import { gatewayKey, routeKey, toPolicySettings, type EffectivePolicies, type LocationPolicies } from '../policies';
import { sizeBytes } from '../resources/policies';
import type { ObjectKey, PolicySettings, RuleSource } from './types';

/**
 * The model fields of one LocationPolicies object, made once: every rule of a route (and every
 * route of a Gateway without policies of its own) shares it. Read-only for the model.
 */
const converted = new WeakMap<LocationPolicies, PolicySettings>();
function sharedSettings(p: LocationPolicies): PolicySettings {
  let s = converted.get(p);
  if (!s) {
    s = toPolicySettings(p);
    converted.set(p, s);
  }
  return s;
}

/**
 * Settings of the location serving `source` (an HTTPRoute rule) in a server fed by `gateways`.
 * A server shared by several Gateways holds one location per rule, so the first of them the
 * route has settings for decides (Gateways of one nginx rarely share a port and hostname).
 */
export function ruleSettings(effective: EffectivePolicies, gateways: ObjectKey[], source: RuleSource, kind: 'HTTPRoute' | 'GRPCRoute' = 'HTTPRoute'): PolicySettings {
  const perGateway = effective.routes[routeKey(kind, source.namespace, source.name)];
  for (const gw of gateways) {
    const own = perGateway?.[gatewayKey(gw.namespace, gw.name)];
    if (own) return sharedSettings(own);
  }
  for (const gw of gateways) {
    const shared = effective.gateways[gatewayKey(gw.namespace, gw.name)];
    if (shared) return sharedSettings(shared);
  }
  return {};
}

/**
 * ruleSettings for the many rules of one server: the same answers, with the Gateways' share
 * looked up once and a route's own only when some route has policies (the keys are texts made
 * per lookup: at 3,000 rules per build they were a few ms of every change).
 */
export function ruleSettingsOf(effective: EffectivePolicies, gateways: ObjectKey[]): (source: RuleSource, kind?: 'HTTPRoute' | 'GRPCRoute') => PolicySettings {
  let anyRoute = false;
  for (const _ in effective.routes) {
    anyRoute = true;
    break;
  }
  let fallback: PolicySettings | undefined;
  let fallbackKnown = false;
  return (source, kind = 'HTTPRoute') => {
    if (anyRoute) {
      const perGateway = effective.routes[routeKey(kind, source.namespace, source.name)];
      if (perGateway) {
        for (const gw of gateways) {
          const own = perGateway[gatewayKey(gw.namespace, gw.name)];
          if (own) return sharedSettings(own);
        }
      }
    }
    if (!fallbackKnown) {
      for (const gw of gateways) {
        const shared = effective.gateways[gatewayKey(gw.namespace, gw.name)];
        if (shared) {
          fallback = sharedSettings(shared);
          break;
        }
      }
      fallbackKnown = true;
    }
    return fallback ?? {};
  };
}

/** nginx's client_max_body_size default. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * client_max_body_size for a dispatching location: nginx checks Content-Length there, before
 * the request reaches a rule's named location, so it must let through the largest body any
 * candidate rule accepts ("0" = no limit). undefined: nginx's default (1m) suits every candidate.
 */
export function dispatchBodySize(candidates: (string | undefined)[]): string | undefined {
  if (candidates.every((c) => c === undefined)) return undefined;
  if (candidates.some((c) => c !== undefined && sizeBytes(c) === 0)) return '0';
  const bytes = candidates.map((c) => (c === undefined ? DEFAULT_MAX_BODY_BYTES : sizeBytes(c)));
  return String(Math.max(...bytes));
}
