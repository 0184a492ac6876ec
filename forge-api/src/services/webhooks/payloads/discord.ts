/**
 * Discord's webhook message: one embed per event (title, description, link, colour, author),
 * plain-text titles and Markdown descriptions cut to Discord's 2,000 characters, as Gitea 1.27
 * sends it.
 */
import { COLORS, commitCount, issueCommentMessage, issueMessage, plain, pullRequestMessage, releaseMessage, reviewMessage, shortRef, statusMessage, wikiMessage, wikiPageUrl } from './messages';
import { payloadKind, type Converter, type HookMeta } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;

const DESCRIPTION_LIMIT = 2000;
const segments = (s: string) => s.split('/').map(encodeURIComponent).join('/');

/** The first `n` characters (code points), as Discord counts them; no ellipsis. */
function truncate(s: string, n: number): string {
  const chars = [...s];
  return chars.length < n ? s : chars.slice(0, n).join('');
}

function message(meta: HookMeta, appUrl: string, sender: Payload, title: string, description: string, url: string, color: number) {
  const body: Record<string, unknown> = { wait: false, content: '' };
  if (meta.username) body.username = meta.username;
  if (meta.icon_url) body.avatar_url = meta.icon_url;
  body.tts = false;
  body.embeds = [
    {
      title,
      description: truncate(description, DESCRIPTION_LIMIT),
      url,
      color,
      footer: { text: '' },
      author: { name: sender.login, url: appUrl + sender.login, icon_url: sender.avatar_url },
      fields: null,
    },
  ];
  return body;
}

export const discord: Converter = (event, p: Payload, meta, appUrl) => {
  const send = (title: string, description: string, url: string, color: number) => message(meta, appUrl, p.sender, title, description, url, color);
  switch (payloadKind(event)) {
    case 'create': {
      const ref = shortRef(p.ref);
      return send(`[${p.repository.full_name}] ${p.ref_type} ${ref} created`, '', `${p.repository.html_url}/src/${segments(ref)}`, COLORS.green);
    }
    case 'delete': {
      const ref = shortRef(p.ref);
      return send(`[${p.repository.full_name}] ${p.ref_type} ${ref} deleted`, '', `${p.repository.html_url}/src/${segments(ref)}`, COLORS.red);
    }
    case 'fork':
      return send(`${p.forkee.full_name} is forked to ${p.repository.full_name}`, '', p.repository.html_url, COLORS.green);
    case 'push': {
      const branch = shortRef(p.ref);
      const commits: Payload[] = p.commits ?? [];
      let url = p.total_commits === 1 ? (commits[0]?.url ?? '') : (p.compare_url ?? '');
      if (!url) url = `${p.repository.html_url}/src/${segments(branch)}`;
      const lines = commits.map((c) => {
        let subject = c.message.split('\n')[0].replace(/\r+$/, '');
        if ([...subject].length > 50) subject = `${[...subject].slice(0, 47).join('')}...`;
        return `[${c.id.slice(0, 7)}](${c.url}) ${subject} - ${c.author.name}`;
      });
      return send(`[${p.repository.full_name}:${branch}] ${commitCount(p.total_commits)}`, lines.join('\n'), url, COLORS.green);
    }
    case 'issues': {
      const m = issueMessage(p, appUrl, plain, false);
      return send(m.text, m.extra, p.issue.html_url, m.color);
    }
    case 'issue_comment': {
      const m = issueCommentMessage(p, appUrl, plain, false);
      return send(m.text, p.comment.body ?? '', p.comment.html_url, m.color);
    }
    case 'pull_request': {
      const m = pullRequestMessage(p, appUrl, plain, false);
      return send(m.text, m.extra, p.pull_request.html_url, m.color);
    }
    case 'pull_request_review': {
      const m = reviewMessage(event, p);
      return send(m.text, p.review?.content ?? '', p.pull_request.html_url, m.color);
    }
    case 'release': {
      const m = releaseMessage(p, appUrl, plain, false);
      return send(m.text, p.release.body ?? '', p.release.html_url, m.color);
    }
    case 'wiki': {
      const m = wikiMessage(p, appUrl, plain, false);
      return send(m.text, p.action === 'deleted' ? '' : (p.comment ?? ''), wikiPageUrl(p), m.color);
    }
    case 'status': {
      const m = statusMessage(p, appUrl, plain, false);
      return send(m.text, '', p.target_url ?? '', m.color);
    }
    case 'repository':
      if (p.action === 'created') return send(`[${p.repository.full_name}] Repository created`, '', p.repository.html_url, COLORS.green);
      if (p.action === 'deleted') return send(`[${p.repository.full_name}] Repository deleted`, '', '', COLORS.red);
      return send('', '', '', 0);
    default:
      return undefined;
  }
};
