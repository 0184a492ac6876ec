/**
 * The one-line texts chat services show for an event, shared by the per-service payloads.
 * Input is the forge's own webhook payload (the JSON a `gitea` hook receives); links go through
 * the service's link syntax. The wording and colours are Gitea 1.27's, so a channel fed by the
 * forge reads as one fed by Gitea (forge-api/test/webhook-payloads.test.ts compares them with
 * what a real Gitea sent).
 */
import { pathEscape } from '../../git/tree-path';

/** Formats a link in a service's markup; `plain` drops the link and keeps the text. */
export type LinkFormat = (url: string, text: string) => string;
export const plain: LinkFormat = (_url, text) => text;

/** Gitea's colours per kind of change, as 24-bit RGB numbers. */
export const COLORS = {
  green: 0x1ac600,
  greenLight: 0xbfe5bf,
  yellow: 0xffd930,
  grey: 0x4f545c,
  purple: 0x7289da,
  orange: 0xeb6420,
  orangeLight: 0xe68d60,
  red: 0xff3232,
};

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are the webhook JSON, read by field. */
type Payload = Record<string, any>;

export interface Message {
  text: string;
  /** "#<index> <title>" for issues, pull requests and comments. */
  title: string;
  /** Markdown shown under the text (an issue's or pull request's body on open/edit). */
  extra: string;
  color: number;
}

const userLink = (appUrl: string, name: string, link: LinkFormat, escape: boolean) => link(appUrl + (escape ? encodeURIComponent(name) : name), name);

/** The short name of a ref: refs/heads/main -> main, refs/tags/v1 -> v1. */
export function shortRef(ref: string): string {
  for (const prefix of ['refs/heads/', 'refs/tags/', 'refs/remotes/', 'refs/pull/', 'refs/for/']) if (ref.startsWith(prefix)) return ref.slice(prefix.length);
  return ref;
}

/**
 * The web path of a full ref below a repository's /src/: branch/NAME or tag/NAME. A short name
 * (create events carry "main", not "refs/heads/main") gives "", so the link points at /src/, as
 * Gitea's links do.
 */
export function refWebPath(ref: string): string {
  const seg = (s: string) => s.split('/').map(encodeURIComponent).join('/');
  if (ref.startsWith('refs/heads/')) return `branch/${seg(ref.slice(11))}`;
  if (ref.startsWith('refs/tags/')) return `tag/${seg(ref.slice(10))}`;
  return '';
}

/** "1 new commit" / "N new commits". */
export function commitCount(n: number): string {
  return n === 1 ? '1 new commit' : `${n} new commits`;
}

const ISSUE_ACTIONS: Record<string, [string, number?]> = {
  opened: ['opened', COLORS.orange],
  closed: ['closed', COLORS.red],
  reopened: ['re-opened'],
  edited: ['edited'],
  unassigned: ['unassigned'],
  label_updated: ['labels updated'],
  label_cleared: ['labels cleared'],
  synchronized: ['synchronized'],
  demilestoned: ['milestone cleared'],
};

export function issueMessage(p: Payload, appUrl: string, link: LinkFormat, withSender: boolean): Message {
  const title = `#${p.number} ${p.issue.title}`;
  const titleLink = link(`${p.repository.html_url}/issues/${p.number}`, title);
  const repoLink = link(p.repository.html_url, p.repository.full_name);
  let text = '';
  let color = COLORS.yellow;
  if (p.action === 'assigned') {
    const names = (p.issue.assignees ?? []).map((u: Payload) => userLink(appUrl, u.login, link, true));
    text = `[${repoLink}] Issue assigned to ${names.join(', ')}: ${titleLink}`;
    color = COLORS.green;
  } else if (p.action === 'milestoned') {
    const ms = link(`${p.repository.html_url}/milestone/${p.issue.milestone?.id}`, p.issue.milestone?.title ?? '');
    text = `[${repoLink}] Issue milestoned to ${ms}: ${titleLink}`;
  } else if (ISSUE_ACTIONS[p.action]) {
    const [words, c] = ISSUE_ACTIONS[p.action];
    text = `[${repoLink}] Issue ${words}: ${titleLink}`;
    color = c ?? color;
  }
  if (withSender) text += ` by ${userLink(appUrl, p.sender.login, link, true)}`;
  const extra = p.action === 'opened' || p.action === 'edited' ? (p.issue.body ?? '') : '';
  return { text, title, extra, color };
}

export function pullRequestMessage(p: Payload, appUrl: string, link: LinkFormat, withSender: boolean): Message {
  const pr = p.pull_request;
  const title = `#${p.number} ${pr.title}`;
  // Gitea links the pull request's API-less page URL here (`url`, the web page of the PR).
  const titleLink = link(pr.url, title);
  const repoLink = link(p.repository.html_url, p.repository.full_name);
  let text = '';
  let extra = '';
  let color = COLORS.yellow;
  const said = (words: string) => `[${repoLink}] Pull request ${words}: ${titleLink}`;
  switch (p.action) {
    case 'opened':
      text = said('opened');
      extra = pr.body ?? '';
      color = COLORS.green;
      break;
    case 'closed':
      text = said(pr.merged ? 'merged' : 'closed');
      color = pr.merged ? COLORS.purple : COLORS.red;
      break;
    case 'reopened':
      text = said('re-opened');
      break;
    case 'edited':
      text = said('edited');
      extra = pr.body ?? '';
      break;
    case 'assigned': {
      const names = (pr.assignees ?? []).map((u: Payload) => userLink(appUrl, u.login, link, false));
      text = `[${repoLink}] Pull request assigned to ${names.join(', ')}: ${titleLink}`;
      color = COLORS.green;
      break;
    }
    case 'milestoned': {
      const ms = link(`${p.repository.html_url}/milestone/${pr.milestone?.id}`, pr.milestone?.title ?? '');
      text = `[${repoLink}] Pull request milestoned to ${ms}: ${titleLink}`;
      break;
    }
    case 'reviewed':
      text = said('reviewed');
      extra = p.review?.content ?? '';
      break;
    default: {
      const words: Record<string, string> = {
        unassigned: 'unassigned',
        label_updated: 'labels updated',
        label_cleared: 'labels cleared',
        synchronized: 'synchronized',
        demilestoned: 'milestone cleared',
        review_requested: 'review requested',
        review_request_removed: 'review request removed',
      };
      if (words[p.action]) text = said(words[p.action]);
    }
  }
  if (withSender) text += ` by ${userLink(appUrl, p.sender.login, link, false)}`;
  return { text, title, extra, color };
}

