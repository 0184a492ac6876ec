/** Notification threads for the events (Gitea's mail/UI notifier): watchers, participants, mentions. */
import type { Comment, Issue } from '../../../generated/prisma/client';
import type { NotificationService } from '../issues/notifications';
import type { User } from '../records';
import type { NotifyListener, RepoWithOwner } from './notifier';

export class NotificationListener implements NotifyListener {
  constructor(private readonly notifications: NotificationService) {}

  async issueCreated(doer: User, repo: RepoWithOwner, issue: Issue, mentionedIds: number[]) {
    await this.notifications.notifyIssue({ issue, repo, actorId: doer.id, mentionedIds });
  }

  async issueAssigned(doer: User, repo: RepoWithOwner, issue: Issue, assigneeIds: number[]) {
    await this.notifications.notifyIssue({ issue, repo, actorId: doer.id, receiverIds: assigneeIds });
  }

  async issueStatusChanged(doer: User, repo: RepoWithOwner, issue: Issue, _closed: boolean, comment: Comment) {
    await this.notifications.notifyIssue({ issue, repo, actorId: doer.id, commentId: comment.id });
  }

  /** Participants and watchers hear of a merge (Gitea's MergePullRequest notification). */
  async pullRequestMerged(doer: User, repo: RepoWithOwner, issue: Issue) {
    await this.notifications.notifyIssue({ issue, repo, actorId: doer.id });
  }

  async commentCreated(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment, mentionedIds: number[]) {
    await this.notifications.notifyIssue({ issue, repo, actorId: doer.id, commentId: comment.id, mentionedIds });
  }
}
