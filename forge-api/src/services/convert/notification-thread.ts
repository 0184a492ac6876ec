/** structs.NotificationThread. */
import type { Comment, Issue, Notification } from '../../../generated/prisma/client';
import { fmtTime } from './common';
import type { ConvertContext } from './context';
import { issueApiUrl, issueHtmlUrl } from './issue';
import { repoApiUrl, type RepoWithOwner } from './repository';

/** convert.ToNotificationThread; `repoJson` is the converted Repository. */
export function toNotificationThread(c: ConvertContext, n: Notification, issue: Issue, repo: RepoWithOwner, repoJson: unknown, latestComment: Comment | null) {
  const apiIssue = issueApiUrl(c, repo, issue);
  const htmlIssue = issueHtmlUrl(c, repo, issue);
  const apiSubject = issue.isPull ? `${repoApiUrl(c, repo)}/pulls/${issue.index}` : apiIssue;
  return {
    id: n.id,
    repository: repoJson,
    subject: {
      title: issue.title,
      url: apiSubject,
      latest_comment_url: latestComment ? `${repoApiUrl(c, repo)}/issues/comments/${latestComment.id}` : '',
      html_url: htmlIssue,
      latest_comment_html_url: latestComment ? `${htmlIssue}#issuecomment-${latestComment.id}` : '',
      type: issue.isPull ? 'Pull' : 'Issue',
      state: issue.isClosed ? 'closed' : 'open',
    },
    unread: n.status === 1,
    pinned: n.status === 3,
    updated_at: fmtTime(n.updatedAt),
    url: `${c.rootUrl}api/v1/notifications/threads/${n.id}`,
  };
}
