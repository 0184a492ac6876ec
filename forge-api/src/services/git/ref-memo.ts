/**
 * Answers computed from a repository's refs (for-each-ref listings), kept until a ref changes.
 *
 * Spawning git from a large Node process costs several milliseconds of CPU (the fork copies the
 * page tables), more than a ref listing itself; lists of refs, branches and the ref look-ups of
 * /raw are asked for far more often than refs change. So a listing is kept with a signature of
 * the ref store, checked on every use with a few stat calls:
 * - packed-refs (inode, size, mtime): git rewrites it through a lock file and a rename;
 * - the mtime of every folder under refs/: git writes a loose ref as `<name>.lock` renamed onto
 *   `<name>`, and deletes it by unlinking, so every ref change, whoever makes it (a push, the
 *   forge's update-ref, a `git gc` packing refs), changes its folder's mtime.
 * File systems keep mtimes in coarse ticks: two changes in one tick leave the same mtime, so a
 * signature younger than RACY_MS is not trusted (git's "racily clean" rule for its index).
 * Repositories with the reftable backend are never memoised.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Lru } from '../git-data/lru';

/** A signature this recent may hide a second change in the same mtime tick. */
const RACY_MS = 50;
/** Repositories whose ref state is kept; the least recently used is forgotten. */
const MAX_REPOS = 256;

interface RepoRefState {
  /** Folder (relative to the repository) -> mtime in ns, as last scanned. */
  dirs: Map<string, bigint>;
  packed: string;
  /** Whether the signature was old enough to trust when taken. */
  stable: boolean;
  values: Map<string, Promise<unknown>>;
}

const states = new Lru<string, RepoRefState>(MAX_REPOS);

function statSig(file: string): fs.BigIntStats | null {
  try {
    return fs.statSync(file, { bigint: true });
  } catch {
    return null;
  }
}

function packedSig(repoPath: string): { sig: string; mtimeNs: bigint } {
  const st = statSig(path.join(repoPath, 'packed-refs'));
  return st ? { sig: `${st.ino}:${st.size}:${st.mtimeNs}`, mtimeNs: st.mtimeNs } : { sig: '-', mtimeNs: 0n };
}

/** Every folder under refs/ with its mtime (a fresh scan). */
function scan(repoPath: string): Map<string, bigint> | null {
  const dirs = new Map<string, bigint>();
  const walk = (rel: string): boolean => {
    const st = statSig(path.join(repoPath, rel));
    if (!st || !st.isDirectory()) return rel !== 'refs';
    dirs.set(rel, st.mtimeNs);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(repoPath, rel), { withFileTypes: true });
    } catch {
      return false;
    }
    for (const e of entries) if (e.isDirectory() && !walk(`${rel}/${e.name}`)) return false;
    return true;
  };
  return walk('refs') ? dirs : null;
}

function isRacy(newestNs: bigint): boolean {
  return Date.now() - Number(newestNs / 1_000_000n) < RACY_MS;
}

/** The current state of the repository's refs, reusing the kept one when nothing changed. */
function current(repoPath: string): RepoRefState | null {
  if (fs.existsSync(path.join(repoPath, 'reftable'))) return null;
  const kept = states.get(repoPath);
  const packed = packedSig(repoPath);
  if (kept && kept.stable && kept.packed === packed.sig) {
    let same = true;
    for (const [rel, mtime] of kept.dirs) {
      const st = statSig(path.join(repoPath, rel));
      if (!st || st.mtimeNs !== mtime) {
        same = false;
        break;
      }
    }
    if (same) return kept;
  }
  const dirs = scan(repoPath);
  if (!dirs) return null;
  let newest = packed.mtimeNs;
  for (const m of dirs.values()) if (m > newest) newest = m;
  const state: RepoRefState = { dirs, packed: packed.sig, stable: !isRacy(newest), values: new Map() };
  states.set(repoPath, state);
  return state;
}

/**
 * `compute()` (a listing of the repository's refs), or the answer it gave for `key` since when
 * no ref of the repository changed. The signature is taken before computing, so a change made
 * while computing makes the next call compute again. A failed computation is not kept.
 */
export function memoByRefs<T>(repoPath: string, key: string, compute: () => Promise<T>, opts: MemoOptions<T> = {}): Promise<T> {
  const state = current(repoPath);
  if (!state || !state.stable) return compute();
  const kept = state.values.get(key) as Promise<T> | undefined;
  if (kept) return kept;
  const p = compute();
  state.values.set(key, p);
  p.then(
    (value) => {
      if (opts.keep && !opts.keep(value) && state.values.get(key) === p) state.values.delete(key);
    },
    () => state.values.delete(key),
  );
  return p;
}

export interface MemoOptions<T> {
  /** Whether an answer is worth keeping (e.g. not too large); every answer is kept by default. */
  keep?(value: T): boolean;
}

/** Forgets what is kept for a repository (one deleted or moved), or for all. */
export function forgetRefs(repoPath?: string): void {
  if (repoPath === undefined) states.clear();
  else states.delete(repoPath);
}
