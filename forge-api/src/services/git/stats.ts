import { promises as fs } from 'fs';
import path from 'path';
import { runGit } from './run';

export interface RepoStats {
  /** Disk use in KiB, as Gitea reports `size`: the regular files under the repository folder. */
  sizeKiB: number;
  /** No branch exists yet. */
  empty: boolean;
  /** The branch HEAD names once it exists; null while the repository has no branch. */
  defaultBranch: string | null;
  /** Branches (refs/heads) the repository has. */
  branchCount: number;
}

/** Bytes of every regular file under `dir` (Gitea's getDirectorySize). */
export async function directorySize(dir: string): Promise<number> {
  let entries: import('fs').Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  const sizes = await Promise.all(
    entries.map(async (entry) => {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) return directorySize(p);
      if (!entry.isFile()) return 0;
      try {
        return (await fs.stat(p)).size;
      } catch {
        return 0; // a lock or temporary file removed while we walk: not part of the repository
      }
    }),
  );
  return sizes.reduce((a, b) => a + b, 0);
}

/** The branch HEAD points at, read from the HEAD file (no process). */
export async function headBranch(repoPath: string): Promise<string | null> {
  try {
    const head = (await fs.readFile(path.join(repoPath, 'HEAD'), 'utf8')).trim();
    const m = /^ref: refs\/heads\/(.+)$/.exec(head);
    return m ? m[1] : null;
  } catch {
    return null;
  }
}

export async function listBranches(repoPath: string): Promise<string[]> {
  const out = await runGit(['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/'], { cwd: repoPath });
  return out.split('\n').filter(Boolean);
}

/** Points HEAD at `branch` (changing the default branch of a repository). */
export async function setDefaultBranch(repoPath: string, branch: string): Promise<void> {
  await runGit(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { cwd: repoPath });
}

/**
 * Size, empty flag and default branch after a push. When HEAD names a branch that was never
 * pushed while others were (e.g. the first push to an empty repository sends only `master`),
 * HEAD is moved to a pushed branch — main, then master, then the first by name — as Gitea
 * moves the default branch, so that clones check out something.
 */
export async function repoStats(repoPath: string): Promise<RepoStats> {
  const [bytes, branches, head] = await Promise.all([directorySize(repoPath), listBranches(repoPath), headBranch(repoPath)]);
  let defaultBranch: string | null = null;
  if (branches.length > 0) {
    if (head && branches.includes(head)) {
      defaultBranch = head;
    } else {
      defaultBranch = ['main', 'master'].find((b) => branches.includes(b)) ?? [...branches].sort()[0];
      await setDefaultBranch(repoPath, defaultBranch);
    }
  }
  return { sizeKiB: Math.floor(bytes / 1024), empty: branches.length === 0, defaultBranch, branchCount: branches.length };
}
