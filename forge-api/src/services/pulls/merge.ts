/**
 * Merging a pull request (Gitea's MergePullRequest / CheckPullMergeable / Merge) on the bare
 * base repository, without a working tree: the merged tree from `git merge-tree --write-tree`,
 * the commit from commit-tree, and the base branch moved with update-ref only while it still
 * points where the merge started. Of two merges racing on one base, the second finds the
 * branch moved and answers 409; nothing is lost. The row is marked merged with a
 * compare-and-swap too, so one pull request is merged once.
 */
import { AccessMode, type RepoWithOwner } from '../convert';
import { ConflictError, InvalidError, NotAllowedError, NotFoundError, ValidationError } from '../errors';
import { CommentType } from '../issues/issues';
import { commitTree, RefChangedError, updateRef, deleteRef, type Signature } from '../git/commit-writer';
import { isAncestor, mergeTrees, type TreeMerge } from '../git/merge';
import { resolveRef } from '../git/refs';
import { rebaseOnto } from '../git/rebase';
import { runGit } from '../git/run';
import type { Prisma } from '../database';
import type { PermissionService } from '../permissions';
import type { User } from '../records';
import type { RepoCtx } from '../issues/context';
import type { PullRequest } from '../../../generated/prisma/client';
import { gitIdentityOf } from '../content/changes';
import { branchTip, pullHeadRef, PullStatus } from './git';
import type { PullMergeChecks } from './merge-checks';

export const MERGE_STYLES = ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged'] as const;
export type MergeStyle = (typeof MERGE_STYLES)[number];

export interface MergeInput {
  Do?: string;
  do?: string;
  merge_title_field?: string;
  merge_message_field?: string;
  merge_commit_id?: string;
  head_commit_id?: string;
  force_merge?: boolean;
  merge_when_checks_succeed?: boolean;
  delete_branch_after_merge?: boolean;
}

/** Comment type of the timeline's "merged" entry (Gitea's CommentTypeMergePull). */

/**
 * A merge that conflicts, answered as Gitea answers it: 409 with its error value encoded as JSON
 * (ErrMergeConflicts, ErrRebaseConflicts with the commit the rebase stopped at, or
 * ErrMergeUnrelatedHistories), git's output in StdOut and StdErr and the process error, which
 * encodes as an empty object.
 */
export class MergeConflictError extends ConflictError {
  constructor(
    readonly files: string[],
    style: MergeStyle,
    detail: { stdout: string; stderr: string; commit?: string; unrelated?: boolean },
  ) {
    const kind = detail.unrelated ? 'Merge UnrelatedHistories Error' : detail.commit ? 'Rebase Error' : 'Merge Conflict Error';
    super(`${kind}: ${files.join(', ')}`);
    this.body = { Style: style, ...(detail.commit ? { CommitSHA: detail.commit } : {}), StdOut: detail.stdout, StdErr: detail.stderr, Err: {} };
  }

  /** From a tree merge of the head into the base: what `git merge` (or `git merge --squash`) prints for it in Gitea's temporary repository, where the base is HEAD and the head is `tracking`. */
  static ofTreeMerge(merged: Extract<TreeMerge, { clean: false }>, style: MergeStyle, baseTip: string, headTip: string): MergeConflictError {
    if (merged.unrelated !== undefined) return new MergeConflictError([], style, { stdout: '', stderr: merged.unrelated, unrelated: true });
    const lines = merged.output.map((l) => l.split(baseTip).join('HEAD').split(headTip).join('tracking'));
    if (style === 'squash') lines.push('Squash commit -- not updating HEAD');
    lines.push('Automatic merge failed; fix conflicts and then commit the result.');
    return new MergeConflictError(merged.conflicts, style, { stdout: `${lines.join('\n')}\n`, stderr: '' });
  }
}

export interface MergeDeps {
  prisma: Prisma;
  permissions: PermissionService;
  diskPath(repo: RepoWithOwner): string;
  /** Domain of the git e-mail of users who hide theirs (config). */
  noReplyAddress: string;
  repoById(id: number): Promise<RepoWithOwner | null>;
  /** After the forge moved refs of a repository: push events, size, checks of other pull requests. */
  refsChanged(doer: User, repoId: number): Promise<unknown>;
  /** Announces a merge through the notifier (webhooks, notifications). */
  merged(doer: User, repo: RepoWithOwner, pr: PullRequest): Promise<void>;
  /** Who may merge and whether the pull request is ready (branch protection). */
  checks: PullMergeChecks;
  /** Schedules the merge for when the required statuses succeed (auto-merge.ts). */
  scheduleMerge(doer: User, pr: PullRequest, style: MergeStyle, message: string, deleteBranchAfterMerge: boolean): Promise<void>;
}

