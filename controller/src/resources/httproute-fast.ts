/**
 * A fast path for the common HTTPRoute: plain code that accepts only what httpRouteSchema
 * (httproute.ts) surely accepts, and builds exactly what it would return (defaults filled in,
 * unknown fields dropped, keys in the schema's order). Anything it is not sure about (a filter,
 * timeouts, retry, a value out of bounds, duplicates a refinement would reject, non-ASCII text...)
 * returns undefined and the zod schema decides, so every error message still comes from zod.
 *
 * Why: zod costs ~20-40 us per route (5,000 routes: ~200 ms of a cold start); this costs a few.
 * test/resources-fast.test.ts compares both on thousands of generated documents.
 */
import * as types from './types';
import type { HTTPBackendRef, HTTPHeaderMatch, HTTPRoute, HTTPRouteMatch, HTTPRouteRule, ObjectMeta, ParentReference } from './types';
import * as validation from './validation';
import * as metadataModule from './metadata';

// Local copies: under tsx every use of an imported binding is a getter call on the module.
const { GROUP_RE, HEADER_NAME_RE, HOSTNAME_RE, KIND_RE, NAMESPACE_RE, SECTION_NAME_RE, pathValueProblem } = validation;
const { GATEWAY_API_GROUP } = types;
const { UNKNOWN_CREATION_TIMESTAMP } = metadataModule;

type Obj = Record<string, unknown>;

const IPV4_RE = /^\d{1,3}(\.\d{1,3}){3}$/;
/** Printable ASCII only: string lengths then mean the same to zod and to us. */
const ASCII_RE = /^[\x20-\x7e]*$/;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const PATH_TYPES = new Set(['Exact', 'PathPrefix', 'RegularExpression']);
const VALUE_TYPES = new Set(['Exact', 'RegularExpression']);

/** Thrown (and caught below) when zod must decide; never escapes this module. */
const UNSURE = Symbol('unsure');

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown): Obj {
  if (!isObj(v)) throw UNSURE;
  return v;
}

function arr(v: unknown, max: number): unknown[] {
  if (!Array.isArray(v) || v.length > max) throw UNSURE;
  return v;
}

/** A string of printable ASCII whose length is within [min, max] and that matches `re`. */
function str(v: unknown, min: number, max: number, re?: RegExp): string {
  if (typeof v !== 'string' || v.length < min || v.length > max || !ASCII_RE.test(v) || (re && !re.test(v))) throw UNSURE;
  return v;
}

function int(v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw UNSURE;
  return v;
}

function oneOf(v: unknown, allowed: Set<string>): string {
  if (typeof v !== 'string' || !allowed.has(v)) throw UNSURE;
  return v;
}

const objectName = (v: unknown) => str(v, 1, 253, SECTION_NAME_RE);
const namespaceName = (v: unknown) => str(v, 1, 63, NAMESPACE_RE);

function labels(v: unknown): Record<string, string> {
  if (v === undefined) return {};
  const o = obj(v);
  const out: Record<string, string> = {};
  for (const key of Object.keys(o)) {
    const value = o[key];
    if (typeof value !== 'string' || key === '__proto__') throw UNSURE;
    out[key] = value;
  }
  return out;
}

/** The form toISOString writes; such a string is its own answer when it names a real instant. */
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;

function timestamp(v: unknown): string {
  if (v === undefined) return UNKNOWN_CREATION_TIMESTAMP;
  if (typeof v === 'string') {
    // Parsing a date string is slow; the provider writes this form, so check it by its fields.
    const m = ISO_RE.exec(v);
    if (m) {
      const [y, mo, d, h, mi, s, ms] = m.slice(1).map(Number);
      const t = new Date(Date.UTC(y, mo - 1, d, h, mi, s, ms));
      if (y >= 1000 && t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && t.getUTCHours() === h && t.getUTCMinutes() === mi && t.getUTCSeconds() === s) return v;
    }
  }
  if (typeof v !== 'string' && !(v instanceof Date)) throw UNSURE;
  const date = v instanceof Date ? v : new Date(v);
  if (Number.isNaN(date.getTime())) throw UNSURE;
  return date.toISOString();
}

function metadata(v: unknown): ObjectMeta {
  const m = obj(v);
  const out = {
    name: objectName(m.name),
    generation: m.generation === undefined ? 1 : int(m.generation, 1, Number.MAX_SAFE_INTEGER),
    creationTimestamp: timestamp(m.creationTimestamp),
  } as ObjectMeta;
  if (m.uid !== undefined) {
    if (typeof m.uid !== 'string') throw UNSURE;
    out.uid = m.uid;
  }
  out.labels = labels(m.labels);
  out.annotations = labels(m.annotations);
  out.namespace = m.namespace === undefined ? 'default' : namespaceName(m.namespace);
  return out;
}

