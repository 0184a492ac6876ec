/**
 * The git side of a pull request, all plumbing on the bare repositories (no working tree):
 * the head kept at refs/pull/{index}/head of the base repository (CI systems fetch it), and
 * the mergeability check Gitea runs after each push (merge base, `git merge-tree
 * --write-tree` for conflicts, divergence and diff size).
 */
import { mergeTrees } from '../git/merge';
import { resolveRef } from '../git/refs';
import { GitCommandError, runGit } from '../git/run';

/** Gitea's PullRequestStatus values (stored in PullRequest.status). */
export const PullStatus = { Conflict: 0, Checking: 1, Mergeable: 2, ManuallyMerged: 3, Error: 4, Empty: 5, Ancestor: 6 } as const;

export const PullFlow = { GitHub: 0, AGit: 1 } as const;

export function pullHeadRef(index: number): string {
  return `refs/pull/${index}/head`;
}

export async function branchTip(repoPath: string, branch: string): Promise<string | null> {
  return resolveRef(repoPath, `refs/heads/${branch}`);
}

/**
 * Points refs/pull/{index}/head of the base repository at the head branch's tip and returns
 * that commit (null when the head branch is gone: the ref keeps its last value, as in Gitea).
 * From a fork the commits are fetched into the base repository first (a fork borrows its
 * parent's objects, never the other way round).
 */
export async function syncHeadRef(basePath: string, headPath: string, headBranch: string, index: number): Promise<string | null> {
  const ref = pullHeadRef(index);
  if (basePath === headPath) {
    const tip = await branchTip(basePath, headBranch);
    if (!tip) return resolveRef(basePath, ref);
    await runGit(['update-ref', ref, tip], { cwd: basePath });
    return tip;
  }
  if (!(await branchTip(headPath, headBranch))) return resolveRef(basePath, ref);
  await runGit(['fetch', '--no-tags', '--no-write-fetch-head', '--quiet', headPath, `+refs/heads/${headBranch}:${ref}`], { cwd: basePath });
  return resolveRef(basePath, ref);
}

export interface PullCheck {
  status: number;
  mergeBase: string;
  conflicts: string[];
  ahead: number;
  behind: number;
  additions: number | null;
  deletions: number | null;
  changedFiles: number | null;
}

async function mergeBaseOf(repoPath: string, a: string, b: string): Promise<string | null> {
  try {
    return (await runGit(['merge-base', a, b], { cwd: repoPath })).trim() || null;
  } catch (err) {
    if (err instanceof GitCommandError && err.exitCode === 1) return null;
    throw err;
  }
}

/** Lines added and removed and files changed between two commits (git diff --shortstat). */
export async function shortStat(repoPath: string, from: string, to: string): Promise<{ files: number; additions: number; deletions: number }> {
  const out = await runGit(['diff', '--shortstat', from, to], { cwd: repoPath });
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  return { files: num(/(\d+) files? changed/), additions: num(/(\d+) insertions?\(\+\)/), deletions: num(/(\d+) deletions?\(-\)/) };
}

/**
 * Gitea's checkPullRequestMergeableByMergeTree on the base repository, where the head commit
 * already is (refs/pull/{index}/head): no merge base is "empty", a head the base already
 * contains is "ancestor", conflicts are listed, a clean merge that changes nothing is "empty".
 * `trees` (commit -> tree) lets a batch of checks share the lookups of their base's tree.
 */
export async function checkMergeable(basePath: string, baseSha: string, headSha: string, trees?: Map<string, string>): Promise<PullCheck> {
  const mergeBase = await mergeBaseOf(basePath, baseSha, headSha);
  const none = { conflicts: [], ahead: 0, behind: 0, additions: null, deletions: null, changedFiles: null };
  if (!mergeBase) return { status: PullStatus.Empty, mergeBase: '', ...none };
  const [behind, ahead] = (await runGit(['rev-list', '--left-right', '--count', `${baseSha}...${headSha}`], { cwd: basePath })).trim().split(/\s+/).map(Number);
  const stat = await shortStat(basePath, mergeBase, headSha);
  const common = { mergeBase, ahead, behind, additions: stat.additions, deletions: stat.deletions, changedFiles: stat.files };
  if (headSha === mergeBase) return { status: PullStatus.Ancestor, conflicts: [], ...common };
  const merged = await mergeTrees(basePath, baseSha, headSha);
  if (!merged.clean) return { status: PullStatus.Conflict, conflicts: merged.conflicts, ...common };
  // A commit's tree never changes: a batch of checks against one base reads it once.
  const baseTree = trees?.get(baseSha) ?? (await runGit(['rev-parse', `${baseSha}^{tree}`], { cwd: basePath })).trim();
  trees?.set(baseSha, baseTree);
  return { status: merged.tree === baseTree ? PullStatus.Empty : PullStatus.Mergeable, conflicts: [], ...common };
}
