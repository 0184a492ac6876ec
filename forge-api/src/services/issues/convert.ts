/**
 * Issue tracker rows -> Gitea's JSON records (structs.Issue, Comment, Label, Milestone,
 * Attachment, Reaction, NotificationThread, Activity). Absent users appear as Gitea's ghost.
 */
import type { ForgeConfig } from '../../config';
import { fmtTime, type Converter } from '../convert';
import type { Repository, User } from '../records';
import type { Attachment, Comment, Issue, Label, Milestone, Notification, Reaction, Activity } from '../../../generated/prisma/client';

export type RepoWithOwner = Repository & { owner: User };

export type IssueFull = Issue & {
  labels: { label: Label }[];
  milestone: Milestone | null;
  assignees: { assigneeId: number }[];
  attachments: Attachment[];
};

export const ISSUE_INCLUDE = {
  labels: { include: { label: true } },
  milestone: true,
  assignees: true,
  attachments: { where: { commentId: null } },
} as const;

/** Gitea's user_model.NewGhostUser(): what a deleted author shows as. */
export function ghostUser(): User {
  const epoch = new Date(0);
  return {
    id: -1, type: 0, name: 'Ghost', lowerName: 'ghost', fullName: '', email: '', keepEmailPrivate: true, passwordHash: '',
    mustChangePassword: false, loginName: '', loginSource: 0, location: '', website: '', description: '', language: '', avatarUrl: '',
    visibility: 0, isActive: false, isAdmin: false, isRestricted: false, prohibitLogin: true, allowGitHook: false, allowImportLocal: false,
    allowCreateOrganization: false, maxRepoCreation: -1, repoAdminChangeTeamAccess: false, totpSecret: null, totpLastUsed: null,
    numFollowers: 0, numFollowing: 0, numStars: 0, numRepos: 0, createdAt: epoch, updatedAt: epoch, lastLoginAt: null,
  } as User;
}

/** Label colors are stored "#rrggbb" and shown without '#'. Accepts #rgb, rgb, #rrggbb, rrggbb. */
export function normalizeColor(input: string): string | null {
  const m = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.exec(input.trim());
  if (!m) return null;
  let hex = m[1].toLowerCase();
  if (hex.length === 3) hex = hex.split('').map((c) => c + c).join('');
  return `#${hex}`;
}

/** The scope of a label named "scope/name" ("" when unscoped), as Gitea's Label.ExclusiveScope. */
export function labelScope(name: string): string {
  const i = name.lastIndexOf('/');
  return i <= 0 || i === name.length - 1 ? '' : name.slice(0, i);
}

export class IssueConverter {
  constructor(
    private readonly config: ForgeConfig,
    private readonly base: Converter,
  ) {}

  private get root() {
    return this.config.rootUrl;
  }

  repoApi(repo: RepoWithOwner): string {
    return `${this.root}api/v1/repos/${repo.owner.name}/${repo.name}`;
  }

  repoHtml(repo: RepoWithOwner): string {
    return `${this.root}${repo.owner.name}/${repo.name}`;
  }

  user(u: User | undefined, doer: User | null) {
    return this.base.userFor(u ?? ghostUser(), doer);
  }

  /** A user embedded without regard to the viewer (Gitea converts these with a nil doer). */
  userPublic(u: User | undefined) {
    return this.base.userPublic(u ?? ghostUser());
  }

