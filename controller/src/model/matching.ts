/**
 * Request conditions without per-location nginx variables (no njs, no per-request script).
 *
 * nginx resolves variable names by a linear scan while loading the config, so a design with
 * one `map` (one variable) per location made `nginx -t` and reloads grow with the square of
 * the number of routes; an `if` per location costs a location config of every module and a
 * regex compile at each reload. Instead, a location that must look at conditions does:
 *
 *   set $pc_k "$request_method\n$http_x_a\n$args\n@rule_a\n@rule_b\nt1";  # one variable name
 *   error_page 418 = $pc_d<hash>; return 418;
 *
 * and `map $pc_k $pc_d<hash>` holds the regexes (dispatchComposite): the composite holds only
 * the fields this location's candidates read, "\n"-separated (header values and $args cannot
 * hold a raw newline), then the named locations and the values they compare with; each
 * candidate is one alternative of lookaheads that we generate (values regex-escaped, or read
 * from the composite by backreference), one per condition, each skipping to its field by
 * position. The map is named after its regexes, so every location that reads alike shares it.
 * User regexes of header and query value conditions never go into a composite: each distinct
 * one is a 0/1 `map` variable ($pc_r<N>), read as a field that must be "1". RegularExpression
 * path candidates apply to every location of a server, in the same order: each run of them is
 * one `map` per server ($pc_s<N>, entries in precedence order, value = the named location) and
 * the locations test that variable instead of repeating the run. A run's composite ends with
 * $uri itself, which its entries match the user's path regex on (test 'regex'): a map per path
 * regex made nginx clear a ~1.2 MB hash array for each at every reload (100 path regexes were
 * most of the parse of 1,000 routes on one host). Last, so the regex sees $uri from its start to
 * the subject's end, newlines included, as a map on $uri alone would.
 */
import type { RouteMatch } from '../graph/types';
import type { LocationAction, MapBlock } from './types';
import { createHash } from 'crypto';
import { contentHash } from './names';
import { escapeRegex, queryValueRegex, quotedLength } from '../graph/pcre-fragments';
import { unanchoredPcre } from '../graph/regex';

/** The one variable every dispatching location sets to its composite. */
export const DISPATCH_KEY_VARIABLE = '$pc_k';

/**
 * The field a folded path (segment or equals) is tested on: $uri itself, the last field of its
 * composite. $uri is decoded and may hold a newline: last, it shifts no other field, and its
 * tests end with \z (a "\n" in it is neither "/" nor the end). A map rewriting the newline away
 * ($uri -> "%0A") cost every dispatching request a regex and a hash key of its own (~1,100
 * nginx instructions of ~29,000 in bench:dataplane's matched request).
 */
export const URI_FIELD = '$uri';

/** One condition on one field of a composite. */
export type Condition =
  /**
   * The field's whole value equals (a regex-escaped fragment). `literal`: the value itself, when
   * a dispatch may carry it in its composite instead of its regex (see dispatchComposite).
   */
  | { field: string; test: 'equals'; fragment: string; literal?: string }
  /**
   * The field ($args) holds a parameter matching `fragment` ("name=value"), ended by & or the
   * end. `literal`: the value, when the parameter's bytes are only that value (no encodings).
   */
  | { field: string; test: 'param'; fragment: string; name: string; literal?: string }
  /** The field ($args) holds a parameter whose name matches `fragment` ("name="). */
  | { field: string; test: 'present'; fragment: string }
  /** The field is a 0/1 map variable that must be "1". */
  | { field: string; test: 'flag' }
  /**
   * The field ($uri, the composite's last) matches `fragment`, a RegularExpression path's PCRE
   * form without a leading anchor (graph/regex.ts unanchoredPcre), from the field's start.
   */
  | { field: '$uri'; test: 'regex'; fragment: string }
  /**
   * The field (URI_FIELD) starts with `fragment` (a regex-escaped path) followed by "/" or its
   * end: a PathPrefix's segment rule, in a location nginx also reaches for /xyz.
   */
  | { field: string; test: 'segment'; fragment: string; literal?: string };

