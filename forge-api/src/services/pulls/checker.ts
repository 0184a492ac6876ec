/**
 * The pull request checker (Gitea's pull-request test queue): after a push to a base or head
 * branch the open pull requests of that branch are queued; one worker at a time brings
 * refs/pull/{index}/head up to date and stores mergeability, merge base, conflicted files,
 * divergence and diff size on the row. Reads (list, get) only show what the last check stored,
 * so they never run a merge. A pull request queued again while it is being checked is checked
 * once more afterwards, so the stored result is never older than the last push.
 */
import type { Prisma } from '../database';
import type { PullRequest } from '../../../generated/prisma/client';
import { resolveRef } from '../git/refs';
import { branchTip, checkMergeable, PullFlow, PullStatus, pullHeadRef, syncHeadRef } from './git';

export interface CheckerDeps {
  prisma: Prisma;
  /** The bare repository of a repository id (null when it is gone). */
  repoPath(repoId: number): Promise<string | null>;
  onError(err: unknown, what: string): void;
  /** After a check stored its result (a scheduled merge may now go ahead). */
  checked?(pr: PullRequest): Promise<void>;
}

export class PullChecker {
  private readonly queue = new Set<number>();
  private running: Promise<void> | null = null;

  constructor(private readonly deps: CheckerDeps) {}

  /** Marks the pull requests as being checked and queues them. */
  async enqueue(ids: number[]): Promise<void> {
    if (!ids.length) return;
    await this.deps.prisma.pullRequest.updateMany({ where: { id: { in: ids }, hasMerged: false }, data: { status: PullStatus.Checking } });
    for (const id of ids) this.queue.add(id);
    if (!this.running) this.running = this.drain().finally(() => (this.running = null));
  }

  /** Resolves when the queue is empty (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const next = this.queue.values().next();
      if (next.done) return;
      this.queue.delete(next.value);
      try {
        await this.check(next.value);
      } catch (err) {
        this.deps.onError(err, `pull request check ${next.value}`);
        await this.deps.prisma.pullRequest.updateMany({ where: { id: next.value, status: PullStatus.Checking }, data: { status: PullStatus.Error } }).catch(() => undefined);
      }
    }
  }

  /** Checks one pull request now (the creation path runs this before it answers). */
  async check(id: number): Promise<PullRequest | null> {
    const pr = await this.deps.prisma.pullRequest.findUnique({ where: { id } });
    if (!pr || pr.hasMerged) return pr;
    const basePath = await this.deps.repoPath(pr.baseRepoId);
    if (!basePath) return pr;
    const headPath = pr.flow === PullFlow.GitHub && pr.headRepoId ? await this.deps.repoPath(pr.headRepoId) : null;
    const headSha = headPath ? await syncHeadRef(basePath, headPath, pr.headBranch, pr.index) : await resolveRef(basePath, pullHeadRef(pr.index));
    const baseSha = await branchTip(basePath, pr.baseBranch);
    if (!headSha || !baseSha) {
      return this.deps.prisma.pullRequest.update({ where: { id }, data: { status: PullStatus.Error, headCommitId: headSha ?? pr.headCommitId } });
    }
    const r = await checkMergeable(basePath, baseSha, headSha);
    const updated = await this.deps.prisma.pullRequest.update({
      where: { id },
      data: {
        status: r.status,
        headCommitId: headSha,
        mergeBase: r.mergeBase,
        conflictedFiles: JSON.stringify(r.conflicts),
        commitsAhead: r.ahead,
        commitsBehind: r.behind,
        additions: r.additions,
        deletions: r.deletions,
        changedFiles: r.changedFiles,
      },
    });
    await this.deps.checked?.(updated);
    return updated;
  }
}
