/**
 * Bringing a pull request's head branch up to date with its base (Gitea's POST
 * /pulls/{index}/update, services/pull/update.go): style `merge` commits a merge of the base
 * into the head (merge-tree + commit-tree, no working tree), style `rebase` replays the head's
 * commits onto the base (a temporary repository, git/rebase.ts). Either way the head branch
 * moves only from the tip the update started from (a compare-and-swap), so a push racing the
 * update makes it fail with 409 instead of losing the pushed commits.
 */
import { AccessMode, type RepoWithOwner } from '../convert';
import { ConflictError, NotFoundError, PermissionDeniedError, InvalidError, withoutBody } from '../errors';
import { commitTree, RefChangedError, updateRef, type Signature } from '../git/commit-writer';
import { mergeTrees } from '../git/merge';
import { rebaseOnto } from '../git/rebase';
import { resolveRef } from '../git/refs';
import { runGit } from '../git/run';
import type { Prisma } from '../database';
import type { PermissionService } from '../permissions';
import type { BranchProtectionService } from '../branch-protection';
import type { User } from '../records';
import type { RepoCtx } from '../issues/context';
import type { PullRequest } from '../../../generated/prisma/client';
import { gitIdentityOf } from '../content/changes';
import { branchTip, PullFlow } from './git';

export interface UpdateDeps {
  prisma: Prisma;
  permissions: PermissionService;
  protections: BranchProtectionService;
  diskPath(repo: RepoWithOwner): string;
  /** Domain of the git e-mail of users who hide theirs (config). */
  noReplyAddress: string;
  repoById(id: number): Promise<RepoWithOwner | null>;
  refsChanged(doer: User, repoId: number): Promise<unknown>;
}

export class PullUpdateService {
  constructor(private readonly deps: UpdateDeps) {}

  /** Gitea's isUserAllowedToPushOrForcePushInRepoBranch: push and force push to the head branch. */
  private async pushRights(user: User, repo: RepoWithOwner, branch: string): Promise<{ push: boolean; force: boolean }> {
    const rule = await this.deps.protections.ruleFor(repo.id, branch);
    if (!rule) {
      const writes = (await this.deps.permissions.repoAccessMode(user, repo, 'repo.code')) >= AccessMode.Write;
      return { push: writes, force: writes };
    }
    return { push: await this.deps.protections.canUserPush(rule, user, repo), force: await this.deps.protections.canUserForcePush(rule, user, repo) };
  }

  /**
   * Gitea's CheckUserAllowedToUpdate: who may push (merge) or force-push (rebase) to the head
   * branch, or, when the author allows maintainers' edits, who may merge into the base (then
   * with the author's rights on the head); and the base repository's allowed update styles.
   */
  private async allowed(rc: RepoCtx & { doer: User }, pr: PullRequest, head: RepoWithOwner): Promise<{ merge: boolean; rebase: boolean }> {
    if (pr.flow === PullFlow.AGit) return { merge: false, rebase: false };
    let { push: merge, force: rebase } = await this.pushRights(rc.doer, head, pr.headBranch);
    if (pr.allowMaintainerEdit && (!merge || !rebase)) {
      const rule = await this.deps.protections.ruleFor(rc.repo.id, pr.baseBranch);
      const mayMerge = rule
        ? await this.deps.protections.canUserMerge(rule, rc.doer, rc.repo)
        : (await this.deps.permissions.repoAccessMode(rc.doer, rc.repo, 'repo.code')) >= AccessMode.Write;
      if (mayMerge) {
        const issue = await this.deps.prisma.issue.findUniqueOrThrow({ where: { id: pr.issueId } });
        const poster = await this.deps.prisma.user.findUnique({ where: { id: issue.posterId } });
        if (poster) {
          const posterRights = await this.pushRights(poster, head, pr.headBranch);
          merge ||= posterRights.push;
          rebase ||= posterRights.force;
        }
      }
    }
    return { merge: merge && rc.repo.allowMergeUpdate, rebase: rebase && rc.repo.allowRebaseUpdate };
  }

  async update(rc: RepoCtx & { doer: User }, pr: PullRequest, style: string): Promise<void> {
    if (pr.hasMerged) throw new InvalidError('pull request is already merged');
    const issue = await this.deps.prisma.issue.findUniqueOrThrow({ where: { id: pr.issueId } });
    if (issue.isClosed) throw new InvalidError('pull request is already closed');
    const head = pr.headRepoId ? await this.deps.repoById(pr.headRepoId) : null;
    if (!head) throw new NotFoundError();
    const rebase = style === 'rebase';
    const may = await this.allowed(rc, pr, head);
    // Gitea answers the status alone here.
    if (rebase ? !may.rebase : !may.merge) throw withoutBody(new PermissionDeniedError('user may not update the head branch'));

    const basePath = this.deps.diskPath(rc.repo);
    const headPath = this.deps.diskPath(head);
    const baseTip = await resolveRef(basePath, `refs/heads/${pr.baseBranch}`);
    const headTip = await branchTip(headPath, pr.headBranch);
    if (!baseTip || !headTip) throw new NotFoundError('not found', ['base or head branch is gone']);
    // Nothing of the base is missing from the head: Gitea refuses with this text as a 500; a
    // 409 says the same without blaming the server.
    const upToDate = await runGit(['merge-base', '--is-ancestor', baseTip, headTip], { cwd: basePath }).then(() => true, () => false);
    if (upToDate) throw new ConflictError(`HeadBranch of PR ${pr.index} is up to date`);
    // The head's commits are in the base repository (refs/pull/{index}/head); a fork borrows the
    // base repository's objects, so what is written there is readable from the head repository.
    const me = gitIdentityOf(rc.doer, this.deps.noReplyAddress);
    const committer: Signature = { ...me, date: new Date() };
    let newTip: string;
    if (rebase) {
      const rebased = await rebaseOnto(basePath, baseTip, headTip, committer);
      if (!rebased.clean) throw new ConflictError('rebase failed because of conflict');
      newTip = rebased.tip;
    } else {
      const merged = await mergeTrees(basePath, headTip, baseTip);
      if (!merged.clean) throw new ConflictError('merge failed because of conflict');
      const message = `Merge branch '${pr.baseBranch}' into ${pr.headBranch}\n`;
      newTip = await commitTree(basePath, { tree: merged.tree, parents: [headTip, baseTip], message, author: committer, committer });
    }
    if (newTip === headTip) return;
    try {
      await updateRef(headPath, `refs/heads/${pr.headBranch}`, newTip, headTip, `update pull request #${pr.index} by ${rebase ? 'rebase' : 'merge'}`);
    } catch (err) {
      if (err instanceof RefChangedError) throw new ConflictError('head branch changed during the update');
      throw err;
    }
    // Push events, refs/pull/{index}/head and the checks of the pull requests of the branch.
    await this.deps.refsChanged(rc.doer, head.id);
  }
}
