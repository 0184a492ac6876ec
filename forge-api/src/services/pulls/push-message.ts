/**
 * The pull request hint a `git push` prints (Gitea's post-receive trailer): for each branch the
 * push created or moved, the link to open a pull request from it, or the open pull request it
 * already heads. A fork's branches point at its parent when the parent takes pull requests; an
 * unforked repository's default branch gets no hint, and neither does a repository that takes
 * no pull requests (a mirror, or one with the unit off).
 */
import type { Prisma } from '../database';
import type { RepoWithOwner } from '../notify/notifier';
import type { PushedRefUpdate } from '../git/transport';
import { escapeSegments } from '../git-data/format';
import { PullFlow } from './git';

const ZERO = /^0+$/;
const BRANCH_PREFIX = 'refs/heads/';

export interface PushMessageDeps {
  prisma: Prisma;
  repoById(id: number): Promise<RepoWithOwner | null>;
  repoHtml(repo: RepoWithOwner): string;
}

function allowsPulls(repo: RepoWithOwner): boolean {
  return repo.hasPullRequests && !repo.isMirror;
}

export class PullPushMessage {
  constructor(private readonly deps: PushMessageDeps) {}

  /** The text for the client (each line printed as `remote: <line>`), '' when there is nothing to say. */
  async forPush(repo: RepoWithOwner, updates: PushedRefUpdate[]): Promise<string> {
    let base = repo;
    if (repo.isFork && repo.forkId) {
      const parent = await this.deps.repoById(repo.forkId);
      if (parent && allowsPulls(parent)) base = parent;
    }
    if (!allowsPulls(base)) return '';
    let out = '';
    for (const u of updates) {
      if (ZERO.test(u.newOid) || !u.ref.startsWith(BRANCH_PREFIX)) continue;
      const branch = u.ref.slice(BRANCH_PREFIX.length);
      if (branch === base.defaultBranch && !repo.isFork) continue;
      const open = await this.deps.prisma.pullRequest.findFirst({
        where: { headRepoId: repo.id, baseRepoId: base.id, headBranch: branch, baseBranch: base.defaultBranch, flow: PullFlow.GitHub, hasMerged: false, issue: { isClosed: false } },
        select: { index: true },
      });
      out += open
        ? `\nVisit the existing pull request:\n  ${this.deps.repoHtml(base)}/pulls/${open.index}\n\n`
        : `\nCreate a new pull request for '${branch}':\n  ${this.deps.repoHtml(repo)}/pulls/new/${escapeSegments(branch)}\n\n`;
    }
    return out;
  }
}
