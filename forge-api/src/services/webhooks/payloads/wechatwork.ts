/**
 * WeChat Work's (WeCom's) group-robot message: Markdown with WeCom's <font color> highlights,
 * as Gitea 1.27 sends it. Texts carry no links; the item's URL is shown as a Markdown link.
 */
import { issueCommentMessage, issueMessage, plain, pullRequestMessage, releaseMessage, reviewHeadline, shortRef, statusMessage, wikiMessage } from './messages';
import { payloadKind, type Converter } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;

const markdown = (content: string, msgtype = 'markdown') => ({
  msgtype,
  text: { content: '', mentioned_list: null, mentioned_mobile_list: null },
  markdown: { content },
});

export const wechatwork: Converter = (event, p: Payload, _meta, appUrl) => {
  switch (payloadKind(event)) {
    case 'create':
    case 'delete':
      return markdown(`[${p.repository.full_name}] ${p.ref_type} ${shortRef(p.ref)} ${event === 'create' ? 'created' : 'deleted'}`);
    case 'fork':
      return markdown(`${p.forkee.full_name} is forked to ${p.repository.full_name}`);
    case 'push': {
      // Gitea's heading has an empty slot where a commit count would go; kept, spaces and all.
      const title = `# ${p.repository.full_name}:${shortRef(p.ref)} <font color="warning">    </font>`;
      const commits = (p.commits ?? []).map((c: Payload) => {
        const author = c.author ? `Author: ${c.author.name}` : '';
        return ` > [${c.id.slice(0, 7)}](${c.url}) \r\n ><font color="info">${c.message.replaceAll('\n\n', '\r\n')}</font> \n ><font color="warning">${author}</font>`;
      });
      return markdown(`${title}\r\n\r\n${commits.join('\n')}`);
    }
    case 'issues': {
      const m = issueMessage(p, appUrl, plain, true);
      return markdown(` ><font color="info">${m.text}</font>\n >${m.extra} \n ><font color="warning"> ${m.title}</font> \n [${p.issue.html_url}](${p.issue.html_url})`);
    }
    case 'issue_comment': {
      const m = issueCommentMessage(p, appUrl, plain, true);
      const url = p.comment.html_url;
      return markdown(` ><font color="info">${m.text}</font>\n >${p.comment.body ?? ''} \n ><font color="warning">${m.title}</font> \n [${url}](${url})`);
    }
    case 'pull_request': {
      const m = pullRequestMessage(p, appUrl, plain, true);
      return markdown(`> <font color="info"> ${m.text} </font> \r\n > <font color="comment">${m.title} </font> \r\n > <font color="comment">${m.extra} </font> \r\n`);
    }
    case 'pull_request_review':
      return markdown(`# ${reviewHeadline(event, p)}\r\n\r\n >${p.review?.content ?? ''}`);
    case 'release':
      return markdown(releaseMessage(p, appUrl, plain, true).text);
    case 'wiki':
      return markdown(wikiMessage(p, appUrl, plain, true).text);
    case 'status':
      return markdown(statusMessage(p, appUrl, plain, true).text);
    case 'repository':
      if (p.action === 'created' || p.action === 'deleted') return markdown(`[${p.repository.full_name}] Repository ${p.action}`);
      return markdown('', '');
    default:
      return undefined;
  }
};
