/** Feed rows for the events (Gitea's action notifier): one row per feed the event reaches. */
import { ActionType, type ActivityService } from '../activities';
import { ZERO_SHA, type PushedRef } from '../git/push';
import type { NotifyListener, RepoWithOwner } from './notifier';
import type { Comment, Issue } from '../../../generated/prisma/client';
import type { User } from '../records';

/** Commits a push row of the feed keeps (Gitea's FeedMaxCommitNum). */
const FEED_MAX_COMMITS = 5;

export class ActivityListener implements NotifyListener {
  constructor(private readonly activities: ActivityService) {}

  async repositoryCreated(doer: User, repo: RepoWithOwner) {
    await this.activities.record({ opType: ActionType.CreateRepo, actUserId: doer.id, repo });
  }

  async pushed(pusher: User, repo: RepoWithOwner, ref: PushedRef) {
    const isTag = ref.ref.startsWith('refs/tags/');
    if (ref.after === ZERO_SHA) {
      await this.activities.record({ opType: isTag ? ActionType.DeleteTag : ActionType.DeleteBranch, actUserId: pusher.id, repo, refName: ref.ref });
      return;
    }
    // Gitea's feed row for a push: commit_repo (or push_tag) with the PushCommits JSON.
    const feedCommits = ref.commits.slice(0, FEED_MAX_COMMITS).map((c) => ({
      Sha1: c.id,
      Message: c.message,
      AuthorEmail: c.author.email,
      AuthorName: c.author.name,
      CommitterEmail: c.committer.email,
      CommitterName: c.committer.name,
      Timestamp: c.timestamp,
    }));
    await this.activities.record({
      opType: isTag ? ActionType.PushTag : ActionType.CommitRepo,
      actUserId: pusher.id,
      repo,
      refName: ref.ref,
      content: isTag
        ? ''
        : JSON.stringify({
            Commits: feedCommits,
            HeadCommit: feedCommits[0] ?? null,
            CompareURL: ref.before !== ZERO_SHA ? `${repo.owner.name}/${repo.name}/compare/${ref.before}...${ref.after}` : '',
            Len: ref.total,
          }),
    });
  }

  async issueCreated(doer: User, repo: RepoWithOwner, issue: Issue) {
    await this.activities.record({ opType: issue.isPull ? ActionType.CreatePullRequest : ActionType.CreateIssue, actUserId: doer.id, repo, content: `${issue.index}|${issue.title}` });
  }

  async issueStatusChanged(doer: User, repo: RepoWithOwner, issue: Issue, closed: boolean) {
    const opType = closed ? (issue.isPull ? ActionType.ClosePullRequest : ActionType.CloseIssue) : issue.isPull ? ActionType.ReopenPullRequest : ActionType.ReopenIssue;
    await this.activities.record({ opType, actUserId: doer.id, repo, content: `${issue.index}|` });
  }

  async commentCreated(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment) {
    await this.activities.record({
      opType: issue.isPull ? ActionType.CommentPull : ActionType.CommentIssue,
      actUserId: doer.id,
      repo,
      commentId: comment.id,
      content: `${issue.index}|${comment.content.slice(0, 200)}`,
    });
  }
}
