/**
 * Telegram's sendMessage body: the event as HTML (parse_mode HTML, link previews off), links
 * marked rel="nofollow" and every user-written text escaped, as Gitea 1.27 sends it. The hook's
 * URL carries the bot token and chat id (https://api.telegram.org/bot<token>/sendMessage?chat_id=...).
 */
import { commitCount, issueCommentMessage, issueMessage, type LinkFormat, pullRequestMessage, releaseMessage, reviewMessage, shortRef, statusMessage, wikiMessage } from './messages';
import { payloadKind, type Converter } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;

const escape = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&#34;').replaceAll("'", '&#39;');
const link: LinkFormat = (url, text) => `<a href="${escape(url)}" rel="nofollow">${escape(text)}</a>`;
const segments = (s: string) => s.split('/').map(encodeURIComponent).join('/');

/**
 * Gitea passes these messages through its HTML sanitizer, which drops tags it does not know from
 * text the user wrote (a status description "<ok>" vanishes) and escapes the quotes of the text
 * between tags.
 */
const userText = (s: string | undefined) => escape((s ?? '').replace(/<\/?[A-Za-z][^>]*>/g, ''));
const quoteText = (html: string) => html.replace(/(<[^>]*>)|'/g, (m, tag: string | undefined) => tag ?? '&#39;');

const message = (html: string) => ({ text: html.trim(), parse_mode: 'HTML', disable_web_page_preview: true });

export const telegram: Converter = (event, p: Payload, _meta, appUrl) => {
  const repoLink = () => link(p.repository.html_url, p.repository.full_name);
  switch (payloadKind(event)) {
    case 'create':
    case 'delete': {
      const ref = shortRef(p.ref);
      return message(`[${repoLink()}] ${escape(p.ref_type)} ${link(`${p.repository.html_url}/src/${segments(ref)}`, ref)} ${event === 'create' ? 'created' : 'deleted'}`);
    }
    case 'fork':
      return message(`${escape(p.forkee.full_name)} is forked to ${repoLink()}`);
    case 'push': {
      const branch = shortRef(p.ref);
      const commits: Payload[] = p.commits ?? [];
      let url = p.total_commits === 1 ? (commits[0]?.url ?? '') : (p.compare_url ?? '');
      if (!url) url = `${p.repository.html_url}/src/${segments(branch)}`;
      let html = `[${repoLink()}:${link(url, branch)}] ${escape(commitCount(p.total_commits))}`;
      for (const c of commits) {
        html += `\n[${link(c.url, c.id.slice(0, 7))}] ${escape(c.message.replace(/[\r\n]+$/, ''))}`;
        if (c.author) html += ` - ${escape(c.author.name)}`;
      }
      return message(html);
    }
    case 'issues': {
      const m = issueMessage(p, appUrl, link, true);
      return message(`${m.text}\n\n${escape(m.extra)}`);
    }
    case 'issue_comment':
      return message(`${issueCommentMessage(p, appUrl, link, true).text}\n${escape(p.comment.body ?? '')}`);
    case 'pull_request': {
      const m = pullRequestMessage(p, appUrl, link, true);
      return message(`${m.text}\n${escape(m.extra)}`);
    }
    case 'pull_request_review':
      return message(`${escape(reviewMessage(event, p).text)}\n${escape(p.review?.content ?? '')}`);
    case 'release':
      return message(releaseMessage(p, appUrl, link, true).text);
    case 'wiki':
      return message(quoteText(wikiMessage({ ...p, comment: userText(p.comment) }, appUrl, link, true).text));
    case 'status':
      return message(quoteText(statusMessage({ ...p, description: userText(p.description) }, appUrl, link, true).text));
    case 'repository':
      if (p.action === 'created') return message(`[${repoLink()}] Repository created`);
      if (p.action === 'deleted') return message(`[${escape(p.repository.full_name)}] Repository deleted`);
      return { text: '', parse_mode: '', disable_web_page_preview: false };
    default:
      return undefined;
  }
};
