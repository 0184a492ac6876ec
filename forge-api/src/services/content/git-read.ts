/**
 * The git reads the content API needs, each one git process: resolve a ref (branch, tag or full
 * commit id) in one `cat-file --batch-check`, a tree entry or a folder listing in one `ls-tree`,
 * a blob in one `cat-file`, the last commit of a path in one `log`, the last commits of all
 * entries of a folder in one `log` walk that stops as soon as every entry is accounted for.
 */
import execa from 'execa';
import { isValidBranchName } from '../git/repository';
import { gitEnv, runGit } from '../git/run';

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

/** Runs git and returns stdout as bytes (blobs are binary). */
export async function runGitBytes(args: string[], cwd: string): Promise<Buffer> {
  const r = await execa('git', args, { cwd, env: gitEnv(), extendEnv: false, reject: false, encoding: null, stripFinalNewline: false });
  if (r.exitCode !== 0) throw new Error(`git ${args[0]} failed: ${String(r.stderr)}`);
  return r.stdout as unknown as Buffer;
}

const FULL_SHA = /^[0-9a-f]{40}$/;
/** A path is a path, never a glob or magic pathspec (a file may be named `*` or `:(top)x`). */
const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };

/**
 * Gitea's ResolveRefCommit: a branch of that name, else a tag, else a full commit id; null when
 * none exists. Names git would read as revision syntax never reach git.
 */
export async function resolveRef(repoPath: string, ref: string): Promise<ResolvedRef | null> {
  const asName = isValidBranchName(ref);
  const asSha = FULL_SHA.test(ref);
  if (!asName && !asSha) return null;
  const candidates: { kind: RefKind; rev: string }[] = [];
  if (asName) candidates.push({ kind: 'branch', rev: `refs/heads/${ref}^{commit}` }, { kind: 'tag', rev: `refs/tags/${ref}^{commit}` });
  if (asSha) candidates.push({ kind: 'commit', rev: `${ref}^{commit}` });
  const out = await runGit(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { cwd: repoPath, input: candidates.map((c) => c.rev).join('\n') + '\n' });
  const lines = out.split('\n');
  for (let i = 0; i < candidates.length; i++) {
    const [oid, type] = (lines[i] ?? '').split(' ');
    if (type === 'commit') return { kind: candidates[i].kind, name: ref, commit: oid };
  }
  return null;
}

function parseLsTree(out: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const record of out.split('\0')) {
    if (!record) continue;
    const tab = record.indexOf('\t');
    const [mode, type, oid, size] = record.slice(0, tab).split(/ +/);
    const p = record.slice(tab + 1);
    entries.push({ mode, type: type as EntryType, oid, size: size === '-' ? 0 : Number(size), path: p, name: p.slice(p.lastIndexOf('/') + 1) });
  }
  return entries;
}

/** The entry at `p` ("" is the root tree) in `commit`, or null. */
export async function treeEntry(repoPath: string, commit: string, p: string): Promise<TreeEntry | null> {
  if (p === '') {
    const tree = (await runGit(['rev-parse', `${commit}^{tree}`], { cwd: repoPath })).trim();
    return { mode: '040000', type: 'tree', oid: tree, size: 0, path: '', name: '' };
  }
  const out = await runGit(['ls-tree', '-l', '-z', '--full-tree', commit, '--', p], { cwd: repoPath, env: LITERAL });
  return parseLsTree(out).find((e) => e.path === p) ?? null;
}

/** The entries of the folder `dir` ("" for the root) in git's tree order. */
export async function listFolder(repoPath: string, commit: string, dir: string): Promise<TreeEntry[]> {
  const out = await runGit(['ls-tree', '-l', '-z', '--full-tree', commit, '--', ...(dir ? [`${dir}/`] : [])], { cwd: repoPath, env: LITERAL });
  return parseLsTree(out);
}

/** Several paths at once (one process); missing ones are absent from the map. */
export async function treeEntries(repoPath: string, commit: string, paths: string[]): Promise<Map<string, TreeEntry>> {
  const wanted = paths.filter((p) => p !== '');
  const found = new Map<string, TreeEntry>();
  if (wanted.length > 0) {
    const out = await runGit(['ls-tree', '-l', '-z', '--full-tree', commit, '--', ...wanted], { cwd: repoPath, env: LITERAL });
    for (const e of parseLsTree(out)) found.set(e.path, e);
  }
  if (paths.includes('')) {
    const root = await treeEntry(repoPath, commit, '');
    if (root) found.set('', root);
  }
  return found;
}

export async function readBlob(repoPath: string, oid: string): Promise<Buffer> {
  return runGitBytes(['cat-file', 'blob', oid], repoPath);
}

/** The first `max` bytes of a blob (symlink targets, LFS pointers). */
export async function readBlobHead(repoPath: string, oid: string, max: number): Promise<Buffer> {
  const all = await readBlob(repoPath, oid);
  return all.subarray(0, max);
}

/** Bytes of an object (a submodule's commit when this repository has it), 0 when missing. */
export async function objectSize(repoPath: string, oid: string): Promise<number> {
  const out = await runGit(['cat-file', '--batch-check=%(objectsize)'], { cwd: repoPath, input: `${oid}\n` });
  const n = Number(out.trim());
  return Number.isFinite(n) ? n : 0;
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

/** The newest commit reachable from `commit` that changed `p` ("" for any change). */
export async function lastCommit(repoPath: string, commit: string, p: string): Promise<LastCommit | null> {
  const out = await runGit(['log', '-1', `--format=${LOG_FORMAT}`, commit, '--', ...(p ? [p] : [])], { cwd: repoPath, env: LITERAL });
  const record = out.split('\x1e')[1];
  return record ? parseLogRecord(record).commit : null;
}

/**
 * The last commit of each of `names` (entries of the folder `dir`), from one history walk over
 * the folder that stops once every entry has its commit: a listing costs one process, not one
 * per entry.
 */
export async function lastCommitsOfEntries(repoPath: string, commit: string, dir: string, names: string[]): Promise<Map<string, LastCommit>> {
  const result = new Map<string, LastCommit>();
  if (names.length === 0) return result;
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
  await child.catch(() => undefined);
  return result;
}

/** Whether `path` differs between two commits (Gitea's FileChangedSinceCommit). */
export async function pathChanged(repoPath: string, from: string, to: string, p: string): Promise<boolean> {
  const out = await runGit(['diff', '--name-only', from, to, '--', p], { cwd: repoPath, env: LITERAL });
  return out.trim() !== '';
}