export class PullMergeService {
  constructor(private readonly deps: MergeDeps) {}

  private allowed(repo: RepoWithOwner, style: MergeStyle): boolean {
    switch (style) {
      case 'merge':
        return repo.allowMerge;
      case 'rebase':
        return repo.allowRebase;
      case 'rebase-merge':
        return repo.allowRebaseExplicit;
      case 'squash':
        return repo.allowSquash;
      case 'fast-forward-only':
        return repo.allowFastForwardOnly;
      case 'manually-merged':
        return repo.allowManualMerge;
    }
  }

  /** Gitea's default merge title for a style (no templates in .gitea/default_merge_message here). */
  private async defaultTitle(repo: RepoWithOwner, pr: PullRequest, title: string, style: MergeStyle): Promise<string> {
    if (style === 'squash') return `${title} (#${pr.index})`;
    if (pr.headRepoId === pr.baseRepoId) return `Merge pull request '${title}' (#${pr.index}) from ${pr.headBranch} into ${pr.baseBranch}`;
    const head = pr.headRepoId ? await this.deps.repoById(pr.headRepoId) : null;
    const from = head ? `${head.owner.name}/${head.name}` : '<deleted>';
    return `Merge pull request '${title}' (#${pr.index}) from ${from}:${pr.headBranch} into ${pr.baseBranch}`;
  }

  /** POST /pulls/{index}/merge: merged now, or scheduled for when the required statuses succeed. */
  async merge(rc: RepoCtx & { doer: User }, pr: PullRequest, input: MergeInput): Promise<'merged' | 'scheduled'> {
    const given = input.do || input.Do;
    if (!given) throw new ValidationError('[Do]: Required');
    const style = given as MergeStyle;
    if (!MERGE_STYLES.includes(style)) throw new InvalidError(`[Do]: In(merge,rebase,rebase-merge,squash,fast-forward-only,manually-merged)`);
    const issue = await this.deps.prisma.issue.findUniqueOrThrow({ where: { id: pr.issueId } });
    const type = style === 'manually-merged' ? 'manually' : input.merge_when_checks_succeed ? 'auto' : 'general';
    await this.deps.checks.assertMergeable(rc.doer, rc.repo, pr, issue, { type, style, force: input.force_merge });
    if (!this.allowed(rc.repo, style)) throw new NotAllowedError(`${style} is not allowed an allowed merge style for this repository`);
    const path = this.deps.diskPath(rc.repo);
    const baseRef = `refs/heads/${pr.baseBranch}`;
    const baseTip = await resolveRef(path, baseRef);
    const headTip = await resolveRef(path, pullHeadRef(pr.index));
    if (!baseTip || !headTip) throw new NotFoundError('not found', ['base branch or head of the pull request is gone']);

    if (style === 'manually-merged') {
      // Gitea's MergedManually: the given commit is on the base branch and contains the head.
      const commit = input.merge_commit_id ?? '';
      const ok = /^[0-9a-f]{40}$/.test(commit) && (await isAncestor(path, commit, baseTip).catch(() => false)) && (await isAncestor(path, headTip, commit).catch(() => false));
      if (!ok) throw new ConflictError('Wrong commit ID');
      await this.markMerged(rc, pr, commit, PullStatus.ManuallyMerged);
      await this.deps.merged(rc.doer, rc.repo, pr);
      return 'merged';
    }
    const title = (input.merge_title_field ?? '').trim() || (await this.defaultTitle(rc.repo, pr, issue.title, style));
    const extra = (input.merge_message_field ?? '').trim();
    const deleteBranch = input.delete_branch_after_merge ?? rc.repo.defaultDeleteBranchAfterMerge;
    if (input.merge_when_checks_succeed) {
      await this.deps.scheduleMerge(rc.doer, pr, style, extra ? `${title}\n\n${extra}` : title, deleteBranch);
      return 'scheduled';
    }
    if (input.head_commit_id && input.head_commit_id !== headTip) throw new ConflictError('head out of date');
    const message = `${extra ? `${title}\n\n${extra}` : title}\n`;
    const me = gitIdentityOf(rc.doer, this.deps.noReplyAddress);
    const now = new Date();
    const committer: Signature = { ...me, date: now };
    let newTip: string;
    if (style === 'fast-forward-only') {
      if (!(await isAncestor(path, baseTip, headTip))) throw new ConflictError('merge push out of date');
      newTip = headTip;
    } else if (style === 'merge' || style === 'squash') {
      const merged = await mergeTrees(path, baseTip, headTip);
      if (!merged.clean) throw MergeConflictError.ofTreeMerge(merged, style, baseTip, headTip);
      if (style === 'merge') {
        newTip = await commitTree(path, { tree: merged.tree, parents: [baseTip, headTip], message, author: committer, committer });
      } else {
        // The squashed commit is the author's (Gitea's getAuthorSignatureSquash), committed by the merger.
        const poster = await this.deps.prisma.user.findUnique({ where: { id: issue.posterId } });
        const author: Signature = { ...(poster ? gitIdentityOf(poster, this.deps.noReplyAddress) : me), date: now };
        newTip = await commitTree(path, { tree: merged.tree, parents: [baseTip], message, author, committer });
      }
    } else {
      // rebase and rebase-merge: the head's commits replayed onto the base (authors kept,
      // committed by the merger); rebase moves the base to them, rebase-merge adds a merge
      // commit of the base and the rebased head (whose tree is the rebased head's).
      const rebased = await rebaseOnto(path, baseTip, headTip, committer);
      if (!rebased.clean) throw new MergeConflictError(rebased.conflicts, style, { stdout: rebased.stdout, stderr: rebased.stderr, commit: rebased.stoppedAt });
      if (style === 'rebase') newTip = rebased.tip;
      else {
        const tree = (await runGit(['rev-parse', `${rebased.tip}^{tree}`], { cwd: path })).trim();
        newTip = rebased.tip === baseTip ? baseTip : await commitTree(path, { tree, parents: [baseTip, rebased.tip], message, author: committer, committer });
      }
    }
    try {
      await updateRef(path, baseRef, newTip, baseTip, `merge pull request #${pr.index}`);
    } catch (err) {
      if (err instanceof RefChangedError) throw new ConflictError('merge push out of date');
      throw err;
    }
    await this.markMerged(rc, pr, newTip, PullStatus.Mergeable);
    await this.deps.refsChanged(rc.doer, rc.repo.id);
    await this.deps.merged(rc.doer, rc.repo, pr);
    if (deleteBranch) await this.deleteHeadBranch(rc.doer, pr, headTip);
    return 'merged';
  }

