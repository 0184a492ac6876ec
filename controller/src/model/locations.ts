/**
 * One server's locations, following the matching design (no njs):
 *   Exact /x       -> location = /x
 *   PathPrefix /x  -> location = /x  and  location /x/   (segment semantics) when both proxy
 *                     directly, else one location /x whose own candidates test the segment
 *   always            location /
 * Every location lists the match elements that can apply to the URIs reaching it (its own
 * path's elements, every shorter PathPrefix that segment-matches it, every RegularExpression
 * element), sorted by Gateway API precedence; the location tests them in that order
 * (model/matching.ts) and jumps to the named location of the first whose conditions hold.
 */
import type { HTTPRouteNode, RouteMatch, RouteRule } from '../graph/types';
import type { HostKey, HostRoute } from './hosts';
import { mixedTls } from './upstreams';
import { URI_FIELD, dispatchComposite, elementConditions, type Alternative, type Condition } from './matching';
import { escapeRegex } from '../graph/pcre-fragments';
import { grpcNoWeightTarget, grpcPrecedenceKey } from './grpc';
import { attemptTimeout, proxyTimeout } from './timeouts';
import { targetRetry } from './retry';
import { ruleSession } from './session';
import { inlinePrefixRewrite, locationFilters, sampleHundredths, type ServerInfo } from './filters';
import type { DispatchRun, Location, LocationAction, RuleLocation } from './types';
import type { ActionInput, LocationsMemo, RouteInput, RouteParts } from './location-memo';
import type { Registries } from './uses';

export const NOT_FOUND_LOCATION = '@portcullis_404';

/**
 * A location takes other paths' candidates (folded in) up to this many candidates: each one is
 * an alternative its requests may try (~0.1 µs), each location saved is ~20 µs of every reload.
 */
export const MAX_LOCATION_CANDIDATES = 12;

/** What a location needs of a candidate (a candidate, or one with an added path test). */
export interface Entry {
  conditions: Condition[];
  ruleLocation: RuleLocation;
  /** Index in the server's sorted candidates. */
  position: number;
}

export interface Candidate extends Entry {
  hostKey: HostKey;
  match: RouteMatch;
  /** match.path.type, read once per candidate and build. */
  pathType: RouteMatch['path']['type'];
  /** Normalised PathPrefix ("/" or "/a/b", no trailing slash) or the Exact value. */
  path: string;
  /** The precedence keys before the route-order ties, packed in one number (bigger = better). */
  key: number;
  /**
   * This candidate with its path tested on $uri (folded into another path's location), kept
   * with it: the same object while the candidate is, so a location's kept action still fits.
   */
  segmentGuard?: Entry;
  equalsGuard?: Entry;
}

