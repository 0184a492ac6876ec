/**
 * Repository housekeeping after pushes, off the request path: one pack with a reachability
 * bitmap (`git repack -a -d -b -k`) and a commit-graph (`git commit-graph write --reachable`).
 * With both, `git upload-pack` answers a clone from the bitmap instead of walking every commit
 * and tree of the history, which roughly halves git's CPU for a clone of a 1,000-commit
 * repository (forge-api/README.md, "Clones").
 *
 * Why these flags:
 * - `-k` (keep unreachable): objects no ref reaches stay packed instead of being dropped. Forks
 *   borrow their parent's objects (git/fork.ts), so an object the parent no longer reaches may
 *   be a fork's history; and a push whose pack is in place but whose refs are not yet updated
 *   would otherwise lose its objects to a repack that started in between.
 * - A repository that borrows objects itself (a fork, objects/info/alternates) is repacked with
 *   `-l` (its own objects only, so the sharing stays) and without a bitmap, which git can only
 *   write for a pack holding every reachable object.
 *
 * Fetches and clones: `repack -d` deletes the packs (and `prune-packed` the loose objects) it
 * replaced, and a git process that listed an object in one of them but had not opened it yet
 * fails (a clone ends with "early EOF" at the client). So the git processes that read the object
 * store for a client (upload-pack for clones and fetches, upload-archive; transport.ts) and a
 * repack of the same repository are kept apart, readers/writer style, in this one registry:
 * - reads never wait for each other; a read waits while a repack of its repository runs, or is
 *   about to run (below), then starts;
 * - housekeeping first waits for the running reads to end while new ones may still start; if
 *   reads keep overlapping past `readWaitMs`, it stops letting new reads start and waits for
 *   the running ones alone, so a steady stream of clones cannot put it off forever. Reads still
 *   running after that are long ones (a huge clone, a stalled client): housekeeping gives up
 *   and tries again after the next quiet time rather than hold every new clone back longer.
 * - a read waits at most `readWaitMs` in all, then starts anyway: a repack that hangs for
 *   minutes must not hang every clone with it, and a clone that meets the rare race fails
 *   with an error the client sees and can retry, where a hang would look like a dead server.
 * The advertisement (`--advertise-refs`) reads refs, not packs, and is not held back.
 * The commit-graph is written after the repack's exclusion ends: git replaces that file by a
 * rename, and a reader that mapped the old one keeps it.
 *
 * Safety: pushes do not wait for housekeeping. git keeps a concurrent repack and push apart
 * itself (the repack deletes only the packs it listed when it started, and `-k` keeps their
 * objects); housekeeping waits for the pushes of a repository to end before it starts (and is
 * pushed back by each new push, one `delayMs` after the last one). Moving or deleting a folder
 * waits for the housekeeping inside it, and housekeeping waits for moves (disk-lock.ts); a
 * repository gone by then is skipped. One repository is housekept at a time in this process,
 * so a burst of pushes cannot fill both cores with repacks.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { repoDiskLock } from './disk-lock';
import { listRepositoryDirs } from './repository';
import { runGit } from './run';

export interface HousekeepingOptions {
  /** Quiet time after a repository's last push before its housekeeping starts; < 0 turns it off. */
  delayMs?: number;
  /**
   * Longest a read waits for a repack of its repository, and longest housekeeping waits for the
   * running reads in each of its two steps (see above).
   */
  readWaitMs?: number;
  /** Failures (a repack git refused) are reported here; housekeeping never throws to a push. */
  onError?(repoPath: string, err: unknown): void;
}

export class RepoHousekeeping {
  private readonly delayMs: number;
  private readonly readWaitMs: number;
  private readonly onError: (repoPath: string, err: unknown) => void;
  private timers = new Map<string, NodeJS.Timeout>();
  private pushes = new Map<string, number>();
  /** Running reads per repository (transport.ts), and what waits for them to end. */
  private reads = new Map<string, { n: number; ended: Promise<void>; resolve: () => void }>();
  /** Repositories whose repack runs, or waits for the running reads alone: new reads wait for it. */
  private writers = new Map<string, Promise<void>>();
  private queue: string[] = [];
  private current: Promise<void> | null = null;
  private closed = false;
  /** Repositories housekept by this process (tests, diagnostics). */
  runs = 0;

  constructor(opts: HousekeepingOptions = {}) {
    this.delayMs = opts.delayMs ?? 2000;
    this.readWaitMs = opts.readWaitMs ?? 30_000;
    this.onError = opts.onError ?? (() => undefined);
  }

  get enabled(): boolean {
    return this.delayMs >= 0 && !this.closed;
  }

  /** A push into `repoPath` began: no housekeeping there until it ends. */
  pushStarted(repoPath: string): void {
    const key = path.resolve(repoPath);
    this.pushes.set(key, (this.pushes.get(key) ?? 0) + 1);
    this.cancelTimer(key);
  }

  /** A push into `repoPath` ended (accepted or not): housekeeping follows after the quiet time. */
  pushEnded(repoPath: string): void {
    const key = path.resolve(repoPath);
    const n = (this.pushes.get(key) ?? 1) - 1;
    if (n > 0) this.pushes.set(key, n);
    else this.pushes.delete(key);
    this.schedule(key);
  }

