/**
 * The git reads the content API needs. Objects (refs, trees, blobs) come from the repository's
 * long-lived reader (services/git/reader.ts: one `cat-file --batch-command` shared by all
 * requests), so they cost no process; history needs `git log`: one process for the last commit
 * of a path, one walk for the last commits of all entries of a folder, stopped as soon as every
 * entry is accounted for.
 */
import execa from 'execa';
import type { GitReader } from '../git/reader';
import { isValidBranchName } from '../git/repository';
import { gitEnv, runGit } from '../git/run';
import { Lru } from '../git-data/lru';

export type RefKind = 'branch' | 'tag' | 'commit';

export interface ResolvedRef {
  kind: RefKind;
  /** The name as given (a branch or tag name, or the commit id). */
  name: string;
  commit: string;
}

export type EntryType = 'blob' | 'tree' | 'commit';

export interface TreeEntry {
  mode: string;
  type: EntryType;
  oid: string;
  /** Blob size in bytes; 0 for trees and submodules (ls-tree reports none). */
  size: number;
  /** Full path from the root of the tree. */
  path: string;
  name: string;
}

export interface LastCommit {
  sha: string;
  committerDate: string;
  authorDate: string;
  message: string;
}

const FULL_SHA = /^[0-9a-f]{40}$/;
/** A path is a path, never a glob or magic pathspec (a file may be named `*` or `:(top)x`). */
const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };

/**
 * Gitea's ResolveRefCommit: a branch of that name, else a tag, else a full commit id; null when
 * none exists. Names git would read as revision syntax never reach git.
 */
export async function resolveRef(reader: GitReader, ref: string): Promise<ResolvedRef | null> {
  const asName = isValidBranchName(ref);
  const asSha = FULL_SHA.test(ref);
  if (!asName && !asSha) return null;
  const candidates: { kind: RefKind; rev: string }[] = [];
  if (asName) candidates.push({ kind: 'branch', rev: `refs/heads/${ref}^{commit}` }, { kind: 'tag', rev: `refs/tags/${ref}^{commit}` });
  if (asSha) candidates.push({ kind: 'commit', rev: `${ref}^{commit}` });
  const found = await reader.infos(candidates.map((c) => c.rev));
  for (let i = 0; i < candidates.length; i++) {
    const info = found[i];
    if (info && info.type === 'commit') return { kind: candidates[i].kind, name: ref, commit: info.oid };
  }
  return null;
}

/** git writes tree modes without the leading zero (40000); ls-tree and Gitea show six digits. */
function mode6(mode: string): string {
  return mode.padStart(6, '0');
}

/**
 * Folder listings by (commit, folder) and root trees by commit: a commit id fixes its trees and
 * their blobs, so these never go stale, and a folder asked for again costs no look-up on the
 * object reader (each look-up is a write to `git cat-file` and a wait for its answer: for a
 * folder of 50 files, the tree plus 50 sizes). Only found folders are kept (a failed or empty
 * answer is asked again). Shared by every repository: the ids name the same objects everywhere,
 * and the callers have resolved the commit in their own repository first.
 */
const folders = new Lru<string, Promise<TreeEntry[] | null>>(1_000);
const rootTrees = new Lru<string, string>(5_000);

/** Entries of the tree at `dir` of `commit` with blob sizes (kept; see `folders`), or null. */
function folder(reader: GitReader, commit: string, dir: string): Promise<TreeEntry[] | null> {
  const key = `${commit}\0${dir}`;
  const kept = folders.get(key);
  if (kept) return kept;
  const p = readFolder(reader, commit, dir);
  folders.set(key, p);
  p.then(
    (entries) => {
      if (!entries) folders.delete(key);
    },
    () => folders.delete(key),
  );
  return p;
}

/** The entries of a folder, read (one pipelined size look-up per blob). Callers never change them: they are shared. */
async function readFolder(reader: GitReader, commit: string, dir: string): Promise<TreeEntry[] | null> {
  const tree = await reader.readTree(dir ? `${commit}:${dir}` : `${commit}^{tree}`);
  if (!tree) return null;
  const blobs = tree.entries.filter((e) => e.type === 'blob');
  const infos = await reader.infos(blobs.map((e) => e.oid));
  const sizes = new Map(blobs.map((e, i) => [e.oid, infos[i]?.size ?? 0]));
  return tree.entries.map((e) => ({
    mode: mode6(e.mode),
    type: e.type,
    oid: e.oid,
    size: sizes.get(e.oid) ?? 0,
    path: dir ? `${dir}/${e.name}` : e.name,
    name: e.name,
  }));
}

