/**
 * What `nginx -t` needs to read for a new generation.
 *
 * nginx parses the whole config for `nginx -t` and again for the reload: at 1,000 routes each
 * parse is ~50 ms, most of it server blocks. A server block byte-identical to one of the live
 * generation already passed `nginx -t` and serves; so when only server blocks changed, the
 * check reads the main file (http level, maps, upstreams, zones, the status server) with only
 * the new and changed server blocks. What depends on several servers at once (a second default
 * server on a port, conflicting listen options) is checked by the reload itself: a reload nginx
 * refuses leaves the old workers serving, and apply() reports it like a failed check.
 *
 * The same holds one level down, for the common case of many routes on one host (one server
 * block of thousands of locations): a changed server whose own directives (listen, server_name,
 * settings) are those of a live server is checked with only its locations that the live one
 * does not have. A location is checked in its own right (its directives, regexes, variables;
 * named locations are looked up when a request needs them, not at load); what only the whole
 * server shows (two locations with one path) is left to the reload, as across servers.
 */
import { MAIN_CONF } from '../render';

/** The line of the main file that includes every server block. */
export const SERVERS_INCLUDE = 'include servers.conf;';
export const SERVERS_CONF = 'servers.conf';
/** Written next to the generation's files; read only by `nginx -t`. */
export const CHECK_CONF = 'check.conf';
export const CHECK_SERVERS_CONF = 'check-servers.conf';

/** Top-level `server {` blocks of a rendered servers.conf, each with the text up to the next. */
export function serverBlocks(text: string): string[] {
  return text.split(/^(?=server \{$)/m).filter((b) => /^server \{$/m.test(b));
}

/** A server block's own directives (and blocks other than locations) and its location blocks. */
export interface ServerParts {
  head: string;
  locations: string[];
}

/** An item that is a location block, after any blank lines and comments before it. */
const LOCATION_ITEM = /^(?:\s*#[^\n]*\n)*\s*location[\s"'@=~^]/;
/** What the scanner stops at: quotes, braces, semicolons, comments. */
const SPECIAL = /["'{};#]/g;

/**
 * Splits a rendered `server { ... }` block into its top-level items, or undefined when its text
 * is not one balanced block. Quoted strings (with backslash escapes) and comments are skipped as
 * nginx's own reader does (a `#` starts a comment only where a token starts), so braces inside
 * regexes do not count. Each item keeps the text before it (indent, blank lines, comments).
 */
export function splitServer(block: string): ServerParts | undefined {
  const open = block.indexOf('{');
  if (open < 0 || !/^server\s*$/.test(block.slice(0, open))) return undefined;
  let head = block.slice(0, open + 1);
  const locations: string[] = [];
  let depth = 1;
  let start = open + 1;
  const item = (end: number) => {
    const text = block.slice(start, end);
    if (LOCATION_ITEM.test(text)) locations.push(text);
    else head += text;
    start = end;
  };
  const re = new RegExp(SPECIAL.source, 'g');
  re.lastIndex = open + 1;
  for (let m = re.exec(block); m; m = re.exec(block)) {
    const i = m.index;
    const c = block[i];
    if (c === '"' || c === "'") {
      let j = i + 1;
      for (;;) {
        j = block.indexOf(c, j);
        if (j < 0) return undefined;
        let slashes = 0;
        while (block[j - 1 - slashes] === '\\') slashes++;
        if (slashes % 2 === 0) break;
        j++;
      }
      re.lastIndex = j + 1;
    } else if (c === '#') {
      if (i > 0 && !/[\s;{}]/.test(block[i - 1])) continue;
      const eol = block.indexOf('\n', i);
      if (eol < 0) return undefined;
      re.lastIndex = eol + 1;
    } else if (c === '{') {
      depth++;
    } else if (c === '}') {
      depth--;
      if (depth === 0) {
        head += block.slice(start);
        return { head, locations };
      }
      if (depth === 1) item(i + 1);
    } else if (depth === 1) {
      item(i + 1);
    }
  }
  return undefined;
}

/** Servers smaller than this are checked whole: nginx reads them faster than they are split. */
export const SPLIT_MIN_BYTES = 32 * 1024;

/** The splits of the server blocks the last partial check computed (keyed by block text). */
let lastSplits = new Map<string, ServerParts | undefined>();

/**
 * What of server block `block` nginx must read, given the live generation's servers by head:
 * the whole block, or (head unchanged) only the locations the live server lacks.
 */
function checkedPart(parts: ServerParts | undefined, block: string, live: Map<string, Set<string>>): { text: string; locations?: number } {
  const liveLocations = parts && live.get(parts.head);
  if (!parts || !liveLocations) return { text: block };
  const fresh = parts.locations.filter((l) => !liveLocations.has(l));
  // The head ends with "}" and what follows it; the new locations go before that brace.
  const close = parts.head.lastIndexOf('}');
  return { text: parts.head.slice(0, close) + fresh.join('') + '\n' + parts.head.slice(close), locations: fresh.length };
}

/**
 * The extra files for a partial check of `next` against the live `previous` generation, or
 * undefined when nginx must read everything (first start, main file or layout changed).
 */
export function partialCheck(
  previous: Record<string, string> | undefined,
  next: Record<string, string>,
  splitMinBytes = SPLIT_MIN_BYTES,
): { files: Record<string, string>; changed: number; total: number; newLocations?: number } | undefined {
  if (!previous) return undefined;
  const main = next[MAIN_CONF];
  const servers = next[SERVERS_CONF];
  if (main === undefined || servers === undefined || previous[MAIN_CONF] !== main || previous[SERVERS_CONF] === undefined) return undefined;
  const lines = main.split('\n').filter((l) => l.trim() === SERVERS_INCLUDE);
  if (lines.length !== 1) return undefined;
  const blocks = serverBlocks(servers);
  // Anything outside server blocks (comments aside) would go unchecked: read everything then.
  if (blocks.join('').trim() !== servers.trim()) return undefined;
  const liveBlocks = serverBlocks(previous[SERVERS_CONF]);
  const live = new Set(liveBlocks);
  const changed = blocks.filter((b) => !live.has(b));
  // Live servers by head, split only when some changed server may be checked in part. The
  // changed blocks' splits are kept: when this generation goes live they are the live ones.
  const splits = new Map<string, ServerParts | undefined>();
  const split = (b: string) => {
    if (!splits.has(b)) splits.set(b, lastSplits.has(b) ? lastSplits.get(b) : splitServer(b));
    return splits.get(b);
  };
  const liveByHead = new Map<string, Set<string>>();
  if (changed.some((b) => b.length >= splitMinBytes)) {
    for (const b of liveBlocks) {
      if (b.length < splitMinBytes) continue;
      const parts = split(b);
      if (parts && !liveByHead.has(parts.head)) liveByHead.set(parts.head, new Set(parts.locations));
    }
  }
  const checked = changed.map((b) => (b.length >= splitMinBytes ? checkedPart(split(b), b, liveByHead) : { text: b, locations: undefined }));
  lastSplits = new Map([...splits].filter(([b]) => changed.includes(b)));
  return {
    files: {
      [CHECK_CONF]: main.replace(lines[0], lines[0].replace(SERVERS_INCLUDE, `include ${CHECK_SERVERS_CONF};`)),
      [CHECK_SERVERS_CONF]: checked.map((c) => c.text).join(''),
    },
    changed: changed.length,
    total: blocks.length,
    // Locations checked of the servers checked in part (undefined: every changed server whole).
    newLocations: checked.some((c) => c.locations !== undefined) ? checked.reduce((sum, c) => sum + (c.locations ?? 0), 0) : undefined,
  };
}
