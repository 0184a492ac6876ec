/**
 * Webhook deliveries for the events (Gitea's webhook notifier): each event becomes one queued
 * HookTask per matching hook; payloads are built only when some hook wants the event.
 */
import type { Comment, Issue, Review } from '../../../generated/prisma/client';
import { ReviewType } from '../convert/pull-review';
import { ZERO_SHA, type PushedRef } from '../git/push';
import type { User } from '../records';
import type { WebhookService } from '../webhooks';
import type { CommitStatusCreated, IssueChanges, NotifyListener, RepoWithOwner } from './notifier';

type Json = Record<string, unknown>;

/** How the listener reads what a payload shows (kept narrow so it does not need the tracker's types). */
export interface WebhookSources {
  rootUrl: string;
  /** The repository as it is now (counters changed by the event included). */
  repo(id: number): Promise<RepoWithOwner | null>;
  /** The API Issue record as a webhook shows it (no viewer). */
  issueJson(issueId: number, repo: RepoWithOwner): Promise<Json>;
  /** The API Comment record of a comment row as a webhook shows it (the row may be deleted already). */
  commentJson(comment: Comment, issue: Issue, repo: RepoWithOwner): Promise<Json>;
  /** The API PullRequest record of a pull request's issue as a webhook shows it (null when it is gone). */
  pullJson?(issueId: number, repo: RepoWithOwner): Promise<Json | null>;
  /** The API Release record (null when it is gone). */
  releaseJson?(releaseId: number, repo: RepoWithOwner): Promise<Json | null>;
}

const ISSUE_ACTIONS = { opened: 'opened', closed: 'closed', reopened: 'reopened' } as const;

export class WebhookListener implements NotifyListener {
  constructor(
    private readonly webhooks: WebhookService,
    private readonly sources: WebhookSources,
  ) {}

  async repositoryCreated(doer: User, repo: RepoWithOwner) {
    // The owner's default hooks become the repository's own first, so they hear "created" too.
    await this.webhooks.copyDefaultHooks(repo.id);
    await this.webhooks.notifyRepository(doer, repo, 'created');
  }

  /** Gitea's CommitStatusPayload, event `status`. */
  async commitStatusCreated(doer: User, repo: RepoWithOwner, created: CommitStatusCreated) {
    const { commit, status } = created;
    const html = `${this.sources.rootUrl}${repo.owner.name}/${repo.name}`;
    const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
    await this.webhooks.queue(repo, 'status', () => ({
      commit: {
        id: commit.oid,
        message: commit.message,
        url: `${html}/commit/${commit.oid}`,
        author: { name: commit.author.name, email: commit.author.email, username: '' },
        committer: { name: commit.committer.name, email: commit.committer.email, username: '' },
        verification: null,
        timestamp: commit.author.when.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        added: null,
        removed: null,
        modified: null,
      },
      context: status.context,
      created_at: iso(status.createdAt),
      description: status.description,
      id: status.id,
      repository: this.webhooks.repoJson(repo),
      sender: this.webhooks.userJson(doer),
      sha: status.sha,
      state: status.state,
      target_url: status.targetUrl,
      updated_at: iso(status.updatedAt),
    }));
  }

  async repositoryDeleting(doer: User, repo: RepoWithOwner) {
    await this.webhooks.notifyRepository(doer, repo, 'deleted');
  }

