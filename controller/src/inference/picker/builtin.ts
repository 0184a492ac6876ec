/**
 * The built-in endpoint picker: per pool, scrape every endpoint's /metrics and pick the least
 * loaded ready one. Used in-process by the inference hop (pools without endpointPickerRef) and
 * behind the ext_proc server of `portcullis-picker`.
 */
import { rank, steered } from './choose';
import { MetricsScraper, type EndpointLoad } from './metrics';

export type PickDecision =
  /**
   * Best first: the first is the destination, the others fallbacks. `release` is called when
   * the request has ended, so it stops counting against the chosen endpoint.
   */
  | { kind: 'endpoints'; endpoints: string[]; release: () => void }
  | { kind: 'reject'; status: number; message: string };

/** How many fallbacks follow the chosen endpoint in the destination list. */
export const FALLBACKS = 2;

/** This picker's requests to one endpoint: in flight now, and when its last scrape came in. */
interface InFlight {
  now: number;
  atScrape: number;
}

interface PoolState {
  scraper: MetricsScraper;
  key: string;
  usedAt: number;
  inFlight: Map<string, InFlight>;
}

export class BuiltinPicker {
  private readonly pools = new Map<string, PoolState>();
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly options: { intervalMs?: number; idleMs?: number } = {}) {}

  /**
   * Choose among `endpoints` (the pool's ready endpoints) for a request with `headers`
   * (lower-case names). A pool not asked for `idleMs` stops being scraped.
   */
  pick(pool: string, endpoints: string[], headers: Record<string, string | undefined>): PickDecision {
    const state = this.pool(pool, endpoints);
    let candidates = endpoints;
    const steer = steered(endpoints, headers['test-epp-endpoint-selection']);
    if (steer !== undefined) candidates = steer;
    if (candidates.length === 0) {
      return { kind: 'reject', status: 503, message: steer !== undefined ? 'no ready endpoint matches test-epp-endpoint-selection' : 'the pool has no ready endpoint' };
    }
    const now = Date.now();
    const changeOf = (ep: string) => {
      const f = state.inFlight.get(ep);
      if (!f) return 0;
      return state.scraper.load(ep, now) ? f.now - f.atScrape : f.now;
    };
    const ranked = steer !== undefined ? candidates : rank(candidates, (ep) => state.scraper.load(ep, now), changeOf);
    const chosen = ranked[0];
    let f = state.inFlight.get(chosen);
    if (!f) state.inFlight.set(chosen, (f = { now: 0, atScrape: 0 }));
    const counter = f;
    counter.now++;
    let released = false;
    // The request is load on its pod until its response has ended (the caller says when).
    const release = () => {
      if (released) return;
      released = true;
      counter.now--;
    };
    return { kind: 'endpoints', endpoints: ranked.slice(0, 1 + FALLBACKS), release };
  }

  /** What the picker knows of a pool's endpoints: the last fresh scrape and its own requests in flight. */
  view(pool: string): { endpoint: string; load?: EndpointLoad; inFlight: number }[] {
    const state = this.pools.get(pool);
    if (!state) return [];
    const now = Date.now();
    return state.key.split(',').filter(Boolean).map((endpoint) => ({ endpoint, load: state.scraper.load(endpoint, now), inFlight: state.inFlight.get(endpoint)?.now ?? 0 }));
  }

  private pool(pool: string, endpoints: string[]): PoolState {
    const key = endpoints.join(',');
    let state = this.pools.get(pool);
    if (!state) {
      const created: PoolState = { scraper: new MetricsScraper(this.options.intervalMs ?? 50), key: '', usedAt: 0, inFlight: new Map() };
      // What the pod reported includes the requests in flight to it then: note how many.
      created.scraper.onLoad = (ep) => {
        const f = created.inFlight.get(ep);
        if (f) f.atScrape = f.now;
      };
      state = created;
      this.pools.set(pool, state);
      state.scraper.start();
      this.sweep();
    }
    if (state.key !== key) {
      state.key = key;
      state.scraper.setEndpoints(endpoints);
      // (a counter of a gone endpoint is dropped once nothing is in flight to it)
      for (const [ep, f] of state.inFlight) if (!endpoints.includes(ep) && f.now === 0) state.inFlight.delete(ep);
    }
    state.usedAt = Date.now();
    return state;
  }

  /** Pools nobody asked about for a while stop costing scrapes. */
  private sweep(): void {
    if (this.sweeper) return;
    const idle = this.options.idleMs ?? 60_000;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [name, s] of this.pools) {
        if (now - s.usedAt > idle) {
          s.scraper.stop();
          this.pools.delete(name);
        }
      }
    }, Math.min(idle, 10_000));
    this.sweeper.unref();
  }

  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    for (const s of this.pools.values()) s.scraper.stop();
    this.pools.clear();
  }
}
