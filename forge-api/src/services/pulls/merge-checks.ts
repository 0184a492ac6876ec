/**
 * Whether a pull request may be merged now, and by whom (Gitea's CheckPullMergeable and
 * CheckPullBranchProtections), in Gitea's order and with its refusals:
 *  - already merged (405), closed (404), the doer neither allowed by the rule's merge
 *    allow-list nor (without one) a writer of the code (405 "User not allowed to merge PR");
 *    marking a pull request manually merged stops there;
 *  - work in progress, not (yet) mergeable (405);
 *  - the base branch's rule: required status checks, required approvals (official, not
 *    dismissed, and not stale when the rule ignores stale approvals), rejected reviews, official
 *    review requests, a head behind its base, changed protected files (405 with the first unmet
 *    one). Scheduling a merge for later skips these (they are checked when it runs); force_merge
 *    skips them for whoever may bypass the rule;
 *  - signed commits the rule requires (no commit is verified and no merge signed here);
 *  - open dependencies (405; Gitea answers 500 with the same message).
 */
import { AccessMode, type RepoWithOwner } from '../convert';
import { ReviewType } from '../convert/pull-review';
import { isWorkInProgress } from '../convert/issue';
import { NotAllowedError, NotFoundError } from '../errors';
import { filePatterns, type BranchProtectionService, type ProtectionRule } from '../branch-protection';
import { resolveRef } from '../git/refs';
import { runGit } from '../git/run';
import type { Prisma } from '../database';
import type { PermissionService } from '../permissions';
import type { User } from '../records';
import type { Issue, PullRequest } from '../../../generated/prisma/client';
import { pullHeadRef, PullStatus } from './git';
import { statusChecksPass, type LatestStatus } from './required-statuses';

/** What the check is for: a merge now, marking it manually merged, or scheduling it for later. */
export type MergeCheckType = 'general' | 'manually' | 'auto';

export interface MergeCheckDeps {
  prisma: Prisma;
  permissions: PermissionService;
  protections: BranchProtectionService;
  diskPath(repo: RepoWithOwner): string;
  latestStatuses(repo: RepoWithOwner, sha: string): Promise<LatestStatus[]>;
}

export interface MergeCheckInput {
  type: MergeCheckType;
  style: string;
  force?: boolean;
}

export class PullMergeChecks {
  constructor(private readonly deps: MergeCheckDeps) {}

  /** Gitea's IsUserAllowedToMerge for the base branch. */
  async allowedToMerge(doer: User, repo: RepoWithOwner, rule: ProtectionRule | null): Promise<boolean> {
    if (rule) return this.deps.protections.canUserMerge(rule, doer, repo);
    return (await this.deps.permissions.repoAccessMode(doer, repo, 'repo.code')) >= AccessMode.Write;
  }

  /** Throws the refusal Gitea gives when `doer` may not merge the pull request now. */
  async assertMergeable(doer: User, repo: RepoWithOwner, pr: PullRequest, issue: Issue, input: MergeCheckInput): Promise<void> {
    if (pr.hasMerged) throw new NotAllowedError('The PR is already merged');
    if (issue.isClosed) throw new NotFoundError('not found', ['pull request is closed']);
    const rule = await this.deps.protections.ruleFor(pr.baseRepoId, pr.baseBranch);
    if (!(await this.allowedToMerge(doer, repo, rule))) throw new NotAllowedError('User not allowed to merge PR');
    if (input.type === 'manually') return;
    if (isWorkInProgress(issue.title)) throw new NotAllowedError('Work in progress PRs cannot be merged');
    if (pr.status !== PullStatus.Mergeable && pr.status !== PullStatus.Empty) throw new NotAllowedError('Please try again later');
    if (rule) {
      const block = await this.protectionBlock(repo, pr, rule);
      if (block && input.type !== 'auto') {
        const isRepoAdmin = (await this.deps.permissions.repoAccessMode(doer, repo)) >= AccessMode.Admin;
        if (!(input.force && (await this.deps.protections.canBypass(rule, doer, isRepoAdmin)))) throw new NotAllowedError(block);
      }
      if (rule.settings.require_signed_commits) {
        // Gitea checks that the head commits are verified for the styles that keep them, then
        // that it can sign the commit it writes; neither holds here (no key signs merges).
        if (input.style === 'merge' || input.style === 'fast-forward-only') throw new NotAllowedError('the branch requires signed commits but not all head commits are verified');
        throw new NotAllowedError('wont sign: nokey');
      }
    }
    const openDependencies = await this.deps.prisma.issueDependency.count({ where: { issueId: issue.id, dependency: { isClosed: false } } });
    if (openDependencies) throw new NotAllowedError('is blocked by an open dependency');
  }

  /** Gitea's CheckPullBranchProtections: the first requirement of the rule the pull request does not meet, or null. */
  async protectionBlock(repo: RepoWithOwner, pr: PullRequest, rule: ProtectionRule): Promise<string | null> {
    const s = rule.settings;
    const path = this.deps.diskPath(repo);
    const head = (await resolveRef(path, pullHeadRef(pr.index))) ?? pr.headCommitId;
    if (!statusChecksPass(rule, head ? await this.deps.latestStatuses(repo, head) : [])) return 'Not all required status checks successful';
    const reviews = this.deps.prisma.review;
    if (s.required_approvals > 0) {
      const approvals = await reviews.count({ where: { issueId: pr.issueId, type: ReviewType.Approve, official: true, dismissed: false, ...(s.ignore_stale_approvals ? { stale: false } : {}) } });
      if (approvals < s.required_approvals) return 'Does not have enough approvals';
    }
    if (s.block_on_rejected_reviews && (await reviews.count({ where: { issueId: pr.issueId, type: ReviewType.Reject, official: true, dismissed: false } }))) return 'There are requested changes';
    if (s.block_on_official_review_requests && (await reviews.count({ where: { issueId: pr.issueId, type: ReviewType.Request, official: true } }))) return 'There are official review requests';
    if (s.block_on_outdated_branch && pr.commitsBehind > 0) return 'The head branch is behind the base branch';
    if (pr.status !== PullStatus.Empty && head && pr.mergeBase && (await this.changesProtectedFiles(path, rule, pr.mergeBase, head))) return 'Changed protected files';
    return null;
  }

  /** Whether the pull request's changes (merge base to head) touch a file the rule protects. */
  private async changesProtectedFiles(path: string, rule: ProtectionRule, mergeBase: string, head: string): Promise<boolean> {
    const globs = filePatterns(rule.settings.protected_file_patterns);
    if (!globs.length) return false;
    const names = (await runGit(['diff', '--name-only', '-z', mergeBase, head], { cwd: path })).split('\0').filter(Boolean);
    return names.some((name) => globs.some((g) => g.match(name.toLowerCase())));
  }
}