/** The nginx variable for a request header, or undefined when nginx cannot read that name. */
export function headerVariable(name: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return undefined;
  return '$http_' + name.toLowerCase().replace(/-/g, '_');
}

/**
 * Maps shared by all servers: query values ($pq_), user-regex flags ($pc_r), per-server runs of
 * RegularExpression paths ($pc_s). Each variable is named after its map's content
 * (model/names.ts), so asking twice gives the same block, in this build or any other.
 */
export class ConditionMaps {
  private readonly byVariable = new Map<string, MapBlock>();
  readonly maps: MapBlock[] = [];
  /** Where the blocks used are noted too, while a part of the model is recorded (model/uses.ts). */
  sink?: { maps: MapBlock[] };

  /** Registers `block` unless its variable is (the same content, by its name); returns the variable. */
  use(block: MapBlock): string {
    if (!this.byVariable.has(block.variable)) {
      this.byVariable.set(block.variable, block);
      this.maps.push(block);
    }
    const sink = this.sink?.maps;
    if (sink && sink[sink.length - 1] !== block) sink.push(block);
    return block.variable;
  }

  /** The block of `variable` from this build, else made and registered. */
  private named(variable: string, make: () => MapBlock): string {
    return this.use(this.byVariable.get(variable) ?? make());
  }

  /** $pq_<hash>: the raw value of query parameter `name` (empty when absent). */
  queryValue(name: string): string {
    const v = `$pq_${contentHash(`q\u0000${name}`)}`;
    return this.named(v, () => ({ source: '$args', variable: v, entries: [{ regex: `(?:^|&)${queryValueRegex(name)}=([^&]*)`, value: '$1' }], default: '' }));
  }

  /**
   * $pc_s<hash>: the named location of the first of a server's RegularExpression-path
   * candidates (a run, in precedence order) that matches, "" when none does. Named after what
   * it stands for, the run `role` of the server `scope` (its hostname key, and which run of
   * that key), not after its entries: a run that takes one more route keeps its name, so the
   * locations reading it do not change. The server's locations are built with the run (a kept
   * server brings its block along: model/uses.ts), so one build never holds two runs of one name.
   */
  run(candidates: { conditions: Condition[]; target: string }[], scope: string, role: string): string {
    const v = `$pc_s${contentHash(`s\u0000${scope}\u0000${role}`)}`;
    return this.named(v, () => {
      const { key, regexes } = composite(candidates.map((c) => c.conditions));
      return { source: key, variable: v, entries: regexes.map((regex, i) => ({ regex, value: candidates[i].target })), default: '' };
    });
  }

  /** $pc_r<hash>: "1" when `source` matches the (user) regex. nginx never tries it on an empty value. */
  flag(source: string, regex: string): string {
    const v = `$pc_r${contentHash(`r\u0000${source}\u0000${regex}`)}`;
    return this.named(v, () => ({ source, variable: v, entries: [{ regex, value: '1' }], default: '0' }));
  }
}

export function firstByName<T extends { name: string }>(items: T[], key: (name: string) => string): T[] {
  if (items.length < 2) return items;
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item.name);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * The conditions of one match element ([] = none beyond its path location); undefined when a
 * condition cannot be expressed (the element then never matches). Only the first entry per
 * header name (case-insensitive) and per query name counts, as the Gateway API says.
 */
