/**
 * Servers whose routes did not change since the last build reuse their locations.
 *
 * A one-route change leaves most servers' inputs the same objects (the graph shares a route's
 * RouteRule[] while its document and backends are unchanged), but a server's locations also hold
 * names handed out by the shared registries (condition maps $pq_/$pc_r/$pc_s numbered in order of
 * first use, upstreams, split_clients). So a memo entry records every call the server made to
 * them; reusing it replays those calls and keeps the locations only when each call answers as
 * it did. Otherwise the registries are rolled back and the server is built again, so a memoised
 * build is the same model as a fresh one (checked by model-memo.test.ts on random changes).
 */
import type { RouteRule } from '../graph/types';
import type { HostRoute } from './hosts';
import type { Candidate, LocationContext, ServerLocations } from './locations';
import { LocationsMemo } from './location-memo';
import type { Location, RuleLocation } from './types';
import { replay, type Call } from './calls';

interface Entry {
  /** What buildLocations read: per route, its rules array, identity fields and host key. */
  key: unknown[];
  /** The registry calls its build made, in order (LocationsMemo.calls). */
  calls: Call[][];
  /**
   * buildLocations' locations and, apart, their actions and settings as built: finalizeModel
   * replaces a location's action or settings (or sets nginxKey / nginxFallback on a dispatch,
   * which it always sets again), so these are what a reuse copies out.
   */
  locations: Location[];
  actions: Location['action'][];
  settings: Location['settings'][];
  ruleLocations: RuleLocation[];
  /** Routes' parts and locations' actions, for the next build of this server (location-memo.ts). */
  parts: LocationsMemo<Candidate>;
}

function keyOf(routes: HostRoute[]): unknown[] {
  const key: unknown[] = [];
  for (const r of routes) {
    const route = r.attached.route;
    key.push(route.rules as RouteRule[], route.namespace, route.name, route.creationTimestamp, r.hostKey[0], r.hostKey[1]);
  }
  return key;
}

function sameKey(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Copies that finalizeModel may change without touching the memo. */
function copyLocations(e: Entry): Location[] {
  const out: Location[] = [];
  for (let i = 0; i < e.locations.length; i++) out.push({ match: e.locations[i].match, path: e.locations[i].path, action: { ...e.actions[i] }, settings: { ...e.settings[i] } });
  return out;
}

function copyRules(rules: RuleLocation[]): RuleLocation[] {
  return rules.map((r) => ({ name: r.name, source: r.source, target: r.target, settings: {}, ...(r.timeout ? { timeout: r.timeout } : {}), ...(r.grpc ? { grpc: true } : {}), ...(r.filters ? { filters: r.filters } : {}), ...(r.dispatchedBy ? { dispatchedBy: r.dispatchedBy } : {}) }));
}

export class ModelMemo {
  private entries = new Map<string, Entry>();
  private next = new Map<string, Entry>();
  /** Servers reused / built by the last buildModel, and routes / location actions kept in the servers built (tests, the log). */
  readonly stats = { reused: 0, built: 0, replayMismatches: 0, routesReused: 0, routesBuilt: 0, actionsReused: 0, actionsBuilt: 0 };

  /** Starts a build: entries not used by it are dropped at `end`. */
  begin(): void {
    this.next = new Map();
    for (const k of Object.keys(this.stats) as (keyof ModelMemo['stats'])[]) this.stats[k] = 0;
  }

  end(): void {
    this.entries = this.next;
  }

  /** A server's locations: replayed from the last build when its inputs and names still fit. */
  server(id: string, routes: HostRoute[], ctx: LocationContext & { maps: { mark(): () => void }; upstreams: { mark(): () => void } }, build: (ctx: LocationContext, parts: LocationsMemo<Candidate>) => ServerLocations): ServerLocations {
    const key = keyOf(routes);
    const old = this.entries.get(id);
    if (old && sameKey(old.key, key)) {
      const rollbackMaps = ctx.maps.mark();
      const rollbackUpstreams = ctx.upstreams.mark();
      if (old.calls.every((calls) => replay(calls, ctx))) {
        this.next.set(id, old);
        this.stats.reused++;
        return { locations: copyLocations(old), ruleLocations: copyRules(old.ruleLocations) };
      }
      rollbackMaps();
      rollbackUpstreams();
      this.stats.replayMismatches++;
    }
    const parts = old?.parts ?? new LocationsMemo<Candidate>();
    const built = build(ctx, parts);
    const actions: Location['action'][] = [];
    const settings: Location['settings'][] = [];
    for (const l of built.locations) {
      actions.push(l.action);
      settings.push(l.settings);
    }
    this.next.set(id, { key, calls: parts.calls, locations: built.locations, actions, settings, ruleLocations: built.keptRules ?? copyRules(built.ruleLocations), parts });
    this.stats.built++;
    this.stats.routesReused += parts.stats.routesReused;
    this.stats.routesBuilt += parts.stats.routesBuilt;
    this.stats.actionsReused += parts.stats.actionsReused;
    this.stats.actionsBuilt += parts.stats.actionsBuilt;
    return { locations: built.locations, ruleLocations: built.ruleLocations };
  }
}
