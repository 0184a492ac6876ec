/**
 * The built-in picker's choice: the least loaded candidate. The score weighs the waiting queue
 * most (a queued request waits for a whole generation), then KV-cache pressure (a full cache
 * means preemption), then running requests.
 *
 * A scrape is up to 50 ms old, and in 50 ms a quick pod may answer hundreds of requests, so the
 * scraped numbers are corrected by what this picker knows for certain: how many of its own
 * requests to the pod are in flight now compared with when the scrape came in. More now: the
 * extra ones are waiting (a burst between two scrapes spreads). Fewer now: they have ended, so
 * the pod's queue is that much shorter (then its running count). Counting every request in
 * flight on top of the scrape would count those that were in flight at the scrape twice, and a
 * quick idle pod under steady traffic would look busier than a slow pod with a deep queue.
 */
import type { EndpointLoad } from './metrics';

export const WEIGHTS = { waiting: 1, kvCache: 4, running: 0.25 };

/**
 * `change`: this picker's requests in flight to the endpoint now, minus those in flight when
 * its load was scraped (for an endpoint with no load known: all of them).
 */
export function score(load: EndpointLoad | undefined, change: number): number {
  if (!load) return Math.max(0, change) + 0.5; // unknown: not preferred over a known idle pod
  let waiting = load.waiting;
  let running = load.running;
  if (change >= 0) waiting += change;
  else {
    const ended = -change;
    const fromQueue = Math.min(waiting, ended);
    waiting -= fromQueue;
    running = Math.max(0, running - (ended - fromQueue));
  }
  return waiting * WEIGHTS.waiting + load.kvCache * WEIGHTS.kvCache + running * WEIGHTS.running;
}

/**
 * The candidates a `test-epp-endpoint-selection` value allows (`ip` or `ip:port` items,
 * comma-separated), in the order given; undefined when the header is absent.
 */
export function steered(candidates: string[], value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const wanted = value.split(',').map((s) => s.trim()).filter(Boolean);
  const out: string[] = [];
  for (const w of wanted) {
    for (const c of candidates) {
      const ip = c.slice(0, c.lastIndexOf(':'));
      if ((c === w || ip === w || ip === `[${w}]`) && !out.includes(c)) out.push(c);
    }
  }
  return out;
}

/**
 * Candidates ordered best first (the first is the choice, the rest fallbacks); ties are broken
 * at random so equally idle pods share the work.
 */
export function rank(candidates: string[], loadOf: (ep: string) => EndpointLoad | undefined, changeOf: (ep: string) => number, random = Math.random): string[] {
  return candidates
    .map((ep) => ({ ep, s: score(loadOf(ep), changeOf(ep)), r: random() }))
    .sort((a, b) => a.s - b.s || a.r - b.r)
    .map((x) => x.ep);
}
