/**
 * Request conditions as 0/1 nginx variables, and per-location decision maps.
 *
 * Each distinct condition (a header, a query parameter, the method, a regex path) becomes one
 * `map` whose variable is "1" when the condition holds, "0" otherwise. A location's decision
 * map reads the concatenation of the bits its candidates use ("$c3$c7$c9") and lists the
 * candidates in precedence order as regexes over that bit string (`^1.1` = bits 1 and 3 set);
 * nginx checks regex map entries in order and the first that matches wins. nginx evaluates
 * map variables lazily and caches them per request, so a request pays only for the bits of
 * the location it reached.
 */
import type { RouteMatch } from '../graph/types';
import type { MapBlock } from './types';
import { escapeRegex, queryValueRegex } from './regex';

/** The nginx variable name suffix for a request header, or undefined when nginx cannot read it. */
export function headerVariable(name: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return undefined;
  return '$http_' + name.toLowerCase().replace(/-/g, '_');
}

/** Registry of condition variables, deduplicated by what they test. */
export class Conditions {
  private readonly byKey = new Map<string, string>();
  readonly maps: MapBlock[] = [];
  private next = 0;

  private add(source: string, regex: string, captureValue?: boolean): string {
    const key = `${source}\u0000${regex}\u0000${captureValue ? 'v' : 'b'}`;
    const found = this.byKey.get(key);
    if (found) return found;
    const variable = `$${captureValue ? 'pq' : 'pc'}_${this.next++}`;
    this.byKey.set(key, variable);
    this.maps.push(
      captureValue
        ? { source, variable, entries: [{ regex, value: '$1' }], default: '' }
        : { source, variable, entries: [{ regex, value: '1' }], default: '0' },
    );
    return variable;
  }

  method(method: string): string {
    return this.add('$request_method', `^${escapeRegex(method)}$`);
  }

  /** RegularExpression path: RE2-validated by the graph, anchored at the start of the path. */
  pathRegex(regex: string): string {
    return this.add('$uri', `^(?:${regex})`);
  }

  /** Header names are case-insensitive ($http_ lowercases them); values are compared exactly. */
  header(variable: string, type: 'Exact' | 'RegularExpression', value: string): string {
    return this.add(variable, type === 'Exact' ? `^${escapeRegex(value)}$` : value);
  }

  /**
   * Query parameter names are case-sensitive, so they are read from $args with a regex (nginx's
   * $arg_NAME ignores case). An Exact value is one regex; a RegularExpression value needs the
   * parameter's raw value first (one map capturing it) and then a test of that value, plus the
   * parameter's presence (an absent parameter must not match `.*`).
   */
  query(name: string, type: 'Exact' | 'RegularExpression', value: string): string[] {
    const n = queryValueRegex(name);
    if (type === 'Exact') return [this.add('$args', `(?:^|&)${n}=${queryValueRegex(value)}(?:&|$)`)];
    const present = this.add('$args', `(?:^|&)${n}=`);
    const raw = this.add('$args', `(?:^|&)${n}=([^&]*)`, true);
    return [present, this.add(raw, value)];
  }
}

/**
 * The condition variables one match element needs; undefined when a condition cannot be
 * expressed (the element can then never match). Only the first entry per header name
 * (case-insensitive) and per query name counts, as the Gateway API says.
 */
export function elementConditions(
  match: RouteMatch,
  conditions: Conditions,
  warn: (msg: string) => void,
): string[] | undefined {
  const vars: string[] = [];
  if (match.path.type === 'RegularExpression') vars.push(conditions.pathRegex(match.path.value));
  if (match.method) vars.push(conditions.method(match.method));
  for (const h of firstByName(match.headers, (n) => n.toLowerCase())) {
    const variable = headerVariable(h.name);
    if (!variable) {
      warn(`header name ${JSON.stringify(h.name)} cannot be read by nginx; the match element never matches`);
      return undefined;
    }
    vars.push(conditions.header(variable, h.type, h.value));
  }
  for (const q of firstByName(match.queryParams, (n) => n)) vars.push(...conditions.query(q.name, q.type, q.value));
  return vars;
}

export function firstByName<T extends { name: string }>(items: T[], key: (name: string) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item.name);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export interface DecisionCandidate {
  /** Condition variables that must all be "1". */
  conditions: string[];
  /** The named location to go to. */
  target: string;
}

/** Decision maps, deduplicated: locations with the same candidates share one variable. */
export class Decisions {
  private readonly byKey = new Map<string, string>();
  readonly maps: MapBlock[] = [];
  private next = 0;

  /** `candidates` in precedence order; the first one without conditions ends the list. */
  variable(candidates: DecisionCandidate[], fallback: string): string {
    const bits = [...new Set(candidates.flatMap((c) => c.conditions))].sort(
      (a, b) => Number(a.replace(/\D+/g, '')) - Number(b.replace(/\D+/g, '')),
    );
    const entries: MapBlock['entries'] = [];
    let otherwise = fallback;
    for (const c of candidates) {
      if (c.conditions.length === 0) {
        otherwise = c.target;
        break;
      }
      const pattern = bits.map((b) => (c.conditions.includes(b) ? '1' : '.')).join('').replace(/\.+$/, '');
      entries.push({ regex: '^' + pattern, value: c.target });
    }
    const source = bits.join('');
    const key = JSON.stringify([source, entries, otherwise]);
    const found = this.byKey.get(key);
    if (found) return found;
    const variable = `$pt_${this.next++}`;
    this.byKey.set(key, variable);
    this.maps.push({ source, variable, entries, default: otherwise });
    return variable;
  }
}