  /**
   * A git process is about to read the object store of `repoPath` for a client: resolves once
   * no repack of it runs (or after `readWaitMs`), with the read already counted, so no repack
   * starts between then and the spawn. Hand the process to the returned function; the read
   * ends when it closes.
   */
  async startRead(repoPath: string): Promise<(child: ReadProcess) => void> {
    const key = path.resolve(repoPath);
    const deadline = Date.now() + this.readWaitMs;
    for (let w = this.writers.get(key); w && Date.now() < deadline; w = this.writers.get(key)) {
      await within(w, deadline - Date.now());
    }
    let r = this.reads.get(key);
    if (!r) {
      let resolve!: () => void;
      const ended = new Promise<void>((res) => (resolve = res));
      r = { n: 0, ended, resolve };
      this.reads.set(key, r);
    }
    r.n++;
    const entry = r;
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      if (--entry.n > 0) return;
      if (this.reads.get(key) === entry) this.reads.delete(key);
      entry.resolve();
    };
    return (child) => {
      child.once('close', end);
      child.once('error', end);
    };
  }

  /** Is a repack of `repoPath` running (or about to, new reads waiting for it)? (tests, diagnostics) */
  repacking(repoPath: string): boolean {
    return this.writers.has(path.resolve(repoPath));
  }

  /** Housekeeping of `repoPath` after the quiet time (again from now if already planned). */
  schedule(repoPath: string): void {
    if (!this.enabled) return;
    const key = path.resolve(repoPath);
    this.cancelTimer(key);
    if (this.pushes.has(key)) return; // pushEnded plans it again
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.enqueue(key);
    }, this.delayMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  /**
   * Queues every repository under `reposDir` whose objects are not in the housekept layout
   * (several packs, loose objects, no bitmap or no commit-graph): what a restart left planned,
   * and what arrived by other ways than a push (API commits, migrations, mirrors). Returns how
   * many were queued.
   */
  async sweep(reposDir: string): Promise<number> {
    if (!this.enabled) return 0;
    let queued = 0;
    for (const dir of await listRepositoryDirs(reposDir)) {
      if (this.closed) break;
      if (await needsHousekeeping(dir.path)) {
        this.enqueue(path.resolve(dir.path));
        queued++;
      }
    }
    return queued;
  }

  /** Resolves when nothing is planned, queued or running (tests; shutdown). */
  async idle(): Promise<void> {
    while (this.current || this.queue.length || this.timers.size) {
      if (this.current) await this.current;
      else await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Stops planning; waits for the repository being housekept now. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queue = [];
    if (this.current) await this.current;
  }

  /**
   * Housekeeps one repository now: false when it was skipped (gone, a push is running, or reads
   * kept running; then it is planned again), true when it was repacked. Waits for any move of
   * its folder (disk-lock.ts).
   */
  async run(repoPath: string): Promise<boolean> {
    const key = path.resolve(repoPath);
    return repoDiskLock.withWork(key, async () => {
      if (this.pushes.has(key) || !(await isRepository(key))) return false;
      const borrows = await exists(path.join(key, 'objects', 'info', 'alternates'));
      const repack = borrows ? ['repack', '-a', '-d', '-l', '-k', '-q'] : ['repack', '-a', '-d', '-b', '-k', '-q'];
      // First step: new reads may still start while the running ones end.
      await this.readsEnd(key);
      let release!: () => void;
      this.writers.set(key, new Promise<void>((r) => (release = r)));
      try {
        // Second step (new reads wait now): what still runs, or started as the first step ended.
        if (this.reads.has(key) && !(await this.readsEnd(key))) {
          this.schedule(key);
          return false;
        }
        if (this.pushes.has(key)) return false;
        await runGit(['--git-dir', key, ...repack]);
      } finally {
        this.writers.delete(key);
        release();
      }
      await runGit(['--git-dir', key, 'commit-graph', 'write', '--reachable']);
      this.runs++;
      return true;
    });
  }

  /** Waits up to `readWaitMs` for the reads of `key` to end; true when none runs. */
  private async readsEnd(key: string): Promise<boolean> {
    const deadline = Date.now() + this.readWaitMs;
    for (let r = this.reads.get(key); r; r = this.reads.get(key)) {
      if (Date.now() >= deadline) return false;
      await within(r.ended, deadline - Date.now());
    }
    return true;
  }

  private cancelTimer(key: string): void {
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    this.timers.delete(key);
  }

  private enqueue(key: string): void {
    if (this.closed || this.queue.includes(key)) return;
    this.queue.push(key);
    if (!this.current) this.current = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      for (let key = this.queue.shift(); key !== undefined; key = this.queue.shift()) {
        try {
          await this.run(key);
        } catch (err) {
          this.onError(key, err);
        }
      }
    } finally {
      this.current = null;
    }
  }
}

/** What a read hands over: the git process whose end ends the read. */
export interface ReadProcess {
  once(event: 'close' | 'error', listener: () => void): unknown;
}

/** Resolves when `p` does or after `ms`, whichever comes first. */
async function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

/** Is the repository's object store other than one pack with a bitmap (unless it borrows objects) and a commit-graph? */
export async function needsHousekeeping(repoPath: string): Promise<boolean> {
  const objects = path.join(repoPath, 'objects');
  let packDir: string[];
  let top: string[];
  try {
    [packDir, top] = await Promise.all([fs.readdir(path.join(objects, 'pack')), fs.readdir(objects)]);
  } catch {
    return false; // not a repository (or gone)
  }
  if (top.some((name) => /^[0-9a-f]{2}$/.test(name))) return true; // loose objects
  const packs = packDir.filter((f) => f.endsWith('.pack')).length;
  if (packs === 0) return false;
  if (packs > 1) return true;
  if (!(await exists(path.join(objects, 'info', 'commit-graph')))) return true;
  const borrows = await exists(path.join(objects, 'info', 'alternates'));
  return !borrows && !packDir.some((f) => f.endsWith('.bitmap'));
}

/** A bare repository is still there (a deletion that ran first leaves nothing; a half-made one has no HEAD). */
async function isRepository(p: string): Promise<boolean> {
  return (await exists(path.join(p, 'HEAD'))) && (await exists(path.join(p, 'objects')));
}
