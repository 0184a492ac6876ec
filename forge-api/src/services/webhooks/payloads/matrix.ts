/**
 * Matrix's m.room.message event: HTML in formatted_body and the same text with Markdown links in
 * body, a push's commits under io.gitea.commits, as Gitea 1.27 sends it. The message type is the
 * hook's message_type (1 or m.notice, 2 or m.text). Matrix takes the event by PUT at the room's
 * send URL plus a transaction id (request.ts).
 */
import { issueCommentMessage, issueMessage, type LinkFormat, pullRequestMessage, releaseMessage, reviewMessage, shortRef, statusMessage, wikiMessage } from './messages';
import { goHtmlEscape, pathSegments } from './escape';
import { payloadKind, type Converter } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;

const link: LinkFormat = (url, text) => `<a href="${goHtmlEscape(url)}">${goHtmlEscape(text)}</a>`;

const MESSAGE_TYPES: Record<string, string> = { '1': 'm.notice', '2': 'm.text', 'm.notice': 'm.notice', 'm.text': 'm.text' };

/** The plain body: each link as [text](url), each <br> a newline. */
const plainBody = (html: string) => html.replace(/<a [^>]*?href="([^">]*?)">(.*?)<\/a>/g, '[$2]($1)').replaceAll('<br>', '\n');

/** A ref's page: a branch or a tag by its kind; a short name (create events) as a commit-ish. */
function refLink(repoUrl: string, ref: string): string {
  const name = shortRef(ref);
  const kind = ref.startsWith('refs/heads/') ? 'branch' : ref.startsWith('refs/tags/') ? 'tag' : 'commit';
  return link(`${repoUrl}/src/${kind}/${pathSegments(name)}`, name);
}

export const matrix: Converter = (event, p: Payload, meta, appUrl) => {
  const msgtype = MESSAGE_TYPES[meta.message_type ?? ''] ?? '';
  const message = (html: string, commits?: Payload[]) => ({
    body: plainBody(html),
    msgtype,
    format: 'org.matrix.custom.html',
    formatted_body: html,
    ...(commits?.length ? { 'io.gitea.commits': commits } : {}),
  });
  const repoLink = () => link(p.repository.html_url, p.repository.full_name);
  switch (payloadKind(event)) {
    case 'create':
      return message(`[${repoLink()}:${refLink(p.repository.html_url, p.ref)}] ${p.ref_type} created by ${p.sender.login}`);
    case 'delete':
      return message(`[${repoLink()}:${shortRef(p.ref)}] ${p.ref_type} deleted by ${p.sender.login}`);
    case 'fork':
      return message(`${link(p.forkee.html_url, p.forkee.full_name)} is forked to ${repoLink()}`);
    case 'push': {
      const commits: Payload[] = p.commits ?? [];
      const count = p.total_commits === 1 ? '1 commit' : `${p.total_commits} commits`;
      const lines = commits.map((c) => `${link(c.url, c.id.slice(0, 7))}: ${c.message} - ${c.author?.name ?? ''}`);
      return message(`[${repoLink()}] ${p.pusher.login} pushed ${count} to ${refLink(p.repository.html_url, p.ref)}:<br>${lines.join('<br>')}`, commits);
    }
    case 'issues':
      return message(issueMessage(p, appUrl, link, true).text);
    case 'issue_comment':
      return message(issueCommentMessage(p, appUrl, link, true).text);
    case 'pull_request':
      return message(pullRequestMessage(p, appUrl, link, true).text);
    case 'pull_request_review': {
      const m = reviewMessage(event, p);
      return message(`[${repoLink()}] Pull request review ${m.verdict}: ${link(`${p.repository.html_url}/pulls/${p.number}`, m.title)} by ${link(appUrl + p.sender.login, p.sender.login)}`);
    }
    case 'release':
      return message(releaseMessage(p, appUrl, link, true).text);
    case 'wiki':
      return message(wikiMessage(p, appUrl, link, true).text);
    case 'status':
      // Gitea's Matrix status message names no sender.
      return message(statusMessage(p, appUrl, link, false).text);
    case 'repository': {
      const verb = p.action === 'created' || p.action === 'deleted' ? p.action : '';
      return message(verb ? `[${repoLink()}] Repository ${verb} by ${link(appUrl + p.sender.login, p.sender.login)}` : '');
    }
    default:
      return undefined;
  }
};
