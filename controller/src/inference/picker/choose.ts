/**
 * The built-in picker's choice: the least loaded candidate. The score weighs the waiting queue
 * most (a queued request waits for a whole generation), then KV-cache pressure (a full cache
 * means preemption), then running requests; requests this picker sent since the endpoint's
 * last scrape and still in flight count as waiting, so a burst between two scrapes does not all
 * land on one pod.
 */
import type { EndpointLoad } from './metrics';

export const WEIGHTS = { waiting: 1, kvCache: 4, running: 0.25 };

export function score(load: EndpointLoad | undefined, sentSinceScrape: number): number {
  if (!load) return sentSinceScrape + 0.5; // unknown: not preferred over a known idle pod
  return (load.waiting + sentSinceScrape) * WEIGHTS.waiting + load.kvCache * WEIGHTS.kvCache + load.running * WEIGHTS.running;
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
export function rank(candidates: string[], loadOf: (ep: string) => EndpointLoad | undefined, sentOf: (ep: string) => number, random = Math.random): string[] {
  return candidates
    .map((ep) => ({ ep, s: score(loadOf(ep), sentOf(ep)), r: random() }))
    .sort((a, b) => a.s - b.s || a.r - b.r)
    .map((x) => x.ep);
}