function parentRef(v: unknown): ParentReference {
  const r = obj(v);
  const out = {
    group: r.group === undefined ? GATEWAY_API_GROUP : str(r.group, 0, 253, GROUP_RE),
    kind: r.kind === undefined ? 'Gateway' : str(r.kind, 1, 63, KIND_RE),
  } as ParentReference;
  if (r.namespace !== undefined) out.namespace = namespaceName(r.namespace);
  out.name = objectName(r.name);
  if (r.sectionName !== undefined) out.sectionName = str(r.sectionName, 1, 253, SECTION_NAME_RE);
  if (r.port !== undefined) out.port = int(r.port, 1, 65535);
  return out;
}

function hostname(v: unknown): string {
  const h = str(v, 1, 253, HOSTNAME_RE);
  if (IPV4_RE.test(h)) throw UNSURE;
  return h;
}

function valueMatches(v: unknown, maxValue: number): HTTPHeaderMatch[] {
  if (v === undefined) return [];
  const names = new Set<string>();
  return arr(v, 16).map((item) => {
    const m = obj(item);
    const type = (m.type === undefined ? 'Exact' : oneOf(m.type, VALUE_TYPES)) as HTTPHeaderMatch['type'];
    const name = str(m.name, 1, 256, HEADER_NAME_RE);
    if (names.has(name)) throw UNSURE;
    names.add(name);
    return { type, name, value: str(m.value, 1, maxValue) };
  });
}

function match(v: unknown): HTTPRouteMatch {
  const m = obj(v);
  const p = m.path === undefined ? {} : obj(m.path);
  const type = (p.type === undefined ? 'PathPrefix' : oneOf(p.type, PATH_TYPES)) as HTTPRouteMatch['path']['type'];
  const value = p.value === undefined ? '/' : str(p.value, 0, 1024);
  if (type !== 'RegularExpression' && pathValueProblem(value)) throw UNSURE;
  const out: HTTPRouteMatch = { path: { type, value }, headers: valueMatches(m.headers, 4096), queryParams: valueMatches(m.queryParams, 1024) };
  if (m.method !== undefined) out.method = oneOf(m.method, METHODS) as HTTPRouteMatch['method'];
  return out;
}

function noFilters(v: unknown): [] {
  if (v !== undefined && arr(v, 0).length) throw UNSURE;
  return [];
}

function backendRef(v: unknown): HTTPBackendRef {
  const b = obj(v);
  const out = {
    group: b.group === undefined ? '' : str(b.group, 0, 253, GROUP_RE),
    kind: b.kind === undefined ? 'Service' : str(b.kind, 1, 63, KIND_RE),
    name: objectName(b.name),
  } as HTTPBackendRef;
  if (b.namespace !== undefined) out.namespace = namespaceName(b.namespace);
  if (b.port !== undefined) out.port = int(b.port, 1, 65535);
  else if (out.group === '' && out.kind === 'Service') throw UNSURE;
  out.weight = b.weight === undefined ? 1 : int(b.weight, 0, 1000000);
  out.filters = noFilters(b.filters);
  return out;
}

function rule(v: unknown): HTTPRouteRule {
  const r = obj(v);
  if (r.timeouts !== undefined || r.retry !== undefined || r.sessionPersistence !== undefined) throw UNSURE;
  const out = {} as HTTPRouteRule;
  if (r.name !== undefined) out.name = str(r.name, 1, 253, SECTION_NAME_RE);
  out.matches = r.matches === undefined ? [match({})] : arr(r.matches, 64).map(match);
  out.filters = noFilters(r.filters);
  out.backendRefs = r.backendRefs === undefined ? [] : arr(r.backendRefs, 16).map(backendRef);
  return out;
}

function sameParent(a: ParentReference, b: ParentReference): boolean {
  return a.group === b.group && a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

/** The route httpRouteSchema would return for `doc`, or undefined when zod must decide. */
export function parseHttpRouteFast(doc: unknown): HTTPRoute | undefined {
  try {
    const d = obj(doc);
    if (typeof d.apiVersion !== 'string' || d.kind !== 'HTTPRoute') return undefined;
    const meta = metadata(d.metadata);
    const s = d.spec === undefined ? {} : obj(d.spec);
    const parentRefs = s.parentRefs === undefined ? [] : arr(s.parentRefs, 32).map(parentRef);
    for (let i = 1; i < parentRefs.length; i++) for (let j = 0; j < i; j++) if (sameParent(parentRefs[i], parentRefs[j])) return undefined;
    const hostnames = s.hostnames === undefined ? [] : arr(s.hostnames, 16).map(hostname);
    const rules = s.rules === undefined ? [rule({})] : arr(s.rules, 16).map(rule);
    let total = 0;
    const names = new Set<string>();
    for (const r of rules) {
      total += r.matches.length;
      if (r.name === undefined) continue;
      if (names.has(r.name)) return undefined;
      names.add(r.name);
    }
    if (total > 128) return undefined;
    return { apiVersion: d.apiVersion, kind: 'HTTPRoute', metadata: meta, spec: { parentRefs, hostnames, rules } };
  } catch (e) {
    if (e === UNSURE) return undefined;
    throw e;
  }
}
