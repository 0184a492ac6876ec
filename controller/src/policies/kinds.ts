/**
 * The policy kinds, each one module (policies/<kind>/) behind PolicyKindModule (kind.ts). Their
 * order is the order of each location's settings.
 */
import type { PolicyKind } from '../resources/policies';
import { clientSettingsPolicies } from './clientsettings';
import { ipAccessPolicies } from './ipaccess';
import type { PolicyKindModule } from './kind';
import { proxySettingsPolicies } from './proxysettings';
import { rateLimitPolicies } from './ratelimit';

export const KINDS: readonly PolicyKindModule[] = [ipAccessPolicies, rateLimitPolicies, proxySettingsPolicies, clientSettingsPolicies] as PolicyKindModule[];

export const KIND_MODULES: Record<PolicyKind, PolicyKindModule> = Object.fromEntries(KINDS.map((k) => [k.kind, k])) as Record<PolicyKind, PolicyKindModule>;