  async pushed(pusher: User, repo: RepoWithOwner, ref: PushedRef) {
    const { webhooks } = this;
    const isTag = ref.ref.startsWith('refs/tags/');
    const short = ref.ref.replace(/^refs\/(heads|tags)\//, '');
    const branch = isTag ? undefined : short;
    const refType = isTag ? 'tag' : 'branch';
    const repository = () => webhooks.repoJson(repo);
    const sender = () => webhooks.userJson(pusher);
    if (ref.after === ZERO_SHA) {
      await webhooks.queue(repo, 'delete', () => ({ ref: short, ref_type: refType, pusher_type: 'user', repository: repository(), sender: sender() }), branch);
      return;
    }
    if (ref.before === ZERO_SHA) {
      await webhooks.queue(repo, 'create', () => ({ sha: ref.after, ref: short, ref_type: refType, repository: repository(), sender: sender() }), branch);
    }
    const html = `${this.sources.rootUrl}${repo.owner.name}/${repo.name}`;
    const compareUrl = ref.before !== ZERO_SHA ? `${html}/compare/${ref.before}...${ref.after}` : '';
    await webhooks.queue(
      repo,
      'push',
      () => {
        const commits = ref.commits.map((c) => ({
          id: c.id,
          message: c.message,
          url: `${html}/commit/${c.id}`,
          author: { ...c.author, username: '' },
          committer: { ...c.committer, username: '' },
          verification: null,
          timestamp: c.timestamp,
          added: c.added,
          removed: c.removed,
          modified: c.modified,
        }));
        const user = sender();
        return {
          ref: ref.ref,
          before: ref.before,
          after: ref.after,
          compare_url: compareUrl,
          commits,
          total_commits: ref.total,
          head_commit: commits[0] ?? null,
          repository: repository(),
          pusher: user,
          sender: user,
        };
      },
      branch,
    );
  }

  async issueCreated(doer: User, repo: RepoWithOwner, issue: Issue) {
    await this.issueEvent(doer, repo, issue, ISSUE_ACTIONS.opened);
  }

  async issueStatusChanged(doer: User, repo: RepoWithOwner, issue: Issue, closed: boolean) {
    await this.issueEvent(doer, repo, issue, closed ? ISSUE_ACTIONS.closed : ISSUE_ACTIONS.reopened);
  }

  /** One `assigned` / `unassigned` delivery per assignee changed, as Gitea's IssueChangeAssignee. */
  async issueAssigneesChanged(doer: User, repo: RepoWithOwner, issue: Issue, added: number[], removed: number[]) {
    for (const action of [...added.map(() => 'assigned'), ...removed.map(() => 'unassigned')]) {
      if (issue.isPull) await this.pullEvent(doer, repo, issue, action, 'pull_request_assign');
      else await this.issueEvent(doer, repo, issue, action, 'issue_assign');
    }
  }

  /** `edited` with what the field was; Gitea's changes always carry the label lists, null here. */
  async issueEdited(doer: User, repo: RepoWithOwner, issue: Issue, changes: IssueChanges) {
    const full = { ...changes, added_labels: null, removed_labels: null };
    if (issue.isPull) await this.pullEvent(doer, repo, issue, 'edited', 'pull_request', { changes: full });
    else await this.issueEvent(doer, repo, issue, 'edited', 'issues', full);
  }

  /** Gitea's IssueChangeLabels / IssueClearLabels: one `label_updated` (or `label_cleared`) whatever changed. */
  async issueLabelsChanged(doer: User, repo: RepoWithOwner, issue: Issue, cleared: boolean) {
    const action = cleared ? 'label_cleared' : 'label_updated';
    if (issue.isPull) await this.pullEvent(doer, repo, issue, action, 'pull_request_label');
    else await this.issueEvent(doer, repo, issue, action, 'issue_label');
  }

  async issueMilestoneChanged(doer: User, repo: RepoWithOwner, issue: Issue) {
    const action = issue.milestoneId ? 'milestoned' : 'demilestoned';
    if (issue.isPull) await this.pullEvent(doer, repo, issue, action, 'pull_request_milestone');
    else await this.issueEvent(doer, repo, issue, action, 'issue_milestone');
  }

  /** Gitea's PullRequestReview: `reviewed`, the reviewer as sender and requested_reviewer, the event type in `review`. */
  async pullRequestReviewed(reviewer: User, repo: RepoWithOwner, issue: Issue, review: Review) {
    const eventType = REVIEW_EVENT_TYPES[review.type];
    if (!eventType) return;
    await this.pullEvent(reviewer, repo, issue, 'reviewed', eventType, { requestedReviewer: reviewer, review: { type: eventType, content: review.content } });
  }

  async pullRequestReviewRequested(doer: User, repo: RepoWithOwner, issue: Issue, reviewer: User, requested: boolean) {
    await this.pullEvent(doer, repo, issue, requested ? 'review_requested' : 'review_request_removed', 'pull_request_review_request', { requestedReviewer: reviewer });
  }

  /** A merge is announced as `closed` with the pull request's `merged` set (Gitea's MergePullRequest). */
  async pullRequestMerged(doer: User, repo: RepoWithOwner, issue: Issue) {
    await this.pullEvent(doer, repo, issue, 'closed', 'pull_request');
  }

  async pullRequestSynchronized(pusher: User, repo: RepoWithOwner, issue: Issue, before: string, after: string) {
    await this.pullEvent(pusher, repo, issue, 'synchronized', 'pull_request_sync', { push: { before, after } });
  }

  async commentCreated(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment) {
    await this.commentEvent(doer, repo, issue, comment, 'created');
  }

  async commentEdited(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment, oldBody: string) {
    await this.commentEvent(doer, repo, issue, comment, 'edited', { body: { from: oldBody }, added_labels: null, removed_labels: null });
  }

  async commentDeleted(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment) {
    await this.commentEvent(doer, repo, issue, comment, 'deleted');
  }

  /**
   * Gitea's IssueCommentPayload: event issue_comment on an issue, pull_request_comment (with the
   * pull request record) on a pull request; the X-Gitea-Event header says issue_comment for both.
   */
  private async commentEvent(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment, action: 'created' | 'edited' | 'deleted', changes?: Json) {
    const eventType = issue.isPull ? 'pull_request_comment' : 'issue_comment';
    if (!(await this.webhooks.wants(repo, eventType))) return;
    const current = (await this.sources.repo(repo.id)) ?? repo;
    const commentJson = await this.sources.commentJson(comment, issue, current);
    const issueJson = await this.sources.issueJson(issue.id, current);
    const pullJson = issue.isPull && this.sources.pullJson ? await this.sources.pullJson(issue.id, current) : null;
    await this.webhooks.notifyIssueComment(doer, current, action, issueJson, commentJson, { changes, pull: pullJson, eventType });
  }

  /** Gitea's ForkPayload, to the hooks of the repository forked: `forkee` is that repository, `repository` the new fork. */
  async repositoryForked(doer: User, base: RepoWithOwner, fork: RepoWithOwner) {
    if (!(await this.webhooks.wants(base, 'fork'))) return;
    const current = (await this.sources.repo(base.id)) ?? base;
    await this.webhooks.queue(current, 'fork', () => ({ forkee: this.webhooks.repoJson(current), repository: this.webhooks.repoJson(fork), sender: this.webhooks.userJson(doer) }));
  }

  async releaseChanged(doer: User, repo: RepoWithOwner, releaseId: number, action: 'published' | 'updated' | 'deleted') {
    if (!this.sources.releaseJson || !(await this.webhooks.wants(repo, 'release'))) return;
    const current = (await this.sources.repo(repo.id)) ?? repo;
    const release = await this.sources.releaseJson(releaseId, current);
    if (!release) return;
    await this.webhooks.queue(current, 'release', () => ({ action, release, repository: this.webhooks.repoJson(current), sender: this.webhooks.userJson(doer) }));
  }

  async wikiChanged(doer: User, repo: RepoWithOwner, page: string, action: 'created' | 'edited' | 'deleted', comment: string) {
    if (!(await this.webhooks.wants(repo, 'wiki'))) return;
    await this.webhooks.queue(repo, 'wiki', () => ({ action, repository: this.webhooks.repoJson(repo), sender: this.webhooks.userJson(doer), page, comment }));
  }

  private async issueEvent(doer: User, repo: RepoWithOwner, issue: Issue, action: string, eventType: 'issues' | 'issue_assign' | 'issue_label' | 'issue_milestone' = 'issues', changes?: Json) {
    if (issue.isPull) {
      await this.pullEvent(doer, repo, issue, action, 'pull_request');
      return;
    }
    if (!(await this.webhooks.wants(repo, eventType))) return;
    const current = (await this.sources.repo(repo.id)) ?? repo;
    const issueJson = (await this.sources.issueJson(issue.id, current)) as { number: number } & Json;
    await this.webhooks.notifyIssue(doer, current, action, issueJson, { eventType, changes });
  }

  /** Gitea's PullRequestPayload (`before`/`after` for synchronized, right after the action). */
  private async pullEvent(doer: User, repo: RepoWithOwner, issue: Issue, action: string, eventType: PullEventType, extra: PullEventExtra = {}) {
    if (!this.sources.pullJson || !(await this.webhooks.wants(repo, eventType))) return;
    const current = (await this.sources.repo(repo.id)) ?? repo;
    const pull = await this.sources.pullJson(issue.id, current);
    if (!pull) return;
    await this.webhooks.queue(current, eventType, () => ({
      action,
      ...(extra.push ?? {}),
      number: issue.index,
      ...(extra.changes ? { changes: extra.changes } : {}),
      pull_request: pull,
      requested_reviewer: extra.requestedReviewer ? this.webhooks.userJson(extra.requestedReviewer) : null,
      repository: this.webhooks.repoJson(current),
      sender: this.webhooks.userJson(doer),
      commit_id: '',
      review: extra.review ?? null,
    }));
  }
}

type PullEventType =
  | 'pull_request'
  | 'pull_request_assign'
  | 'pull_request_sync'
  | 'pull_request_label'
  | 'pull_request_milestone'
  | 'pull_request_review_request'
  | (typeof REVIEW_EVENT_TYPES)[number];

interface PullEventExtra {
  push?: { before: string; after: string };
  changes?: Json;
  requestedReviewer?: User;
  review?: { type: string; content: string };
}

/** The webhook event of a submitted review, by review type (Gitea's PullRequestReview: pending and requests send none). */
const REVIEW_EVENT_TYPES: Record<number, 'pull_request_review_approved' | 'pull_request_review_comment' | 'pull_request_review_rejected'> = {
  [ReviewType.Approve]: 'pull_request_review_approved',
  [ReviewType.Comment]: 'pull_request_review_comment',
  [ReviewType.Reject]: 'pull_request_review_rejected',
};