export function elementConditions(match: RouteMatch, maps: ConditionMaps, warn: (msg: string) => void): Condition[] | undefined {
  const out: Condition[] = [];
  if (match.path.type === 'RegularExpression') {
    const unanchored = unanchoredPcre(match.path.value);
    if (unanchored !== undefined) out.push({ field: '$uri', test: 'regex', fragment: unanchored });
    else out.push({ field: maps.flag('$uri', `^(?:${match.path.value})`), test: 'flag' });
  }
  if (match.method) out.push({ field: '$request_method', test: 'equals', fragment: escapeRegex(match.method) });
  for (const h of firstByName(match.headers, (n) => n.toLowerCase())) {
    const variable = headerVariable(h.name);
    if (!variable) {
      warn(`header name ${JSON.stringify(h.name)} cannot be read by nginx; the match element never matches`);
      return undefined;
    }
    if (h.type === 'Exact') out.push({ field: variable, test: 'equals', fragment: escapeRegex(h.value), literal: h.value });
    else out.push({ field: maps.flag(variable, h.value), test: 'flag' });
  }
  for (const q of firstByName(match.queryParams, (n) => n)) {
    const name = queryValueRegex(q.name);
    if (q.type === 'Exact') {
      const value = queryValueRegex(q.value);
      // Only a value of letters and digits has no other spelling in a raw query string.
      out.push({ field: '$args', test: 'param', name, fragment: `${name}=${value}`, ...(value === q.value ? { literal: q.value } : {}) });
    }
    else {
      out.push({ field: '$args', test: 'present', fragment: `${name}=` });
      out.push({ field: maps.flag(maps.queryValue(q.name), q.value), test: 'flag' });
    }
  }
  // The regex and the other values bound each other only apart (graph/rules.ts): together in one
  // run map entry they may exceed what nginx reads as one parameter; then the regex is a flag.
  if (out[0]?.test === 'regex' && !fitsRunEntry(out)) out[0] = { field: maps.flag('$uri', `^(?:${match.path.value})`), test: 'flag' };
  // An exact-size copy: the model memo keeps every candidate's conditions for as long as its
  // route is unchanged, and an array grown by push keeps room for 17 (~190 bytes for two).
  return out.slice();
}

/**
 * Whether a run map entry of these conditions fits MAX_REGEX_TEXT as written, whatever the
 * fields' positions in the run's composite: each lookahead is measured skipping 2 fields, plus 4
 * bytes for a position of up to 5 digits.
 */
function fitsRunEntry(conditions: Condition[]): boolean {
  let n = 4;
  for (const c of conditions) n += quotedLength(lookahead(c, 2, c.test === 'regex')) + 4;
  return n <= MAX_REGEX_TEXT;
}

/**
 * Any character of a field is `.`, not `[^\\n]`: nginx's PCRE2 `.` matches all but a newline (a
 * carriage return too: graph-regex-nginx.test.ts), and nginx compiles every dispatch regex at
 * each reload, where their text was ~30 % of the parse (1,000 routes on one host); `.` keeps
 * ~13 % of the config's bytes out of the tokenizer and PCRE's compiler (nginx -t 52 -> 48 ms).
 */
const SKIP = ['', '.*\\n'];
/** A regex fragment skipping the first `i` fields. */
function skip(i: number): string {
  if (SKIP[i] === undefined) SKIP[i] = `(?:.*\\n){${i}}`;
  return SKIP[i];
}

/**
 * The lookahead testing `c` on field `i`. `ref`: a backreference (\g{N}) to the group holding
 * the condition's literal, read from the composite, instead of the value in the regex.
 */
function lookahead(c: Condition, i: number, last: boolean, ref?: string): string {
  const end = !last ? '\\n' : c.field === URI_FIELD ? '\\z' : '$';
  switch (c.test) {
    case 'equals':
      return `(?=${skip(i)}${ref ?? c.fragment}${end})`;
    case 'flag':
      return `(?=${skip(i)}1${end})`;
    case 'param':
      // The first parameter of that name decides (the Gateway API's recommendation, and what
      // the $pq_N maps of RegularExpression values read): skip only parameters of other names.
      return `(?=${skip(i)}(?:(?!${c.name}=)[^&\\n]*&)*${ref ? `${c.name}=${ref}` : c.fragment}(?:&|${end}))`;
    case 'present':
      return `(?=${skip(i)}(?:.*&)?${c.fragment})`;
    case 'segment':
      return `(?=${skip(i)}${ref ?? c.fragment}(?:/|${end}))`;
    case 'regex':
      if (!last) throw new Error('a regex on $uri is tested only as the last field of a composite');
      return `(?=${skip(i)}(?:${c.fragment}))`;
  }
}

