/**
 * Issue references in text, by Gitea's rules (modules/references): `#N` / `!N` for an issue of
 * the same repository, `owner/repo#N` for another one, and links to `<app>/owner/repo/issues/N`
 * (or `/pulls/N`) of this forge. A reference counts only between delimiters (space, line
 * start or end, brackets, quotes; a trailing `:;,.?!` before a space or the end). A close
 * keyword (close, closes, closed, fix, fixes, fixed, resolve, resolves, resolved) or a reopen
 * keyword (reopen, reopens, reopened), with an optional colon and one space right before the
 * reference, gives it an action. Markdown is stripped first (code spans and blocks, HTML and
 * link texts do not count); a title or a commit message is plain text. This is the one parser
 * of references: the timeline's cross-references and commits that close issues use it.
 */
import MarkdownIt from 'markdown-it';

/** Gitea's XRefAction. */
export const RefAction = { None: 0, Closes: 1, Reopens: 2, Neutered: 3 } as const;
export type RefActionCode = (typeof RefAction)[keyof typeof RefAction];
export const REF_ACTION_NAMES = ['none', 'closes', 'reopens', 'neutered'];

export interface IssueReference {
  /** Lower-cased; both empty for the repository of the text. */
  owner: string;
  name: string;
  index: number;
  action: RefActionCode;
  /** A time spent written after the reference (`@1h30m`), for a commit that closes the issue. */
  timeLog?: string;
}

interface Located extends IssueReference {
  end: number;
}

const CLOSE_KEYWORDS = ['close', 'closes', 'closed', 'fix', 'fixes', 'fixed', 'resolve', 'resolves', 'resolved'];
const REOPEN_KEYWORDS = ['reopen', 'reopens', 'reopened'];

// Go's \s (RE2, without Unicode): the ASCII white space of the patterns below.
const S = '[\\t\\n\\f\\r ]';
const END = `(?=${S}|$|\\)|\\]|[:;,.?!]${S}|[:;,.?!]$)`;
const NUMERIC = new RegExp(`(?:${S}|^|\\(|\\[|'|")([#!][0-9]+)(?=${S}|$|\\)|\\]|'|"|[:;,.?!]${S}|[:;,.?!]$)`, 'g');
const CROSS = new RegExp(`(?:${S}|^|\\(|\\[)([0-9a-zA-Z_.-]+/[0-9a-zA-Z_.-]+[#!][0-9]+)${END}`, 'g');
const VALID_NAME = /^[a-z0-9_.-]+$/;
const keywordPattern = (words: string[]) => new RegExp(`(?:${S}|^|\\(|\\[)(${words.join('|')}):? $`, 'i');
const CLOSE_PATTERN = keywordPattern(CLOSE_KEYWORDS);
const REOPEN_PATTERN = keywordPattern(REOPEN_KEYWORDS);

function actionBefore(text: string, start: number): RefActionCode {
  const before = text.slice(0, start);
  if (CLOSE_PATTERN.test(before)) return RefAction.Closes;
  if (REOPEN_PATTERN.test(before)) return RefAction.Reopens;
  return RefAction.None;
}

