/**
 * The text of a server's path locations, kept between renders when a location is unchanged.
 *
 * One server holding every route (1,000 hostless routes on one listener) changes with every
 * route change, so servers-cache.ts cannot reuse it, and rendering its ~2,000 locations through
 * the template is most of the render. A location that dispatches (or answers a status) with no
 * settings of its own renders from a few strings only (match, path, the dispatch key, its
 * regexes, its map variable and fallback): equal content, equal text. Texts are kept per `match path` slot (a few
 * per slot: several servers may have a location "/") with the location they were rendered from,
 * and found by comparing the whole location with it (every field, whatever the block reads: a
 * field added to the model can never be missed), which costs less than hashing it into one key.
 * Locations with settings or an inline proxy carry objects and are rendered every time.
 *
 * servers.conf.hbs renders a server's locations with `{{#eachLocation locations}}...{{/eachLocation}}`:
 * the block may read any field of the location and any @root field that is not an array (those
 * are the model's lists: servers, maps, upstreams); render-cache.test.ts compares cached renders
 * with whole ones over random route changes.
 */
import type { Location } from '../model/types';

/** Texts kept per slot (servers with the same location path). */
const PER_SLOT = 8;

interface Kept {
  /** A copy of the location as rendered (the model's objects are its own to change). */
  location: Location;
  root: string;
  text: string;
  used: number;
}

/** By `match`, then path (no key text made per location: paths are the model's own strings). */
const slots = { exact: new Map<string, Kept[]>(), prefix: new Map<string, Kept[]>() };
let renders = 0;
let usedThisRender = 0;
/** Reuses since the process started (tests look at it). */
export const locationCacheStats = { hits: 0, misses: 0 };

function hasSettings(settings: Location['settings'] | undefined): boolean {
  if (!settings) return false;
  for (const k in settings) if ((settings as Record<string, unknown>)[k] !== undefined) return true;
  return false;
}

/**
 * Equal as data: the same primitives, arrays and plain objects with equal elements and fields
 * (a field set to undefined counts as absent). Kept and new locations mostly share their
 * strings and arrays (kept actions), so most comparisons end at `===`.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    if (!sameData(x[k], y[k])) return false;
    n++;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

/** Whether the location's text depends only on the strings compared (else it is rendered each time). */
function cacheable(location: Location): boolean {
  const a = location.action;
  if (hasSettings(location.settings)) return false;
  return a.kind === 'status' || (a.kind === 'dispatch' && a.nginxKey !== undefined && a.nginxFallback !== undefined);
}

/** The @root fields the block may read (all but the arrays), as one text: made once per render's root object. */
const rootTexts = new WeakMap<object, string>();
function rootText(context: Record<string, unknown>): string {
  let text = rootTexts.get(context);
  if (text === undefined) {
    const fields: Record<string, unknown> = {};
    for (const k in context) if (!Array.isArray(context[k])) fields[k] = context[k];
    text = JSON.stringify(fields);
    rootTexts.set(context, text);
  }
  return text;
}

type BlockOptions = { fn: (context: unknown, options?: unknown) => string; data?: { root?: Record<string, unknown> } };

/** The kept text of an unchanged location, else the block rendered for it (and kept). */
function locationText(location: Location, options: BlockOptions, root: string): string {
  if (!cacheable(location)) return options.fn(location, options);
  const bySlot = slots[location.match];
  let kept = bySlot.get(location.path);
  const a = location.action;
  if (kept) {
    for (let i = 0; i < kept.length; i++) {
      const k = kept[i];
      if (k.root !== root || !sameData(k.location, location)) continue;
      if (k.used !== renders) usedThisRender++;
      k.used = renders;
      locationCacheStats.hits++;
      return k.text;
    }
  }
  locationCacheStats.misses++;
  const text = options.fn(location, options);
  if (!kept) bySlot.set(location.path, (kept = []));
  if (kept.length >= PER_SLOT) kept.sort((x, y) => y.used - x.used).pop();
  kept.push({ location: { ...location, action: { ...a }, settings: { ...location.settings } }, root, text, used: renders });
  usedThisRender++;
  return text;
}

/**
 * The block helper over a server's locations (`{{#eachLocation locations}}...{{/eachLocation}}`):
 * the block once per location, with the location as its context, each text kept or rendered as
 * above. One helper call per server instead of Handlebars' `each` and a helper per location: a
 * server of ~2,000 unchanged locations cost more in that per-location machinery (a data frame,
 * the helper's wrapper and options object per iteration) than in finding the kept texts. The
 * block sees no @index/@first/@last/@key.
 */
export function eachLocation(locations: Location[] | undefined, options: BlockOptions): string {
  if (!locations?.length) return '';
  const root = rootText(options.data?.root ?? {});
  let out = '';
  for (let i = 0; i < locations.length; i++) out += locationText(locations[i], options, root);
  return out;
}

/**
 * Called once per servers.conf render, after it: texts not used by the last few renders are
 * dropped once more are kept than twice what a render uses plus a margin (several Gateways,
 * each with its own locations, share the cache).
 */
export function endLocationRender(): void {
  const used = usedThisRender;
  renders++;
  usedThisRender = 0;
  let size = 0;
  for (const bySlot of [slots.exact, slots.prefix]) for (const kept of bySlot.values()) size += kept.length;
  if (size <= 2 * used + 1000) return;
  for (const bySlot of [slots.exact, slots.prefix]) {
    for (const [path, kept] of bySlot) {
      const live = kept.filter((k) => k.used >= renders - 8);
      if (live.length === 0) bySlot.delete(path);
      else if (live.length !== kept.length) bySlot.set(path, live);
    }
  }
}

/** Forgets every kept text (tests). */
export function clearLocationCache(): void {
  slots.exact.clear();
  slots.prefix.clear();
}
