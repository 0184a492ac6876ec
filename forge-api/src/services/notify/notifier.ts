/**
 * The one notifier (Gitea's services/notify): services announce what happened, where it
 * happened, and listeners (feeds, webhooks, notification threads) react. A listener's failure
 * is logged and does not fail the request: the change it reports is already committed.
 */
import type { Comment, Issue, Review } from '../../../generated/prisma/client';
import type { PushedRef } from '../git/push';
import type { GitCommit } from '../git/reader';
import type { Repository, User } from '../records';

export type RepoWithOwner = Repository & { owner: User };

/** The events; a listener implements the ones it cares about. */
export interface NotifyListener {
  /** A repository was created (after its row, its disk copy and its first commit exist). */
  repositoryCreated?(doer: User, repo: RepoWithOwner): Promise<void>;
  /** A repository is about to be deleted (its row and hooks still exist). */
  repositoryDeleting?(doer: User, repo: RepoWithOwner): Promise<void>;
  /** A push changed one ref (created, updated or deleted). */
  pushed?(pusher: User, repo: RepoWithOwner, ref: PushedRef): Promise<void>;
  /** An issue was opened; `mentionedIds` are the users its body mentions. */
  issueCreated?(doer: User, repo: RepoWithOwner, issue: Issue, mentionedIds: number[]): Promise<void>;
  /** Users were newly assigned to an issue. */
  issueAssigned?(doer: User, repo: RepoWithOwner, issue: Issue, assigneeIds: number[]): Promise<void>;
  /** Assignees were added to or removed from an issue (the doer included, unlike issueAssigned). */
  issueAssigneesChanged?(doer: User, repo: RepoWithOwner, issue: Issue, added: number[], removed: number[]): Promise<void>;
  /** An issue's title or body changed (one event per field, with what it was). */
  issueEdited?(doer: User, repo: RepoWithOwner, issue: Issue, changes: IssueChanges): Promise<void>;
  /** An issue's labels were set, added to or removed from (`cleared`: all removed at once). */
  issueLabelsChanged?(doer: User, repo: RepoWithOwner, issue: Issue, cleared: boolean): Promise<void>;
  /** An issue's milestone changed (`issue` as it is now; `oldMilestoneId` null when it had none). */
  issueMilestoneChanged?(doer: User, repo: RepoWithOwner, issue: Issue, oldMilestoneId: number | null): Promise<void>;
  /** An issue was closed or reopened; `comment` is the timeline entry that says so. */
  issueStatusChanged?(doer: User, repo: RepoWithOwner, issue: Issue, closed: boolean, comment: Comment): Promise<void>;
  /** A comment was added to an issue. */
  commentCreated?(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment, mentionedIds: number[]): Promise<void>;
  /**
   * Text of a pull request's review was written: its body, line comments (of a pending review
   * too), replies, a dismissal's message. Not issue comments (no comment event, no notification);
   * announced for what reads the text, the cross-references.
   */
  reviewTextWritten?(doer: User, repo: RepoWithOwner, issue: Issue, comments: Comment[]): Promise<void>;
  /** A comment's text was changed (`oldBody`: what it said before). */
  commentEdited?(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment, oldBody: string): Promise<void>;
  /** A comment was deleted (`comment`: the row as it was). */
  commentDeleted?(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment): Promise<void>;
  /** `fork` was made of `base` (after repositoryCreated of the fork). */
  repositoryForked?(doer: User, base: RepoWithOwner, fork: RepoWithOwner): Promise<void>;
  /** A release was published, edited while published, or is about to be deleted (its row still exists). */
  releaseChanged?(doer: User, repo: RepoWithOwner, releaseId: number, action: 'published' | 'updated' | 'deleted'): Promise<void>;
  /** A wiki page was created, edited or deleted (through the API; git pushes to the wiki are pushes). */
  wikiChanged?(doer: User, repo: RepoWithOwner, page: string, action: 'created' | 'edited' | 'deleted', comment: string): Promise<void>;
  /** A pull request was merged (by its merger, or by a scheduled merge in the scheduler's name). */
  pullRequestMerged?(doer: User, repo: RepoWithOwner, issue: Issue): Promise<void>;
  /** A push moved the head branch of an open pull request from `before` to `after`. */
  pullRequestSynchronized?(pusher: User, repo: RepoWithOwner, issue: Issue, before: string, after: string): Promise<void>;
  /** A review was submitted on a pull request (approved, changes requested or commented; never a pending one). */
  pullRequestReviewed?(reviewer: User, repo: RepoWithOwner, issue: Issue, review: Review): Promise<void>;
  /** A user's review was requested on a pull request, or the request withdrawn (a team's request is announced for each member). */
  pullRequestReviewRequested?(doer: User, repo: RepoWithOwner, issue: Issue, reviewer: User, requested: boolean): Promise<void>;
  /** A review of a pull request was dismissed (by an administrator, or by a push when the rule says so). */
  pullReviewDismissed?(doer: User, repo: RepoWithOwner, issue: Issue, review: Review): Promise<void>;
  /** A commit status was reported on a commit (`json`: the CommitStatus record as the API shows it). */
  commitStatusCreated?(doer: User, repo: RepoWithOwner, created: CommitStatusCreated): Promise<void>;
}

