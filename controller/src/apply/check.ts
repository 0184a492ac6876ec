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

/**
 * The extra files for a partial check of `next` against the live `previous` generation, or
 * undefined when nginx must read everything (first start, main file or layout changed).
 */
export function partialCheck(previous: Record<string, string> | undefined, next: Record<string, string>): { files: Record<string, string>; changed: number; total: number } | undefined {
  if (!previous) return undefined;
  const main = next[MAIN_CONF];
  const servers = next[SERVERS_CONF];
  if (main === undefined || servers === undefined || previous[MAIN_CONF] !== main || previous[SERVERS_CONF] === undefined) return undefined;
  const lines = main.split('\n').filter((l) => l.trim() === SERVERS_INCLUDE);
  if (lines.length !== 1) return undefined;
  const blocks = serverBlocks(servers);
  // Anything outside server blocks (comments aside) would go unchecked: read everything then.
  if (blocks.join('').trim() !== servers.trim()) return undefined;
  const live = new Set(serverBlocks(previous[SERVERS_CONF]));
  const changed = blocks.filter((b) => !live.has(b));
  return {
    files: {
      [CHECK_CONF]: main.replace(lines[0], lines[0].replace(SERVERS_INCLUDE, `include ${CHECK_SERVERS_CONF};`)),
      [CHECK_SERVERS_CONF]: changed.join(''),
    },
    changed: changed.length,
    total: blocks.length,
  };
}
