/**
 * Keeps background work inside a repository folder (housekeeping's repack and commit-graph)
 * apart from operations that move, delete or rewrite that folder (repository delete, rename,
 * transfer, an owner's rename, a fork's detachment). A repack that went on while its folder was
 * renamed would write its new pack into a folder that is no longer the repository's (or into a
 * deleted one); a deletion during a repack would race git's own temporary files.
 *
 * Paths conflict when one is the other or lies inside it, so moving an owner's folder waits for
 * the work on every repository under it. Work waits for moves and moves wait for work; two
 * moves, or two pieces of work, do not wait for each other (the callers keep those apart
 * already: a move has its own database checks, and housekeeping runs one repository at a time).
 *
 * One registry per process, keyed by absolute path: every repository folder of this process
 * lives under the one repositories directory, whichever service touches it.
 */
import path from 'node:path';

type Kind = 'work' | 'move';

interface Hold {
  kind: Kind;
  paths: string[];
  done: Promise<void>;
}

function overlaps(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return long.startsWith(short.endsWith(path.sep) ? short : short + path.sep);
}

export class RepoDiskLock {
  private holds = new Set<Hold>();

  /** Runs `fn` while no move covers `repoPath`; moves that start meanwhile wait for it. */
  withWork<T>(repoPath: string, fn: () => Promise<T>): Promise<T> {
    return this.hold('work', [repoPath], fn);
  }

  /** Runs `fn` (which moves, deletes or rewrites these folders) once no work inside them runs. */
  withMove<T>(paths: string[], fn: () => Promise<T>): Promise<T> {
    return this.hold('move', paths, fn);
  }

  /** Is anything held on or inside this path? (tests, diagnostics) */
  busy(p: string): boolean {
    const abs = path.resolve(p);
    for (const h of this.holds) if (h.paths.some((q) => overlaps(q, abs))) return true;
    return false;
  }

  private async hold<T>(kind: Kind, paths: string[], fn: () => Promise<T>): Promise<T> {
    const abs = paths.map((p) => path.resolve(p));
    for (;;) {
      const blocking = [...this.holds].filter((h) => h.kind !== kind && h.paths.some((q) => abs.some((p) => overlaps(p, q))));
      if (blocking.length === 0) break;
      await Promise.all(blocking.map((h) => h.done));
    }
    let release!: () => void;
    const hold: Hold = { kind, paths: abs, done: new Promise<void>((r) => (release = r)) };
    this.holds.add(hold);
    try {
      return await fn();
    } finally {
      this.holds.delete(hold);
      release();
    }
  }
}

export const repoDiskLock = new RepoDiskLock();
