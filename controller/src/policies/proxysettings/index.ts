/**
 * ProxySettingsPolicy: proxy buffering, field by field (the route's fields over its Gateway's),
 * each field set by one policy per target. A merged set nginx would refuse (buffers.ts) never
 * reaches nginx: the place keeps its previous settings and the policies that set the fields
 * in question are Invalid there, with the fix.
 */
import type { ProxySettingsPolicy } from '../../resources/policies';
import type { PolicyKindModule } from '../kind';
import { policyName } from '../keys';
import type { Attachment } from '../targets';
import type { LocationProxySettings } from '../types';
import { checkProxySettings, mergeProxy } from './buffers';
import { httpOnly } from '../unsupported';

export { checkProxySettings, mergeProxy, DEFAULT_PAGE_SIZE, type ProxyProblem } from './buffers';

type ProxyField = keyof LocationProxySettings;

/** What one target's policies set, and which attachment set each field (for messages). */
export interface ProxyLevel {
  settings: LocationProxySettings;
  sources: Map<ProxyField, Attachment>;
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

export const proxySettingsPolicies: PolicyKindModule<ProxyLevel> = {
  kind: 'ProxySettingsPolicy',
  unsupported: httpOnly('ProxySettingsPolicy'),

  exclusiveFields(policy) {
    const b = (policy as ProxySettingsPolicy).spec.buffering ?? {};
    return (['disable', 'bufferSize', 'buffers', 'busyBuffersSize'] as const).filter((f) => b[f] !== undefined).map((f) => `buffering.${f}`);
  },

  level(applied) {
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
  },

  merge(place, out, ctx) {
    const gatewayProxy = place.where.route ? place.gatewaySettings?.proxy : undefined;
    // The level whose policies answer for a problem: the route's on a route's place.
    const own = place.where.route ? place.route : place.gateway;
    let proxy = place.where.route ? mergeProxy(gatewayProxy, place.route?.settings) : place.gateway?.settings;
    if (proxy && own) {
      const problem = checkProxySettings(proxy, ctx.pageSize);
      if (problem) {
        const kept = place.previous?.proxy;
        const gk = place.where.gatewayKey;
        const message = place.where.route
          ? `On Gateway ${gk}, ${problem.problem} (${describeSources([place.route, place.gateway], proxy)}). ` +
            `nginx would refuse this, so this route keeps ${kept ? 'its previous proxy buffering settings' : "the Gateway's proxy buffering settings"} there. Fix: ${problem.fix}.`
          : `${problem.problem} (${describeSources([place.gateway], proxy)}). nginx would refuse this, so ` +
            `${kept ? 'the Gateway keeps its previous proxy buffering settings' : 'no proxy buffering settings are applied on this Gateway'}. Fix: ${problem.fix}.`;
        for (const a of new Set(own.sources.values())) ctx.invalidate(a, message, kept !== undefined);
        proxy = kept ?? gatewayProxy;
      }
    }
    if (proxy) out.proxy = proxy;
  },

  generate(settings, out) {
    const p = settings.proxy;
    if (!p) return;
    if (p.buffering !== undefined) out.proxyBuffering = p.buffering;
    if (p.bufferSize !== undefined) out.proxyBufferSize = p.bufferSize;
    if (p.buffers !== undefined) out.proxyBuffers = { ...p.buffers };
    if (p.busyBuffersSize !== undefined) out.proxyBusyBuffersSize = p.busyBuffersSize;
  },
};
