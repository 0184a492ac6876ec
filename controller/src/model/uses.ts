/**
 * The shared registries a build hands out names from (condition maps, upstreams and
 * split_clients, warnings), and what a part of the model uses of them.
 *
 * Every name is derived from what it stands for (model/names.ts), so a part of the model kept
 * from an earlier build (a route's rule locations and candidates, a server's locations: see
 * model/location-memo.ts and model/memo.ts) still names the right blocks. What it must bring
 * along is the blocks themselves: a part built with `record` notes every block it uses, in the
 * order it uses them, and keeping the part `adopt`s them, which registers the ones this build
 * does not have yet in that same order, as a fresh build of the part would.
 */
import { ConditionMaps } from './matching';
import { Upstreams } from './upstreams';
import type { MapBlock, SplitClients, Upstream } from './types';

export interface Uses {
  maps: MapBlock[];
  /** With the key the registry files each under. */
  upstreams: [string, Upstream][];
  splits: [string, SplitClients][];
  /** Some target goes to InferencePools (the hop is configured). */
  inference: boolean;
  warnings: string[];
}

export function newUses(): Uses {
  return { maps: [], upstreams: [], splits: [], inference: false, warnings: [] };
}

export class Registries {
  readonly maps = new ConditionMaps();
  readonly upstreams = new Upstreams();
  readonly warnings: string[] = [];
  private sink?: Uses;

  /** Something the model cannot express, for the log (once per text). */
  warn(message: string): void {
    this.sink?.warnings.push(message);
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  /** From now on (until `record(undefined)`), every block used is noted in `uses` too. */
  record(uses: Uses | undefined): void {
    this.sink = uses;
    this.maps.sink = uses;
    this.upstreams.sink = uses;
  }

  /** Registers what a kept part uses (see above). */
  adopt(uses: Uses): void {
    for (const m of uses.maps) this.maps.use(m);
    for (const [key, u] of uses.upstreams) this.upstreams.useUpstream(key, u);
    for (const [key, s] of uses.splits) this.upstreams.useSplit(key, s);
    if (uses.inference) this.upstreams.useInference();
    for (const w of uses.warnings) this.warn(w);
  }
}
