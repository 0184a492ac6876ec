/**
 * client_max_body_size per rule, despite nginx.
 *
 * nginx compares Content-Length with client_max_body_size only when it selects a location by
 * URI: a named location reached through error_page never checks it (chunked bodies are still
 * checked while read). And the location that dispatches would reject with its own limit
 * (nginx's default 1m) before the rule's limit is known. So, once policies have set the rules'
 * settings (finalizeModel):
 *   - a dispatching location gets the largest limit among the rules it can send to;
 *   - a rule location with a limit gets a map on $content_length that is "1" above the limit
 *     (a regex for "integer > N") and answers 413 itself.
 */
import type { MapBlock, NginxModel, PolicySettings } from './types';

/** nginx's default client_max_body_size. */
export const NGINX_DEFAULT_BODY_SIZE = '1m';

/** Bytes of an nginx size ("100", "8k", "1m", "1g"); 0 = no limit. */
export function sizeBytes(size: string): number {
  const m = /^(\d+)([kKmMgG]?)$/.exec(size.trim());
  if (!m) throw new Error(`not an nginx size: ${JSON.stringify(size)}`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(m[1]) * unit;
}

/** A regex matching the decimal integers (leading zeros allowed) greater than n. */
export function greaterThanRegex(n: number): string {
  const digits = String(Math.floor(n));
  const k = digits.length;
  const alternatives = [`[1-9][0-9]{${k},}`];
  for (let i = 0; i < k; i++) {
    const d = Number(digits[i]);
    if (d === 9) continue;
    const rest = k - i - 1;
    alternatives.push(`${digits.slice(0, i)}[${d + 1}-9]${rest ? `[0-9]{${rest}}` : ''}`);
  }
  return `^0*(?:${alternatives.join('|')})$`;
}

function effective(...levels: PolicySettings[]): string {
  for (const s of levels) if (s.clientMaxBodySize !== undefined) return s.clientMaxBodySize;
  return NGINX_DEFAULT_BODY_SIZE;
}

/** Applies the rule-level body limits as described above. Idempotent. */
export function finalizeBodyLimits(model: NginxModel): void {
  const maps = new Map<number, MapBlock>();
  const overVariable = (bytes: number): string => {
    let m = maps.get(bytes) ?? model.maps.find((x) => x.variable === `$pb_${bytes}`);
    if (!m) {
      m = { source: '$content_length', variable: `$pb_${bytes}`, entries: [{ regex: greaterThanRegex(bytes), value: '1' }], default: '0' };
      model.maps.push(m);
    }
    maps.set(bytes, m);
    return m.variable;
  };
  for (const server of model.servers) {
    if (!server.ruleLocations.some((r) => r.settings.clientMaxBodySize !== undefined)) {
      for (const rl of server.ruleLocations) rl.bodyLimitVariable = undefined;
      // No rule sets a limit: dispatching locations keep nginx's (or the server's) default.
      continue;
    }
    const byName = new Map(server.ruleLocations.map((r) => [r.name, r]));
    for (const rl of server.ruleLocations) {
      rl.bodyLimitVariable = undefined;
      if (rl.settings.clientMaxBodySize === undefined) continue;
      const bytes = sizeBytes(rl.settings.clientMaxBodySize);
      if (bytes > 0) rl.bodyLimitVariable = overVariable(bytes);
    }
    // Each rule's effective limit once, not once per location that may send to it.
    const limitOf = new Map<string, { own: boolean; limit: string; bytes: number }>();
    for (const [name, r] of byName) {
      const limit = effective(r.settings, server.settings, model.http.settings);
      limitOf.set(name, { own: r.settings.clientMaxBodySize !== undefined, limit, bytes: sizeBytes(limit) });
    }
    // The largest limit (0 = none) among some targets; a run's once, not once per location.
    type Largest = { own: boolean; limit: string; bytes: number } | undefined;
    const largest = (names: string[]): Largest => {
      let best: Largest;
      let own = false;
      for (const n of names) {
        const l = limitOf.get(n);
        if (!l) continue;
        own ||= l.own;
        if (!best || (best.bytes !== 0 && (l.bytes === 0 || l.bytes > best.bytes))) best = l;
      }
      return best && { ...best, own };
    };
    const runLargest = new Map<string[], Largest>();
    for (const loc of server.locations) {
      if (loc.action.kind !== 'dispatch') continue;
      let best = largest(loc.action.targets);
      for (const run of loc.action.runs) {
        if (!runLargest.has(run.targets)) runLargest.set(run.targets, largest(run.targets));
        const r = runLargest.get(run.targets);
        if (!r) continue;
        if (!best) best = r;
        else best = { ...(best.bytes !== 0 && (r.bytes === 0 || r.bytes > best.bytes) ? r : best), own: best.own || r.own };
      }
      if (!best?.own) continue;
      loc.settings = { ...loc.settings, clientMaxBodySize: best.bytes === 0 ? '0' : best.limit };
    }
  }
}
