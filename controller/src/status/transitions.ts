/**
 * lastTransitionTime: kept from the previous status of the same condition (same resource,
 * same place, same type) unless its `status` changed, as the Kubernetes condition convention
 * says; new conditions get `now`. Reason/message changes alone keep the time.
 */
import type { StatusReport } from '../graph/types';

type Json = unknown;

const reportKey = (r: StatusReport) => `${r.kind}|${r.namespace ?? ''}|${r.name}`;

function isCondition(v: Json): v is { type: string; status: string; lastTransitionTime?: string } {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string' && typeof (v as { status?: unknown }).status === 'string';
}

/** JSON with sorted keys: a status read back from YAML may list keys in another order. */
function canonical(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, Json>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Identity of an element of a status list: listeners by name, route parents by parentRef. */
function elementKey(v: Json, index: number): string {
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    if (o.parentRef !== undefined) return `parent:${canonical(o.parentRef)}|${String(o.controllerName ?? '')}`;
    if (o.ancestorRef !== undefined) return `ancestor:${canonical(o.ancestorRef)}|${String(o.controllerName ?? '')}`;
    if (typeof o.name === 'string') return `name:${o.name}`;
  }
  return `index:${index}`;
}

/**
 * Walk `next` alongside `prev` (matched by keys), stamping every condition list. `walk.stable`
 * turns false where carrying the same `next` over this output could give other times (two
 * conditions of one type, two elements with one key): such an output is not remembered.
 */
function carry(next: Json, prev: Json, now: string | undefined, walk: { stable: boolean }): Json {
  if (Array.isArray(next)) {
    if (next.length > 0 && next.every(isCondition)) {
      const before = Array.isArray(prev) ? prev.filter(isCondition) : [];
      if (walk.stable && new Set(next.map((c) => c.type)).size !== next.length) walk.stable = false;
      return next.map((c) => {
        const old = before.find((p) => p.type === c.type);
        const kept: unknown = old && old.status === c.status ? old.lastTransitionTime : undefined;
        const time = kept instanceof Date ? kept.toISOString() : typeof kept === 'string' && kept !== '' ? kept : (now ?? c.lastTransitionTime);
        return { ...c, lastTransitionTime: time };
      });
    }
    const prevByKey = new Map<string, Json>();
    if (Array.isArray(prev)) prev.forEach((p, i) => prevByKey.set(elementKey(p, i), p));
    const keys = next.map((n, i) => elementKey(n, i));
    if (walk.stable && new Set(keys).size !== keys.length) walk.stable = false;
    return next.map((n, i) => carry(n, prevByKey.get(keys[i]), now, walk));
  }
  if (typeof next === 'object' && next !== null) {
    const p = typeof prev === 'object' && prev !== null && !Array.isArray(prev) ? (prev as Record<string, Json>) : {};
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(next)) out[k] = carry(v, p[k], now, walk);
    return out;
  }
  return next;
}

/**
 * Reports this module returned, with the report they were carried from. When an equal report
 * comes again (most of them, on a reconcile after a one-route change), carrying it over that
 * output would keep every time: the output itself is the answer, with no walk.
 */
const carriedFrom = new WeakMap<StatusReport, StatusReport>();

const OBJECT_PROTO = Object.prototype;

/** Equal as JSON text would be (same keys in the same order, same values), without writing it. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  // Plain objects only: anything else (a Date read back from YAML...) is simply not the same.
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== OBJECT_PROTO || Object.getPrototypeOf(b) !== OBJECT_PROTO) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i] || !sameJson((a as Record<string, unknown>)[ka[i]], (b as Record<string, unknown>)[kb[i]])) return false;
  }
  return true;
}

/** `next` with lastTransitionTime on every condition. Pure: returns new reports (or, for a
 * report equal to the one an earlier call was given, that call's unchanged output). */
export function carryTransitionTimes(previous: StatusReport[], next: StatusReport[], now: string): StatusReport[] {
  const before = new Map(previous.map((r) => [reportKey(r), r]));
  return next.map((r) => {
    const prev = before.get(reportKey(r));
    const from = prev && carriedFrom.get(prev);
    if (from && sameJson(from, r)) return prev!;
    const walk = { stable: true };
    const out: StatusReport = { ...r, status: carry(r.status, prev?.status, now, walk) as Record<string, unknown> };
    if (walk.stable) carriedFrom.set(out, r);
    return out;
  });
}

/**
 * `next` (a status with its times already stamped) with the lastTransitionTime of `live` (the
 * status an API server holds) wherever the same condition has the same status there: the times
 * another replica (or an earlier run) wrote stay, so a new leader does not rewrite every object
 * only to move its times. Conditions new or changed against `live` keep their own time.
 */
export function adoptTransitionTimes(live: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  return carry(next, live, undefined, { stable: true }) as Record<string, unknown>;
}
