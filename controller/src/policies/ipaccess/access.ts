/**
 * An allow/deny pair as one nginx geo block: each network maps to 1 (refused) or 0 (served), the
 * default to 1 when `allow` is set. geo picks the most specific network holding the address, which
 * is the policy's rule. The variable is named by a hash of the block's content, so every location
 * with the same lists reads one block, and a block stands for exactly its entries.
 */
import { createHash } from 'crypto';
import { contains, parseNetwork } from '../../resources/policies';
import type { LocationIpAccess } from '../types';

export interface AccessGeo {
  /** `$pc_ip_<hash>`: "1" when the client is refused. */
  variable: string;
  /** Refused unless listed (allow is set). */
  refuseByDefault: boolean;
  /** Canonical networks (host bits cleared), a network in both lists refused. */
  entries: { network: string; refuse: boolean }[];
}

const geos = new WeakMap<LocationIpAccess, AccessGeo>();

export function accessGeo(access: LocationIpAccess): AccessGeo {
  let g = geos.get(access);
  if (g) return g;
  const refuse = new Map<string, boolean>();
  for (const n of access.allow ?? []) refuse.set(n, false);
  for (const n of access.deny ?? []) refuse.set(n, true);
  const entries = [...refuse].map(([network, r]) => ({ network, refuse: r })).sort((a, b) => (a.network < b.network ? -1 : a.network > b.network ? 1 : 0));
  const refuseByDefault = access.allow !== undefined;
  const hash = createHash('sha256')
    .update(JSON.stringify([refuseByDefault, entries.map((e) => [e.network, e.refuse])]))
    .digest('hex')
    .slice(0, 12);
  g = { variable: `$pc_ip_${hash}`, refuseByDefault, entries };
  geos.set(access, g);
  return g;
}

/**
 * The policy's rule for one address, as nginx's geo (and, for stream servers, the sorted
 * allow/deny lines) decides it: the unit tests compare the two.
 */
export function accessDecision(access: LocationIpAccess, address: string): 'served' | 'refused' {
  const a = parseNetwork(address);
  let best: { prefix: number; refuse: boolean } | undefined;
  for (const e of accessGeo(access).entries) {
    const n = parseNetwork(e.network);
    if (!contains(n, a)) continue;
    if (!best || n.prefix > best.prefix) best = { prefix: n.prefix, refuse: e.refuse };
  }
  const refused = best ? best.refuse : access.allow !== undefined;
  return refused ? 'refused' : 'served';
}

export interface AccessLines {
  /** Most specific network first: nginx's allow/deny take the first line that holds the address. */
  rules: { network: string; refuse: boolean }[];
  /** `deny all;` after the rules (allow is set). */
  refuseByDefault: boolean;
}

/**
 * The same decision as allow/deny lines of nginx's stream access module (a stream server has no
 * conditional to act on a geo variable): networks ordered by prefix length, longest first, so
 * the first line holding an address is its most specific listed network (two different networks
 * of one length never overlap).
 */
export function accessLines(access: LocationIpAccess): AccessLines {
  const geo = accessGeo(access);
  const prefix = (n: string) => Number(n.slice(n.indexOf('/') + 1));
  const rules = [...geo.entries].sort((a, b) => prefix(b.network) - prefix(a.network) || (a.network < b.network ? -1 : a.network > b.network ? 1 : 0));
  return { rules, refuseByDefault: geo.refuseByDefault };
}
