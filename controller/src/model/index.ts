/**
 * buildModel: the Graph -> what nginx must do (pure). See model/types.ts for the shape and
 * model/locations.ts for the matching design.
 */
import type { Graph } from '../graph/types';
import { planServers } from './hosts';
import { buildLocations } from './locations';
import { Decisions, QueryValues } from './matching';
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

  return {
    http: { limitReqZones: [], settings: {} },
    maps: [...queryValues.maps, ...decisions.maps],
    splitClients: upstreams.splitClients,
    upstreams: upstreams.upstreams,
    servers,
    warnings,
  };
}