/**
 * The composite for candidates (each a non-empty condition list, in order): the "\n"-joined
 * fields they read and one regex per candidate.
 */
export function composite(candidates: Condition[][]): { key: string; regexes: string[] } {
  const index = new Map<string, number>();
  let uri = false;
  for (const conditions of candidates) for (const c of conditions) {
    if (c.field === URI_FIELD) uri = true;
    else if (!index.has(c.field)) index.set(c.field, index.size);
  }
  // $uri may hold a newline (it is decoded): last, where it shifts no other field.
  if (uri) index.set('$uri', index.size);
  const lastIndex = index.size - 1;
  const regexes = candidates.map((conditions) => {
    let r = '^';
    let path: Condition | undefined;
    for (const c of conditions) {
      if (c.test === 'regex') path = c;
      else {
        const i = index.get(c.field)!;
        r += lookahead(c, i, i === lastIndex);
      }
    }
    // The user's regex last: the other tests are cheaper and usually decide.
    return path ? r + lookahead(path, lastIndex, true) : r;
  });
  return { key: [...index.keys()].join('\n'), regexes };
}

/** Alternatives per dispatch regex (each ~100-300 bytes of compiled pattern). */
export const MAX_ALTERNATIVES = 40;

/**
 * Bytes of alternatives per dispatch regex as written in the config (nginx refuses a token
 * longer than its 4,096-byte read buffer; the rest is for the quotes, "~^(?|" and ")").
 */
export const MAX_REGEX_TEXT = 3800;
/** Bytes of condition values a composite carries (the rest of its 4 KB: fields and location names). */
export const MAX_KEY_LITERAL_BYTES = 2048;

/**
 * A bound on a dispatch regex's compiled size (bytes): PCRE2 links with 16-bit offsets (64 KB)
 * and compiles a group repeated {n} times as n copies, so skipping to field 150 costs ~1.5 KB
 * (a location with many candidates has that many fields: values, then names).
 */
export const MAX_COMPILED = 40000;

/** An over-estimate of an alternative's compiled size: ~12 bytes per skipped field, 2 per other byte. */
function compiledSize(branch: string): number {
  let n = 2 * branch.length;
  for (let i = branch.indexOf('){'); i >= 0; i = branch.indexOf('){', i + 2)) n += 12 * parseInt(branch.slice(i + 2), 10);
  return n;
}

/** The length of `text` as a quoted nginx string's contents (a backslash or quote doubles). */
/** One alternative of a location's dispatch, in precedence order. */
export type Alternative = { conditions: Condition[]; target: string } | { run: string };

/**
 * A condition's value as a field of the composite, or undefined when it stays in the regex: a
 * field is a literal part of an nginx string between "\n"s, so it holds no "\n" and no "$"
 * (nginx would read a variable), and does not start with "@" (fields starting with "@" are
 * named locations: finalizeModel renames shared ones).
 */
function keyLiteral(c: Condition): string | undefined {
  if (c.test !== 'equals' && c.test !== 'param' && c.test !== 'segment') return undefined;
  const v = c.literal;
  if (v === undefined || v.charCodeAt(0) === 64 || v.indexOf('$') >= 0 || v.indexOf('\n') >= 0) return undefined;
  return v;
}

/** The dispatch map variable named after its regexes (see DispatchMap). */
function dispatchVariable(regexes: string[]): string {
  return '$pc_d' + createHash('sha256').update(regexes.join('\n')).digest('hex').slice(0, 20);
}

