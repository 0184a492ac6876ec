/**
 * Rebasing a branch's commits onto another commit, as Gitea does for the `rebase` and
 * `rebase-merge` merge styles and for updating a pull request by rebase: real `git rebase` in a
 * temporary repository (git 2.39 has no `merge-tree --merge-base` to replay commits in memory).
 * The temporary repository writes its objects straight into the bare repository's object
 * store (GIT_OBJECT_DIRECTORY), so nothing has to be copied back and no ref of the bare
 * repository moves here: the caller moves the branch with a compare-and-swap, so a rebase that
 * raced another change fails cleanly and loses nothing.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { GitCommandError, gitEnv, runGit } from './run';
import type { Signature } from './commit-writer';

/** A conflict: the paths, the commit git stopped at, and what `git rebase` printed (Gitea shows all three). */
export type RebaseResult = { clean: true; tip: string } | { clean: false; conflicts: string[]; stoppedAt: string; stdout: string; stderr: string };

function gitDate(d: Date): string {
  return `${Math.floor(d.getTime() / 1000)} +0000`;
}

/** Replays the commits of `head` that `onto` lacks on top of `onto`, committed by `committer` (authors kept). */
export async function rebaseOnto(bareRepoPath: string, onto: string, head: string, committer: Signature): Promise<RebaseResult> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-rebase-'));
  const env = {
    GIT_OBJECT_DIRECTORY: path.resolve(bareRepoPath, 'objects'),
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
    GIT_COMMITTER_DATE: gitDate(committer.date ?? new Date()),
  };
  const git = (args: string[]) => runGit(args, { cwd: tmp, env });
  try {
    await git(['init', '--quiet']);
    await git(['update-ref', 'refs/heads/rebase', head]);
    await git(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', 'rebase']);
    // Not --quiet: on a conflict git's own account of it is part of Gitea's answer.
    const r = await execa('git', ['-c', 'rebase.autoStash=false', '-c', 'core.hooksPath=/dev/null', 'rebase', '--no-autosquash', onto], { cwd: tmp, env: gitEnv(env), extendEnv: false, reject: false, stripFinalNewline: false });
    if (r.exitCode !== 0) {
      const stopped = await fs.readFile(path.join(tmp, '.git', 'rebase-merge', 'stopped-sha'), 'utf8').catch(() => null);
      if (stopped === null) throw new GitCommandError(['rebase'], r.exitCode, String(r.stderr ?? ''));
      const conflicts = (await git(['diff', '--name-only', '--diff-filter=U']).catch(() => '')).split('\n').filter(Boolean);
      return { clean: false, conflicts, stoppedAt: stopped.trim(), stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
    }
    return { clean: true, tip: (await git(['rev-parse', 'HEAD'])).trim() };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
