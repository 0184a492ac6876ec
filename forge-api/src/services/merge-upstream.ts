/**
 * POST /repos/{owner}/{repo}/merge-upstream (Gitea's services/repository/merge_upstream.go):
 * brings a fork's branch up to date with its parent. The parent's branch of the same name is
 * the upstream, or the parent's default branch when it has none. The answer's merge_type:
 * - "up-to-date": the upstream has no commit the branch lacks;
 * - "fast-forward": the branch had nothing of its own and now points at the upstream commit;
 * - "merge": both moved; a merge commit (the branch first, the upstream second, message
 *   "merge upstream", by the caller) is made without a working tree (git/merge.ts). A
 *   conflict is 409 and leaves the fork as it was (Gitea answers 500 there); `ff_only`
 *   refuses to merge (400).
 * The branch moves by compare-and-swap under the fork's branch protection for the caller, and
 * the change is announced like a push (push webhooks, feeds, push mirrors that sync on commit).
 * The fork reads the parent's objects through its alternates (git/fork.ts), so nothing is copied.
 */
import { gitIdentityOf } from './content/changes';
import { AccessMode } from './convert';
import { ConflictError, MalformedError, NotFoundError, PermissionDeniedError } from './errors';
import { commitTree, commitMessage, updateRef } from './git/commit-writer';
import { hasObject, isAncestor, mergeTrees } from './git/merge';
import { isValidBranchName } from './git/ref-names';
import { resolveRef } from './git/refs';
import { runGit } from './git/run';
import type { PermissionService } from './permissions';
import type { PushRules } from './push-rules';
import type { User } from './records';
import type { RepoService, RepoWithOwner } from './repos';

export type MergeUpstreamStyle = 'up-to-date' | 'fast-forward' | 'merge';

export const MERGE_UPSTREAM_MESSAGE = 'merge upstream';

export class MergeUpstreamService {
  constructor(
    private readonly permissions: PermissionService,
    private readonly repos: RepoService,
    private readonly pushRules: PushRules,
  ) {}

  async merge(doer: User, fork: RepoWithOwner, branch: string, ffOnly: boolean): Promise<MergeUpstreamStyle> {
    if (!fork.isFork || !fork.forkId) throw new MalformedError('repo is not a fork');
    const base = await this.repos.byId(fork.forkId);
    if (!base) throw new MalformedError('repo is not a fork');
    // A fork made while the parent was public must not keep pulling from it once it is private.
    const baseMode = await this.permissions.repoAccessMode(doer, base, 'repo.code');
    if (baseMode < AccessMode.Read || (!base.hasCode && baseMode < AccessMode.Admin)) {
      throw new PermissionDeniedError(`permission denied to read base repo ${base.id}`);
    }

    const forkPath = this.repos.diskPath(fork.owner.name, fork.name);
    const basePath = this.repos.diskPath(base.owner.name, base.name);
    const head = await branchTip(forkPath, branch);
    if (!head) throw new NotFoundError(`branch does not exist [repo_id: ${fork.id} name: ${branch}]`);
    let upstream = await branchTip(basePath, branch);
    if (!upstream) {
      upstream = await branchTip(basePath, base.defaultBranch);
      if (!upstream) throw new NotFoundError(`branch does not exist [repo_id: ${base.id} name: ${base.defaultBranch}]`);
    }
    const upstreamRef = upstream.ref;
    if (upstream.oid === head.oid) return 'up-to-date';
    if (!(await hasObject(forkPath, upstream.oid))) {
      // A fork that owns its objects (no alternates) takes the parent's commits first.
      await runGit(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', basePath, upstreamRef], { cwd: forkPath });
    }
    if (await isAncestor(forkPath, upstream.oid, head.oid)) return 'up-to-date';

    const ref = `refs/heads/${branch}`;
    if (await isAncestor(forkPath, head.oid, upstream.oid)) {
      await this.move(doer, fork, forkPath, ref, head.oid, upstream.oid);
      return 'fast-forward';
    }
    if (ffOnly) throw new MalformedError('fast-forward merge not possible: branch has diverged');

    const merged = await mergeTrees(forkPath, head.oid, upstream.oid);
    if (!merged.clean) {
      const detail = merged.messages.length ? merged.messages.join('\n') : merged.conflicts.map((p) => `CONFLICT (content): Merge conflict in ${p}`).join('\n');
      throw new ConflictError(`Merge Conflict Error: ${detail}`);
    }
    const who = { ...gitIdentityOf(doer, this.repos.config.noReplyAddress), date: new Date() };
    const commit = await commitTree(forkPath, { tree: merged.tree, parents: [head.oid, upstream.oid], message: commitMessage(MERGE_UPSTREAM_MESSAGE, who), author: who, committer: who });
    await this.move(doer, fork, forkPath, ref, head.oid, commit);
    return 'merge';
  }

  /** Moves the branch as a push by `doer` would: protection rules, compare-and-swap, push events. */
  private async move(doer: User, fork: RepoWithOwner, forkPath: string, ref: string, oldOid: string, newOid: string): Promise<void> {
    const refusal = await this.pushRules.check(fork, forkPath, doer, [{ ref, oldOid, newOid }]);
    if (refusal) throw new PermissionDeniedError(refusal);
    await updateRef(forkPath, ref, newOid, oldOid, `merge-upstream: ${MERGE_UPSTREAM_MESSAGE}`);
    await this.repos.refsChanged(doer, fork.id);
  }
}

/** The commit a branch points at; an invalid branch name is a branch that does not exist. */
async function branchTip(repoPath: string, branch: string): Promise<{ ref: string; oid: string } | null> {
  if (!branch || !isValidBranchName(branch)) return null;
  const ref = `refs/heads/${branch}`;
  const oid = await resolveRef(repoPath, `${ref}^{commit}`);
  return oid ? { ref, oid } : null;
}