/**
 * A location's whole dispatch as a `map` of the composite to the named location to go to, with
 * no `if` (each `if` costs nginx a location config, ~15 KB, when it loads) and no regex of its
 * own: the map's variable is named after its regexes, so every location whose dispatch reads
 * the same way, in any server, shares one map and nginx compiles its regexes once.
 *
 * The composite holds the fields the alternatives read, then the names of the named locations
 * they go to (and the fallback's) and the values their conditions compare with (paths, header
 * and query values: see keyLiteral), in that order for one alternative, values first for
 * several, and, last, $uri when a folded path is tested (URI_FIELD). The regex is a
 * branch-reset alternation `^(?|A1|A2...|F)` (PCRE tries alternatives in order, so the first
 * that holds wins) whose alternatives capture their target's name from the composite as $1:
 * each reads its name (group 1) and values first (a lone alternative in one lookahead that goes
 * on to test $uri), then walks the request fields once, in order, testing each where it starts
 * (an equality steps over its field as it matches), a value from the composite by
 * backreference. Each test skipping from the composite's start again read ~2.3 times its bytes
 * per request (bench:dataplane's matched request: ~2,500 instructions of JIT code; ~1,100 in
 * one walk). A run's alternative captures
 * its map's value when not empty; F, last, captures the fallback. A fallback undefined is the
 * map's own default (the 404 location): no F and no name in the composite, whose every byte
 * nginx copies per request, and the regexes then fail to the default. So the regex depends
 * on the shape of the candidates (which fields, which tests, in which order), not on their
 * paths and values: the one-host benchmark's ~1,000 dispatching locations read 6 maps.
 */
