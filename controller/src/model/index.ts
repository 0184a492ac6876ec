/**
 * buildModel: the Graph -> what nginx must do (pure). See model/types.ts for the shape and
 * model/locations.ts for the matching design.
 */
import type { Graph } from '../graph/types';
import { planServers } from './hosts';
import { buildLocations } from './locations';
import { Decisions, QueryValues } from './matching';
import { finalizeBodyLimits } from './bodylimit';
import type { NginxModel, Server } from './types';
import { Upstreams } from './upstreams';

export * from './types';
export { NOT_FOUND_LOCATION } from './locations';

export function buildModel(graph: Graph): NginxModel {
  const queryValues = new QueryValues();
  const decisions = new Decisions();
  const upstreams = new Upstreams();
  const warnings: string[] = [];
  const warn = (m: string) => {
    if (!warnings.includes(m)) warnings.push(m);
  };

  const servers: Server[] = planServers(graph.gateways).map((plan) => {
    const { locations, ruleLocations } = buildLocations(plan.routes, { queryValues, decisions, upstreams, warn });
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

  return finalizeModel({
    http: { limitReqZones: [], settings: {} },
    maps: [...queryValues.maps, ...decisions.maps],
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
  for (const server of model.servers) {
    const targets = new Set(server.locations.flatMap((l) => (l.action.kind === 'dispatch' ? l.action.targets : [])));
    for (const rule of server.ruleLocations) rule.referenced = targets.has(rule.name);
    for (const loc of server.locations) {
      if (loc.action.kind !== 'proxy') continue;
      const src = loc.action.source;
      const rule = server.ruleLocations.find(
        (r) => r.source.namespace === src.namespace && r.source.name === src.name && r.source.ruleIndex === src.ruleIndex,
      );
      if (rule) loc.action = { ...loc.action, settings: rule.settings };
    }
  }
  finalizeBodyLimits(model);
  return model;
}
