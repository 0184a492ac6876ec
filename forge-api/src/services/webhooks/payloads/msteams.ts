/**
 * Microsoft Teams' MessageCard (title, theme colour, one section with the sender and facts, an
 * "open" action) for each event, plain-text titles and Markdown texts, as Gitea 1.27 sends it.
 * The "Issue #" and "Pull request #" facts carry the record's id, not its number, as Gitea's do.
 */
import { COLORS, commitCount, issueCommentMessage, issueMessage, plain, pullRequestMessage, releaseMessage, reviewMessage, shortRef, statusMessage, wikiMessage, wikiPageUrl } from './messages';
import { payloadKind, type Converter } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;
type Fact = { name: string; value: string };

const segments = (s: string) => s.split('/').map(encodeURIComponent).join('/');

function card(repo: Payload | undefined, sender: Payload, title: string, text: string, target: string, color: number, fact?: Fact) {
  const facts: Fact[] = [];
  if (repo) facts.push({ name: 'Repository:', value: repo.full_name });
  if (fact) facts.push(fact);
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    themeColor: color.toString(16),
    title,
    summary: title,
    sections: [{ activityTitle: sender.full_name ?? '', activitySubtitle: sender.login, activityImage: sender.avatar_url, facts, text }],
    potentialAction: [{ '@type': 'OpenUri', name: 'View in Gitea', targets: [{ os: 'default', uri: target }] }],
  };
}

export const msteams: Converter = (event, p: Payload, _meta, appUrl) => {
  const repo = p.repository;
  switch (payloadKind(event)) {
    case 'create':
    case 'delete': {
      const ref = shortRef(p.ref);
      const created = event === 'create';
      return card(repo, p.sender, `[${repo.full_name}] ${p.ref_type} ${ref} ${created ? 'created' : 'deleted'}`, '', `${repo.html_url}/src/${segments(ref)}`, created ? COLORS.green : COLORS.yellow, {
        name: `${p.ref_type}:`,
        value: ref,
      });
    }
    case 'fork':
      return card(repo, p.sender, `${p.forkee.full_name} is forked to ${repo.full_name}`, '', repo.html_url, COLORS.green, { name: 'Forkee:', value: p.forkee.full_name });
    case 'push': {
      const branch = shortRef(p.ref);
      const commits: Payload[] = p.commits ?? [];
      let url = p.total_commits === 1 ? (commits[0]?.url ?? '') : (p.compare_url ?? '');
      if (!url) url = `${repo.html_url}/src/${segments(branch)}`;
      const text = commits.map((c) => `[${c.id.slice(0, 7)}](${c.url}) ${c.message.replace(/[\r\n]+$/, '')} - ${c.author.name}`).join('\n\n');
      return card(repo, p.sender, `[${repo.full_name}:${branch}] ${commitCount(p.total_commits)}`, text, url, COLORS.green, { name: 'Commit count:', value: String(p.total_commits) });
    }
    case 'issues': {
      const m = issueMessage(p, appUrl, plain, false);
      return card(repo, p.sender, m.text, m.extra, p.issue.html_url, m.color, { name: 'Issue #:', value: String(p.issue.id) });
    }
    case 'issue_comment': {
      const m = issueCommentMessage(p, appUrl, plain, false);
      return card(repo, p.sender, m.text, p.comment.body ?? '', p.comment.html_url, m.color, { name: 'Issue #:', value: String(p.issue.id) });
    }
    case 'pull_request': {
      const m = pullRequestMessage(p, appUrl, plain, false);
      return card(repo, p.sender, m.text, m.extra, p.pull_request.html_url, m.color, { name: 'Pull request #:', value: String(p.pull_request.id) });
    }
    case 'pull_request_review': {
      const m = reviewMessage(event, p);
      return card(repo, p.sender, m.text, p.review?.content ?? '', p.pull_request.html_url, m.color, { name: 'Pull request #:', value: String(p.pull_request.id) });
    }
    case 'release': {
      const m = releaseMessage(p, appUrl, plain, false);
      return card(repo, p.sender, m.text, '', p.release.html_url, m.color, { name: 'Tag:', value: p.release.tag_name });
    }
    case 'wiki': {
      const m = wikiMessage(p, appUrl, plain, false);
      return card(repo, p.sender, m.text, '', wikiPageUrl(p), m.color, { name: 'Repository:', value: repo.full_name });
    }
    case 'status': {
      const m = statusMessage(p, appUrl, plain, false);
      return card(repo, p.sender, m.text, '', p.target_url ?? '', m.color, { name: 'CommitStatus:', value: p.context });
    }
    case 'repository':
      if (p.action === 'created') return card(repo, p.sender, `[${repo.full_name}] Repository created`, '', repo.html_url, COLORS.green);
      return card(repo, p.sender, p.action === 'deleted' ? `[${repo.full_name}] Repository deleted` : '', '', '', p.action === 'deleted' ? COLORS.yellow : 0);
    default:
      return undefined;
  }
};