export function dispatchComposite(alternatives: Alternative[], fallback: string | undefined): { key: string; regexes: string[]; variable: string } {
  const index = new Map<string, number>();
  let uri = false;
  for (const a of alternatives) {
    if ('run' in a) {
      if (!index.has(a.run)) index.set(a.run, index.size);
    } else {
      for (const c of a.conditions) {
        if (c.field === URI_FIELD) uri = true;
        else if (!index.has(c.field)) index.set(c.field, index.size);
      }
    }
  }
  // One alternative: the names before the values, so that one lookahead reads the name (group
  // 1), the values and goes on to test $uri, the field after them. Several: the values before the
  // names, so that an alternative failing on a request field has skipped only the (short) values
  // before it, not every alternative's name (at 100 alternatives on one path, reading the names
  // first made a request for the last one cost ~35 % more than the values first).
  const namesFirst = alternatives.length === 1;
  const names = new Map<string, number>();
  const literals = new Map<string, number>();
  const addNames = (at: number) => {
    for (const a of alternatives) if (!('run' in a) && !names.has(a.target)) names.set(a.target, at + names.size);
    if (fallback !== undefined && !names.has(fallback)) names.set(fallback, at + names.size);
  };
  if (namesFirst) addNames(index.size);
  // The composite is one nginx parameter (at most 4 KB): values beyond MAX_KEY_LITERAL_BYTES stay
  // in the regex instead (each match's values fit there: graph/rules.ts bounds them).
  const valuesAt = index.size + names.size;
  let literalBytes = 0;
  for (const a of alternatives) {
    if ('run' in a) continue;
    for (const c of a.conditions) {
      const v = keyLiteral(c);
      if (v === undefined || literals.has(v)) continue;
      const bytes = quotedLength(v) + 2;
      if (literalBytes + bytes > MAX_KEY_LITERAL_BYTES) continue;
      literalBytes += bytes;
      literals.set(v, valuesAt + literals.size);
    }
  }
  if (!namesFirst) addNames(index.size + literals.size);
  /** The field of the composite carrying the value `c` compares with, if it does. */
  const literalField = (c: Condition): number | undefined => {
    const v = keyLiteral(c);
    return v === undefined ? undefined : literals.get(v);
  };
  // $uri after everything (see URI_FIELD).
  const lastIndex = index.size + literals.size + names.size - (uri ? 0 : 1);
  if (uri) index.set(URI_FIELD, lastIndex);
  const branches = alternatives.map((a) => {
    if ('run' in a) return `${skip(index.get(a.run)!)}(.+)`;
    const target = names.get(a.target)!;
    // The fields of the values this alternative compares with, in order: groups 2, 3...
    const fields = [...new Set(a.conditions.map(literalField).filter((f): f is number => f !== undefined))].sort((x, y) => x - y);
    const conditions = a.conditions.map((c, order) => ({ c, i: index.get(c.field)!, order }));
    // The tests walk the composite once, in field order, each field's tests as lookaheads at its
    // start (the user's regex on $uri after the cheaper tests there), instead of each test
    // skipping from the start again. A backreference needs its group set first: the name
    // (group 1) and the values are read before the walk, the name read on the way instead when
    // nothing is compared after it.
    conditions.sort((x, y) => x.i - y.i || Number(x.c.test === 'regex') - Number(y.c.test === 'regex') || x.order - y.order);
    const groups = new Map<number, number>();
    const ref = (c: Condition): string | undefined => {
      const f = literalField(c);
      return f === undefined ? undefined : `\\g{${groups.get(f)}}`;
    };
    /** Captures of the values from field `at`, where the lookahead stands after a field it read. */
    const values = (at: number | undefined): string => {
      let out = '';
      for (const f of fields) {
        out += at === undefined ? `${skip(f)}(.*)` : `\\n${skip(f - at - 1)}(.*)`;
        groups.set(f, groups.size + 2);
        at = f;
      }
      return out;
    };
    const tail = conditions.filter((x) => x.i > target);
    const ahead = fields.length > 0 || tail.length > 0;
    let r = '';
    if (ahead && namesFirst) {
      r = `(?=${skip(target)}(.*)${values(target)}`;
      if (tail.length > 0) r += `\\n${skip(lastIndex - (fields.length > 0 ? fields[fields.length - 1] : target) - 1)}`;
      for (const { c } of tail) r += lookahead(c, 0, true, ref(c));
      r += ')';
    } else if (ahead) {
      r = `(?=${skip(target)}(.*))`;
      if (fields.length > 0) r += `(?=${values(undefined)})`;
    }
    let pos = 0;
    conditions.filter((x) => !namesFirst || x.i < target).forEach(({ c, i }, k, walk) => {
      if (i > pos) {
        r += skip(i - pos);
        pos = i;
      }
      const value = ref(c);
      // A field's only test, an equality, steps over the field as it matches.
      if (c.test === 'equals' && i !== lastIndex && walk[k + 1]?.i !== i) {
        r += `${value ?? c.fragment}\\n`;
        pos = i + 1;
      } else r += lookahead(c, 0, i === lastIndex, value);
    });
    return ahead ? r : `${r}${skip(target - pos)}(.*)`;
  });
  if (fallback !== undefined) branches.push(`${skip(names.get(fallback)!)}(.*)`);
  // PCRE's compiled patterns are limited (64 KB with the default link size), and nginx reads a
  // token of at most 4 KB of config text: at most MAX_ALTERNATIVES and MAX_REGEX_TEXT bytes (as
  // quoted) per regex, the next ones in a following entry of the same map.
  const regexes: string[] = [];
  let chunk: string[] = [];
  let size = 0;
  let compiled = 0;
  for (const b of branches) {
    const bytes = quotedLength(b) + 1;
    const code = compiledSize(b);
    if (chunk.length > 0 && (chunk.length === MAX_ALTERNATIVES || size + bytes > MAX_REGEX_TEXT || compiled + code > MAX_COMPILED)) {
      regexes.push(`^(?|${chunk.join('|')})`);
      chunk = [];
      size = 0;
      compiled = 0;
    }
    chunk.push(b);
    size += bytes;
    compiled += code;
  }
  regexes.push(`^(?|${chunk.join('|')})`);
  const fields = [...index.keys()].filter((f) => f !== URI_FIELD);
  const middle = namesFirst ? [...names.keys(), ...literals.keys()] : [...literals.keys(), ...names.keys()];
  return { key: [...fields, ...middle, ...(uri ? [URI_FIELD] : [])].join('\n'), regexes, variable: dispatchVariable(regexes) };
}

/** Every named location a location may send requests to (its own steps, fallback and runs). */
export function dispatchTargets(action: LocationAction): string[] {
  if (action.kind !== 'dispatch') return [];
  if (action.runs.length === 0) return action.targets;
  const out = new Set(action.targets);
  for (const r of action.runs) for (const t of r.targets) out.add(t);
  return [...out];
}
