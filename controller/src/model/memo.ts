/**
 * Servers whose routes did not change since the last build keep their locations.
 *
 * A one-route change leaves most servers' inputs the same objects (the graph shares a route's
 * RouteRule[] while its document and backends are unchanged). The names a server's locations
 * hold (maps, upstreams, split_clients) are derived from what they stand for, so a server with
 * the same inputs is the same server: keeping it registers the blocks it uses (model/uses.ts),
 * and a memoised build is the same model as a fresh one (model-memo.test.ts, on random changes).
 */
import type { RouteRule } from '../graph/types';
import type { HostRoute } from './hosts';
import type { Candidate, LocationContext, ServerLocations } from './locations';
import { LocationsMemo, routeKey } from './location-memo';
import type { Location, RuleLocation } from './types';
import type { Uses } from './uses';

interface Entry {
  /** What buildLocations read: per route, its rules array and routeKey (the server's own info is its id). */
  key: unknown[];
  /** What its build used of the registries, in order (LocationsMemo.uses). */
  uses: Uses[];
  /** Its locations and rule locations as built, which nobody changes: the model gets copies. */
  locations: Location[];
  ruleLocations: RuleLocation[];
  /** Routes' parts and locations' actions, for the next build of this server (location-memo.ts). */
  parts: LocationsMemo<Candidate>;
}

/** Per route: its rules by identity and everything else it has by value (routeKey). */
function keyOf(routes: HostRoute[]): unknown[] {
  const key: unknown[] = [];
  for (const r of routes) {
    const route = r.attached.route;
    key.push(route.rules as RouteRule[], routeKey(route, r.hostKey));
  }
  return key;
}

function sameKey(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Copies finalizeModel may change (it sets fields on a location, its action and a rule). */
function copyLocation(l: Location): Location {
  return { ...l, action: { ...l.action }, settings: { ...l.settings } };
}

function copyRule(r: RuleLocation): RuleLocation {
  return { ...r };
}

export class ModelMemo {
  private entries = new Map<string, Entry>();
  private next = new Map<string, Entry>();
  /** Servers kept / built by the last buildModel, and routes / location actions kept in the servers built (tests, the log). */
  readonly stats = { reused: 0, built: 0, routesReused: 0, routesBuilt: 0, actionsReused: 0, actionsBuilt: 0 };

  /** Starts a build: entries not used by it are dropped at `end`. */
  begin(): void {
    this.next = new Map();
    for (const k of Object.keys(this.stats) as (keyof ModelMemo['stats'])[]) this.stats[k] = 0;
  }

  end(): void {
    this.entries = this.next;
  }

  /** A server's locations: kept from the last build when its inputs are the same. */
  server(id: string, routes: HostRoute[], ctx: LocationContext, build: (ctx: LocationContext, parts: LocationsMemo<Candidate>) => ServerLocations): ServerLocations {
    const key = keyOf(routes);
    const old = this.entries.get(id);
    if (old && sameKey(old.key, key)) {
      for (const uses of old.uses) ctx.adopt(uses);
      this.next.set(id, old);
      this.stats.reused++;
      return { locations: old.locations.map(copyLocation), ruleLocations: old.ruleLocations.map(copyRule) };
    }
    const parts = old?.parts ?? new LocationsMemo<Candidate>();
    const built = build(ctx, parts);
    this.next.set(id, { key, uses: parts.uses, locations: built.locations.map(copyLocation), ruleLocations: built.keptRules ?? built.ruleLocations.map(copyRule), parts });
    this.stats.built++;
    this.stats.routesReused += parts.stats.routesReused;
    this.stats.routesBuilt += parts.stats.routesBuilt;
    this.stats.actionsReused += parts.stats.actionsReused;
    this.stats.actionsBuilt += parts.stats.actionsBuilt;
    return { locations: built.locations, ruleLocations: built.ruleLocations };
  }
}
