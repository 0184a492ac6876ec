/**
 * Policies -> effective nginx settings per location + statuses. Pure.
 *
 * Order: resolve targets (TargetNotFound) -> resolve conflicts per (kind, target) (Conflicted)
 * -> merge per level (Gateway, route) -> check what nginx would refuse after merging (zone key
 * changes, busy-buffer bounds) and keep the previous settings there (Invalid, with the fix) ->
 * statuses and `<Kind>Affected`.
 */
import type { ClientSettingsPolicy, Policy, PolicyKind, ProxySettingsPolicy, RateLimitPolicy } from '../resources/policies';
import { DEFAULT_CONTROLLER_NAME } from '../graph/types';
import { checkProxySettings, DEFAULT_PAGE_SIZE, mergeProxy } from './buffers';
import { resolveConflicts, type Conflict } from './conflicts';
import { gatewayKey, policyKey, policyName, routeKey, targetKey } from './keys';
import { checkZoneKeys, combineRateLimits, policyZones, rateLimitLevel, type RateLimitLevel } from './ratelimit';
import { affectedCondition, looseTargetRefs, policyStatus, type AncestorOutcome } from '../status/policies';
import { resolveTargets, type Attachment } from './targets';
import type {
  EffectivePolicies,
  LocationPolicies,
  LocationProxySettings,
  PolicyInput,
  PolicyReason,
  PolicyResult,
  PolicyTarget,
  StatusReport,
  TargetAffected,
} from './types';

export * from './types';
export { checkProxySettings, mergeProxy, DEFAULT_PAGE_SIZE } from './buffers';
export { combineRateLimits, checkZoneKeys, rateLimitLevel, policyZones } from './ratelimit';
export { resolveConflicts, exclusiveFields } from './conflicts';
export { resolveTargets, targetsFromGraph } from './targets';
export { gatewayKey, routeKey, targetKey, zoneId } from './keys';
export { contentLengthAbove } from './bodysize';
export { withAffected } from '../status/policies';
export { modelZones, toPolicySettings, type LimitReq, type LimitReqZone, type PolicySettings } from './directives';

const EMPTY: LocationPolicies = Object.freeze({}) as LocationPolicies;

/**
 * The policy settings of a route's locations on one Gateway (every rule of the route gets the
 * same). Routes without policies of their own get their Gateway's settings.
 */
export function locationPolicies(
  effective: EffectivePolicies,
  gateway: { namespace: string; name: string },
  route: { kind?: 'HTTPRoute' | 'GRPCRoute'; namespace: string; name: string },
): LocationPolicies {
  const gk = gatewayKey(gateway.namespace, gateway.name);
  return effective.routes[routeKey(route.kind ?? 'HTTPRoute', route.namespace, route.name)]?.[gk] ?? effective.gateways[gk] ?? EMPTY;
}

export function emptyEffectivePolicies(): EffectivePolicies {
  return { zones: [], gateways: {}, routes: {} };
}

interface Outcome {
  reason: PolicyReason;
  messages: string[];
  /** The policy's settings (current or kept previous ones) act on this target. */
  inForce: boolean;
}

type ProxyField = keyof LocationProxySettings;

interface ProxyLevel {
  settings: LocationProxySettings;
  sources: Map<ProxyField, Attachment>;
}

interface Level {
  rateLimit?: RateLimitLevel;
  proxy?: ProxyLevel;
  body?: { maxSize: string; source: Attachment };
}

function proxyLevel(applied: Attachment[]): ProxyLevel | undefined {
  const settings: LocationProxySettings = {};
  const sources = new Map<ProxyField, Attachment>();
  for (const a of applied) {
    const b = (a.policy as ProxySettingsPolicy).spec.buffering;
    if (!b) continue;
    const set = <F extends ProxyField>(field: F, value: LocationProxySettings[F] | undefined) => {
      if (value === undefined || settings[field] !== undefined) return;
      settings[field] = value;
      sources.set(field, a);
    };
    set('buffering', b.disable === undefined ? undefined : !b.disable);
    set('bufferSize', b.bufferSize);
    set('buffers', b.buffers ? { number: b.buffers.number, size: b.buffers.size } : undefined);
    set('busyBuffersSize', b.busyBuffersSize);
  }
  return sources.size > 0 ? { settings, sources } : undefined;
}

const FIELD_NAMES: Record<ProxyField, string> = { buffering: 'disable', bufferSize: 'bufferSize', buffers: 'buffers', busyBuffersSize: 'busyBuffersSize' };

function describeSources(levels: (ProxyLevel | undefined)[], merged: LocationProxySettings): string {
  const parts: string[] = [];
  for (const field of ['bufferSize', 'buffers', 'busyBuffersSize'] as const) {
    if (merged[field] === undefined) continue;
    const source = levels.map((l) => l?.sources.get(field)).find((s) => s !== undefined);
    if (source) parts.push(`${FIELD_NAMES[field]} from ${policyName(source.policy)} on ${source.kind} ${source.namespace}/${source.name}`);
  }
  return parts.join(', ');
}

