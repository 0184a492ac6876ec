/**
 * Token scopes as Gitea has them: `<read|write>:<category>`, `all`, and the `public-only`
 * modifier. Write implies read. Stored normalized (write subsumes read; a full write set
 * collapses to `all`), comma-separated.
 */
export const SCOPE_CATEGORIES = [
  'activitypub',
  'admin',
  'misc',
  'notification',
  'organization',
  'package',
  'issue',
  'repository',
  'user',
] as const;
export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number];
export type ScopeLevel = 'read' | 'write';

export interface ScopeSet {
  all: boolean;
  publicOnly: boolean;
  /** 0 none, 1 read, 2 write per category */
  levels: Record<ScopeCategory, number>;
}

export class InvalidScopeError extends Error {}

function empty(): ScopeSet {
  const levels = Object.fromEntries(SCOPE_CATEGORIES.map((c) => [c, 0])) as Record<ScopeCategory, number>;
  return { all: false, publicOnly: false, levels };
}

/** Parses scope strings (a list, or comma-separated items); throws InvalidScopeError. */
export function parseScopes(input: string[] | string): ScopeSet {
  const items = (Array.isArray(input) ? input : [input])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const set = empty();
  for (const item of items) {
    if (item === 'all') {
      set.all = true;
      continue;
    }
    if (item === 'public-only') {
      set.publicOnly = true;
      continue;
    }
    const m = /^(read|write):([a-z]+)$/.exec(item);
    if (!m || !(SCOPE_CATEGORIES as readonly string[]).includes(m[2])) throw new InvalidScopeError(`invalid access token scope: ${item}`);
    const cat = m[2] as ScopeCategory;
    set.levels[cat] = Math.max(set.levels[cat], m[1] === 'write' ? 2 : 1);
  }
  if (SCOPE_CATEGORIES.every((c) => set.levels[c] === 2)) set.all = true;
  if (set.all) for (const c of SCOPE_CATEGORIES) set.levels[c] = 2;
  return set;
}

/** The normalized list, in Gitea's order. */
export function scopeList(set: ScopeSet): string[] {
  const out: string[] = [];
  if (set.publicOnly) out.push('public-only');
  if (set.all) {
    out.push('all');
    return out;
  }
  for (const c of SCOPE_CATEGORIES) {
    if (set.levels[c] === 2) out.push(`write:${c}`);
    else if (set.levels[c] === 1) out.push(`read:${c}`);
  }
  return out;
}

export function normalizeScopes(input: string[] | string): string {
  return scopeList(parseScopes(input)).join(',');
}

export function hasScope(set: ScopeSet, category: ScopeCategory, level: ScopeLevel): boolean {
  return set.levels[category] >= (level === 'write' ? 2 : 1);
}

/** Level a route needs, derived from its method as Gitea does. */
export function levelForMethod(method: string): ScopeLevel {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/**
 * Whether a token with `parent` may mint one with `child`: every grant of the child must be
 * held by the parent (Gitea 1.27's CanCreateChildScope). public-only is a restriction, not a
 * grant: a child may always carry it, and inherits it from a public-only parent.
 */
export function canCreateChildScope(parent: ScopeSet, child: ScopeSet): boolean {
  if (child.all && !parent.all) return false;
  return SCOPE_CATEGORIES.every((c) => child.levels[c] <= parent.levels[c]);
}