/** The entry at `p` ("" is the root tree) in `commit`, or null. */
export async function treeEntry(reader: GitReader, commit: string, p: string): Promise<TreeEntry | null> {
  if (p === '') {
    let oid = rootTrees.get(commit);
    if (!oid) {
      oid = (await reader.info(`${commit}^{tree}`))?.oid;
      if (!oid) return null;
      rootTrees.set(commit, oid);
    }
    return { mode: '040000', type: 'tree', oid, size: 0, path: '', name: '' };
  }
  const slash = p.lastIndexOf('/');
  const dir = slash < 0 ? '' : p.slice(0, slash);
  const name = p.slice(slash + 1);
  const listed = folders.get(`${commit}\0${dir}`);
  const entries = listed ? await listed : null;
  if (entries) {
    const e = entries.find((x) => x.name === name);
    return e ? { ...e } : null;
  }
  const tree = await reader.readTree(dir ? `${commit}:${dir}` : `${commit}^{tree}`);
  const e = tree?.entries.find((x) => x.name === name);
  if (!e) return null;
  const size = e.type === 'blob' ? ((await reader.info(e.oid))?.size ?? 0) : 0;
  return { mode: mode6(e.mode), type: e.type, oid: e.oid, size, path: p, name };
}

/** The entries of the folder `dir` ("" for the root) in git's tree order. */
export async function listFolder(reader: GitReader, commit: string, dir: string): Promise<TreeEntry[]> {
  return (await folder(reader, commit, dir)) ?? [];
}

/** Several paths at once (pipelined on the reader); missing ones are absent from the map. */
export async function treeEntries(reader: GitReader, commit: string, paths: string[]): Promise<Map<string, TreeEntry>> {
  const found = new Map<string, TreeEntry>();
  const entries = await Promise.all([...new Set(paths)].map((p) => treeEntry(reader, commit, p)));
  for (const e of entries) if (e) found.set(e.path, e);
  return found;
}

export async function readBlob(reader: GitReader, oid: string): Promise<Buffer> {
  const blob = await reader.readBlob(oid);
  if (!blob) throw new Error(`blob ${oid} is missing`);
  return blob.content;
}

/** Bytes of an object (a submodule's commit when this repository has it), 0 when missing. */
export async function objectSize(reader: GitReader, oid: string): Promise<number> {
  return (await reader.info(oid))?.size ?? 0;
}

/** Gitea prints commit times in RFC 3339 with `Z` for UTC. */
function rfc3339(iso: string): string {
  return iso.replace(/\+00:00$/, 'Z');
}

const LOG_FORMAT = '%x1e%H%x00%cI%x00%aI%x00%B%x00';

function parseLogRecord(record: string): { commit: LastCommit; files: string[] } {
  const [sha, cdate, adate, message, ...rest] = record.split('\0');
  return {
    commit: { sha, committerDate: rfc3339(cdate), authorDate: rfc3339(adate), message },
    files: rest.map((f) => f.replace(/^\n/, '')).filter(Boolean),
  };
}

/**
 * Last commits already found, by (repository, commit, path): the answer depends only on the
 * commit's history, which its id fixes, so it never goes stale (Gitea keeps the same in its
 * last-commit cache). Promises are kept, so concurrent requests for one path share one walk.
 */
const lastCommits = new Lru<string, Promise<LastCommit | null>>(20_000);
const folderCommits = new Lru<string, Promise<Map<string, LastCommit>>>(2_000);

function remember<T>(cache: Lru<string, Promise<T>>, key: string, compute: () => Promise<T>): Promise<T> {
  const kept = cache.get(key);
  if (kept) return kept;
  const p = compute();
  cache.set(key, p);
  p.catch(() => cache.delete(key));
  return p;
}

/** Whether no merge is reachable from a commit, by commit id (its history is fixed). */
const linearHistories = new Lru<string, Promise<boolean>>(2_000);

