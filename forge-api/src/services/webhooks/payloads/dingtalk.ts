/**
 * DingTalk's robot message: an action card per event (title, Markdown text, one button) whose
 * button opens the forge page in the user's browser through DingTalk's dingtalk:// link (the
 * in-app view cannot reach most private hosts), as Gitea 1.27 sends it. Texts carry no links.
 */
import { commitCount, issueCommentMessage, issueMessage, plain, pullRequestMessage, releaseMessage, reviewHeadline, shortRef, statusMessage, wikiMessage, wikiPageUrl } from './messages';
import { goQueryEscape, pathSegments } from './escape';
import { payloadKind, type Converter } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;

/** Every field DingTalk's message has, empty: Gitea sends the whole structure each time. */
function body(msgtype: string, text: string, card: { text: string; title: string; hideAvatar: string; singleTitle: string; singleURL: string }) {
  return {
    msgtype,
    text: { content: text },
    link: { text: '', title: '', picUrl: '', messageUrl: '' },
    markdown: { text: '', title: '' },
    actionCard: { text: card.text, title: card.title, hideAvatar: card.hideAvatar, btnOrientation: '', singleTitle: card.singleTitle, singleURL: card.singleURL, btns: null },
    feedCard: { links: null },
    at: { atMobiles: null, isAtAll: false },
  };
}

const card = (title: string, text: string, button: string, url: string) =>
  body('actionCard', '', { text: text.trim(), title: title.trim(), hideAvatar: '0', singleTitle: button, singleURL: `dingtalk://dingtalkclient/page/link?pc_slide=false&url=${goQueryEscape(url)}` });

const EMPTY_CARD = { text: '', title: '', hideAvatar: '', singleTitle: '', singleURL: '' };

export const dingtalk: Converter = (event, p: Payload, _meta, appUrl) => {
  switch (payloadKind(event)) {
    case 'create':
    case 'delete': {
      const ref = shortRef(p.ref);
      const title = `[${p.repository.full_name}] ${p.ref_type} ${ref} ${event === 'create' ? 'created' : 'deleted'}`;
      return card(title, title, `view ref ${ref}`, `${p.repository.html_url}/src/${pathSegments(ref)}`);
    }
    case 'fork': {
      const title = `${p.forkee.full_name} is forked to ${p.repository.full_name}`;
      return card(title, title, `view forked repo ${p.repository.full_name}`, p.repository.html_url);
    }
    case 'push': {
      const branch = shortRef(p.ref);
      const commits: Payload[] = p.commits ?? [];
      const one = p.total_commits === 1;
      let url = one ? (commits[0]?.url ?? '') : (p.compare_url ?? '');
      if (!url) url = `${p.repository.html_url}/src/${pathSegments(branch)}`;
      const lines = commits.map((c) => `[${c.id.slice(0, 7)}](${c.url}) ${c.message.replace(/[\r\n]+$/, '')}${c.author ? ` - ${c.author.name}` : ''}`);
      return card(`[${p.repository.full_name}:${branch}] ${commitCount(p.total_commits)}`, lines.join('\r\n'), one ? 'view commit' : 'view commits', url);
    }
    case 'issues': {
      const m = issueMessage(p, appUrl, plain, true);
      return card(m.title, `${m.text}\r\n\r\n${m.extra}`, 'view issue', p.issue.html_url);
    }
    case 'issue_comment': {
      const m = issueCommentMessage(p, appUrl, plain, true);
      return card(m.title, `${m.text}\r\n\r\n${p.comment.body ?? ''}`, 'view issue comment', p.comment.html_url);
    }
    case 'pull_request': {
      const m = pullRequestMessage(p, appUrl, plain, true);
      return card(m.title, `${m.text}\r\n\r\n${m.extra}`, 'view pull request', p.pull_request.html_url);
    }
    case 'pull_request_review': {
      const headline = reviewHeadline(event, p);
      return card(headline, `${headline}\r\n\r\n${p.review?.content ?? ''}`, 'view pull request', p.pull_request.html_url);
    }
    case 'release': {
      const text = releaseMessage(p, appUrl, plain, true).text;
      return card(text, text, 'view release', p.release.html_url);
    }
    case 'wiki': {
      const text = wikiMessage(p, appUrl, plain, true).text;
      return card(text, text, 'view wiki', wikiPageUrl(p));
    }
    case 'status': {
      const text = statusMessage(p, appUrl, plain, true).text;
      return card(text, text, 'Status Changed', p.target_url ?? '');
    }
    case 'repository': {
      const title = `[${p.repository.full_name}] Repository`;
      if (p.action === 'created') return card(`${title} created`, `${title} created`, 'view repository', p.repository.html_url);
      // A deleted repository has no page to open: a plain text message.
      if (p.action === 'deleted') return body('text', `${title} deleted`, EMPTY_CARD);
      return body('', '', EMPTY_CARD);
    }
    default:
      return undefined;
  }
};
