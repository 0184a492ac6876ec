/**
 * Scheduled merges (Gitea's auto merge, `merge_when_checks_succeed`): a user with the right to
 * merge schedules a pull request with a style and message; it is merged in that user's name as
 * soon as its head passes the commit statuses the base branch requires. A check runs when the
 * merge is scheduled, when a success status or an approval is given on a commit that is the
 * head of a pull request, when a review is dismissed, and when the pull request checker finds a
 * scheduled pull request mergeable (after a push). A check merges only when everything a merge
 * needs holds then (the base branch's rule included: statuses, approvals, ...); otherwise the
 * schedule stays for the next trigger. Checks run one at a time in the background, each for the head commit it was
 * queued for: a check of a head that has moved since does nothing (a newer one is queued).
 */
import { CommentType } from '../issues/issues';
import { AccessMode, type RepoWithOwner } from '../convert';
import { ConflictError, NotAllowedError, NotFoundError, PermissionDeniedError } from '../errors';
import type { Prisma } from '../database';
import type { PermissionService } from '../permissions';
import type { User } from '../records';
import type { PullRequest } from '../../../generated/prisma/client';
import { resolveRef } from '../git/refs';
import { branchTip, pullHeadRef, PullFlow, PullStatus } from './git';
import type { PullMergeService } from './merge';

export interface AutoMergeDeps {
  prisma: Prisma;
  permissions: PermissionService;
  merges: PullMergeService;
  diskPath(repo: RepoWithOwner): string;
  repoById(id: number): Promise<RepoWithOwner | null>;
  onError(err: unknown, what: string): void;
}

export class PullAutoMergeService {
  /** Pull request id -> the head commit the check is for. */
  private readonly queue = new Map<number, string>();
  private running: Promise<void> | null = null;

  constructor(private readonly deps: AutoMergeDeps) {}

  /** Schedules the merge (409 when one is already scheduled, as Gitea) and checks it at once. */
  async schedule(doer: User, pr: PullRequest, style: string, message: string, deleteBranchAfterMerge: boolean): Promise<void> {
    const now = new Date();
    try {
      await this.deps.prisma.$transaction([
        this.deps.prisma.autoMerge.create({ data: { pullId: pr.id, doerId: doer.id, mergeStyle: style, message, deleteBranchAfterMerge } }),
        this.deps.prisma.comment.create({ data: { type: CommentType.PullScheduledMerge, issueId: pr.issueId, repoId: pr.baseRepoId, posterId: doer.id, createdAt: now, updatedAt: now } }),
      ]);
    } catch (err) {
      if ((err as { code?: string }).code === 'P2002') throw new ConflictError(`pull request is already scheduled to auto merge when checks succeed [pull_id: ${pr.id}]`);
      throw err;
    }
    await this.start(pr);
  }

  /** DELETE /pulls/{index}/merge: 404 when nothing is scheduled; another user than the scheduler needs the right to merge. */
  async cancel(doer: User, repo: RepoWithOwner, pr: PullRequest): Promise<void> {
    const row = await this.deps.prisma.autoMerge.findUnique({ where: { pullId: pr.id } });
    if (!row) throw new NotFoundError();
    if (row.doerId !== doer.id && (await this.deps.permissions.repoAccessMode(doer, repo, 'repo.code')) < AccessMode.Write) {
      throw new PermissionDeniedError('user has no permission to cancel the scheduled auto merge');
    }
    const now = new Date();
    await this.deps.prisma.$transaction([
      this.deps.prisma.autoMerge.deleteMany({ where: { pullId: pr.id } }),
      this.deps.prisma.comment.create({ data: { type: CommentType.PullCancelScheduledMerge, issueId: pr.issueId, repoId: pr.baseRepoId, posterId: doer.id, createdAt: now, updatedAt: now } }),
    ]);
  }

  /** Whether a merge is scheduled for the pull request. */
  async scheduled(pullId: number): Promise<boolean> {
    return (await this.deps.prisma.autoMerge.count({ where: { pullId } })) > 0;
  }

  /** Queues a check of a mergeable, unmerged pull request for its current head (Gitea's StartPRCheckAndAutoMerge). */
  async start(pr: PullRequest): Promise<void> {
    if (pr.hasMerged || pr.status !== PullStatus.Mergeable) return;
    const repo = await this.deps.repoById(pr.baseRepoId);
    const head = repo ? await resolveRef(this.deps.diskPath(repo), pullHeadRef(pr.index)) : null;
    if (head) this.enqueue(pr.id, head);
  }

  /** A success status or an approval on `sha`: the scheduled, mergeable pull requests of the repository whose head it is (Gitea's StartPRCheckAndAutoMergeBySHA). */
  async startBySha(repoId: number, sha: string): Promise<void> {
    const pulls = await this.deps.prisma.pullRequest.findMany({
      where: { baseRepoId: repoId, headCommitId: sha, hasMerged: false, status: PullStatus.Mergeable },
      select: { id: true },
    });
    if (!pulls.length) return;
    const scheduled = await this.deps.prisma.autoMerge.findMany({ where: { pullId: { in: pulls.map((p) => p.id) } }, select: { pullId: true } });
    for (const s of scheduled) this.enqueue(s.pullId, sha);
  }

  /** Resolves when no check is queued or running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private enqueue(pullId: number, sha: string): void {
    this.queue.set(pullId, sha);
    if (!this.running) this.running = this.drain().finally(() => (this.running = null));
  }

  private async drain(): Promise<void> {
    for (;;) {
      const next = this.queue.entries().next();
      if (next.done) return;
      const [pullId, sha] = next.value;
      this.queue.delete(pullId);
      try {
        await this.attempt(pullId, sha);
      } catch (err) {
        // Gitea only logs a failed scheduled merge; the schedule stays for the next trigger.
        this.deps.onError(err, `scheduled merge of pull request ${pullId}`);
      }
    }
  }

  /** Gitea's handlePullRequestAutoMerge: merges when the head is still `sha` and the pull request may be merged now. */
  private async attempt(pullId: number, sha: string): Promise<void> {
    const row = await this.deps.prisma.autoMerge.findUnique({ where: { pullId } });
    if (!row) return;
    const pr = await this.deps.prisma.pullRequest.findUnique({ where: { id: pullId } });
    if (!pr || pr.hasMerged) return;
    const repo = await this.deps.repoById(pr.baseRepoId);
    if (!repo) return;
    const path = this.deps.diskPath(repo);
    if ((await resolveRef(path, pullHeadRef(pr.index))) !== sha) return;
    if (pr.flow === PullFlow.GitHub) {
      const head = pr.headRepoId ? await this.deps.repoById(pr.headRepoId) : null;
      if (!head || !(await branchTip(this.deps.diskPath(head), pr.headBranch))) return;
    }
    const doer = await this.deps.prisma.user.findUnique({ where: { id: row.doerId } });
    if (!doer) return;
    const mode = await this.deps.permissions.repoAccessMode(doer, repo);
    try {
      await this.deps.merges.merge(
        { repo, mode, doer, canWrite: mode >= AccessMode.Write, isAdmin: mode >= AccessMode.Admin },
        pr,
        { Do: row.mergeStyle, merge_title_field: row.message, delete_branch_after_merge: row.deleteBranchAfterMerge },
      );
    } catch (err) {
      // Not ready yet (statuses, approvals, ...) or no longer allowed: Gitea leaves the schedule for the next trigger.
      if (err instanceof NotAllowedError) return;
      throw err;
    }
  }
}
