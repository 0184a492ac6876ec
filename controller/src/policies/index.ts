/**
 * Policies -> effective nginx settings per location + statuses. Pure.
 *
 * Order: resolve targets (TargetNotFound) -> resolve conflicts per (kind, target) (Conflicted)
 * -> merge per level (Gateway, route) -> check what nginx would refuse after merging (zone key
 * changes, busy-buffer bounds) and keep the previous settings there (Invalid, with the fix) ->
 * statuses and `<Kind>Affected`. What is particular to a kind (its conflicting fields, what its
 * policies set on a target, how a location's settings merge and what nginx would refuse, its
 * directives) is that kind's module, policies/<kind>/ (kind.ts, kinds.ts); this file only
 * orders the steps.
 */
import type { Policy, PolicyKind, RouteTargetKind } from '../resources/policies';
import { DEFAULT_CONTROLLER_NAME } from '../graph/types';
import { DEFAULT_PAGE_SIZE } from './proxysettings';
import { resolveConflicts, type Conflict } from './conflicts';
import { gatewayKey, policyName, routeKey, targetKey } from './keys';
import type { MergeContext } from './kind';
import { KIND_MODULES, KINDS } from './kinds';
import { affectedCondition, looseTargetRefs, policyStatus, type AncestorOutcome } from '../status/policies';
import { resolveTargets, type Attachment } from './targets';
import type {
  EffectivePolicies,
  LocationPolicies,
  PolicyInput,
  PolicyReason,
  PolicyResult,
  PolicyTarget,
  StatusReport,
  TargetAffected,
} from './types';

export * from './types';
export { checkProxySettings, mergeProxy, DEFAULT_PAGE_SIZE } from './proxysettings';
export { combineRateLimits, checkZoneKeys, rateLimitLevel, policyZones } from './ratelimit';
export { KINDS } from './kinds';
export type { MergeContext, MergePlace, PolicyKindModule } from './kind';
export { resolveConflicts, exclusiveFields } from './conflicts';
export { resolveTargets, targetsFromGraph } from './targets';
export { gatewayKey, routeKey, targetKey, zoneId } from './keys';
export { contentLengthAbove } from './clientsettings';
export { accessDecision, accessGeo, accessLines, type AccessGeo, type AccessLines } from './ipaccess/access';
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
  route: { kind?: RouteTargetKind; namespace: string; name: string },
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

/** Per target key: each kind's level (what the target's applied policies of that kind set). */
type Level = Partial<Record<PolicyKind, unknown>>;

function isEmpty(l: LocationPolicies): boolean {
  return l.rateLimit === undefined && l.proxy === undefined && l.clientMaxBodySize === undefined && l.ipAccess === undefined && l.clientAddress === undefined;
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
  // A route kind the policy's kind has nothing to set on: Invalid there, saying why.
  for (const a of all) {
    const why = a.target && KIND_MODULES[a.policy.kind].unsupported(a.target);
    if (why) outcomes.set(a, { reason: 'Invalid', messages: [why], inForce: false });
  }
  const groups = resolveConflicts(all.filter((a) => !outcomes.has(a)));
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
    const kind = applied[0].policy.kind;
    const value = KIND_MODULES[kind].level(applied);
    if (value !== undefined) level[kind] = value;
  }
  // A stand-in for a document that failed its schema (resources/standin.ts) is applied like its
  // kind's other policies, so that the kind's module makes its targets fail closed, yet it is
  // not Accepted: its status names the schema's problem and what the target does meanwhile.
  for (const a of all) {
    const problem = a.policy.schemaProblem;
    if (problem === undefined) continue;
    const o = outcomes.get(a)!;
    const meanwhile = o.inForce ? [KIND_MODULES[a.policy.kind].failsClosed ?? ''] : o.messages;
    outcomes.set(a, { reason: 'Invalid', messages: [`The policy is invalid: ${problem};`, ...meanwhile], inForce: o.inForce });
  }
  const ctx: MergeContext = { pageSize, invalidate };

  // 2. http-level definitions (zones: every rule of a RateLimitPolicy applied somewhere)
  const effective: EffectivePolicies = { zones: [], gateways: {}, routes: {} };
  for (const kind of KINDS) {
    if (!kind.zones) continue;
    const accepted = all.filter((a) => a.policy.kind === kind.kind && outcomes.get(a)?.reason === 'Accepted');
    effective.zones.push(...kind.zones(accepted, input.previous?.zones, ctx));
  }
  effective.zones.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));

  // 3. Gateway level
  for (const t of input.targets) {
    if (t.kind !== 'Gateway') continue;
    const gk = gatewayKey(t.namespace, t.name);
    const level = levels.get(targetKey('Gateway', t.namespace, t.name));
    if (!level) continue;
    const settings: LocationPolicies = {};
    for (const kind of KINDS) {
      kind.merge({ gateway: level[kind.kind], where: { gatewayKey: gk, route: false }, previous: input.previous?.gateways[gk] }, settings, ctx);
    }
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
      const previous = input.previous ? locationPolicies(input.previous, gw, { kind: t.kind, namespace: t.namespace, name: t.name }) : undefined;
      const settings: LocationPolicies = {};
      for (const kind of KINDS) {
        kind.merge(
          { gateway: gwLevel?.[kind.kind], route: level[kind.kind], where: { gatewayKey: gk, route: true }, gatewaySettings: effective.gateways[gk], previous },
          settings,
          ctx,
        );
      }
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
    if (bad.standIn) continue; // its stand-in's status is among the above
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
