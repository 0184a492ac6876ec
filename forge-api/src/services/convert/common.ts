/**
 * What every record's conversion shares: timestamps are RFC 3339 with second precision as Gitea
 * writes them; "never" is the Unix epoch (Gitea's TimeStamp(0).AsTime()), and fields hidden from
 * a viewer keep Go's zero time.
 */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
export const EPOCH = '1970-01-01T00:00:00Z';

export function fmtTime(d: Date | null | undefined, ifNull = EPOCH): string {
  if (!d) return ifNull;
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export const VISIBILITY = ['public', 'limited', 'private'] as const;
export type Visibility = (typeof VISIBILITY)[number];
export function visibilityName(v: number): Visibility {
  return VISIBILITY[v] ?? 'public';
}
export function visibilityValue(name: string | undefined): number | undefined {
  if (name === undefined || name === '') return undefined;
  const i = (VISIBILITY as readonly string[]).indexOf(name);
  return i < 0 ? undefined : i;
}

/** Access modes, Gitea's perm.AccessMode. */
export const AccessMode = { None: 0, Read: 1, Write: 2, Admin: 3, Owner: 4 } as const;
