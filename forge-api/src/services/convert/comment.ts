/** structs.Comment (Gitea's convert.ToAPIComment). */
import type { Attachment, Comment, Issue } from '../../../generated/prisma/client';
import type { User } from '../records';
import { fmtTime } from './common';
import type { ConvertContext } from './context';
import { toAttachment } from './attachment';
import { issueHtmlUrl } from './issue';
import type { RepoWithOwner } from './repository';
import { embeddedUser } from './user';

/** convert.ToAPIComment */
export function toComment(ctx: ConvertContext, c: Comment & { attachments: Attachment[] }, issue: Pick<Issue, 'index' | 'isPull'>, repo: RepoWithOwner, poster: User | undefined) {
  const issueHtml = issueHtmlUrl(ctx, repo, issue);
  return {
    id: c.id,
    html_url: `${issueHtml}#issuecomment-${c.id}`,
    pull_request_url: issue.isPull ? issueHtml : '',
    issue_url: issue.isPull ? '' : issueHtml,
    user: embeddedUser(ctx, poster),
    original_author: c.originalAuthor,
    original_author_id: c.originalAuthorId,
    body: c.content,
    assets: c.attachments.map((a) => toAttachment(ctx, a)),
    created_at: fmtTime(c.createdAt),
    updated_at: fmtTime(c.updatedAt),
  };
}
