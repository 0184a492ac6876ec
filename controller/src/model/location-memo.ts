/**
 * What one server's buildLocations can keep from its last build, so that a change costs in
 * proportion to what changed even when the server itself changed (one hostless listener with a
 * thousand routes is one server: model/memo.ts cannot reuse it when any route changes).
 *
 * - Route parts: a route's rule locations and match candidates (conditions, precedence key).
 *   Kept while the route has the same RouteRule[] (the graph shares it while the route's
 *   document and the backends are unchanged) and the same routeKey: every other field the
 *   route has, and its hostname key, by value. The names they hold
 *   (maps, upstreams, split_clients) are derived from content, so they are still right; keeping
 *   them registers the blocks they use (model/uses.ts).
 * - Location actions: a path location's dispatch (composite key and regexes) or proxy, kept
 *   while its inputs are the same: its own candidates (the same objects, so the same routes'
 *   parts), in the same order, interleaved the same way with the server's runs of
 *   RegularExpression candidates up to the first unconditional one, and each of those runs
 *   still has the same map variable.
 *
 * A memoised build is the same model as a fresh one (model-memo.test.ts, location-memo.test.ts:
 * memoised == fresh over random changes). The memo owns what it keeps, which nobody changes;
 * buildLocations hands out copies, since finalizeModel sets fields on the model's objects.
 */
import type { HTTPRouteNode, RouteRule } from '../graph/types';
import type { HostKey } from './hosts';
import type { LocationContext } from './locations';
import type { DispatchRun, LocationAction, RuleLocation } from './types';
import { newUses, type Uses } from './uses';

/** What a location's action is computed from (locations.ts): a candidate or a guarded one. */
export interface ActionInput {
  conditions: unknown[];
}

/** A route's share of a server (locations.ts builds it). */
export interface RouteParts<C> {
  ruleLocations: RuleLocation[];
  candidates: C[];
}

/**
 * What a route's parts are built from: the route as the graph gives it less its parents (which
 * listeners took it: status material the graph rebuilds on every build). routeParts takes this
 * type, so reading the parents there is a compile error rather than a stale memo.
 */
export type RouteInput = Omit<HTTPRouteNode, 'parents'>;

/**
 * A route's identity in the memos, derived rather than listed: every field of RouteInput but
 * the rules (compared by identity: shared while unchanged, never changed in place) and the host
 * key, by value. A field added to the route node is part of it without anyone listing it.
 */
export function routeKey(route: HTTPRouteNode, hostKey: HostKey): string {
  // Asked twice per route and build (model/memo.ts, then the route's parts): made once per route
  // node, which the graph builds anew and nobody changes afterwards.
  const hit = routeKeys.get(route);
  if (hit !== undefined && hit.hostKey[0] === hostKey[0] && hit.hostKey[1] === hostKey[1]) return hit.key;
  const { rules: _rules, parents: _parents, ...rest } = route;
  // The graph builds every route node anew, but shares its rules array while the route is
  // unchanged: the key last made for that array is reused when every other field is the same
  // value (shallow; an array of them element by element), which costs far less than serialising
  // each route again (20,000 routes on 20 hosts: ~1/5 of a one-route change's model build).
  const last = lastKeys.get(route.rules);
  const key = last && last.hostKey[0] === hostKey[0] && last.hostKey[1] === hostKey[1] && sameFields(last.fields, rest) ? last.key : JSON.stringify([rest, hostKey]);
  if (last?.key !== key) lastKeys.set(route.rules, { fields: rest, hostKey, key });
  routeKeys.set(route, { hostKey, key });
  return key;
}
const routeKeys = new WeakMap<HTTPRouteNode, { hostKey: HostKey; key: string }>();
const lastKeys = new WeakMap<RouteRule[], { fields: Record<string, unknown>; hostKey: HostKey; key: string }>();

/** Same keys in the same order, each the same value or an array of the same values: the same JSON. */
function sameFields(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return false;
    const x = a[ka[i]];
    const y = b[kb[i]];
    if (x === y) continue;
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  }
  return true;
}

interface RouteEntry<C> {
  key: string;
  uses: Uses;
  parts: RouteParts<C>;
}

/**
 * Replaces each array field of `o` by an exact-size copy. What a route's build made is kept for
 * as long as the route is unchanged, and its arrays were grown by push, which leaves room for
 * 17 elements (two elements: ~190 bytes, a copy ~70); every field, so a new one is not missed.
 */
function exactArrays(o: object): void {
  const fields = o as Record<string, unknown>;
  for (const k of Object.keys(fields)) {
    const v = fields[k];
    if (Array.isArray(v)) fields[k] = v.slice();
  }
}

/** Stands for a run of RegularExpression candidates in a kept action's inputs. */
const RUN = Symbol('run');

interface ActionEntry {
  inputs: unknown[];
  action: LocationAction;
  /** The runs the action reads, in the order it read them. */
  runs: DispatchRun[];
}