/** One `git rev-list --merges -1` per commit, kept. */
export function isLinearHistory(repoPath: string, commit: string): Promise<boolean> {
  return remember(linearHistories, commit, async () => (await runGit(['rev-list', '--merges', '--max-count=1', commit, '--'], { cwd: repoPath })).trim() === '');
}

/** The last commit of `p` if already known, without any git process. */
export function knownLastCommit(repoPath: string, commit: string, p: string): Promise<LastCommit | null> | undefined {
  return lastCommits.get(`${repoPath}\0${commit}\0${p}`);
}

/** The newest commit reachable from `commit` that changed `p` ("" for any change). */
export function lastCommit(repoPath: string, commit: string, p: string): Promise<LastCommit | null> {
  return remember(lastCommits, `${repoPath}\0${commit}\0${p}`, async () => {
    const out = await runGit(['log', '-1', `--format=${LOG_FORMAT}`, commit, '--', ...(p ? [p] : [])], { cwd: repoPath, env: LITERAL });
    const record = out.split('\x1e')[1];
    return record ? parseLogRecord(record).commit : null;
  });
}

/**
 * The last commit of each of `names` (entries of the folder `dir`), from one history walk over
 * the folder that stops once every entry has its commit: a listing costs one process, not one
 * per entry, and none once known for this commit.
 */
export async function lastCommitsOfEntries(repoPath: string, commit: string, dir: string, names: string[]): Promise<Map<string, LastCommit>> {
  if (names.length === 0) return new Map();
  const key = `${repoPath}\0${commit}\0${dir}\0${names.join('/')}`;
  return remember(folderCommits, key, async () => {
    const found = await walkFolder(repoPath, commit, dir, names);
    // In a history without merges, the first commit of the folder's log that lists an entry is
    // exactly `git log -1 -- <entry>`: the walk answers each entry's own last commit too (a
    // merge simplifies a folder's and a file's history differently, so then it does not).
    if (await isLinearHistory(repoPath, commit).catch(() => false)) {
      for (const [name, c] of found) {
        const k = `${repoPath}\0${commit}\0${dir ? `${dir}/` : ''}${name}`;
        if (!lastCommits.get(k)) lastCommits.set(k, Promise.resolve(c));
      }
    }
    return found;
  });
}

async function walkFolder(repoPath: string, commit: string, dir: string, names: string[]): Promise<Map<string, LastCommit>> {
  const result = new Map<string, LastCommit>();
  const wanted = new Set(names);
  const prefix = dir ? `${dir}/` : '';
  const child = execa('git', ['log', `--format=${LOG_FORMAT}`, '--name-only', '-z', '--no-renames', commit, '--', ...(dir ? [dir] : [])], {
    cwd: repoPath,
    env: gitEnv(LITERAL),
    extendEnv: false,
    reject: false,
    buffer: false,
  });
  let pending = '';
  const take = (record: string) => {
    const { commit: c, files } = parseLogRecord(record);
    for (const f of files) {
      if (!f.startsWith(prefix)) continue;
      const name = f.slice(prefix.length).split('/')[0];
      if (wanted.has(name) && !result.has(name)) result.set(name, c);
    }
  };
  await new Promise<void>((resolve) => {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      pending += chunk;
      const records = pending.split('\x1e');
      pending = records.pop() ?? '';
      for (const r of records) if (r) take(r);
      if (result.size === wanted.size) {
        child.kill();
        resolve();
      }
    });
    child.stdout!.on('end', () => resolve());
    child.on('error', () => resolve());
  });
  if (pending && result.size < wanted.size) take(pending);
  const done = await child.catch(() => null);
  // A walk that git cut short (not stopped by us) is answered but not kept.
  if (result.size < wanted.size && done?.exitCode !== 0) folderCommits.delete(`${repoPath}\0${commit}\0${dir}\0${names.join('/')}`);
  return result;
}

/** Whether `path` differs between two commits (Gitea's FileChangedSinceCommit). */
export async function pathChanged(repoPath: string, from: string, to: string, p: string): Promise<boolean> {
  const out = await runGit(['diff', '--name-only', from, to, '--', p], { cwd: repoPath, env: LITERAL });
  return out.trim() !== '';
}