/** A PathPrefix's trailing "/" is ignored (Gateway API). */
export function normalisePrefix(p: string): string {
  if (p.length > 1 && p.charCodeAt(p.length - 1) !== 47) return p;
  const trimmed = p.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/** "/", "/a", "/a/b" for "/a/b": the PathPrefixes that match it segment by segment. */
export function segmentPrefixes(path: string): string[] {
  const out = ['/'];
  for (let i = path.indexOf('/', 1); i !== -1; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  if (path !== '/') out.push(path);
  return out;
}

/**
 * segmentPrefixes, kept per path text: every build asks again for every path of a server (one
 * host: ~3,000 lists of new slices per change, for paths that mostly did not change). Read only.
 */
const keptPrefixes = new Map<string, readonly string[]>();
function segmentPrefixesOf(path: string): readonly string[] {
  let out = keptPrefixes.get(path);
  if (out === undefined) {
    if (keptPrefixes.size >= 50000) keptPrefixes.clear();
    out = segmentPrefixes(path);
    keptPrefixes.set(path, out);
  }
  return out;
}

const PATH_RANK = { Exact: 3, RegularExpression: 2, PathPrefix: 1 } as const;

/**
 * Gateway API precedence (notes A.1b): hostname specificity, Exact path, longest PathPrefix
 * (RegularExpression sits between the two, as NGINX Gateway Fabric does), method, most
 * headers, most query params, then oldest route, namespace/name, rule order, match order.
 * The keys up to the query count fit in one number (41 bits: the Gateway API bounds hostnames
 * to 253 characters, paths to 1,024 and headers / query params to 16 per match); candidates are
 * collected in route, rule and match order, and a stable sort on that number does the rest.
 */
function precedenceKey(hostKey: HostKey, match: RouteMatch, path: string): number {
  // A server holds routes of one kind only (graph/routekinds.ts): keys never mix.
  if (match.grpc) return grpcPrecedenceKey(hostKey, match);
  const len = match.path.type === 'PathPrefix' ? Math.min(path.length, 4095) : 0;
  let k = Math.min(hostKey[0], 255);
  k = k * 256 + Math.min(hostKey[1], 255);
  k = k * 4 + PATH_RANK[match.path.type];
  k = k * 4096 + len;
  k = k * 2 + (match.method ? 1 : 0);
  k = k * 32 + Math.min(countNames(match.headers, true), 31);
  return k * 32 + Math.min(countNames(match.queryParams, false), 31);
}

/** Older routes first, then namespace/name (the route-level ties of the precedence). */
export function compareRoutes(a: HTTPRouteNode, b: HTTPRouteNode): number {
  const ta = time(a.creationTimestamp);
  const tb = time(b.creationTimestamp);
  if (!Number.isNaN(ta) && !Number.isNaN(tb) && ta !== tb) return ta - tb;
  return (
    compareStrings(a.creationTimestamp, b.creationTimestamp) ||
    compareStrings(a.namespace, b.namespace) ||
    compareStrings(a.name, b.name)
  );
}

function countNames(items: { name: string }[], caseInsensitive: boolean): number {
  if (items.length < 2) return items.length;
  return new Set(items.map((i) => (caseInsensitive ? i.name.toLowerCase() : i.name))).size;
}

const parsedTimes = new Map<string, number>();
function time(s: string): number {
  let t = parsedTimes.get(s);
  if (t === undefined) {
    t = Date.parse(s);
    if (parsedTimes.size > 100000) parsedTimes.clear();
    parsedTimes.set(s, t);
  }
  return t;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * "@rule_<namespace>_<name>_<index>". Kubernetes names hold [a-z0-9.-] and namespaces no dots,
 * so turning "." into "_" keeps names unique (a route "a.b" and a route "a-b" differ).
 */
export function ruleLocationName(route: Pick<HTTPRouteNode, 'namespace' | 'name'>, rule: RouteRule): string {
  let prefix = rulePrefixes.get(route);
  if (prefix === undefined) {
    const clean = (s: string) => s.replace(/\./g, '_').replace(/[^A-Za-z0-9_-]/g, '-');
    prefix = `@rule_${clean(route.namespace)}_${clean(route.name)}_`;
    rulePrefixes.set(route, prefix);
  }
  return prefix + rule.index;
}
const rulePrefixes = new WeakMap<object, string>();

/** The registries a server's locations take names from (model/uses.ts). */
export type LocationContext = Registries;

export interface ServerLocations {
  locations: Location[];
  ruleLocations: RuleLocation[];
  /**
   * With a LocationsMemo: the memo's own rule locations, of which `ruleLocations` are copies (in
   * the same order), never changed by anyone; model/memo.ts keeps them instead of copying again.
   */
  keptRules?: RuleLocation[];
}

const PLAIN_HTTP: ServerInfo = { port: 80, https: false };

/**
 * A route's rule locations and match candidates on a server (positions are set per build). With
 * a LocationsMemo, an unchanged route's parts are kept from the last build.
 */
function routeParts(route: RouteInput, hostKey: HostKey, ctx: LocationContext, server: ServerInfo): RouteParts<Candidate> {
  const ruleLocations: RuleLocation[] = [];
  const candidates: Candidate[] = [];
  let warnAbout = { rule: 0, match: 0 };
  const warnMatch = (m: string) => ctx.warn(`${route.namespace}/${route.name} rule ${warnAbout.rule} match ${warnAbout.match}: ${m}`);
  const rules = [...route.rules].sort((a, b) => a.index - b.index);
  for (const rule of rules) {
    if (!rule.valid) continue;
    const name = ruleLocationName(route, rule);
    const noWeight = route.kind === 'GRPCRoute' ? grpcNoWeightTarget(rule) : undefined;
    // backendRef filters: each backend that takes a share of the requests gets a named
    // location of its own, with its filters; the rule's location only picks one per request.
    // Backends spoken to differently (BackendTLSPolicy on some) cannot share one proxy_pass either.
    const shares = (rule.backendFilters || mixedTls(rule.backends)) && !noWeight ? weightedIndexes(rule) : [];
    const perBackend = shares.length > 1 ? rule.backends.map((_, i) => `${name}_b${i}`) : undefined;
    // grpc_pass: GRPCRoutes, and HTTPRoute rules whose backends speak h2c (graph/rules.ts keeps
    // those apart from HTTP/1.1 ones).
    const h2 = route.kind === 'GRPCRoute' || speaksH2c(rule);
    const retry = targetRetry(rule);
    const source = { namespace: route.namespace, name: route.name, ruleIndex: rule.index };
    const session = ruleSession(rule, source);
    const ruleLocation = newRuleLocation(
      name,
      source,
      noWeight ?? ctx.upstreams.target(rule.backends, perBackend, h2, retry, session, server.backendCertificate),
      h2 ? true : undefined,
    );
    const timeout = retry ? attemptTimeout(rule.timeouts) : proxyTimeout(rule.timeouts);
    if (timeout) ruleLocation.timeout = timeout;
    ruleLocations.push(ruleLocation);
    if (perBackend) {
      if (ruleLocation.target.kind === 'backends') {
        for (const i of shares) {
          const own: RuleLocation = { ...ruleLocation, name: perBackend[i], target: ctx.upstreams.target([rule.backends[i]], undefined, h2, retry, session, server.backendCertificate), settings: {}, dispatchedBy: name };
          const filters = ruleFilters(rule.backendFilters ? rule.backendFilters[i] : rule.filters, own, server, ctx);
          if (filters) own.filters = filters;
          ruleLocations.push(own);
        }
      }
    } else {
      // One backend takes every request: its own filters apply to all of them.
      const filters = ruleFilters(shares.length === 1 && rule.backendFilters ? rule.backendFilters[shares[0]] : rule.filters, ruleLocation, server, ctx);
      if (filters) ruleLocation.filters = filters;
    }
    // A loop, not a closure per rule and per match: tsx names every closure it creates.
    for (let matchIndex = 0; matchIndex < rule.matches.length; matchIndex++) {
      const match = rule.matches[matchIndex];
      warnAbout = { rule: rule.index, match: matchIndex };
      const conditions = elementConditions(match, ctx.maps, warnMatch);
      if (!conditions) continue;
      const path = match.path.type === 'PathPrefix' ? normalisePrefix(match.path.value) : match.path.value;
      candidates.push({ hostKey, match, pathType: match.path.type, path, conditions, ruleLocation, key: precedenceKey(hostKey, match, path), position: 0 });
    }
  }
  return { ruleLocations, candidates };
}

/** An HTTPRoute rule whose backends speak h2c (a loop: this runs for every rule of every build). */
function speaksH2c(rule: RouteRule): boolean {
  for (const b of rule.backends) if (b.h2c) return true;
  return false;
}

/**
 * A rule location with every field of the type, unset ones undefined: all rule locations then
 * share one shape, which keeps copies (copyRule), finalizeModel's writes and ruleSignature's
 * walk over the fields fast. `Complete` makes a field added to RuleLocation a compile error
 * here, never a field some objects lack.
 */
function newRuleLocation(name: string, source: RuleLocation['source'], target: RuleLocation['target'], grpc: true | undefined): RuleLocation {
  const out: Complete<RuleLocation> = { name, source, target, settings: {}, timeout: undefined, filters: undefined, bodyLimitVariable: undefined, referenced: undefined, nginxName: undefined, emit: undefined, grpc, dispatchedBy: undefined };
  return out as RuleLocation;
}
type Complete<T> = { [K in keyof Required<T>]: T[K] | undefined };

/**
 * A rule location for the model: finalizeModel sets fields on it (and replaces its settings), so
 * the memo keeps its own, which nobody changes, and hands out copies of all of it.
 */
function copyRule(r: RuleLocation): RuleLocation {
  return { ...r };
}

/**
 * `memo` (model/location-memo.ts): keeps routes' parts and locations' actions between builds of
 * this server, so a one-route change does not rebuild a thousand routes' locations.
 */
export function buildLocations(
  routes: HostRoute[],
  ctx: LocationContext,
  server: ServerInfo = PLAIN_HTTP,
  memo?: LocationsMemo<Candidate>,
): ServerLocations {
  // A route reachable through several listeners of the group counts once, at its best hostname.
  const unique = new Map<HTTPRouteNode, HostRoute>();
  for (const r of routes) {
    const prev = unique.get(r.attached.route);
    if (!prev || r.hostKey[0] > prev.hostKey[0] || (r.hostKey[0] === prev.hostKey[0] && r.hostKey[1] > prev.hostKey[1]))
      unique.set(r.attached.route, r);
  }
  const ordered = [...unique.values()].sort((a, b) => compareRoutes(a.attached.route, b.attached.route));

  memo?.begin();
  const ruleLocations: RuleLocation[] = [];
  const keptRules: RuleLocation[] | undefined = memo ? [] : undefined;
  const candidates: Candidate[] = [];
  for (const { attached, hostKey } of ordered) {
    const route = attached.route;
    if (memo) {
      const parts = memo.route(route, hostKey, ctx, server, routeParts);
      for (const r of parts.ruleLocations) {
        ruleLocations.push(copyRule(r));
        keptRules!.push(r);
      }
      for (const c of parts.candidates) candidates.push(c);
    } else {
      const parts = routeParts(route, hostKey, ctx, server);
      for (const r of parts.ruleLocations) ruleLocations.push(r);
      for (const c of parts.candidates) candidates.push(c);
    }
  }
  // From here on, the registries are asked for the runs' maps only.
  const plansCtx = memo ? memo.plans(ctx) : ctx;
  const scope = `${server.port}|${server.https ? 's' : ''}|${server.name ?? ''}`;
  // Stable: equal keys keep the route, rule and match order they were collected in.
  candidates.sort((a, b) => b.key - a.key);
  candidates.forEach((c, i) => (c.position = i));

  // Indexes, so each location finds its candidates without scanning all of them.
  const exactByPath = new Map<string, Candidate[]>();
  const prefixByPath = new Map<string, Candidate[]>();
  const regexes: Candidate[] = [];
  for (const c of candidates) {
    if (c.pathType === 'RegularExpression') regexes.push(c);
    else {
      const index = c.pathType === 'Exact' ? exactByPath : prefixByPath;
      const list = index.get(c.path);
      if (list) list.push(c);
      else index.set(c.path, [c]);
    }
  }

  // RegularExpression paths apply to every location and sort together per hostname key (between
  // that key's Exact and PathPrefix candidates): each such run is one per-server map, built on
  // first use, and a location only merges the runs into its own (few) candidates by order.
  const runs: Run[] = [];
  for (const c of regexes) {
    const last = runs[runs.length - 1];
    // A run is contiguous in precedence (true of HTTPRoute keys by construction; GRPCRoute keys
    // may put an Exact or PathPrefix candidate between two RegularExpression ones).
    const prev = last?.candidates[last.candidates.length - 1];
    if (last && prev!.position === c.position - 1 && last.candidates[0].hostKey[0] === c.hostKey[0] && last.candidates[0].hostKey[1] === c.hostKey[1]) last.candidates.push(c);
    else runs.push({ position: c.position, candidates: [c], targets: [], role: '', run: true });
  }
  const roles = new Map<string, number>();
  for (const run of runs) {
    run.targets = [...new Set(run.candidates.map((c) => c.ruleLocation.name))];
    const hostKey = `${run.candidates[0].hostKey[0]}.${run.candidates[0].hostKey[1]}`;
    const k = roles.get(hostKey) ?? 0;
    roles.set(hostKey, k + 1);
    run.role = `${hostKey}.${k}`;
  }
  const runOf = (run: Run): DispatchRun => {
    run.variable ??= plansCtx.maps.run(run.candidates.map((c) => ({ conditions: c.conditions, target: c.ruleLocation.name })), scope, run.role);
    // One object per run, kept across builds while its targets are the same: the locations'
    // actions then hold the same objects, which the render cache compares at a glance.
    return (run.dispatch ??= memo ? memo.dispatchRun(run.variable, run.targets) : { variable: run.variable, targets: run.targets });
  };

  /**
   * Sorted by position, in place. An insertion sort: the lists are short (a location's own
   * candidates and those folded into it) and mostly in order already, and Array#sort made a work
   * copy of each of a thousand lists per build. Positions are distinct: the order is total.
   */
  const inOrder = <E extends Entry>(list: E[]): E[] => {
    for (let i = 1; i < list.length; i++) {
      const e = list[i];
      let j = i - 1;
      if (list[j].position <= e.position) continue;
      for (; j >= 0 && list[j].position > e.position; j--) list[j + 1] = list[j];
      list[j + 1] = e;
    }
    return list;
  };
  /** The PathPrefix candidates of the segment-prefixes of `base` ("/", "/a", "/a/b" for "/a/b"), added to `out`. */
  const prefixCandidates = (base: string, skipOwn = false, out: Entry[] = []): Entry[] => {
    const prefixes = segmentPrefixesOf(base);
    for (let i = 0; i < prefixes.length; i++) {
      if (skipOwn && prefixes[i] === base) continue;
      const list = prefixByPath.get(prefixes[i]);
      if (list) for (let k = 0; k < list.length; k++) out.push(list[k]);
    }
    return out;
  };
  // Plans first (candidates may still be folded in), actions once every fold is known.
  interface Plan {
    match: Location['match'];
    path: string;
    candidates: Entry[];
    /** Other paths' candidates can be folded in: the location dispatches anyway. */
    host: boolean;
    action?: Location['action'];
  }
  const plans: Plan[] = [];
  /** Prefix locations by their nginx path ("/", "/x" or "/x/"), to find a path's host. */
  const prefixPlans = new Map<string, Plan>();
  /** The lengths of prefixPlans' paths: hostOf looks up only prefixes of those lengths. */
  const planLengths = new Set<number>();
  const addPrefixPlan = (plan: Plan): void => {
    prefixPlans.set(plan.path, plan);
    planLengths.add(plan.path.length);
  };
  /** The candidates with their path tested on $uri (kept with each candidate: see Candidate), added to `out`. */
  const guarded = (list: Candidate[], test: 'segment' | 'equals', out: Entry[]): Entry[] => {
    const field = URI_FIELD;
    for (const c of list) {
      let e = test === 'segment' ? c.segmentGuard : c.equalsGuard;
      if (!e || (e.conditions[e.conditions.length - 1] as { field: string }).field !== field) {
        // concat, not a spread: kept with the candidate, and a spread leaves spare room in the array.
        e = { conditions: c.conditions.concat([{ field, test, fragment: escapeRegex(c.path), literal: c.path }]), ruleLocation: c.ruleLocation, position: 0 };
        if (test === 'segment') c.segmentGuard = e;
        else c.equalsGuard = e;
      }
      e.position = c.position;
      out.push(e);
    }
    return out;
  };
  /** A location's action, kept from the last build when its inputs are the same (location-memo.ts). */
  const actionOf = (match: Location['match'], path: string, own: Entry[]): LocationAction =>
    memo ? memo.action(match, path, actionInputs(own, runs), isRun, runOf, locationAction, own, runs) : locationAction(own, runs, runOf);
  /** The prefix location nginx picks for `path` when it has none of its own: the longest string prefix. */
  const hostOf = (path: string): Plan | undefined => {
    for (let i = path.length; i > 0; i--) {
      if (!planLengths.has(i)) continue;
      const plan = prefixPlans.get(path.slice(0, i));
      if (plan) return plan;
    }
    return prefixPlans.get('/');
  };
  /**
   * The location that can take `count` more candidates for `path` (folded in), or undefined.
   * The caller makes them after this answers. Only a location
   * whose path is a whole segment prefix of `path` hosts it: folding /r10 into /r1 (a string
   * prefix) would fill /r1 with its neighbours, and /r1's own /r1/api, /r1/items... would then
   * each need a location (1,000 routes of the one-host benchmark: ~1,900 locations instead
   * of ~1,000; every location costs nginx its module settings at each reload).
   */
  const foldHost = (path: string, count: number): Plan | undefined => {
    const host = hostOf(path);
    if (!host?.host || host.candidates.length + count > MAX_LOCATION_CANDIDATES) return undefined;
    return host.path === '/' || (path.startsWith(host.path) && path.charCodeAt(host.path.length) === 47) ? host : undefined;
  };

  // "/" sees every URI.
  const root: Plan = { match: 'prefix', path: '/', candidates: prefixCandidates('/'), host: false };
  inOrder(root.candidates);
  root.host = dispatches(root.candidates, runs);
  plans.push(root);
  addPrefixPlan(root);

  // A PathPrefix /x: folded into the location nginx picks for /x when that one dispatches anyway
  // (its candidates then test the segment, `/x` followed by "/" or the end, on $uri); else two
  // locations `= /x` and `/x/` when they can proxy directly; else one `location /x` whose own
  // candidates test the segment (/xyz reaches it too). Shorter paths first, so they can host.
  // Every location and every `if` costs nginx a location config when it loads (~10 KB, ~20 µs).
  for (const path of [...prefixByPath.keys()].sort((x, y) => x.length - y.length || (x < y ? -1 : 1))) {
    if (path === '/') continue;
    const list = prefixByPath.get(path)!;
    // (No closure per path: tsx names every closure it creates.)
    const host = foldHost(path, list.length);
    if (host) {
      guarded(list, 'segment', host.candidates);
      continue;
    }
    const below = inOrder(prefixCandidates(path));
    if (!dispatches(below, runs)) {
      const slashPath = path + '/';
      const plain = actionOf('prefix', slashPath, below);
      if (!exactByPath.has(path)) plans.push({ match: 'exact', path, candidates: [], host: false, action: { ...plain } });
      const slash: Plan = { match: 'prefix', path: slashPath, candidates: [], host: false, action: plain };
      plans.push(slash);
      addPrefixPlan(slash);
      continue;
    }
    const plan: Plan = { match: 'prefix', path, candidates: prefixCandidates(path, true, guarded(list, 'segment', [])), host: true };
    plans.push(plan);
    addPrefixPlan(plan);
  }

  // An Exact /x: folded likewise ($uri equals /x) unless a PathPrefix has the same path (its
  // `= /x` twin or folded candidates must see it), else `location = /x`.
  for (const [path, exact] of exactByPath) {
    const host = prefixByPath.has(path) ? undefined : foldHost(path, exact.length);
    if (host) {
      guarded(exact, 'equals', host.candidates);
      continue;
    }
    plans.push({ match: 'exact', path, candidates: prefixCandidates(path, false, exact.slice()), host: false });
  }

  const locations: Location[] = plans.map((plan) => {
    if (!plan.action) plan.action = actionOf(plan.match, plan.path, inOrder(plan.candidates));
    let action = plan.action;
    if (action.kind === 'proxy' && action.filters?.prefixRewrite && action.target.kind === 'upstream') {
      const inline = inlinePrefixRewrite(action.filters, plan);
      if (inline) action = { ...action, filters: inline };
    }
    return { match: plan.match, path: plan.path, action, settings: {} };
  });
  locations.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.match < b.match ? -1 : 1));
  memo?.end();
  return keptRules ? { locations, ruleLocations, keptRules } : { locations, ruleLocations };
}

/** The indexes of the rule's backends that take a share of its requests (weight > 0). */
function weightedIndexes(rule: RouteRule): number[] {
  const out: number[] = [];
  rule.backends.forEach((b, i) => {
    if (b.weight > 0) out.push(i);
  });
  return out;
}

/** A rule's (or one of its backends') filters as what its named location does. */
function ruleFilters(filters: RouteRule['filters'], location: RuleLocation, server: ServerInfo, ctx: LocationContext) {
  return locationFilters(
    filters,
    server,
    location.name,
    {
      target: (b) => ctx.upstreams.target([b], undefined, location.grpc === true, undefined, undefined, server.backendCertificate),
      authTarget: (b) => ctx.upstreams.target([b], undefined, false, undefined, undefined, server.backendCertificate),
      sample: (percent) => `pc_sample_${sampleHundredths(percent)}`,
    },
    location.grpc === true,
  );
}

interface Run {
  /** Order of its first candidate among all the server's candidates. */
  position: number;
  candidates: Candidate[];
  targets: string[];
  /** Which run of the server it is (its hostname key, and which run of that key): names its map. */
  role: string;
  variable?: string;
  dispatch?: DispatchRun;
  run: true;
}

function isRun(x: ActionInput | Run): x is Run {
  return (x as Run).run === true;
}

/**
 * What locationAction(own, runs) reads: own (sorted) and the runs merged in precedence order, up
 * to and including the first candidate without conditions (nothing after it is reachable).
 */
function actionInputs(own: Entry[], runs: Run[]): (Entry | Run)[] {
  const out: (Entry | Run)[] = [];
  let r = 0;
  for (const e of own) {
    for (; r < runs.length && runs[r].position < e.position; r++) out.push(runs[r]);
    out.push(e);
    if (e.conditions.length === 0) return out;
  }
  for (; r < runs.length; r++) out.push(runs[r]);
  return out;
}

/** Whether locationAction(own, runs) dispatches, without building the dispatch (own sorted). */
function dispatches(own: Entry[], runs: Run[]): boolean {
  if (own.length === 0) return runs.length > 0;
  if (own[0].conditions.length > 0) return true;
  return runs.some((r) => r.position < own[0].position);
}

function locationAction(own: Entry[], runs: Run[], runOf: (run: Run) => DispatchRun): Location['action'] {
  const firstUnconditional = own.findIndex((c) => c.conditions.length === 0);
  const end = firstUnconditional >= 0 ? own[firstUnconditional].position : Infinity;
  const reachableRuns = runs.filter((r) => r.position < end);
  if (reachableRuns.length === 0) {
    if (own.length === 0) return { kind: 'status', code: 404 };
    if (firstUnconditional === 0) {
      const rl = own[0].ruleLocation;
      return { kind: 'proxy', source: rl.source, target: rl.target, settings: rl.settings, ...(rl.timeout ? { timeout: rl.timeout } : {}), ...(rl.grpc ? { grpc: true } : {}), ...(rl.filters ? { filters: rl.filters } : {}) };
    }
  }
  const reachable = firstUnconditional >= 0 ? own.slice(0, firstUnconditional) : own;
  const fallback = firstUnconditional >= 0 ? own[firstUnconditional].ruleLocation.name : NOT_FOUND_LOCATION;
  // Own candidates and runs of RegularExpression paths, merged in precedence order.
  const alternatives: Alternative[] = [];
  const used: DispatchRun[] = [];
  const targets = new Set<string>();
  // (No closures here: this runs once per location, and tsx names every closure it creates.)
  let r = 0;
  for (let i = 0; i <= reachable.length; i++) {
    const at = i < reachable.length ? reachable[i].position : Infinity;
    for (; r < reachableRuns.length && reachableRuns[r].position < at; r++) {
      const d = runOf(reachableRuns[r]);
      used.push(d);
      alternatives.push({ run: d.variable });
    }
    if (i === reachable.length) break;
    const c = reachable[i];
    alternatives.push({ conditions: c.conditions, target: c.ruleLocation.name });
    targets.add(c.ruleLocation.name);
  }
  if (firstUnconditional >= 0) targets.add(fallback);
  // The 404 fallback is the dispatch map's default (templates/maps.conf.hbs): left out of the composite.
  const { key, regexes, variable } = dispatchComposite(alternatives, fallback === NOT_FOUND_LOCATION ? undefined : fallback);
  // With the fields finalizeModel sets, so that a copy of it (location-memo.ts) has its shape.
  return { kind: 'dispatch', key, regexes, variable, fallback, targets: [...targets], runs: used, nginxKey: undefined, nginxFallback: undefined };
}
