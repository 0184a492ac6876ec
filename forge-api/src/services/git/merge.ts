/**
 * Merging two commits without a working tree: `git merge-tree --write-tree` (git >= 2.38) runs
 * the ort merge in memory and writes the merged tree into the object store; the caller makes
 * the merge commit with commitTree (commit-writer.ts) and moves the ref with a compare-and-swap.
 * A conflict writes nothing the repository refers to: at worst some unreferenced objects that
 * git's gc drops.
 */
import execa from 'execa';
import { GitCommandError, gitEnv, runGit } from './run';

/**
 * `messages`: git's CONFLICT lines; `output`: every line git merge would print for the merge
 * (Auto-merging ..., CONFLICT ...), or for histories git refuses to merge its error, in `unrelated`.
 */
export type TreeMerge = { clean: true; tree: string } | { clean: false; conflicts: string[]; messages: string[]; output: string[]; unrelated?: string };

/** True when `ancestor` is `descendant` or one of its ancestors. */
export async function isAncestor(repoPath: string, ancestor: string, descendant: string): Promise<boolean> {
  try {
    await runGit(['merge-base', '--is-ancestor', ancestor, descendant], { cwd: repoPath });
    return true;
  } catch (err) {
    if (err instanceof GitCommandError && err.exitCode === 1) return false;
    throw err;
  }
}

/** True when the repository can read `oid` (its own objects or borrowed through alternates). */
export async function hasObject(repoPath: string, oid: string): Promise<boolean> {
  return runGit(['cat-file', '-e', `${oid}^{commit}`], { cwd: repoPath }).then(
    () => true,
    () => false,
  );
}

/**
 * Merges `theirs` into `ours` (both commit ids). Clean: the tree to commit. Conflicted (or
 * histories git refuses to merge): the conflicted paths and git's CONFLICT lines.
 */
export async function mergeTrees(repoPath: string, ours: string, theirs: string): Promise<TreeMerge> {
  const r = await execa('git', ['merge-tree', '--write-tree', '-z', '--name-only', ours, theirs], { cwd: repoPath, env: gitEnv(), extendEnv: false, reject: false });
  const out = String(r.stdout ?? '');
  if (r.exitCode === 0) return { clean: true, tree: out.split('\0')[0].trim() };
  if (r.exitCode !== 1) {
    const why = String(r.stderr ?? '').trim().replace(/^fatal: /, '');
    // e.g. "refusing to merge unrelated histories": no merge is possible, as with a conflict.
    if (/unrelated histories/.test(why)) return { clean: false, conflicts: [], messages: [why], output: [], unrelated: String(r.stderr ?? '') };
    throw new GitCommandError(['merge-tree'], r.exitCode, String(r.stderr ?? ''));
  }
  // -z: <tree>\0<conflicted path>\0...\0\0 then per message <n>\0<n paths>\0<type>\0<text>\0
  const sep = out.indexOf('\0\0');
  const head = sep < 0 ? out : out.slice(0, sep);
  const rest = sep < 0 ? '' : out.slice(sep + 2);
  const conflicts = head.split('\0').slice(1).filter(Boolean);
  const messages: string[] = [];
  const output: string[] = [];
  const fields = rest.split('\0');
  for (let i = 0; i < fields.length; ) {
    const n = Number(fields[i]);
    if (!Number.isInteger(n) || n < 1 || i + n + 2 >= fields.length) break;
    const type = fields[i + n + 1];
    const text = fields[i + n + 2];
    if (type.startsWith('CONFLICT')) messages.push(text.trim());
    output.push(text.trim());
    i += n + 3;
  }
  return { clean: false, conflicts, messages, output };
}
