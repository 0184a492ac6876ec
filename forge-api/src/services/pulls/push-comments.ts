/**
 * The `pull_push` entries of a pull request's timeline (Gitea's CreatePushPullComment): when a
 * pull request is opened, when its head moves and when its base changes, an entry lists the
 * commits that came in, oldest first, as `{"is_force_push":false,"commit_ids":[...]}`. A force
 * push adds an entry `{"is_force_push":true,"commit_ids":[<old>,<new>]}` after listing the
 * pull request's commits that earlier entries do not already list, and trims the earlier
 * entries to the commits still in the pull request (an entry left with none is removed).
 * Everything is read from the base repository, where refs/pull/{index}/head holds the head.
 */
import type { Prisma, PrismaNS } from '../database';
import type { User } from '../records';
import type { Comment, PullRequest } from '../../../generated/prisma/client';
import { GitCommandError, runGit } from '../git/run';
import { CommentType } from '../issues/issues';

/** Gitea lists at most this many commits in one entry. */
const MAX_COMMITS = 1000;

interface PushContent {
  is_force_push: boolean;
  commit_ids: string[];
}

function parse(content: string): PushContent | null {
  try {
    const v = JSON.parse(content) as PushContent;
    return Array.isArray(v.commit_ids) ? v : null;
  } catch {
    return null;
  }
}

/** Commits in `from..to` not in `not`, oldest first; every commit of `to` when the two are unrelated. */
async function commitsBetween(repoPath: string, from: string, to: string, not?: string): Promise<string[]> {
  const args = (range: string) => ['rev-list', '--reverse', '-n', String(MAX_COMMITS), range, ...(not ? ['--not', not] : [])];
  let out: string;
  try {
    out = await runGit(args(`${from}..${to}`), { cwd: repoPath });
  } catch (err) {
    if (!(err instanceof GitCommandError)) throw err;
    out = await runGit(args(to), { cwd: repoPath });
  }
  return out.split(/\s+/).filter(Boolean);
}

async function mergeBase(repoPath: string, a: string, b: string): Promise<string | null> {
  return (await runGit(['merge-base', a, b], { cwd: repoPath }).catch(() => '')).trim() || null;
}

export class PushComments {
  constructor(private readonly prisma: Prisma) {}

  /**
   * Records a move of the head from `oldRev` to `newRev` (commit ids or refs of the base
   * repository at `basePath`), by `pusher`; returns the entry written last, or null when
   * there was nothing to record (a push that brought no commit, a merged pull request).
   */
  async record(basePath: string, pusher: User, pr: PullRequest, oldRev: string, newRev: string, force: boolean): Promise<Comment | null> {
    if (pr.hasMerged) return null;
    const resolve = async (rev: string) => (await runGit(['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`], { cwd: basePath })).trim();
    const [oldId, newId] = await Promise.all([resolve(oldRev), resolve(newRev)]);
    let ids: string[] = [];
    if (force) {
      // The whole pull request, as it is now.
      const base = await mergeBase(basePath, `refs/heads/${pr.baseBranch}`, newId);
      if (base) ids = await commitsBetween(basePath, base, newId).catch(() => []);
    } else {
      ids = await commitsBetween(basePath, oldId, newId, `refs/heads/${pr.baseBranch}`);
      if (!ids.length) return null;
    }
    return this.prisma.$transaction(async (tx) => {
      if (force) ids = await this.trimEarlier(tx, pr.issueId, ids);
      const at = new Date();
      const row = (content: PushContent) => ({ type: CommentType.PullPush, issueId: pr.issueId, repoId: pr.baseRepoId, posterId: pusher.id, content: JSON.stringify(content), createdAt: at, updatedAt: at });
      let last: Comment | null = null;
      if (ids.length) last = await tx.comment.create({ data: row({ is_force_push: false, commit_ids: ids }) });
      if (force) last = await tx.comment.create({ data: row({ is_force_push: true, commit_ids: [oldId, newId] }) });
      return last;
    });
  }

  /**
   * Earlier non-force entries keep only the commits still in the pull request (`ids`), and
   * lose their entry when none is left; returns `ids` without the commits they still list.
   */
  private async trimEarlier(tx: PrismaNS.TransactionClient, issueId: number, ids: string[]): Promise<string[]> {
    const still = new Set(ids);
    const listed = new Set<string>();
    const earlier = await tx.comment.findMany({ where: { issueId, type: CommentType.PullPush }, orderBy: { id: 'asc' } });
    for (const c of earlier) {
      const content = parse(c.content);
      if (!content || content.is_force_push) continue;
      const kept = content.commit_ids.filter((id) => still.has(id));
      if (!kept.length) {
        await tx.comment.delete({ where: { id: c.id } });
        continue;
      }
      for (const id of kept) listed.add(id);
      // Gitea rewrites the content without touching the entry's times.
      if (kept.length !== content.commit_ids.length) await tx.comment.update({ where: { id: c.id }, data: { content: JSON.stringify({ ...content, commit_ids: kept }), updatedAt: c.updatedAt } });
    }
    return ids.filter((id) => !listed.has(id));
  }

  /** A changed base lists the pull request anew: every earlier entry goes, one entry lists the commits. */
  async relist(basePath: string, doer: User, pr: PullRequest): Promise<void> {
    await this.prisma.comment.deleteMany({ where: { issueId: pr.issueId, type: CommentType.PullPush } });
    await this.record(basePath, doer, pr, `refs/heads/${pr.baseBranch}`, `refs/pull/${pr.index}/head`, false);
  }
}