  label(l: Label, repo: RepoWithOwner | null, orgName?: string) {
    const url = l.repoId && repo ? `${this.repoApi(repo)}/labels/${l.id}` : `${this.root}api/v1/orgs/${orgName ?? repo?.owner.name ?? ''}/labels/${l.id}`;
    return {
      id: l.id,
      name: l.name,
      exclusive: l.exclusive,
      is_archived: l.archivedAt !== null,
      color: l.color.replace(/^#/, ''),
      description: l.description,
      url,
    };
  }

  milestone(m: Milestone) {
    return {
      id: m.id,
      title: m.name,
      description: m.content,
      state: m.isClosed ? 'closed' : 'open',
      open_issues: m.numIssues - m.numClosedIssues,
      closed_issues: m.numClosedIssues,
      created_at: fmtTime(m.createdAt),
      updated_at: fmtTime(m.updatedAt),
      closed_at: m.closedAt ? fmtTime(m.closedAt) : null,
      due_on: m.deadline ? fmtTime(m.deadline) : null,
    };
  }

  attachment(a: Attachment) {
    return {
      id: a.id,
      name: a.name,
      size: Number(a.size),
      download_count: a.downloadCount,
      created_at: fmtTime(a.createdAt),
      uuid: a.uuid,
      browser_download_url: `${this.root}attachments/${a.uuid}`,
    };
  }

  issueHtml(repo: RepoWithOwner, issue: Pick<Issue, 'index' | 'isPull'>): string {
    return `${this.repoHtml(repo)}/${issue.isPull ? 'pulls' : 'issues'}/${issue.index}`;
  }

  issueApi(repo: RepoWithOwner, issue: Pick<Issue, 'index'>): string {
    return `${this.repoApi(repo)}/issues/${issue.index}`;
  }

  /** convert.ToAPIIssue. `users` must hold the poster and assignees (missing ones are ghosts). */
  issue(i: IssueFull, repo: RepoWithOwner, users: Map<number, User>, doer: User | null) {
    const assignees = i.assignees.map((a) => this.userPublic(users.get(a.assigneeId)));
    return {
      id: i.id,
      url: this.issueApi(repo, i),
      html_url: this.issueHtml(repo, i),
      number: i.index,
      user: this.user(users.get(i.posterId), doer),
      original_author: i.originalAuthor,
      original_author_id: i.originalAuthorId,
      title: i.title,
      body: i.body,
      ref: i.ref,
      assets: i.attachments.map((a) => this.attachment(a)),
      labels: i.labels.map(({ label }) => this.label(label, repo)),
      milestone: i.milestone ? this.milestone(i.milestone) : null,
      assignee: assignees[0] ?? null,
      assignees: assignees.length ? assignees : null,
      state: i.isClosed ? 'closed' : 'open',
      is_locked: i.isLocked,
      comments: i.numComments,
      created_at: fmtTime(i.createdAt),
      updated_at: fmtTime(i.updatedAt),
      closed_at: i.closedAt ? fmtTime(i.closedAt) : null,
      due_date: i.deadline ? fmtTime(i.deadline) : null,
      time_estimate: 0,
      pull_request: null,
      repository: { id: repo.id, name: repo.name, owner: repo.owner.name, full_name: `${repo.owner.name}/${repo.name}` },
      pin_order: i.pinOrder,
      // Projects do not exist here yet: Gitea's empty list encodes as null.
      projects: null,
      content_version: i.contentVersion,
    };
  }

  /** convert.ToAPIComment */
  comment(c: Comment & { attachments: Attachment[] }, issue: Pick<Issue, 'index' | 'isPull'>, repo: RepoWithOwner, poster: User | undefined) {
    const issueHtml = this.issueHtml(repo, issue);
    return {
      id: c.id,
      html_url: `${issueHtml}#issuecomment-${c.id}`,
      pull_request_url: issue.isPull ? issueHtml : '',
      issue_url: issue.isPull ? '' : issueHtml,
      user: this.userPublic(poster),
      original_author: c.originalAuthor,
      original_author_id: c.originalAuthorId,
      body: c.content,
      assets: c.attachments.map((a) => this.attachment(a)),
      created_at: fmtTime(c.createdAt),
      updated_at: fmtTime(c.updatedAt),
    };
  }

  reaction(r: Reaction, user: User | undefined, doer: User | null) {
    return { user: this.user(user, doer), content: r.type, created_at: fmtTime(r.createdAt) };
  }

  /** convert.ToNotificationThread; `repoJson` is the converted Repository. */
  thread(n: Notification, issue: Issue, repo: RepoWithOwner, repoJson: unknown, latestComment: Comment | null) {
    const apiIssue = this.issueApi(repo, issue);
    const htmlIssue = this.issueHtml(repo, issue);
    const apiSubject = issue.isPull ? `${this.repoApi(repo)}/pulls/${issue.index}` : apiIssue;
    return {
      id: n.id,
      repository: repoJson,
      subject: {
        title: issue.title,
        url: apiSubject,
        latest_comment_url: latestComment ? `${this.repoApi(repo)}/issues/comments/${latestComment.id}` : '',
        html_url: htmlIssue,
        latest_comment_html_url: latestComment ? `${htmlIssue}#issuecomment-${latestComment.id}` : '',
        type: issue.isPull ? 'Pull' : 'Issue',
        state: issue.isClosed ? 'closed' : 'open',
      },
      unread: n.status === 1,
      pinned: n.status === 3,
      updated_at: fmtTime(n.updatedAt),
      url: `${this.root}api/v1/notifications/threads/${n.id}`,
    };
  }
}

/** Gitea's ActionType names, by value. */
export const OP_TYPES: Record<number, string> = {
  1: 'create_repo', 2: 'rename_repo', 3: 'star_repo', 4: 'watch_repo', 5: 'commit_repo', 6: 'create_issue', 7: 'create_pull_request',
  8: 'transfer_repo', 9: 'push_tag', 10: 'comment_issue', 11: 'merge_pull_request', 12: 'close_issue', 13: 'reopen_issue',
  14: 'close_pull_request', 15: 'reopen_pull_request', 16: 'delete_tag', 17: 'delete_branch', 18: 'mirror_sync_push',
  19: 'mirror_sync_create', 20: 'mirror_sync_delete', 21: 'approve_pull_request', 22: 'reject_pull_request', 23: 'comment_pull',
  24: 'publish_release', 25: 'pull_review_dismissed', 26: 'pull_request_ready_for_review', 27: 'auto_merge_pull_request',
};

export type { Activity };