/** What a review event says (Gitea's Review converters): the verdict by event type, and its colour. */
const REVIEW_VERDICTS: Record<string, [string, number]> = {
  pull_request_review_approved: ['approved', COLORS.green],
  pull_request_review_rejected: ['requested changes', COLORS.red],
  pull_request_review_comment: ['comment', COLORS.grey],
};

/** "[owner/repo] Pull request review <verdict>: #<index> <title>" in plain text, the verdict, and the colour. */
export function reviewMessage(eventType: string, p: Payload): { text: string; verdict: string; title: string; color: number } {
  const [verdict, color] = REVIEW_VERDICTS[eventType] ?? ['', COLORS.yellow];
  const title = `#${p.number} ${p.pull_request.title}`;
  return { text: `[${p.repository.full_name}] Pull request review ${verdict}: ${title}`, verdict, title, color };
}

/** The headline the text services share for a review (Gitea's getReviewPayloadInfo, with its space before the colon). */
export function reviewHeadline(eventType: string, p: Payload): string {
  const m = reviewMessage(eventType, p);
  return `[${p.repository.full_name}] Pull request review ${m.verdict} : ${m.title}`;
}

export function issueCommentMessage(p: Payload, appUrl: string, link: LinkFormat, withSender: boolean): Message {
  const title = `#${p.issue.number} ${p.issue.title}`;
  const repoLink = link(p.repository.html_url, p.repository.full_name);
  const kind = p.is_pull ? 'pull request' : 'issue';
  const titleLink = link(p.is_pull ? p.comment.pull_request_url : p.comment.issue_url, title);
  let text = '';
  let color = COLORS.yellow;
  if (p.action === 'created') {
    text = `[${repoLink}] New comment on ${kind} ${titleLink}`;
    color = p.is_pull ? COLORS.greenLight : COLORS.orangeLight;
  } else if (p.action === 'edited') {
    text = `[${repoLink}] Comment edited on ${kind} ${titleLink}`;
  } else if (p.action === 'deleted') {
    text = `[${repoLink}] Comment deleted on ${kind} ${titleLink}`;
    color = COLORS.red;
  }
  if (withSender) text += ` by ${userLink(appUrl, p.sender.login, link, true)}`;
  return { text, title, extra: '', color };
}

export function releaseMessage(p: Payload, appUrl: string, link: LinkFormat, withSender: boolean): Message {
  const repoLink = link(p.repository.html_url, p.repository.full_name);
  const tag = p.release.tag_name as string;
  const refLink = link(`${p.repository.html_url}/releases/tag/${tag.split('/').map(encodeURIComponent).join('/')}`, tag);
  const verbs: Record<string, [string, number]> = { published: ['created', COLORS.green], updated: ['updated', COLORS.yellow], deleted: ['deleted', COLORS.red] };
  const [verb, color] = verbs[p.action] ?? ['', 0];
  let text = verb ? `[${repoLink}] Release ${verb}: ${refLink}` : '';
  if (withSender) text += ` by ${userLink(appUrl, p.sender.login, link, true)}`;
  return { text, title: '', extra: '', color };
}

/** The web page of a wiki page (its name one escaped path segment, as Gitea links it). */
export function wikiPageUrl(p: Payload): string {
  return `${p.repository.html_url}/wiki/${pathEscape(p.page)}`;
}

/** A wiki page created, edited or deleted; the commit message follows unless the page is gone. */
export function wikiMessage(p: Payload, appUrl: string, link: LinkFormat, withSender: boolean): Message {
  const repoLink = link(p.repository.html_url, p.repository.full_name);
  const pageLink = link(wikiPageUrl(p), p.page);
  const forms: Record<string, [string, number]> = {
    created: [`[${repoLink}] New wiki page '${pageLink}'`, COLORS.green],
    edited: [`[${repoLink}] Wiki page '${pageLink}' edited`, COLORS.yellow],
    deleted: [`[${repoLink}] Wiki page '${pageLink}' deleted`, COLORS.red],
  };
  let [text, color] = forms[p.action] ?? ['', COLORS.green];
  if (p.action !== 'deleted' && p.comment) text += ` (${p.comment})`;
  if (withSender) text += ` by ${userLink(appUrl, p.sender.login, link, true)}`;
  return { text, title: '', extra: '', color };
}

/** A commit status reported: its context and short commit linked to the status's target URL. */
export function statusMessage(p: Payload, appUrl: string, link: LinkFormat, withSender: boolean): Message {
  let text = `Commit Status changed: ${link(p.target_url ?? '', `${p.context} [${String(p.sha).slice(0, 10)}]`)} - ${p.description ?? ''}`;
  if (withSender) text += ` by ${userLink(appUrl, p.sender.login, link, true)}`;
  return { text, title: '', extra: '', color: COLORS.green };
}