export class LocationsMemo<C = unknown> {
  private routes = new Map<RouteRule[], RouteEntry<C>>();
  private nextRoutes = new Map<RouteRule[], RouteEntry<C>>();
  /** By location path, `location = path` and `location path` apart. */
  private actions = { exact: new Map<string, ActionEntry>(), prefix: new Map<string, ActionEntry>() };
  private nextActions = { exact: new Map<string, ActionEntry>(), prefix: new Map<string, ActionEntry>() };
  /**
   * What the last build used of the shared registries, in order: each route's (kept with its
   * parts) and the location plans' (runs). model/memo.ts adopts them to keep the server.
   */
  uses: Uses[] = [];
  private ctx?: LocationContext;
  /** The runs' DispatchRun objects by map variable (see dispatchRun). */
  private runs = new Map<string, DispatchRun>();
  private nextRuns = new Map<string, DispatchRun>();
  readonly stats = { routesReused: 0, routesBuilt: 0, actionsReused: 0, actionsBuilt: 0 };

  /** Starts a build of the server: what it does not use is dropped at `end`. */
  begin(): void {
    this.uses = [];
    this.nextRuns = new Map();
    this.nextRoutes = new Map();
    this.nextActions = { exact: new Map(), prefix: new Map() };
    this.stats.routesReused = this.stats.routesBuilt = this.stats.actionsReused = this.stats.actionsBuilt = 0;
  }

  end(): void {
    this.ctx?.record(undefined);
    this.ctx = undefined;
    this.runs = this.nextRuns;
    this.routes = this.nextRoutes;
    this.actions = this.nextActions;
  }

  /** The route's parts: kept ones when its inputs are the same, else built. */
  route<S>(route: HTTPRouteNode, hostKey: HostKey, ctx: LocationContext, server: S, build: (route: RouteInput, hostKey: HostKey, ctx: LocationContext, server: S) => RouteParts<C>): RouteParts<C> {
    const old = this.routes.get(route.rules);
    const key = routeKey(route, hostKey);
    if (old && old.key === key) {
      ctx.adopt(old.uses);
      this.nextRoutes.set(route.rules, old);
      this.uses.push(old.uses);
      this.stats.routesReused++;
      return old.parts;
    }
    const uses = newUses();
    ctx.record(uses);
    let parts: RouteParts<C>;
    try {
      parts = build(route, hostKey, ctx, server);
    } finally {
      ctx.record(undefined);
    }
    exactArrays(uses);
    exactArrays(parts);
    this.uses.push(uses);
    this.nextRoutes.set(route.rules, { key, uses, parts });
    this.stats.routesBuilt++;
    return parts;
  }

  /** The run `variable` with these targets: last build's object when its targets are the same. */
  dispatchRun(variable: string, targets: string[]): DispatchRun {
    const old = this.runs.get(variable);
    let same = old !== undefined && old.targets.length === targets.length;
    for (let i = 0; same && i < targets.length; i++) same = old!.targets[i] === targets[i];
    const run = same ? old! : { variable, targets };
    this.nextRuns.set(variable, run);
    return run;
  }

  /** Records what the location plans use (after every route's parts) until `end`. */
  plans(ctx: LocationContext): LocationContext {
    const uses = newUses();
    this.uses.push(uses);
    ctx.record(uses);
    this.ctx = ctx;
    return ctx;
  }

  /**
   * The action of the location `match` `path`. `inputs`: its candidates and runs in
   * precedence order, up to and including its first candidate without conditions; `isRun` tells
   * the runs apart; `runOf` gives a run's map (registering it on first use, as the action
   * computed afresh would); `compute(own, runs, runOf)` computes it afresh (arguments, not a
   * closure: tsx names every closure it creates). Returns an object the caller may change.
   */
  action<R, O>(match: 'exact' | 'prefix', path: string, inputs: (ActionInput | R)[], isRun: (x: ActionInput | R) => x is R, runOf: (run: R) => DispatchRun, compute: (own: O, runs: R[], runOf: (run: R) => DispatchRun) => LocationAction, own: O, runs: R[]): LocationAction {
    const old = this.actions[match].get(path);
    if (old && old.inputs.length === inputs.length) {
      let same = true;
      let used: DispatchRun[] | undefined;
      for (let i = 0; i < inputs.length && same; i++) {
        const x = inputs[i];
        if (old.inputs[i] === RUN) {
          if (!isRun(x)) same = false;
          else {
            // The same registrations, in the same order, as computing the action makes.
            // (Its targets may differ: the action hands out the runs as they are now.)
            const d = runOf(x);
            same = d.variable === old.runs[(used ??= []).length].variable;
            used.push(d);
          }
        } else same = old.inputs[i] === x;
      }
      if (same) {
        this.nextActions[match].set(path, old);
        this.stats.actionsReused++;
        // The runs as they are now: a run keeps its map's name when it takes one more route.
        return old.action.kind === 'dispatch' ? { ...old.action, runs: used ?? [] } : { ...old.action };
      }
    }
    const action = compute(own, runs, runOf);
    this.nextActions[match].set(path, { inputs: inputs.map((x) => (isRun(x) ? RUN : x)), action, runs: action.kind === 'dispatch' ? action.runs : [] });
    this.stats.actionsBuilt++;
    // A copy for the model (finalizeModel sets nginxKey / nginxFallback on a dispatch: made with
    // them, as undefined, so that the copy has the shape they fill in, not one per object).
    return { ...action };
  }
}

