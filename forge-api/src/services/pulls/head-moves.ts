/**
 * What follows a move of a pull request's head, whichever way it came (a push to the head
 * branch, an AGit push to refs/for/*): reviews marked stale (approvals dismissed where the
 * base's protection says so), the `pull_push` timeline entry, and the `synchronized` event.
 * The mergeability check is queued by the caller, which knows which pull requests a push touched.
 */
import type { RepoWithOwner } from '../convert';
import type { Notifier } from '../notify/notifier';
import type { User } from '../records';
import type { Issue, PullRequest } from '../../../generated/prisma/client';
import type { PullReviewService } from './reviews';
import type { PushComments } from './push-comments';

export interface HeadMoveDeps {
  reviews: PullReviewService;
  pushComments: PushComments;
  notifier: Notifier;
  diskPath(repo: RepoWithOwner): string;
}

export class PullHeadMoves {
  constructor(private readonly deps: HeadMoveDeps) {}

  /**
   * The head of `pr` moved from `before` to `after` (both readable in the base repository:
   * refs/pull/{index}/head brings a fork's commits there); `force`: `after` does not contain `before`.
   */
  async moved(pusher: User, headRepo: RepoWithOwner, baseRepo: RepoWithOwner, pr: PullRequest & { issue: Issue }, before: string, after: string, force: boolean): Promise<void> {
    await this.deps.reviews.headPushed(pusher, headRepo, baseRepo, pr, before, after);
    await this.deps.pushComments.record(this.deps.diskPath(baseRepo), pusher, pr, before, after, force);
    await this.deps.notifier.pullRequestSynchronized(pusher, baseRepo, pr.issue, before, after);
  }
}