  /** The merged state, once: a second writer finds hasMerged already set and gets the 405 of a merged pull request. */
  private async markMerged(rc: RepoCtx & { doer: User }, pr: PullRequest, commit: string, status: number): Promise<void> {
    const now = new Date();
    const done = await this.deps.prisma.pullRequest.updateMany({
      where: { id: pr.id, hasMerged: false },
      data: { hasMerged: true, mergedAt: now, mergedCommitId: commit, mergerId: rc.doer.id, status },
    });
    if (!done.count) throw new NotAllowedError('The PR is already merged');
    // A merge scheduled for later is done with (Gitea removes it whoever merged).
    await this.deps.prisma.autoMerge.deleteMany({ where: { pullId: pr.id } });
    const closed = await this.deps.prisma.issue.updateMany({ where: { id: pr.issueId, isClosed: false }, data: { isClosed: true, closedAt: now, updatedAt: now } });
    if (closed.count) await this.deps.prisma.repository.update({ where: { id: pr.baseRepoId }, data: { numClosedPulls: { increment: 1 } } });
    await this.deps.prisma.comment.create({ data: { type: CommentType.MergePull, issueId: pr.issueId, repoId: pr.baseRepoId, posterId: rc.doer.id, createdAt: now, updatedAt: now } });
  }

  /** Gitea's DeleteBranchAfterMerge: the head branch goes if the merger may write to it and it is not the default branch. */
  private async deleteHeadBranch(doer: User, pr: PullRequest, headTip: string): Promise<void> {
    const head = pr.headRepoId ? await this.deps.repoById(pr.headRepoId) : null;
    if (!head || head.defaultBranch === pr.headBranch) return;
    if ((await this.deps.permissions.repoAccessMode(doer, head, 'repo.code')) < AccessMode.Write) return;
    const path = this.deps.diskPath(head);
    if ((await branchTip(path, pr.headBranch)) !== headTip) return;
    await deleteRef(path, `refs/heads/${pr.headBranch}`, headTip, `delete branch after merging #${pr.index}`);
    await this.deps.refsChanged(doer, head.id);
    // The timeline says which branch went (Gitea's AddDeletePRBranchComment).
    const now = new Date();
    await this.deps.prisma.comment.create({ data: { type: CommentType.DeleteBranch, issueId: pr.issueId, repoId: pr.baseRepoId, posterId: doer.id, oldRef: pr.headBranch, createdAt: now, updatedAt: now } });
  }
}
