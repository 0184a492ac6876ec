/**
 * buildModel: the Graph -> what nginx must do (pure). See model/types.ts for the shape and
 * model/locations.ts for the matching design.
 */
import type { Graph } from '../graph/types';
import type { EffectivePolicies } from '../policies/types';
import { modelZones, ruleSettings } from '../policies/model-adapter';
import { planServers } from './hosts';
import { buildLocations } from './locations';
import { ConditionMaps } from './matching';
import { finalizeBodyLimits } from './bodylimit';
import type { NginxModel, RuleSource, Server } from './types';
import { Upstreams } from './upstreams';

export * from './types';
export { NOT_FOUND_LOCATION } from './locations';
export { DISPATCH_KEY_VARIABLE } from './matching';

/**
 * `policies` (issue 3, from computePolicies().effective): zones go to the http level and each
 * rule location gets its route's settings (its Gateway's when the route has none); nothing is
 * set at server/http level, since dispatching and 404 locations `return` before limit_req runs.
 */
export function buildModel(graph: Graph, policies?: EffectivePolicies): NginxModel {
  const conditionMaps = new ConditionMaps();
  const upstreams = new Upstreams();
  const warnings: string[] = [];
  const warn = (m: string) => {
    if (!warnings.includes(m)) warnings.push(m);
  };

  const servers: Server[] = planServers(graph.gateways).map((plan) => {
    const { locations, ruleLocations } = buildLocations(plan.routes, { maps: conditionMaps, upstreams, warn });
    return {
      port: plan.port,
      serverNames: plan.name === undefined ? [] : [plan.name],
      defaultServer: plan.name === undefined,
      gateways: plan.gateways,
      locations,
      ruleLocations,
      settings: {},
    };
  });
  if (policies) {
    for (const server of servers) {
      for (const rule of server.ruleLocations) rule.settings = ruleSettings(policies, server.gateways, rule.source);
    }
  }

  return finalizeModel({
    http: { limitReqZones: policies ? modelZones(policies) : [], settings: {} },
    maps: conditionMaps.maps,
    splitClients: upstreams.splitClients,
    upstreams: upstreams.upstreams,
    servers,
    warnings,
  });
}

/**
 * Derives what follows from the settings policies put on the model: a location that proxies
 * inline carries its rule's settings, and per-rule body limits are enforced (model/bodylimit.ts).
 * buildModel calls it; call it again after changing settings. Idempotent.
 */
export function finalizeModel(model: NginxModel): NginxModel {
  const sourceKey = (s: RuleSource) => `${s.namespace}/${s.name}#${s.ruleIndex}`;
  for (const server of model.servers) {
    const targets = new Set<string>();
    const runs = new Set<string[]>();
    for (const l of server.locations) {
      if (l.action.kind !== 'dispatch') continue;
      for (const t of l.action.targets) targets.add(t);
      for (const run of l.action.runs) {
        if (runs.has(run.targets)) continue;
        runs.add(run.targets);
        for (const t of run.targets) targets.add(t);
      }
    }
    for (const rule of server.ruleLocations) rule.referenced = targets.has(rule.name);
    const bySource = new Map(server.ruleLocations.map((r) => [sourceKey(r.source), r]));
    for (const loc of server.locations) {
      if (loc.action.kind !== 'proxy') continue;
      const rule = bySource.get(sourceKey(loc.action.source));
      if (rule && loc.action.settings !== rule.settings) loc.action = { ...loc.action, settings: rule.settings };
    }
  }
  finalizeBodyLimits(model);
  return model;
}