export interface IssueChanges {
  title?: { from: string };
  body?: { from: string };
}

export interface CommitStatusCreated {
  commit: GitCommit;
  status: { id: number; sha: string; state: string; targetUrl: string; description: string; context: string; createdAt: Date; updatedAt: Date };
  json: Record<string, unknown>;
}

type EventName = keyof NotifyListener;
type EventArgs<E extends EventName> = Parameters<NonNullable<NotifyListener[E]>>;

export type NotifyErrorLog = (err: unknown, event: string) => void;

export class Notifier {
  private readonly listeners: NotifyListener[] = [];

  constructor(readonly logError: NotifyErrorLog) {}

  /** Listeners run in the order they were added. */
  add(listener: NotifyListener): void {
    this.listeners.push(listener);
  }

  private async emit<E extends EventName>(event: E, ...args: EventArgs<E>): Promise<void> {
    for (const listener of this.listeners) {
      const handler = listener[event] as ((...a: EventArgs<E>) => Promise<void>) | undefined;
      if (!handler) continue;
      try {
        await handler.apply(listener, args);
      } catch (err) {
        this.logError(err, event);
      }
    }
  }

  repositoryCreated(...args: EventArgs<'repositoryCreated'>) {
    return this.emit('repositoryCreated', ...args);
  }

  repositoryDeleting(...args: EventArgs<'repositoryDeleting'>) {
    return this.emit('repositoryDeleting', ...args);
  }

  pushed(...args: EventArgs<'pushed'>) {
    return this.emit('pushed', ...args);
  }

  issueCreated(...args: EventArgs<'issueCreated'>) {
    return this.emit('issueCreated', ...args);
  }

  issueAssigned(...args: EventArgs<'issueAssigned'>) {
    return this.emit('issueAssigned', ...args);
  }

  issueAssigneesChanged(...args: EventArgs<'issueAssigneesChanged'>) {
    return this.emit('issueAssigneesChanged', ...args);
  }

  issueEdited(...args: EventArgs<'issueEdited'>) {
    return this.emit('issueEdited', ...args);
  }

  issueLabelsChanged(...args: EventArgs<'issueLabelsChanged'>) {
    return this.emit('issueLabelsChanged', ...args);
  }

  issueMilestoneChanged(...args: EventArgs<'issueMilestoneChanged'>) {
    return this.emit('issueMilestoneChanged', ...args);
  }

  issueStatusChanged(...args: EventArgs<'issueStatusChanged'>) {
    return this.emit('issueStatusChanged', ...args);
  }

  commentCreated(...args: EventArgs<'commentCreated'>) {
    return this.emit('commentCreated', ...args);
  }

  reviewTextWritten(...args: EventArgs<'reviewTextWritten'>) {
    return this.emit('reviewTextWritten', ...args);
  }

  commentEdited(...args: EventArgs<'commentEdited'>) {
    return this.emit('commentEdited', ...args);
  }

  commentDeleted(...args: EventArgs<'commentDeleted'>) {
    return this.emit('commentDeleted', ...args);
  }

  repositoryForked(...args: EventArgs<'repositoryForked'>) {
    return this.emit('repositoryForked', ...args);
  }

  releaseChanged(...args: EventArgs<'releaseChanged'>) {
    return this.emit('releaseChanged', ...args);
  }

  wikiChanged(...args: EventArgs<'wikiChanged'>) {
    return this.emit('wikiChanged', ...args);
  }

  pullRequestMerged(...args: EventArgs<'pullRequestMerged'>) {
    return this.emit('pullRequestMerged', ...args);
  }

  pullRequestSynchronized(...args: EventArgs<'pullRequestSynchronized'>) {
    return this.emit('pullRequestSynchronized', ...args);
  }

  pullRequestReviewed(...args: EventArgs<'pullRequestReviewed'>) {
    return this.emit('pullRequestReviewed', ...args);
  }

  pullRequestReviewRequested(...args: EventArgs<'pullRequestReviewRequested'>) {
    return this.emit('pullRequestReviewRequested', ...args);
  }

  pullReviewDismissed(...args: EventArgs<'pullReviewDismissed'>) {
    return this.emit('pullReviewDismissed', ...args);
  }

  commitStatusCreated(...args: EventArgs<'commitStatusCreated'>) {
    return this.emit('commitStatusCreated', ...args);
  }
}
