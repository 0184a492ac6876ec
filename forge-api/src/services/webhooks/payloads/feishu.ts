/**
 * Feishu's (Lark's) custom-bot message: plain text per event, as Gitea 1.27 sends it. Issues,
 * pull requests and comments get Feishu's own multi-line layout (kind, number and action, title,
 * link, author, operator, assignees, body) rather than the one-line text the other services share.
 * Feishu requests carry none of Gitea's X-* headers; a hook secret signs the message itself
 * (request.ts).
 */
import { plain, releaseMessage, reviewHeadline, shortRef, statusMessage, wikiMessage } from './messages';
import { payloadKind, type Converter } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;

const text = (s: string) => ({ msg_type: 'text', content: { text: s.trim() } });
const EMPTY = { msg_type: '', content: { text: '' } };

/** Feishu's block for an issue or a pull request (Gitea's getIssuesInfo / getPullRequestInfo). */
function itemText(kind: 'Issue' | 'PullRequest', p: Payload, item: Payload, index: number): string {
  const assignees: Payload[] = item.assignees ?? [];
  let result = '';
  if (p.action === 'assigned') result = `${p.sender.login} assign this to ${assignees[assignees.length - 1]?.login ?? ''}`;
  else if (p.action === 'unassigned') result = `${p.sender.login} unassigned this for someone`;
  else if (p.action === 'milestoned') result = `${p.repository.html_url}/milestone/${item.milestone?.id}`;
  const lines = [`[${kind}-${p.repository.full_name} #${index}]: ${p.action}\n${item.title}`, item.html_url, `${kind} by ${item.user?.login ?? ''}`, `Operator: ${p.sender.login}`];
  if (assignees.length) {
    // Gitea shows the action's result only beside a non-empty assignee list.
    if (['assigned', 'unassigned', 'milestoned'].includes(p.action)) lines.push(result);
    lines.push(`Assignees: ${assignees.map((u) => u.login).join(', ')}`);
  }
  return `${lines.join('\n')}\n\n${item.body ?? ''}`;
}

export const feishu: Converter = (event, p: Payload, _meta, appUrl) => {
  switch (payloadKind(event)) {
    case 'create':
    case 'delete':
      return text(`[${p.repository.full_name}] ${p.ref_type} ${shortRef(p.ref)} ${event === 'create' ? 'created' : 'deleted'}`);
    case 'fork':
      return text(`${p.forkee.full_name} is forked to ${p.repository.full_name}`);
    case 'push': {
      // Gitea leaves the commit count out of Feishu's push line (its text has an empty slot there).
      const lines = (p.commits ?? []).map((c: Payload) => `[${c.id.slice(0, 7)}](${c.url}) ${c.message.replace(/[\r\n]+$/, '')}${c.author ? ` - ${c.author.name}` : ''}`);
      return text(`[${p.repository.full_name}:${shortRef(p.ref)}] \r\n${lines.join('\r\n')}`);
    }
    case 'issues':
      return text(itemText('Issue', p, p.issue, p.issue.number));
    case 'pull_request':
      return text(itemText('PullRequest', p, p.pull_request, p.pull_request.number));
    case 'issue_comment': {
      const head = `[Comment-${p.repository.full_name} #${p.issue.number}]: ${p.action}\n${p.issue.title}`;
      const by = `${p.is_pull ? 'PullRequest' : 'Issue'} by ${p.issue.user?.login ?? ''}`;
      return text(`${head}\n${p.issue.html_url}\n${by}\nOperator: ${p.sender.login}\n\n${p.comment.body ?? ''}`);
    }
    case 'pull_request_review':
      return text(`${reviewHeadline(event, p)}\r\n\r\n${p.review?.content ?? ''}`);
    case 'release':
      return text(releaseMessage(p, appUrl, plain, true).text);
    case 'wiki':
      return text(wikiMessage(p, appUrl, plain, true).text);
    case 'status':
      return text(statusMessage(p, appUrl, plain, true).text);
    case 'repository':
      if (p.action === 'created' || p.action === 'deleted') return text(`[${p.repository.full_name}] Repository ${p.action}`);
      return EMPTY;
    default:
      return undefined;
  }
};
