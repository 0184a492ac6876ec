/** Pull requests: the service, the background checker and the listener that feeds it pushes. */
import type { ForgeConfig } from '../../config';
import type { Converter } from '../convert';
import type { Prisma } from '../database';
import type { TrackerServices } from '../issues';
import type { Notifier, NotifyListener, RepoWithOwner } from '../notify/notifier';
import type { PermissionService } from '../permissions';
import type { RepoService } from '../repos';
import type { ForkService } from '../forks';
import type { PushedRef } from '../git/push';
import { ZERO_SHA } from '../git/push';
import type { User } from '../records';
import { PullChecker } from './checker';
import { PullService } from './pulls';
import { PullChangeService } from './changes';
import { PullMergeService } from './merge';
import { PullMergeChecks } from './merge-checks';
import type { GitDataService } from '../git-data';
import type { BranchProtectionService } from '../branch-protection';
import { PullReviewService } from './reviews';
import { ReviewRequestService } from './review-requests';
import { PullUpdateService } from './update';
import type { CommitStatusCreated } from '../notify/notifier';
import type { Issue, Review } from '../../../generated/prisma/client';
import { ReviewType } from '../convert/pull-review';
import { PullAutoMergeService } from './auto-merge';
import type { LatestStatus } from './required-statuses';
import { AgitService } from './agit';
import { PullHeadMoves } from './head-moves';
import { PushComments } from './push-comments';
import { PullPushMessage } from './push-message';
import { runGit } from '../git/run';
import { syncHeadRef } from './git';

export interface PullServices {
  pulls: PullService;
  checker: PullChecker;
  /** Commits, files, diff and patch of a pull request. */
  changes: PullChangeService;
  merges: PullMergeService;
  /** Merges scheduled for when the required statuses succeed. */
  autoMerge: PullAutoMergeService;
  reviews: PullReviewService;
  /** Requested reviewers (users and teams). */
  reviewRequests: ReviewRequestService;
  /** Merging or rebasing the base into the head branch. */
  updates: PullUpdateService;
  /** Pull requests opened and updated by pushes to refs/for/* (AGit). */
  agit: AgitService;
  /** What follows a move of a pull request's head. */
  headMoves: PullHeadMoves;
  /** The pull request hint a git push prints. */
  pushMessage: PullPushMessage;
}

/**
 * Queues the open pull requests of a pushed branch (as base or head) for a check, marks their
 * reviews stale, and announces a push to a head branch as the pull request's `synchronized`;
 * closes the pull requests of a deleted head branch and retargets those of a deleted base; starts a check of scheduled merges when a status, an approval or a dismissal may complete
 * what they wait for.
 */
export class PullPushListener implements NotifyListener {
  constructor(
    private readonly services: PullServices,
    private readonly diskPath: (repo: RepoWithOwner) => string,
  ) {}

  async pushed(pusher: User, repo: RepoWithOwner, ref: PushedRef): Promise<void> {
    if (!ref.ref.startsWith('refs/heads/')) return;
    const branch = ref.ref.slice('refs/heads/'.length);
    if (ref.after === ZERO_SHA) return this.services.pulls.branchDeleted(pusher, repo, branch);
    const ids = await this.services.pulls.affectedByPush(repo.id, branch);
    await this.services.checker.enqueue(ids);
    if (ref.before === ZERO_SHA) return;
    const heads = await this.services.pulls.openWithHead(repo.id, branch);
    if (!heads.length) return;
    const headPath = this.diskPath(repo);
    const force = !(await runGit(['merge-base', '--is-ancestor', ref.before, ref.after], { cwd: headPath }).then(() => true, () => false));
    for (const pr of heads) {
      const base = pr.baseRepoId === repo.id ? repo : await this.services.pulls.repoById(pr.baseRepoId);
      if (!base) continue;
      // The new commits in the base repository first (a fork's come through refs/pull/{index}/head).
      await syncHeadRef(this.diskPath(base), headPath, pr.headBranch, pr.index);
      await this.services.headMoves.moved(pusher, repo, base, pr, ref.before, ref.after, force);
    }
  }

  /** An approval may be what a scheduled merge waits for (Gitea's auto-merge listener). */
  async pullRequestReviewed(_doer: User, repo: RepoWithOwner, _issue: Issue, review: Review): Promise<void> {
    if (review.type === ReviewType.Approve && review.commitId) await this.services.autoMerge.startBySha(repo.id, review.commitId);
  }

