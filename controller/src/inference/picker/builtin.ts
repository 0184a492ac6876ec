/**
 * The built-in endpoint picker: per pool, scrape every endpoint's /metrics and pick the least
 * loaded ready one. Used in-process by the inference hop (pools without endpointPickerRef) and
 * behind the ext_proc server of `portcullis-picker`.
 */
import { rank, steered } from './choose';
import { MetricsScraper } from './metrics';

export type PickDecision =
  /**
   * Best first: the first is the destination, the others fallbacks. `release` is called when
   * the request has ended, so it stops counting against the chosen endpoint.
   */
  | { kind: 'endpoints'; endpoints: string[]; release: () => void }
  | { kind: 'reject'; status: number; message: string };

/** How many fallbacks follow the chosen endpoint in the destination list. */
export const FALLBACKS = 2;

interface PoolState {
  scraper: MetricsScraper;
  key: string;
  usedAt: number;
  sent: Map<string, { count: number; scrapeAt: number }>;
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
    const sentOf = (ep: string) => {
      const s = state.sent.get(ep);
      const load = state.scraper.load(ep, now);
      return s && load && s.scrapeAt === load.at ? s.count : s && !load ? s.count : 0;
    };
    const ranked = steer !== undefined ? candidates : rank(candidates, (ep) => state.scraper.load(ep, now), sentOf);
    const chosen = ranked[0];
    const load = state.scraper.load(chosen, now);
    const prev = state.sent.get(chosen);
    const scrapeAt = load?.at ?? 0;
    const counted = { count: prev && prev.scrapeAt === scrapeAt ? prev.count + 1 : 1, scrapeAt };
    state.sent.set(chosen, counted);
    let released = false;
    // A request that has ended is no load: only those still in flight count until the next
    // scrape. Counting every request sent since the scrape sent most of a burst to a busy pod
    // once a quick idle pod had answered more requests in 50 ms than the busy pod had queued.
    const release = () => {
      if (released) return;
      released = true;
      if (state.sent.get(chosen) === counted && counted.count > 0) counted.count--;
    };
    return { kind: 'endpoints', endpoints: ranked.slice(0, 1 + FALLBACKS), release };
  }

  private pool(pool: string, endpoints: string[]): PoolState {
    const key = endpoints.join(',');
    let state = this.pools.get(pool);
    if (!state) {
      state = { scraper: new MetricsScraper(this.options.intervalMs ?? 50), key: '', usedAt: 0, sent: new Map() };
      this.pools.set(pool, state);
      state.scraper.start();
      this.sweep();
    }
    if (state.key !== key) {
      state.key = key;
      state.scraper.setEndpoints(endpoints);
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
