/**
 * What one server's buildLocations can keep from its last build, so that a change costs in
 * proportion to what changed even when the server itself changed (one hostless listener with a
 * thousand routes is one server: model/memo.ts cannot reuse it when any route changes).
 *
 * - Route parts: a route's rule locations and match candidates (conditions, precedence key).
 *   Kept while the route has the same RouteRule[] (the graph shares it while the route's
 *   document and the backends are unchanged), name, kind and hostname key, and while the calls
 *   it made to the shared registries answer as they did (model/calls.ts).
 * - Location actions: a path location's dispatch (composite key and regexes) or proxy, kept
 *   while its inputs are the same: its own candidates (the same objects, so the same routes'
 *   parts), in the same order, interleaved the same way with the server's runs of
 *   RegularExpression candidates up to the first unconditional one, and each of those runs
 *   still has the same map variable.
 *
 * A memoised build is the same model as a fresh one (model-memo.test.ts, location-memo.test.ts:
 * memoised == fresh over random changes). The memo owns what it keeps; buildLocations hands out
 * copies, since finalizeModel sets fields on the model's objects.
 */
import type { HTTPRouteNode, RouteRule } from '../graph/types';
import type { HostKey } from './hosts';
import type { LocationContext } from './locations';
import type { DispatchRun, LocationAction, RuleLocation } from './types';
import { recording, replay, type Call } from './calls';

/** What a location's action is computed from (locations.ts): a candidate or a guarded one. */
export interface ActionInput {
  conditions: unknown[];
}

/** A route's share of a server (locations.ts builds it). */
export interface RouteParts<C> {
  ruleLocations: RuleLocation[];
  candidates: C[];
}

interface RouteEntry<C> {
  namespace: string;
  name: string;
  kind: HTTPRouteNode['kind'];
  host0: number;
  host1: number;
  calls: Call[];
  parts: RouteParts<C>;
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
   * The registry calls of the last build, in order: each route's (kept with its parts) and the
   * location plans' ($pc_u, runs). model/memo.ts replays them to reuse the whole server.
   */
  calls: Call[][] = [];
  readonly stats = { routesReused: 0, routesBuilt: 0, actionsReused: 0, actionsBuilt: 0 };

  /** Starts a build of the server: what it does not use is dropped at `end`. */
  begin(): void {
    this.calls = [];
    this.nextRoutes = new Map();
    this.nextActions = { exact: new Map(), prefix: new Map() };
    this.stats.routesReused = this.stats.routesBuilt = this.stats.actionsReused = this.stats.actionsBuilt = 0;
  }

  end(): void {
    this.routes = this.nextRoutes;
    this.actions = this.nextActions;
  }

  /** The route's parts: kept ones when its inputs and registry answers are the same, else built. */
  route<S>(route: HTTPRouteNode, hostKey: HostKey, ctx: LocationContext, server: S, build: (route: HTTPRouteNode, hostKey: HostKey, ctx: LocationContext, server: S) => RouteParts<C>): RouteParts<C> {
    const old = this.routes.get(route.rules);
    if (old && old.namespace === route.namespace && old.name === route.name && old.kind === route.kind && old.host0 === hostKey[0] && old.host1 === hostKey[1] && replay(old.calls, ctx)) {
      this.nextRoutes.set(route.rules, old);
      this.calls.push(old.calls);
      this.stats.routesReused++;
      return old.parts;
    }
    const calls: Call[] = [];
    const parts = build(route, hostKey, recording(ctx, calls), server);
    this.calls.push(calls);
    this.nextRoutes.set(route.rules, { namespace: route.namespace, name: route.name, kind: route.kind, host0: hostKey[0], host1: hostKey[1], calls, parts });
    this.stats.routesBuilt++;
    return parts;
  }

  /** A context recording the calls the location plans make (after every route's parts). */
  plans(ctx: LocationContext): LocationContext {
    const calls: Call[] = [];
    this.calls.push(calls);
    return recording(ctx, calls);
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
            // The same calls, in the same order, as computing the action makes.
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
        return copyAction(old.action, used ?? []);
      }
    }
    const action = compute(own, runs, runOf);
    this.nextActions[match].set(path, { inputs: inputs.map((x) => (isRun(x) ? RUN : x)), action, runs: action.kind === 'dispatch' ? action.runs : [] });
    this.stats.actionsBuilt++;
    return copyAction(action, action.kind === 'dispatch' ? action.runs : []);
  }
}

/**
 * A copy for the model. A dispatch is made with the fields finalizeModel sets (nginxKey,
 * nginxFallback) already there, as one literal shape: adding them to each of ~2,000 objects was
 * a shape change per object, the costliest line of a kept build.
 */
function copyAction(a: LocationAction, runs: DispatchRun[]): LocationAction {
  if (a.kind !== 'dispatch') return { ...a };
  return { kind: 'dispatch', key: a.key, regexes: a.regexes, variable: a.variable, fallback: a.fallback, targets: a.targets, runs, nginxKey: undefined, nginxFallback: undefined };
}

