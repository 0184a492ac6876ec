/**
 * Commits made by the forge itself (file edits through the API, wiki pages, generated
 * repositories): git plumbing on a temporary index, never a working tree or a clone.
 *
 *   read-tree <base>  ->  update-index --index-info  ->  write-tree  ->  commit-tree
 *   ->  update-ref <ref> <new> <expected old>
 *
 * The index lives in a temporary folder (GIT_INDEX_FILE), so concurrent writers never share
 * one. Blobs are written as loose objects in-process (objects.ts), so a change of N files costs
 * the same five git processes as a change of one. The last step is a compare-and-swap: git
 * moves the ref only if it still points where the writer started from; a writer that lost the
 * race gets RefChangedError (nothing was lost: its commit simply is not on the branch) and
 * may re-read the branch and try again.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConflictError } from '../errors';
import { writeObject } from './objects';
import { GitCommandError, runGit } from './run';
import { cleanTreePath, TreePathError } from './tree-path';

export const NULL_OID = '0000000000000000000000000000000000000000';

/** git's file modes for a tree entry the forge writes. */
export type FileMode = '100644' | '100755' | '120000';

/**
 * One change to the tree of the base commit. Paths must be clean (tree-path.ts): git's
 * --index-info silently ignores a path it forbids, so the writer refuses an unclean one itself.
 * A write replaces whatever is at a conflicting path (a file where a folder is needed, or the
 * reverse), as git's --index-info does: the caller checks Gitea's rules before.
 */
export type FileChange =
  /** Writes `content` (a new blob) or an existing blob `oid` at `path`, replacing what is there. */
  | { kind: 'write'; path: string; content: Buffer; mode?: FileMode }
  | { kind: 'write'; path: string; oid: string; mode?: FileMode }
  /** Removes the file at `path` (with `recursive`, everything under the folder `path`). */
  | { kind: 'delete'; path: string; recursive?: boolean };

export interface Signature {
  name: string;
  email: string;
  /** When; default now. */
  date?: Date;
  /** The zone written into the commit, minutes east of UTC; default 0 (UTC, as Gitea's server time here). */
  tzOffsetMinutes?: number;
}

export interface CommitRequest {
  /** The bare repository. */
  repoPath: string;
  /** Full ref to move, e.g. refs/heads/main. */
  ref: string;
  /** Commit whose tree the changes apply to and which becomes the parent; null for a first commit. */
  base: string | null;
  /**
   * Where `ref` must point for the commit to land: the base when committing on the same branch,
   * NULL_OID when the ref must not exist yet (a new branch, the first commit of an empty
   * repository). Defaults to `base ?? NULL_OID`.
   */
  expectedOld?: string;
  changes: FileChange[];
  /** A unified diff applied to the index before `changes` (git apply --cached, as Gitea's diffpatch). */
  patch?: Buffer | string;
  message: string;
  author: Signature;
  committer: Signature;
  /** Adds Gitea's `Signed-off-by: <committer>` trailer. */
  signoff?: boolean;
  /** The reflog line (git's -m of update-ref). */
  reflogMessage?: string;
}

export interface WrittenCommit {
  commit: string;
  tree: string;
  parents: string[];
  /** The ref's value before the commit (NULL_OID when it was created). */
  oldOid: string;
}

/** The ref moved (or appeared) after the writer read it: a concurrent writer won. */
export class RefChangedError extends ConflictError {
  constructor(
    readonly ref: string,
    readonly expected: string,
  ) {
    super(`the reference ${ref} was changed by someone else (expected ${expected})`);
  }
}

/** git refused a change: update-index (a path git forbids) or apply (a patch that does not apply). */
export class IndexChangeError extends Error {
  constructor(readonly stderr: string) {
    super(stderr.trim() || 'git refused the change');
    this.name = 'IndexChangeError';
  }
}

function gitDate(sig: Signature): string {
  const when = sig.date ?? new Date();
  const offset = sig.tzOffsetMinutes ?? 0;
  const abs = Math.abs(offset);
  const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  return `@${Math.floor(when.getTime() / 1000)} ${zone}`;
}

/** git refuses names with `<`, `>` or newlines in an ident; Gitea strips them the same way. */
function identPart(s: string): string {
  return s.replace(/[<>\n\r\0]/g, '').trim();
}

/** The message as Gitea writes it: trimmed, newline-terminated, plus the sign-off trailer. */
export function commitMessage(message: string, committer: Signature, signoff = false): string {
  let text = `${message.trim()}\n`;
  if (signoff) text += `\nSigned-off-by: ${identPart(committer.name)} <${identPart(committer.email)}>`;
  return text;
}

/** Paths under `folder` in the index (for a recursive delete). */
async function indexPathsUnder(repoPath: string, env: Record<string, string>, folder: string): Promise<string[]> {
  const out = await runGit(['ls-files', '-z', '--', `${folder}/`], { cwd: repoPath, env });
  return out.split('\0').filter(Boolean);
}

