/**
 * What a push changed, for the push events (feeds, webhooks). Gitea learns it from its post-receive
 * hook; we compare the refs after a push with the refs recorded after the previous one (a small
 * file inside the bare repository), then read the new commits with git.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { runGit } from './run';

export const ZERO_SHA = '0000000000000000000000000000000000000000';
const SNAPSHOT = 'portcullis-refs.json';
/** Commits listed per push payload (total_commits keeps the real count). */
const MAX_COMMITS = 20;

export type Refs = Record<string, string>;

export interface RefChange {
  ref: string;
  before: string;
  after: string;
}

export interface CommitInfo {
  id: string;
  message: string;
  author: { name: string; email: string };
  committer: { name: string; email: string };
  timestamp: string;
  added: string[];
  removed: string[];
  modified: string[];
}

export async function currentRefs(repoPath: string): Promise<Refs> {
  const out = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'], { cwd: repoPath }).catch(() => '');
  const refs: Refs = {};
  for (const line of out.split('\n')) {
    const [sha, ref] = line.trim().split(' ');
    if (sha && ref) refs[ref] = sha;
  }
  return refs;
}

export async function readSnapshot(repoPath: string): Promise<Refs | null> {
  try {
    return JSON.parse(await fs.readFile(path.join(repoPath, SNAPSHOT), 'utf8')) as Refs;
  } catch {
    return null;
  }
}

export async function writeSnapshot(repoPath: string, refs: Refs): Promise<void> {
  const file = path.join(repoPath, SNAPSHOT);
  await fs.writeFile(`${file}.tmp`, JSON.stringify(refs));
  await fs.rename(`${file}.tmp`, file);
}

export function diffRefs(before: Refs, after: Refs): RefChange[] {
  const changes: RefChange[] = [];
  for (const [ref, sha] of Object.entries(after)) if (before[ref] !== sha) changes.push({ ref, before: before[ref] ?? ZERO_SHA, after: sha });
  for (const [ref, sha] of Object.entries(before)) if (!(ref in after)) changes.push({ ref, before: sha, after: ZERO_SHA });
  return changes;
}

/** Ids of the commits new in `change` (not reachable from any ref before the push), newest first. */
async function newCommitIds(repoPath: string, change: RefChange, before: Refs): Promise<string[]> {
  if (change.after === ZERO_SHA) return [];
  const exclude = [...new Set(Object.values(before))].map((s) => `^${s}`);
  return (await runGit(['rev-list', change.after, ...exclude], { cwd: repoPath }).catch(() => '')).split('\n').filter(Boolean);
}

/**
 * The listed commits of a whole push, read with two git processes whatever their number
 * (metadata through `git log --no-walk --stdin`, changed files through `git diff-tree --stdin`):
 * a push of hundreds of branches lists up to MAX_COMMITS commits for each, and two processes
 * per commit made such a push take minutes.
 */
async function readCommits(repoPath: string, ids: string[]): Promise<Map<string, CommitInfo>> {
  const out = new Map<string, CommitInfo>();
  if (!ids.length) return out;
  const input = ids.join('\n') + '\n';
  // -z: fields and records end with NUL, which a commit message cannot hold: 7 fields per commit.
  const meta = (await runGit(['log', '-z', '--no-walk=unsorted', '--stdin', '--format=%H%x00%an%x00%ae%x00%cn%x00%ce%x00%aI%x00%B'], { cwd: repoPath, input })).split('\0');
  for (let i = 0; i + 6 < meta.length; i += 7) {
    const [id, an, ae, cn, ce, date, body] = meta.slice(i, i + 7);
    const message = body.replace(/\n+$/, '') + '\n';
    out.set(id, { id, message, author: { name: an, email: ae }, committer: { name: cn, email: ce }, timestamp: date, added: [], removed: [], modified: [] });
  }
  // One header line (the commit id) then its changes; a merge commit prints nothing, as before.
  const files = await runGit(['diff-tree', '--stdin', '-r', '--root', '--name-status'], { cwd: repoPath, input }).catch(() => '');
  let current: CommitInfo | undefined;
  for (const line of files.split('\n')) {
    if (!line) continue;
    const tab = line.indexOf('\t');
    if (tab < 0) {
      current = out.get(line.trim());
      continue;
    }
    if (!current) continue;
    const status = line.slice(0, tab);
    const file = line.slice(tab + 1);
    if (status.startsWith('A')) current.added.push(file);
    else if (status.startsWith('D')) current.removed.push(file);
    else current.modified.push(file);
  }
  return out;
}

/** One ref a push changed, with its new commits (none for a deletion). */
export interface PushedRef extends RefChange {
  commits: CommitInfo[];
  /** Every new commit, also those beyond the listed ones. */
  total: number;
}

/**
 * What changed since the last recorded push: diffs the refs against the snapshot, records the
 * new snapshot and reads the new commits of each created or updated ref.
 */
export async function takePush(repoPath: string): Promise<PushedRef[]> {
  const { before, after } = await withSnapshotLock(repoPath, async () => {
    const before = (await readSnapshot(repoPath)) ?? {};
    const after = await currentRefs(repoPath);
    await writeSnapshot(repoPath, after);
    return { before, after };
  });
  const changes = diffRefs(before, after);
  const idsOf = await Promise.all(changes.map((change) => newCommitIds(repoPath, change, before)));
  const details = await readCommits(repoPath, [...new Set(idsOf.flatMap((ids) => ids.slice(0, MAX_COMMITS)))]);
  return changes.map((change, i) => ({
    ...change,
    // A commit listed under several refs is one object: each ref gets its own copy.
    commits: idsOf[i].slice(0, MAX_COMMITS).flatMap((id) => {
      const c = details.get(id);
      return c ? [{ ...c, added: [...c.added], removed: [...c.removed], modified: [...c.modified] }] : [];
    }),
    total: idsOf[i].length,
  }));
}

/** A lock file older than this was left by a crashed process. */
const STALE_LOCK_MS = 10_000;

/**
 * Runs `fn` holding the snapshot's lock file, so that two ref changes finishing at once (a push
 * and a commit through the API, or two API commits, in this process or another worker) never
 * read the same "before": each change is announced exactly once.
 */
async function withSnapshotLock<T>(repoPath: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(repoPath, `${SNAPSHOT}.lock`);
  for (let attempt = 0; ; attempt++) {
    try {
      await (await fs.open(lock, 'wx')).close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await fs.stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > STALE_LOCK_MS) await fs.rm(lock, { force: true });
      else await new Promise((r) => setTimeout(r, Math.min(5 + attempt * 5, 50)));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { force: true });
  }
}

/** Records the current refs as seen, so the next push reports only what it changed. */
export async function recordRefs(repoPath: string): Promise<void> {
  await writeSnapshot(repoPath, await currentRefs(repoPath));
}
