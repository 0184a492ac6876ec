/**
 * The pull request checker (Gitea's pull-request test queue): after a push to a base or head
 * branch the open pull requests of that branch are queued; one worker at a time brings
 * refs/pull/{index}/head up to date and stores mergeability, merge base, conflicted files,
 * divergence and diff size on the row. Reads (list, get) only show what the last check stored,
 * so they never run a merge. A pull request queued again while it is being checked is checked
 * once more afterwards, so the stored result is never older than the last push.
 *
 * The worker takes what is queued in batches: pull requests whose head branch lives in their
 * base repository (the usual case after a push to a base with many open pull requests) share one
 * read of the branch tips, one transaction moving their refs/pull/{index}/head and the base
 * tree, so each costs only its own merge-base, divergence, diff size and merge; forks, AGit pull
 * requests and anything the batch cannot settle go through the one-by-one check.
 */
import type { Prisma } from '../database';
import type { PullRequest } from '../../../generated/prisma/client';
import { listRefTips, resolveRef } from '../git/refs';
import { runGit } from '../git/run';
import { branchTip, checkMergeable, PullFlow, PullStatus, pullHeadRef, syncHeadRef } from './git';

export interface CheckerDeps {
  prisma: Prisma;
  /** The bare repository of a repository id (null when it is gone). */
  repoPath(repoId: number): Promise<string | null>;
  onError(err: unknown, what: string): void;
  /** After a check stored its result (a scheduled merge may now go ahead). */
  checked?(pr: PullRequest): Promise<void>;
}

/** How many queued pull requests one batch takes (bounds the ref transaction and the time before a re-queued one is seen). */
const BATCH = 100;

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
      const ids = [...this.queue].slice(0, BATCH);
      if (!ids.length) return;
      for (const id of ids) this.queue.delete(id);
      const done = await this.checkBatch(ids).catch((err) => {
        this.deps.onError(err, 'pull request checks');
        return new Set<number>();
      });
      for (const id of ids) if (!done.has(id)) await this.guarded(id, () => this.check(id));
    }
  }

  /** Runs one check; a failure is logged and leaves the pull request in the error state (not "checking" forever). */
  private async guarded(id: number, run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
    } catch (err) {
      this.deps.onError(err, `pull request check ${id}`);
      await this.deps.prisma.pullRequest.updateMany({ where: { id, status: PullStatus.Checking }, data: { status: PullStatus.Error } }).catch(() => undefined);
    }
  }

  /**
   * Checks the open pull requests among `ids` whose head branch is in their base repository, per
   * repository: one branch listing, one ref transaction, then each one's merge check. Returns
   * the ids it settled (the rest are left to check()).
   */
  private async checkBatch(ids: number[]): Promise<Set<number>> {
    const done = new Set<number>();
    const rows = await this.deps.prisma.pullRequest.findMany({ where: { id: { in: ids }, hasMerged: false, flow: PullFlow.GitHub }, orderBy: { id: 'asc' } });
    const byRepo = new Map<number, PullRequest[]>();
    for (const pr of rows) {
      if (pr.headRepoId !== pr.baseRepoId) continue;
      const list = byRepo.get(pr.baseRepoId);
      if (list) list.push(pr);
      else byRepo.set(pr.baseRepoId, [pr]);
    }
    for (const [repoId, prs] of byRepo) {
      const basePath = await this.deps.repoPath(repoId);
      if (!basePath) continue;
      const tips = new Map((await listRefTips(basePath, 'heads')).map((t) => [t.name, t.commit]));
      const ready = prs.filter((pr) => tips.has(pr.headBranch) && tips.has(pr.baseBranch));
      if (!ready.length) continue;
      const moves = ready.map((pr) => `update ${pullHeadRef(pr.index)} ${tips.get(pr.headBranch)}\n`).join('');
      await runGit(['update-ref', '--stdin'], { cwd: basePath, input: moves });
      const trees = new Map<string, string>();
      for (const pr of ready) {
        // The row again, just before its check: merged or retargeted meanwhile, it goes the one-by-one way.
        const now = await this.deps.prisma.pullRequest.findUnique({ where: { id: pr.id } });
        if (!now || now.hasMerged || now.headBranch !== pr.headBranch || now.baseBranch !== pr.baseBranch) continue;
        await this.guarded(pr.id, () => this.store(now, basePath, tips.get(pr.baseBranch)!, tips.get(pr.headBranch)!, trees));
        done.add(pr.id);
      }
    }
    return done;
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
    return this.store(pr, basePath, baseSha, headSha);
  }

  /** The merge check of `headSha` into `baseSha`, stored on the row (then the `checked` hook). */
  private async store(pr: PullRequest, basePath: string, baseSha: string, headSha: string, trees?: Map<string, string>): Promise<PullRequest> {
    const r = await checkMergeable(basePath, baseSha, headSha, trees);
    const updated = await this.deps.prisma.pullRequest.update({
      where: { id: pr.id },
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