async function indexInfo(repoPath: string, env: Record<string, string>, changes: FileChange[]): Promise<string> {
  const lines: string[] = [];
  for (const change of changes) {
    if (cleanTreePath(change.path, { allowRoot: false }) !== change.path) throw new TreePathError(change.path, 'path is not clean');
    if (change.kind === 'delete') {
      const paths = change.recursive ? await indexPathsUnder(repoPath, env, change.path) : [change.path];
      for (const p of paths) lines.push(`0 ${NULL_OID}\t${p}`);
      continue;
    }
    const oid = 'oid' in change ? change.oid : await writeObject(repoPath, 'blob', change.content);
    lines.push(`${change.mode ?? '100644'} ${oid}\t${change.path}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * Makes one commit from `changes` on top of `base` and moves `ref` to it if it still points at
 * `expectedOld`. Throws RefChangedError when it does not, TreePathError for a path that is not
 * clean, IndexChangeError when git refuses the change; any other git failure is a GitCommandError.
 */
export async function writeCommit(req: CommitRequest): Promise<WrittenCommit> {
  const expectedOld = req.expectedOld ?? req.base ?? NULL_OID;
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-index-'));
  const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
  try {
    const cwd = req.repoPath;
    if (req.base) await runGit(['read-tree', req.base], { cwd, env });
    if (req.patch !== undefined) {
      try {
        await runGit(['apply', '--cached', '--recount', '--ignore-whitespace', '--whitespace=fix', '--binary', '-3'], { cwd, env, input: req.patch });
      } catch (err) {
        if (err instanceof GitCommandError) throw new IndexChangeError(err.stderr);
        throw err;
      }
    }
    if (req.changes.length > 0) {
      const info = await indexInfo(cwd, env, req.changes);
      try {
        await runGit(['update-index', '--add', '--remove', '--index-info'], { cwd, env, input: info });
      } catch (err) {
        if (err instanceof GitCommandError) throw new IndexChangeError(err.stderr);
        throw err;
      }
    }
    const tree = (await runGit(['write-tree'], { cwd, env })).trim();
    const parents = req.base ? [req.base] : [];
    const commit = await commitTree(cwd, { tree, parents, message: commitMessage(req.message, req.committer, req.signoff), author: req.author, committer: req.committer });
    await updateRef(cwd, req.ref, commit, expectedOld, req.reflogMessage ?? `forge: ${req.message.trim().split('\n')[0]}`);
    return { commit, tree, parents, oldOid: expectedOld };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Writes a commit object of `tree` with `parents` (in order; two or more make a merge commit)
 * and returns its id; no ref moves. `message` is written as given (see commitMessage).
 */
export async function commitTree(
  repoPath: string,
  c: { tree: string; parents: string[]; message: string; author: Signature; committer: Signature },
): Promise<string> {
  const env = {
    GIT_AUTHOR_NAME: identPart(c.author.name),
    GIT_AUTHOR_EMAIL: identPart(c.author.email),
    GIT_AUTHOR_DATE: gitDate(c.author),
    GIT_COMMITTER_NAME: identPart(c.committer.name),
    GIT_COMMITTER_EMAIL: identPart(c.committer.email),
    GIT_COMMITTER_DATE: gitDate(c.committer),
  };
  const args = ['commit-tree', '--no-gpg-sign', c.tree, ...c.parents.flatMap((p) => ['-p', p])];
  return (await runGit(args, { cwd: repoPath, env, input: c.message })).trim();
}

/**
 * `git update-ref <ref> <new> <old>`: moves the ref only while it points at `old` (NULL_OID: only
 * while it does not exist), under git's ref lock. A mismatch, or another writer holding the lock
 * at that moment, is RefChangedError.
 */
export async function updateRef(repoPath: string, ref: string, newOid: string, old: string, reflogMessage = 'forge'): Promise<void> {
  try {
    await runGit(['update-ref', '-m', reflogMessage, ref, newOid, old], { cwd: repoPath });
  } catch (err) {
    if (err instanceof GitCommandError && /cannot lock ref|is at .* but expected|reference already exists|unable to resolve reference|File exists/i.test(err.stderr)) {
      throw new RefChangedError(ref, old);
    }
    throw err;
  }
}

/** Deletes `ref` if it still points at `old` (compare-and-swap as updateRef). */
export async function deleteRef(repoPath: string, ref: string, old: string, reflogMessage = 'forge'): Promise<void> {
  try {
    await runGit(['update-ref', '-m', reflogMessage, '-d', ref, old], { cwd: repoPath });
  } catch (err) {
    if (err instanceof GitCommandError && /cannot lock ref|is at .* but expected|File exists/i.test(err.stderr)) throw new RefChangedError(ref, old);
    throw err;
  }
}