  /** Gitea checks a scheduled merge again after a dismissal. */
  async pullReviewDismissed(_doer: User, _repo: RepoWithOwner, issue: Issue): Promise<void> {
    const [pr] = await this.services.pulls.byIssueIds([issue.id]);
    if (pr) await this.services.autoMerge.start(pr);
  }

  /** A success status may complete the required statuses of a scheduled merge. */
  async commitStatusCreated(_doer: User, repo: RepoWithOwner, created: CommitStatusCreated): Promise<void> {
    if (created.status.state === 'success') await this.services.autoMerge.startBySha(repo.id, created.status.sha);
  }
}

export function createPullServices(
  prisma: Prisma,
  config: ForgeConfig,
  deps: {
    convert: Converter;
    permissions: PermissionService;
    repos: RepoService;
    forks: ForkService;
    tracker: TrackerServices;
    gitData: GitDataService;
    protections: BranchProtectionService;
    logError(err: unknown, what: string): void;
    latestStatuses(repo: RepoWithOwner, sha: string): Promise<LatestStatus[]>;
    notifier: Notifier;
  },
): PullServices {
  let autoMerge: PullAutoMergeService | undefined;
  const diskPath = (r: RepoWithOwner) => deps.repos.diskPath(r.owner.name, r.name);
  const checker = new PullChecker({
    prisma,
    repoPath: async (id) => {
      const r = await deps.repos.byId(id);
      return r ? diskPath(r) : null;
    },
    onError: deps.logError,
    checked: async (pr) => {
      if (autoMerge && (await autoMerge.scheduled(pr.id))) await autoMerge.start(pr);
    },
  });
  const reviews = new PullReviewService({ prisma, convert: deps.convert, permissions: deps.permissions, protections: deps.protections, diskPath, notifier: deps.notifier });
  const pushComments = new PushComments(prisma);
  const headMoves = new PullHeadMoves({ reviews, pushComments, notifier: deps.notifier, diskPath });
  const reviewRequests = new ReviewRequestService({ prisma, permissions: deps.permissions, protections: deps.protections, reviews, notifier: deps.notifier });
  const pulls = new PullService({
    reviewRequests,
    reviews,
    prisma,
    issues: deps.tracker.issues,
    labels: deps.tracker.labels,
    convert: deps.convert,
    issueConvert: deps.tracker.convert,
    permissions: deps.permissions,
    checker,
    pushComments,
    repoByName: (o, n) => deps.repos.findByOwnerAndName(o, n),
    repoById: (id) => deps.repos.byId(id),
    diskPath,
    withParent: (r) => deps.forks.withParent(r),
  });
  const changes = new PullChangeService(deps.gitData, { html: (r) => deps.tracker.convert.repoHtml(r), api: (r) => deps.tracker.convert.repoApi(r) });
  const checks = new PullMergeChecks({ prisma, permissions: deps.permissions, protections: deps.protections, diskPath, latestStatuses: deps.latestStatuses });
  const merges = new PullMergeService({
    checks,
    prisma,
    permissions: deps.permissions,
    diskPath,
    noReplyAddress: config.noReplyAddress,
    repoById: (id) => deps.repos.byId(id),
    refsChanged: (doer, repoId) => deps.repos.refsChanged(doer, repoId),
    merged: async (doer, repo, pr) => {
      const issue = await prisma.issue.findUnique({ where: { id: pr.issueId } });
      if (issue) await deps.notifier.pullRequestMerged(doer, repo, issue);
    },
    scheduleMerge: (doer, pr, style, message, deleteBranch) => autoMerge!.schedule(doer, pr, style, message, deleteBranch),
  });
  autoMerge = new PullAutoMergeService({
    prisma,
    permissions: deps.permissions,
    merges,
    diskPath,
    repoById: (id) => deps.repos.byId(id),
    onError: deps.logError,
  });
  const updates = new PullUpdateService({
    prisma,
    permissions: deps.permissions,
    protections: deps.protections,
    diskPath,
    noReplyAddress: config.noReplyAddress,
    repoById: (id) => deps.repos.byId(id),
    refsChanged: (doer, repoId) => deps.repos.refsChanged(doer, repoId),
  });
  const agit = new AgitService({ prisma, pulls, checker, headMoves, permissions: deps.permissions, repoHtml: (r) => deps.tracker.convert.repoHtml(r) });
  const pushMessage = new PullPushMessage({ prisma, repoById: (id) => deps.repos.byId(id), repoHtml: (r) => deps.tracker.convert.repoHtml(r) });
  return { pulls, checker, changes, merges, autoMerge, reviews, reviewRequests, updates, agit, headMoves, pushMessage };
}

export { PullStatus } from './git';
