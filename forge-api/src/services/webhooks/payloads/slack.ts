/**
 * Slack's incoming-webhook message (channel, text, username, icon, attachments) for each event,
 * with Slack's `<url|text>` links and its three escaped characters, as Gitea 1.27 sends it.
 */
import { commitCount, issueCommentMessage, issueMessage, type LinkFormat, pullRequestMessage, refWebPath, releaseMessage, reviewMessage, shortRef, statusMessage, wikiMessage } from './messages';
import { payloadKind, type Converter, type HookMeta } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;

const escape = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const link: LinkFormat = (url, text) => `<${url}|${escape(text)}>`;
const refLink = (repoUrl: string, ref: string) => link(`${repoUrl}/src/${refWebPath(ref)}`, shortRef(ref));
const hex = (n: number) => n.toString(16);

interface Attachment {
  fallback: string;
  color: string;
  title: string;
  title_link: string;
  text: string;
}

function message(meta: HookMeta, text: string, attachments: Attachment[] | null) {
  return { channel: meta.channel ?? '', text, username: meta.username ?? '', icon_url: meta.icon_url ?? '', unfurl_links: 0, link_names: 0, attachments };
}

const attachment = (color: string, title: string, titleLink: string, text: string): Attachment => ({ fallback: '', color, title, title_link: titleLink, text });

export const slack: Converter = (event, p: Payload, meta, appUrl) => {
  switch (payloadKind(event)) {
    case 'create':
      return message(meta, `[${link(p.repository.html_url, p.repository.full_name)}:${refLink(p.repository.html_url, p.ref)}] ${p.ref_type} created by ${p.sender.login}`, null);
    case 'delete':
      return message(meta, `[${link(p.repository.html_url, p.repository.full_name)}:${shortRef(p.ref)}] ${p.ref_type} deleted by ${p.sender.login}`, null);
    case 'fork':
      return message(meta, `${link(p.forkee.html_url, p.forkee.full_name)} is forked to ${link(p.repository.html_url, p.repository.full_name)}`, null);
    case 'push': {
      const desc = commitCount(p.total_commits);
      const commits = p.compare_url ? link(p.compare_url, desc) : desc;
      const text = `[${link(p.repository.html_url, p.repository.full_name)}:${refLink(p.repository.html_url, p.ref)}] ${commits} pushed by ${p.pusher.login}`;
      const lines = (p.commits ?? []).map((c: Payload) => `${link(c.url, c.id.slice(0, 7))}: ${escape(c.message.split('\n')[0])} - ${escape(c.author.name)}`);
      return message(meta, text, [attachment(meta.color ?? '', p.repository.html_url, p.repository.html_url, lines.join('\n'))]);
    }
    case 'issues': {
      const m = issueMessage(p, appUrl, link, true);
      return message(meta, m.text, m.extra ? [attachment(hex(m.color), escape(m.title), p.issue.html_url, escape(m.extra))] : null);
    }
    case 'issue_comment': {
      const m = issueCommentMessage(p, appUrl, link, true);
      return message(meta, m.text, [attachment(hex(m.color), m.title, p.comment.html_url, escape(p.comment.body ?? ''))]);
    }
    case 'pull_request': {
      const m = pullRequestMessage(p, appUrl, link, true);
      return message(meta, m.text, m.extra ? [attachment(hex(m.color), escape(m.title), p.pull_request.html_url, escape(p.pull_request.body ?? ''))] : null);
    }
    case 'pull_request_review': {
      // Gitea writes the pull request's link here in Markdown, not in Slack's syntax.
      const m = reviewMessage(event, p);
      const repoLink = link(p.repository.html_url, p.repository.full_name);
      return message(meta, `[${repoLink}] Pull request review ${m.verdict}: [${m.title}](${p.repository.html_url}/pulls/${p.number}) by ${link(appUrl + p.sender.login, p.sender.login)}`, null);
    }
    case 'release':
      return message(meta, releaseMessage(p, appUrl, link, true).text, null);
    case 'wiki':
      return message(meta, wikiMessage(p, appUrl, link, true).text, null);
    case 'status':
      return message(meta, statusMessage(p, appUrl, link, true).text, null);
    case 'repository': {
      const verb = p.action === 'created' ? 'created' : p.action === 'deleted' ? 'deleted' : '';
      const text = verb ? `[${link(p.repository.html_url, p.repository.full_name)}] Repository ${verb} by ${link(appUrl + p.sender.login, p.sender.login)}` : '';
      return message(meta, text, null);
    }
    default:
      return undefined;
  }
};