/** `[owner/repo]#N` at `start` of `text` (Gitea's getCrossReference), or null. */
function referenceAt(text: string, ref: string, start: number, actionText = text, actionStart = start): IssueReference | null {
  const sep = ref.search(/[#!]/);
  if (sep < 0) return null;
  const index = Number(ref.slice(sep + 1));
  if (!Number.isSafeInteger(index)) return null;
  const repo = ref.slice(0, sep);
  const action = actionBefore(actionText, actionStart);
  if (!repo) return { owner: '', name: '', index, action };
  const parts = repo.toLowerCase().split('/');
  if (parts.length !== 2 || !VALID_NAME.test(parts[0]) || !VALID_NAME.test(parts[1])) return null;
  return { owner: parts[0], name: parts[1], index, action };
}

/**
 * Every match of `pattern`, scanning on from the end of each reference (the delimiter after a
 * reference may be the one before the next: "#1 #2").
 */
function scan(text: string, pattern: RegExp): Located[] {
  const out: Located[] = [];
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    const start = m.index + m[0].length - m[1].length;
    const ref = referenceAt(text, m[1], start);
    if (ref) out.push({ ...ref, end: start + m[1].length });
    pattern.lastIndex = start + m[1].length;
  }
  return out;
}

/** `/owner/repo/issues/N` or `/pulls/N` of this forge (relative, or on `appUrl`'s host and path). */
function linkReference(href: string, appUrl: URL | null): string | null {
  let url: URL;
  try {
    url = new URL(href, appUrl ?? 'http://localhost/');
  } catch {
    return null;
  }
  if (appUrl && url.host.toLowerCase() !== appUrl.host.toLowerCase()) return null;
  let p = url.pathname;
  const base = appUrl ? appUrl.pathname.replace(/\/$/, '') : '';
  if (base && p.startsWith(`${base}/`)) p = p.slice(base.length);
  const parts = p.split('/');
  if (parts.length !== 5 || parts[0] !== '') return null;
  const sep = parts[3] === 'issues' ? '#' : parts[3] === 'pulls' ? '!' : null;
  return sep && /^[0-9]+$/.test(parts[4]) ? `${parts[1]}/${parts[2]}${sep}${parts[4]}` : null;
}

/** References in plain text (a title, a commit message); links to this forge's issues count. */
export function findReferences(text: string, appUrl?: string): IssueReference[] {
  let plain = text;
  const app = appUrl ? appUrl.replace(/\/?$/, '/') : '';
  if (app) {
    // Full links become short references first, as Gitea rewrites them.
    const escaped = app.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const full = new RegExp(`(${S}|^|\\(|\\[)${escaped}([0-9a-zA-Z_.-]+/[0-9a-zA-Z_.-]+)/(issues|pulls)/([0-9]+)${END}`, 'g');
    plain = plain.replace(full, (_m, pre: string, repo: string, kind: string, n: string) => `${pre}${repo}${kind === 'pulls' ? '!' : '#'}${n}`);
  }
  return withTimeLogs(plain, [...scan(plain, NUMERIC), ...scan(plain, CROSS)]);
}

const TIME_LOG = new RegExp(`(?:${S}|^|\\(|\\[)(@(?:[0-9]+(?:[.,][0-9]+)?[wdmh])+)${END}`, 'g');

/** Each `@<time>` goes to the nearest reference before it (the first one when none is), once per reference. */
function withTimeLogs(text: string, refs: Located[]): IssueReference[] {
  if (refs.length) {
    TIME_LOG.lastIndex = 0;
    for (let m = TIME_LOG.exec(text); m; m = TIME_LOG.exec(text)) {
      const start = m.index + m[0].length - m[1].length;
      let target: Located | undefined;
      for (const r of refs) if (r.end < start && (!target || target.end < r.end)) target = r;
      target ??= refs[0];
      target.timeLog ??= m[1].slice(1);
      TIME_LOG.lastIndex = start + m[1].length;
    }
  }
  return refs.map(({ end: _end, ...ref }) => ref);
}

const UNIT_SECONDS: Record<string, number> = { w: 5 * 8 * 3600, d: 8 * 3600, h: 3600, m: 60 };

/** Seconds of a time log such as `1h30m` or `1,5d` (a week is five days of eight hours, as Gitea counts); 0 when unreadable. */
export function timeLogSeconds(log: string): number {
  const m = /^(?:(\d+(?:[.,]\d+)?)w)?(?:(\d+(?:[.,]\d+)?)d)?(?:(\d+(?:[.,]\d+)?)h)?(?:(\d+(?:[.,]\d+)?)m)?$/i.exec(log);
  if (!m) return 0;
  let total = 0;
  ['w', 'd', 'h', 'm'].forEach((unit, i) => {
    if (m[i + 1]) total += Math.trunc(Number(m[i + 1].replace(',', '.')) * UNIT_SECONDS[unit]);
  });
  return total;
}

const md = new MarkdownIt('default', { html: true, linkify: false });

/**
 * Markdown's visible text (Gitea's mdstripper): text runs joined, a line break between runs
 * that other markup separates; code, HTML and link texts left out. An autolink to one of this
 * forge's issues reads as the reference it names; other links' targets are kept apart.
 */
function stripMarkdown(source: string, app: URL | null): { text: string; links: string[] } {
  const links: string[] = [];
  let text = '';
  const write = (s: string, coalesce: boolean) => {
    if (!coalesce && text) text += '\n';
    text += s;
  };
  for (const block of md.parse(source, {})) {
    if (block.type !== 'inline' || !block.children) continue;
    let inLink = 0;
    let prevText = false;
    for (const t of block.children) {
      if (t.type === 'link_open') {
        const href = String(t.attrGet('href') ?? '');
        const ref = t.markup === 'autolink' ? linkReference(href, app) : null;
        if (ref) text += ref;
        else if (href) links.push(href);
        inLink++;
        prevText = false;
        continue;
      }
      if (t.type === 'link_close') {
        inLink = Math.max(0, inLink - 1);
        prevText = false;
        continue;
      }
      if (inLink) continue;
      if (t.type === 'text') {
        write(t.content, prevText);
        prevText = true;
        continue;
      }
      if (t.type === 'softbreak' || t.type === 'hardbreak') {
        write('', false);
        prevText = false;
        continue;
      }
      prevText = false;
    }
  }
  return { text, links };
}

/** References in Markdown (an issue's or comment's body). */
export function findMarkdownReferences(source: string, appUrl?: string): IssueReference[] {
  const app = appUrl ? new URL(appUrl) : null;
  const { text, links } = stripMarkdown(source, app);
  const fromLinks: IssueReference[] = [];
  for (const href of links) {
    const ref = linkReference(href, app);
    if (!ref) continue;
    // A keyword before the link in the source (before `[text](url)` for a Markdown link) acts on it.
    let at = source.indexOf(href);
    if (at >= 2 && source[at - 1] === '(') {
      const bracket = source.lastIndexOf('[', at - 2);
      if (bracket >= 0) at = bracket;
    }
    const found = referenceAt(ref, ref, 0, source, at > 0 ? at : 0);
    if (found) fromLinks.push(at > 0 ? found : { ...found, action: RefAction.None });
  }
  return [...scan(text, NUMERIC), ...scan(text, CROSS)].map(({ end: _end, ...ref }) => ref as IssueReference).concat(fromLinks);
}
