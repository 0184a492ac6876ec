/**
 * Request conditions as chains of nginx `map`s (no njs, no per-request script).
 *
 * A match element becomes a list of links; each link is one regex over one nginx value:
 *   - all its exact conditions together (method, Exact headers, Exact query params) as ONE
 *     regex over "$request_method\n$http_a\n$args" (the values cannot contain a newline, so
 *     "\n" separates them exactly; query params are lookaheads, in any order);
 *   - each RegularExpression condition (path on $uri, header, query value) as its own link.
 * A location's candidates, in precedence order, become a decision chain: the map of a link
 * yields the next link's variable when its regex matches, else the next candidate's first
 * link; the last link of a candidate yields its rule's named location. nginx evaluates map
 * variables lazily, so a request pays one regex per link it walks, and a request that matches
 * the first candidate with only exact conditions pays exactly one regex.
 */
import type { RouteMatch } from '../graph/types';
import type { MapBlock } from './types';
import { escapeRegex, queryValueRegex } from './regex';

/** One regex over one nginx value (a variable or a "\n"-joined concatenation of variables). */
export interface Link {
  source: string;
  regex: string;
}

/** The nginx variable for a request header, or undefined when nginx cannot read that name. */
export function headerVariable(name: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return undefined;
  return '$http_' + name.toLowerCase().replace(/-/g, '_');
}

/** A regex for "query parameter `name` is present with a raw value matching `value`", anchored where $args starts. */
function queryLookahead(name: string, value: string): string {
  return `(?=(?:[^\\n]*&)?${queryValueRegex(name)}=${queryValueRegex(value)}(?:&|$))`;
}

/** Maps that extract a query parameter's raw value ($1), for RegularExpression query matches. */
export class QueryValues {
  private readonly byName = new Map<string, string>();
  readonly maps: MapBlock[] = [];

  variable(name: string): string {
    let v = this.byName.get(name);
    if (!v) {
      v = `$pq_${this.byName.size}`;
      this.byName.set(name, v);
      this.maps.push({ source: '$args', variable: v, entries: [{ regex: `(?:^|&)${queryValueRegex(name)}=([^&]*)`, value: '$1' }], default: '' });
    }
    return v;
  }
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

/**
 * The links of one match element ([] = no condition beyond its path location); undefined when
 * a condition cannot be expressed (the element then never matches). Only the first entry per
 * header name (case-insensitive) and per query name counts, as the Gateway API says.
 */
export function elementLinks(match: RouteMatch, queryValues: QueryValues, warn: (msg: string) => void): Link[] | undefined {
  const sources: string[] = [];
  const parts: string[] = [];
  const links: Link[] = [];
  if (match.method) {
    sources.push('$request_method');
    parts.push(escapeRegex(match.method));
  }
  if (match.path.type === 'RegularExpression') links.push({ source: '$uri', regex: `^(?:${match.path.value})` });
  for (const h of firstByName(match.headers, (n) => n.toLowerCase())) {
    const variable = headerVariable(h.name);
    if (!variable) {
      warn(`header name ${JSON.stringify(h.name)} cannot be read by nginx; the match element never matches`);
      return undefined;
    }
    if (h.type === 'Exact') {
      sources.push(variable);
      parts.push(escapeRegex(h.value));
    } else links.push({ source: variable, regex: h.value });
  }
  const lookaheads: string[] = [];
  for (const q of firstByName(match.queryParams, (n) => n)) {
    if (q.type === 'Exact') lookaheads.push(queryLookahead(q.name, q.value));
    else {
      links.push({ source: '$args', regex: `(?:^|&)${queryValueRegex(q.name)}=` });
      links.push({ source: queryValues.variable(q.name), regex: q.value });
    }
  }
  if (lookaheads.length) sources.push('$args');
  if (sources.length === 0) return links;
  // "^GET\nv2$" or "^GET\nv2\n(?=...)": each exact part ends at a separator or at the end.
  const exact = '^' + parts.join('\\n') + (lookaheads.length ? (parts.length ? '\\n' : '') + lookaheads.join('') : '$');
  return [{ source: sources.join('\n'), regex: exact }, ...links];
}

/**
 * What a shared block yields when none of its candidates matched. Not empty: nginx never tries
 * a map's regexes on an empty value (it goes straight to the default).
 */
const NO_MATCH = '-';

export interface DecisionCandidate {
  links: Link[];
  /** The named location to go to. */
  target: string;
  /**
   * RegularExpression path elements apply to every location of a server, in the same order:
   * a run of them is built once per server (falling back to NO_MATCH) and each location only adds a
   * gate map ("" -> go on with my own candidates), instead of a copy per location.
   */
  shared?: boolean;
}

/**
 * Decision chains, built from the last candidate backwards so locations whose candidate lists
 * end the same way share their maps.
 */
export class Decisions {
  private readonly byKey = new Map<string, string>();
  readonly maps: MapBlock[] = [];

  /** Returns what the location dispatches to: a chain variable, or a named location directly. */
  head(candidates: DecisionCandidate[], fallback: string): string {
    const firstUnconditional = candidates.findIndex((c) => c.links.length === 0);
    const reachable = firstUnconditional >= 0 ? candidates.slice(0, firstUnconditional + 1) : candidates;
    let next = fallback;
    let i = reachable.length - 1;
    while (i >= 0) {
      const c = reachable[i];
      if (c.links.length === 0) {
        next = c.target;
        i--;
        continue;
      }
      if (c.shared) {
        let start = i;
        while (start > 0 && reachable[start - 1].shared && reachable[start - 1].links.length > 0) start--;
        const block = this.chain(reachable.slice(start, i + 1), NO_MATCH);
        next = this.gate(block, next);
        i = start - 1;
        continue;
      }
      next = this.chain([c], next);
      i--;
    }
    return next;
  }

  /** Candidates in order, each a chain of links, falling back to `otherwise`. */
  private chain(candidates: DecisionCandidate[], otherwise: string): string {
    let next = otherwise;
    for (let i = candidates.length - 1; i >= 0; i--) {
      const c = candidates[i];
      const fallback = next;
      let value = c.target;
      for (let j = c.links.length - 1; j >= 0; j--) value = this.link(c.links[j], value, fallback);
      next = value;
    }
    return next;
  }

  /** NO_MATCH from a shared block means "none of them matched": go on with `next`. */
  private gate(block: string, next: string): string {
    return this.map(block, `^${NO_MATCH}$`, next, block);
  }

  private link(link: Link, onMatch: string, otherwise: string): string {
    return this.map(link.source, link.regex, onMatch, otherwise);
  }

  private map(source: string, regex: string, onMatch: string, otherwise: string): string {
    const key = `${source}\u0000${regex}\u0000${onMatch}\u0000${otherwise}`;
    const found = this.byKey.get(key);
    if (found) return found;
    const variable = `$pd_${this.maps.length}`;
    this.byKey.set(key, variable);
    this.maps.push({ source, variable, entries: [{ regex, value: onMatch }], default: otherwise });
    return variable;
  }
}