function isEmpty(l: LocationPolicies): boolean {
  return l.rateLimit === undefined && l.proxy === undefined && l.clientMaxBodySize === undefined;
}

function conflictMessage(a: Attachment, c: Conflict): string {
  const fields = c.fields.join(', ');
  return (
    `Conflicts with ${policyName(c.winner)} on ${a.kind} ${a.namespace}/${a.name}: both set ${fields}. ` +
    `Only one ${a.policy.kind} per target may set each of these fields; ${c.winner.metadata.name} wins as the older one ` +
    `(created ${c.winner.metadata.creationTimestamp}; the name breaks ties), so this policy is not applied to this target. ` +
    `Remove ${fields} from one of the two policies.`
  );
}

export function computePolicies(input: PolicyInput): PolicyResult {
  const controllerName = input.controllerName ?? DEFAULT_CONTROLLER_NAME;
  const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
  const perPolicy = resolveTargets(input.policies, input.targets);
  const outcomes = new Map<Attachment, Outcome>();
  const invalidate = (a: Attachment, message: string, inForce: boolean) => {
    const o = outcomes.get(a);
    if (!o) return;
    if (o.reason !== 'Invalid') outcomes.set(a, { reason: 'Invalid', messages: [message], inForce });
    else if (!o.messages.includes(message)) o.messages.push(message);
  };

  // 1. targets and conflicts
  const all = perPolicy.flat();
  const groups = resolveConflicts(all);
  for (const a of all) {
    if (!a.target) {
      const what = a.kind === 'Gateway' ? 'does not exist or does not belong to a GatewayClass of this controller' : 'does not exist or references no Gateway of this controller';
      outcomes.set(a, { reason: 'TargetNotFound', messages: [`${a.kind} ${a.namespace}/${a.name} ${what}`], inForce: false });
    }
  }
  const levels = new Map<string, Level>();
  for (const { applied, conflicted } of groups.values()) {
    for (const [a, c] of conflicted) outcomes.set(a, { reason: 'Conflicted', messages: [conflictMessage(a, c)], inForce: false });
    for (const a of applied) outcomes.set(a, { reason: 'Accepted', messages: ['The policy is accepted'], inForce: true });
    if (applied.length === 0) continue;
    const key = applied[0].key;
    const level = levels.get(key) ?? {};
    levels.set(key, level);
    switch (applied[0].policy.kind) {
      case 'RateLimitPolicy':
        level.rateLimit = rateLimitLevel(applied.map((a) => a.policy as RateLimitPolicy));
        break;
      case 'ProxySettingsPolicy':
        level.proxy = proxyLevel(applied);
        break;
      case 'ClientSettingsPolicy': {
        const source = applied.find((a) => (a.policy as ClientSettingsPolicy).spec.body?.maxSize !== undefined);
        if (source) level.body = { maxSize: (source.policy as ClientSettingsPolicy).spec.body!.maxSize!, source };
        break;
      }
    }
  }

  // 2. zones: every rule of a RateLimitPolicy applied somewhere; a changed key keeps the live zone
  const zonePolicies = new Map<string, { policy: RateLimitPolicy; applied: Attachment[] }>();
  for (const a of all) {
    if (a.policy.kind !== 'RateLimitPolicy' || outcomes.get(a)?.reason !== 'Accepted') continue;
    const entry = zonePolicies.get(policyKey(a.policy)) ?? { policy: a.policy, applied: [] };
    entry.applied.push(a);
    zonePolicies.set(policyKey(a.policy), entry);
  }
  const byZone = new Map<string, { applied: Attachment[]; ruleIndex: number }>();
  const wanted = [...zonePolicies.values()].flatMap(({ policy, applied }) =>
    policyZones(policy).map((z, ruleIndex) => {
      byZone.set(z.id, { applied, ruleIndex });
      return z;
    }),
  );
  const zoneCheck = checkZoneKeys(wanted, input.previous?.zones);
  for (const { zone, kept } of zoneCheck.changes) {
    const owner = byZone.get(zone.id)!;
    const message =
      `spec.rateLimit.local.rules[${owner.ruleIndex}].key changed from "${kept.key}" to "${zone.key}" while zoneSize stays ${zone.size}: ` +
      `nginx cannot change the key of its running zone ${zone.id}, so that zone keeps its previous settings ` +
      `(key "${kept.key}", zoneSize ${kept.size}, rate ${kept.rate}); the rest of this policy is applied. ` +
      `To use the new key, change zoneSize together with key, or delete this policy and create it again.`;
    for (const a of owner.applied) invalidate(a, message, true);
  }
  const effective: EffectivePolicies = { zones: [...zoneCheck.zones].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)), gateways: {}, routes: {} };

  // 3. Gateway level
  const gatewayProxy = new Map<string, LocationProxySettings | undefined>();
  for (const t of input.targets) {
    if (t.kind !== 'Gateway') continue;
    const gk = gatewayKey(t.namespace, t.name);
    const level = levels.get(targetKey('Gateway', t.namespace, t.name));
    if (!level) continue;
    let proxy = level.proxy?.settings;
    if (proxy && level.proxy) {
      const problem = checkProxySettings(proxy, pageSize);
      if (problem) {
        const kept = input.previous?.gateways[gk]?.proxy;
        const message =
          `${problem.problem} (${describeSources([level.proxy], proxy)}). nginx would refuse this, so ` +
          `${kept ? 'the Gateway keeps its previous proxy buffering settings' : 'no proxy buffering settings are applied on this Gateway'}. Fix: ${problem.fix}.`;
        for (const a of new Set(level.proxy.sources.values())) invalidate(a, message, kept !== undefined);
        proxy = kept;
      }
    }
    gatewayProxy.set(gk, proxy);
    const settings: LocationPolicies = {};
    const rateLimit = combineRateLimits(level.rateLimit, undefined);
    if (rateLimit) settings.rateLimit = rateLimit;
    if (proxy) settings.proxy = proxy;
    if (level.body) settings.clientMaxBodySize = level.body.maxSize;
    if (!isEmpty(settings)) effective.gateways[gk] = settings;
  }

  // 4. route locations: route fields over Gateway fields, checked as nginx will check them
  for (const t of input.targets) {
    if (t.kind === 'Gateway') continue;
    const rk = routeKey(t.kind, t.namespace, t.name);
    const level = levels.get(targetKey(t.kind, t.namespace, t.name));
    if (!level) continue;
    const perGateway: Record<string, LocationPolicies> = {};
    for (const gw of t.gateways ?? []) {
      const gk = gatewayKey(gw.namespace, gw.name);
      const gwLevel = levels.get(targetKey('Gateway', gw.namespace, gw.name));
      const settings: LocationPolicies = {};
      const rateLimit = combineRateLimits(gwLevel?.rateLimit, level.rateLimit);
      if (rateLimit) settings.rateLimit = rateLimit;
      let proxy = mergeProxy(gatewayProxy.get(gk), level.proxy?.settings);
      if (proxy && level.proxy) {
        const problem = checkProxySettings(proxy, pageSize);
        if (problem) {
          const previous = input.previous ? locationPolicies(input.previous, gw, { kind: t.kind as 'HTTPRoute' | 'GRPCRoute', namespace: t.namespace, name: t.name }) : undefined;
          const kept = previous?.proxy;
          const message =
            `On Gateway ${gk}, ${problem.problem} (${describeSources([level.proxy, gwLevel?.proxy], proxy)}). ` +
            `nginx would refuse this, so this route keeps ${kept ? 'its previous proxy buffering settings' : "the Gateway's proxy buffering settings"} there. Fix: ${problem.fix}.`;
          for (const a of new Set(level.proxy.sources.values())) invalidate(a, message, kept !== undefined);
          proxy = kept ?? gatewayProxy.get(gk);
        }
      }
      if (proxy) settings.proxy = proxy;
      const body = level.body?.maxSize ?? gwLevel?.body?.maxSize;
      if (body !== undefined) settings.clientMaxBodySize = body;
      perGateway[gk] = settings;
    }
    if (Object.keys(perGateway).length > 0) effective.routes[rk] = perGateway;
  }

  // 5. statuses
  const statuses: StatusReport[] = input.policies.map((policy, i) =>
    policyStatus(
      { kind: policy.kind, namespace: policy.metadata.namespace, name: policy.metadata.name, generation: policy.metadata.generation },
      perPolicy[i].map((a): AncestorOutcome => {
        const o = outcomes.get(a)!;
        return { kind: a.kind, namespace: a.namespace, name: a.name, reason: o.reason, message: o.messages.join(' ') };
      }),
      controllerName,
    ),
  );
  for (const bad of input.invalid ?? []) {
    const message = `The policy is invalid: ${bad.message}`;
    statuses.push(
      policyStatus(
        bad,
        looseTargetRefs(bad.doc).map((ref) => ({ ...ref, namespace: bad.namespace, reason: 'Invalid' as const, message })),
        controllerName,
      ),
    );
  }

  // 6. `<Kind>Affected` on targets some policy acts on
  const targetsByKey = new Map<string, PolicyTarget>(input.targets.map((t) => [targetKey(t.kind, t.namespace, t.name), t]));
  const affectedKinds = new Map<string, Set<PolicyKind>>();
  for (const a of all) {
    if (!a.target || !outcomes.get(a)?.inForce) continue;
    const kinds = affectedKinds.get(a.key) ?? new Set<PolicyKind>();
    kinds.add(a.policy.kind);
    affectedKinds.set(a.key, kinds);
  }
  const affected: TargetAffected[] = [];
  for (const [key, kinds] of affectedKinds) {
    const t = targetsByKey.get(key)!;
    affected.push({
      kind: t.kind,
      namespace: t.namespace,
      name: t.name,
      conditions: [...kinds].sort().map((k) => affectedCondition(k, t.generation)),
    });
  }

  return { effective, statuses, affected };
}

export type { Policy };
