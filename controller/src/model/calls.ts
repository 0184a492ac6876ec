/**
 * The calls a part of the model makes to the shared registries (condition maps, upstreams,
 * warnings), recorded so that a memo (model/memo.ts, model/location-memo.ts) can make them
 * again when it reuses that part.
 *
 * The registries number what they hand out ($pq_N, $pc_rN, $pc_sN, upstream names,
 * split_clients) in order of first use, so a reused part is only right if every call it made
 * answers as it did: replay() makes the same calls, in the same order, and says whether they
 * did. The calls a fresh build of the part would make are exactly these (same inputs), and every
 * registry lookup except ConditionMaps.run is idempotent, so a replay that stops at a mismatch
 * leaves the registries as the fresh build that follows will leave them.
 */
import type { LocationContext } from './locations';
import { sameTarget } from './upstreams';
import type { ProxyTarget, TargetRetry } from './types';
import type { Condition } from './matching';

export type Call =
  | { kind: 'queryValue'; name: string; out: string }
  | { kind: 'flag'; source: string; regex: string; out: string }
  | { kind: 'run'; candidates: { conditions: Condition[]; target: string }[]; out: string }
  | { kind: 'uriField'; out: string }
  | { kind: 'target'; backends: Parameters<LocationContext['upstreams']['target']>[0]; locations?: string[]; grpc?: boolean; retry?: TargetRetry; out: ProxyTarget }
  | { kind: 'warn'; message: string };

function push(calls: Call[], call: Call & { out: string }): string {
  calls.push(call);
  return call.out;
}

/** A context that passes every call on to `ctx` and appends it, with its answer, to `calls`. */
export function recording(ctx: LocationContext, calls: Call[]): LocationContext {
  return {
    maps: {
      queryValue: (name) => push(calls, { kind: 'queryValue', name, out: ctx.maps.queryValue(name) }),
      flag: (source, regex) => push(calls, { kind: 'flag', source, regex, out: ctx.maps.flag(source, regex) }),
      run: (candidates) => push(calls, { kind: 'run', candidates, out: ctx.maps.run(candidates) }),
      uriField: () => push(calls, { kind: 'uriField', out: ctx.maps.uriField() }),
    },
    upstreams: {
      target: (backends, locations, grpc, retry) => {
        const out = ctx.upstreams.target(backends, locations, grpc, retry);
        calls.push({ kind: 'target', backends, ...(locations ? { locations } : {}), ...(grpc ? { grpc } : {}), ...(retry ? { retry } : {}), out });
        return out;
      },
    },
    warn: (message) => {
      calls.push({ kind: 'warn', message });
      ctx.warn(message);
    },
  };
}

/** Makes the same calls again; true when every one answers as recorded. */
export function replay(calls: Call[], ctx: LocationContext): boolean {
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
        if (!sameTarget(ctx.upstreams.target(c.backends, c.locations, c.grpc, c.retry), c.out)) return false;
        break;
      case 'warn':
        ctx.warn(c.message);
        break;
    }
  }
  return true;
}
