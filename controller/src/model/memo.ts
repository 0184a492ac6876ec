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
import type { LocationContext, ServerLocations } from './locations';
import type { ConditionMaps } from './matching';
import type { Location, RuleLocation } from './types';
import { targetSignature, type Upstreams } from './upstreams';

type Call =
  | { kind: 'queryValue'; name: string; out: string }
  | { kind: 'flag'; source: string; regex: string; out: string }
  | { kind: 'run'; candidates: Parameters<ConditionMaps['run']>[0]; out: string }
  | { kind: 'uriField'; out: string }
  | { kind: 'target'; backends: Parameters<Upstreams['target']>[0]; locations?: string[]; grpc?: boolean; out: string }
  | { kind: 'warn'; message: string };

interface Entry {
  /** What buildLocations read: per route, its rules array, identity fields and host key. */
  key: unknown[];
  calls: Call[];
  /** buildLocations' output before finalizeModel mutated it (copied out on each reuse). */
  locations: Location[];
  ruleLocations: RuleLocation[];
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
function copyLocations(locations: Location[]): Location[] {
  return locations.map((l) => ({ ...l, settings: { ...l.settings }, action: { ...l.action } }));
}

function copyRules(rules: RuleLocation[]): RuleLocation[] {
  return rules.map((r) => ({ name: r.name, source: r.source, target: r.target, settings: {}, ...(r.timeout ? { timeout: r.timeout } : {}), ...(r.grpc ? { grpc: true } : {}), ...(r.filters ? { filters: r.filters } : {}), ...(r.dispatchedBy ? { dispatchedBy: r.dispatchedBy } : {}) }));
}

export class ModelMemo {
  private entries = new Map<string, Entry>();
  private next = new Map<string, Entry>();
  /** Servers reused / built by the last buildModel (for tests and the log). */
  readonly stats = { reused: 0, built: 0, replayMismatches: 0 };

  /** Starts a build: entries not used by it are dropped at `end`. */
  begin(): void {
    this.next = new Map();
    this.stats.reused = 0;
    this.stats.built = 0;
    this.stats.replayMismatches = 0;
  }

  end(): void {
    this.entries = this.next;
  }

  /** A server's locations: replayed from the last build when its inputs and names still fit. */
  server(id: string, routes: HostRoute[], ctx: { maps: ConditionMaps; upstreams: Upstreams; warn: (m: string) => void }, build: (ctx: LocationContext) => ServerLocations): ServerLocations {
    const key = keyOf(routes);
    const old = this.entries.get(id);
    if (old && sameKey(old.key, key)) {
      const rollbackMaps = ctx.maps.mark();
      const rollbackUpstreams = ctx.upstreams.mark();
      if (this.replay(old.calls, ctx)) {
        this.next.set(id, old);
        this.stats.reused++;
        return { locations: copyLocations(old.locations), ruleLocations: copyRules(old.ruleLocations) };
      }
      rollbackMaps();
      rollbackUpstreams();
      this.stats.replayMismatches++;
    }
    const calls: Call[] = [];
    const recording: LocationContext = {
      maps: {
        queryValue: (name) => push(calls, { kind: 'queryValue', name, out: ctx.maps.queryValue(name) }),
        flag: (source, regex) => push(calls, { kind: 'flag', source, regex, out: ctx.maps.flag(source, regex) }),
        run: (candidates) => push(calls, { kind: 'run', candidates, out: ctx.maps.run(candidates) }),
        uriField: () => push(calls, { kind: 'uriField', out: ctx.maps.uriField() }),
      },
      upstreams: {
        target: (backends, locations, grpc) => {
          const out = ctx.upstreams.target(backends, locations, grpc);
          calls.push({ kind: 'target', backends, ...(locations ? { locations } : {}), ...(grpc ? { grpc } : {}), out: targetSignature(out) });
          return out;
        },
      },
      warn: (message) => {
        calls.push({ kind: 'warn', message });
        ctx.warn(message);
      },
    };
    const built = build(recording);
    this.next.set(id, { key, calls, locations: copyLocations(built.locations), ruleLocations: copyRules(built.ruleLocations) });
    this.stats.built++;
    return built;
  }

  /** Makes the same calls again; true when every one answers as recorded. */
  private replay(calls: Call[], ctx: { maps: ConditionMaps; upstreams: Upstreams; warn: (m: string) => void }): boolean {
    for (const c of calls) {
      switch (c.kind) {
        case 'queryValue':
          if (ctx.maps.queryValue(c.name) !== c.out) return false;
          break;
        case 'flag':
          if (ctx.maps.flag(c.source, c.regex) !== c.out) return false;
          break;
        case 'run':
          if (ctx.maps.run(c.candidates) !== c.out) return false;
          break;
        case 'uriField':
          if (ctx.maps.uriField() !== c.out) return false;
          break;
        case 'target':
          if (targetSignature(ctx.upstreams.target(c.backends, c.locations, c.grpc)) !== c.out) return false;
          break;
        case 'warn':
          ctx.warn(c.message);
          break;
      }
    }
    return true;
  }
}

function push(calls: Call[], call: Call & { out: string }): string {
  calls.push(call);
  return call.out;
}
