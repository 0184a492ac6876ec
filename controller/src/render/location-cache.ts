/**
 * The text of a server's path locations, kept between renders when a location is unchanged.
 *
 * One server holding every route (1,000 hostless routes on one listener) changes with every
 * route change, so servers-cache.ts cannot reuse it, and rendering its ~2,000 locations through
 * the template is most of the render. A location that dispatches (or answers a status) with no
 * settings of its own renders from a few strings only (match, path, the dispatch key, its
 * regexes and fallback), so those strings are its key: equal strings, equal text. Locations with
 * settings or an inline proxy carry objects and are rendered every time.
 *
 * servers.conf.hbs wraps the location block in `{{#locationText this}}...{{/locationText}}`:
 * the block must read nothing of the location beyond the fields in `locationKey` (and the @root
 * fields in `ROOT_FIELDS`), which render-cache.test.ts checks by comparing cached renders with
 * whole ones over random route changes.
 */
import type { Location } from '../model/types';

/** @root fields the location block reads. */
const ROOT_FIELDS = ['dispatchKeyVariable', 'notFoundLocation'] as const;

/** Texts by key, with the render that last used them. */
const texts = new Map<string, { text: string; used: number }>();
let renders = 0;
let usedThisRender = 0;
/** Reuses since the process started (tests look at it). */
export const locationCacheStats = { hits: 0, misses: 0 };

function hasSettings(settings: Location['settings'] | undefined): boolean {
  if (!settings) return false;
  for (const k in settings) if ((settings as Record<string, unknown>)[k] !== undefined) return true;
  return false;
}

/** The key of a location whose text depends only on strings, or undefined. */
export function locationKey(location: Location, root: Record<string, unknown>): string | undefined {
  if (hasSettings(location.settings)) return undefined;
  const a = location.action;
  let key = `${location.match}\u0000${location.path}`;
  for (const f of ROOT_FIELDS) key += `\u0000${String(root[f])}`;
  if (a.kind === 'status') return `${key}\u0000s\u0000${a.code}`;
  if (a.kind !== 'dispatch' || a.nginxKey === undefined || a.nginxFallback === undefined) return undefined;
  key += `\u0000d\u0000${a.nginxKey}\u0000${a.nginxFallback}`;
  for (const r of a.regexes) key += `\u0000${r}`;
  return key;
}

/** The block helper: the kept text of an unchanged location, else the block rendered (and kept). */
export function locationText(this: Location, location: Location, options: { fn: (context: unknown, options?: unknown) => string; data?: { root?: Record<string, unknown> } }): string {
  const key = locationKey(location, options.data?.root ?? {});
  if (key === undefined) return options.fn(this, options);
  const hit = texts.get(key);
  if (hit) {
    if (hit.used !== renders) usedThisRender++;
    hit.used = renders;
    locationCacheStats.hits++;
    return hit.text;
  }
  locationCacheStats.misses++;
  const text = options.fn(this, options);
  texts.set(key, { text, used: renders });
  usedThisRender++;
  return text;
}

/**
 * Called once per servers.conf render, after it: texts not used by the last few renders are
 * dropped once the cache holds more than twice what a render uses (several Gateways, each with
 * its own locations, share the cache).
 */
export function endLocationRender(): void {
  const used = usedThisRender;
  renders++;
  usedThisRender = 0;
  if (texts.size <= 2 * used + 1000) return;
  for (const [k, v] of texts) if (v.used < renders - 8) texts.delete(k);
}

/** Forgets every kept text (tests). */
export function clearLocationCache(): void {
  texts.clear();
}
