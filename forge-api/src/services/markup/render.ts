import MarkdownIt from 'markdown-it';
import footnote from 'markdown-it-footnote';
import deflist from 'markdown-it-deflist';
import type { LinkContext } from './links';
import { parseContext, repoLink, resolveLink } from './links';
import { sanitize } from './sanitize';

type Token = MarkdownIt.Token;
type StateInline = MarkdownIt.StateInline;

/** Modes of POST /markup; /markdown maps its Mode onto them (see markdownMode). */
export const MARKUP_MODES = ['markdown', 'gfm', 'comment', 'wiki', 'file'] as const;
export type MarkupMode = (typeof MARKUP_MODES)[number];

const MARKDOWN_EXTENSIONS = ['.md', '.markdown', '.mdown', '.mkd', '.livemd'];

/** A request Gitea answers with 422 and this text. */
export class MarkupError extends Error {
  readonly statusCode = 422;
}

export interface RenderRequest {
  /** Mode as sent; '' means markdown. */
  mode: string;
  text: string;
  /** URL path of the page the text belongs to, e.g. /owner/repo/src/branch/main/docs. */
  context?: string;
  /** Path of the file in mode "file" (its extension picks the renderer). */
  filePath?: string;
  /** Absolute application URL with a trailing slash (Gitea's AppURL). */
  appUrl: string;
  /** Which of the @names exist and may be mentioned; none are linked when omitted. */
  mentionable?: (names: string[]) => Promise<Iterable<string>> | Iterable<string>;
}

interface Env extends MarkdownIt.Env {
  ctx: LinkContext;
  mode: MarkupMode;
  slugs: Map<string, number>;
}

/* ---------- markdown-it set-up: two instances (documents / comments with hard breaks) ---------- */

function slugify(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function inlineText(token: Token): string {
  return (token.children ?? []).map((c: Token) => (c.type === 'text' || c.type === 'code_inline' ? c.content : '')).join('');
}

const IMAGE_EXT = /\.(png|jpe?g|gif|svg|webp|bmp|ico|avif)$/i;

/** [[Page]], [[Label|Page]] and [[image.png]] in wiki mode, as Gitea's wiki renderer reads them. */
function wikiLinkRule(state: StateInline, silent: boolean): boolean {
  const env = state.env as unknown as Env;
  if (env.mode !== 'wiki') return false;
  const src = state.src;
  const start = state.pos;
  if (src.charCodeAt(start) !== 0x5b || src.charCodeAt(start + 1) !== 0x5b) return false;
  const end = src.indexOf(']]', start + 2);
  if (end < 0) return false;
  const inner = src.slice(start + 2, end);
  if (!inner || inner.includes('\n') || inner.includes('[')) return false;
  if (!silent) {
    const parts = inner.split('|');
    const label = parts[0].trim();
    const target = parts[parts.length - 1].trim();
    const repo = repoLink(env.ctx);
    const wikiBase = repo ? `${repo}/wiki` : `${env.ctx.appUrl}wiki`;
    if (IMAGE_EXT.test(target)) {
      const src = `${wikiBase}/raw/${target.split('/').map(encodeURIComponent).join('/')}`;
      const open = state.push('link_open', 'a', 1);
      open.attrs = [['href', src]];
      open.meta = { resolved: true };
      const img = state.push('wiki_image', 'img', 0);
      img.attrs = [['src', src], ['title', target.split('/').pop() ?? target], ['alt', target]];
      state.push('link_close', 'a', -1);
    } else {
      const page = target.replace(/ /g, '-').split('/').map(encodeURIComponent).join('/');
      const open = state.push('link_open', 'a', 1);
      open.attrs = [['href', `${wikiBase}/${page}`]];
      open.meta = { resolved: true };
      const text = state.push('text', '', 0);
      text.content = label;
      state.push('link_close', 'a', -1);
    }
  }
  state.pos = end + 2;
  return true;
}

function createMarkdown(breaks: boolean): MarkdownIt.MarkdownIt {
  const md = new MarkdownIt({ html: true, linkify: true, breaks, xhtmlOut: true });
  md.linkify.set({ fuzzyLink: false });
  // Footnotes (GFM) and definition lists (Gitea's goldmark extension).
  md.use(footnote).use(deflist);
  md.inline.ruler.before('link', 'wiki_link', wikiLinkRule);
  md.renderer.rules.wiki_image = (tokens, idx) => {
    const t = tokens[idx];
    return `<img${md.renderer.renderAttrs(t)}/>`;
  };
  // Images are wrapped in a link to themselves (Gitea opens them in a new tab).
  const image = md.renderer.rules.image!;
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const src = String(tokens[idx].attrGet('src') ?? '');
    return `<a href="${md.utils.escapeHtml(src)}" target="_blank" rel="nofollow noopener">${image(tokens, idx, options, env, self)}</a>`;
  };
  return md;
}

const documentMd = createMarkdown(false);
const commentMd = createMarkdown(true);

/* ---------- token passes ---------- */

function walkInline(tokens: Token[], fn: (children: Token[], inlineIndex: number) => void) {
  tokens.forEach((t, i) => {
    if (t.type === 'inline' && t.children) fn(t.children, i);
  });
}

function headingIds(tokens: Token[], env: Env) {
  tokens.forEach((t, i) => {
    if (t.type !== 'heading_open') return;
    const base = slugify(inlineText(tokens[i + 1]));
    if (!base) return;
    const n = env.slugs.get(base) ?? 0;
    env.slugs.set(base, n + 1);
    t.attrSet('id', `user-content-${n ? `${base}-${n}` : base}`);
  });
}

function taskLists(tokens: Token[]) {
  tokens.forEach((t, i) => {
    if (t.type !== 'inline' || !t.children?.length) return;
    if (tokens[i - 1]?.type !== 'paragraph_open' || tokens[i - 2]?.type !== 'list_item_open') return;
    const first = t.children[0];
    const m = first.type === 'text' ? /^\[([ xX])\] /.exec(first.content) : null;
    if (!m) return;
    first.content = first.content.slice(m[0].length);
    const box = new (first.constructor as new (type: string, tag: string, nesting: 0) => Token)('html_inline', '', 0);
    const line = (t.map?.[0] ?? 0) + 1;
    box.content = `<input type="checkbox" disabled=""${m[1] === ' ' ? '' : ' checked=""'} data-source-position="${line}"/>`;
    t.children.unshift(box);
    tokens[i - 2].attrJoin('class', 'task-list-item');
  });
}

function resolveLinks(tokens: Token[], env: Env) {
  const fix = (t: Token) => {
    if (t.type === 'link_open' && !t.meta?.resolved) {
      const href = t.attrGet('href');
      if (href !== null) t.attrSet('href', resolveLink(env.ctx, env.mode, String(href), 'default'));
    } else if (t.type === 'image') {
      const src = t.attrGet('src');
      if (src !== null) t.attrSet('src', resolveLink(env.ctx, env.mode, String(src), 'media'));
    }
  };
  for (const t of tokens) {
    fix(t);
    t.children?.forEach(fix);
  }
}

const MENTION = /(^|[\s(\[>,])@([0-9A-Za-z_][0-9A-Za-z_.-]*[0-9A-Za-z_]|[0-9A-Za-z_])(?![0-9A-Za-z_@-])/g;
const ISSUE_REF = /(^|[\s(\[,])(?:([0-9A-Za-z_.-]+)\/([0-9A-Za-z_.-]+))?#(\d+)(?![0-9A-Za-z_])/g;

function mentionCandidates(tokens: Token[]): string[] {
  const names = new Set<string>();
  walkInline(tokens, (children) => {
    let inLink = 0;
    for (const c of children) {
      if (c.type === 'link_open') inLink++;
      else if (c.type === 'link_close') inLink--;
      else if (c.type === 'text' && !inLink) for (const m of c.content.matchAll(MENTION)) names.add(m[2]);
    }
  });
  return [...names];
}

interface Replacement {
  start: number;
  end: number;
  href: string;
  text: string;
  cls: string;
}

/** Splits text tokens outside links into text and links for @mentions and issue references. */
function linkReferences(tokens: Token[], env: Env, mentionable: Set<string>) {
  const repo = repoLink(env.ctx);
  const withRefs = env.mode === 'comment' && repo !== null;
  if (!mentionable.size && !withRefs) return;
  walkInline(tokens, (children, idx) => {
    const out: Token[] = [];
    let inLink = 0;
    for (const c of children) {
      if (c.type === 'link_open') inLink++;
      if (c.type === 'link_close') inLink--;
      if (c.type !== 'text' || inLink) {
        out.push(c);
        continue;
      }
      const reps: Replacement[] = [];
      for (const m of c.content.matchAll(MENTION)) {
        if (!mentionable.has(m[2].toLowerCase())) continue;
        const start = m.index! + m[1].length;
        reps.push({ start, end: start + 1 + m[2].length, href: `${env.ctx.appUrl}${encodeURIComponent(m[2])}`, text: `@${m[2]}`, cls: 'mention' });
      }
      if (withRefs) {
        for (const m of c.content.matchAll(ISSUE_REF)) {
          const start = m.index! + m[1].length;
          const target = m[2] && m[3] ? `${env.ctx.appUrl}${m[2]}/${m[3]}` : repo!;
          reps.push({ start, end: m.index! + m[0].length, href: `${target}/issues/${m[4]}`, text: m[0].slice(m[1].length), cls: 'ref-issue' });
        }
      }
      if (!reps.length) {
        out.push(c);
        continue;
      }
      reps.sort((a, b) => a.start - b.start);
      let pos = 0;
      const Tok = c.constructor as new (type: string, tag: string, nesting: -1 | 0 | 1) => Token;
      const text = (s: string) => {
        if (!s) return;
        const t = new Tok('text', '', 0);
        t.content = s;
        out.push(t);
      };
      for (const r of reps) {
        if (r.start < pos) continue;
        text(c.content.slice(pos, r.start));
        const open = new Tok('link_open', 'a', 1);
        open.attrs = [['href', r.href], ['class', r.cls]];
        open.meta = { resolved: true };
        out.push(open);
        text(r.text);
        out.push(new Tok('link_close', 'a', -1));
        pos = r.end;
      }
      text(c.content.slice(pos));
    }
    tokens[idx].children = out;
  });
}

/* ---------- entry points ---------- */

/** /markdown's Mode: comment and gfm stay, Wiki=true means wiki, anything else is plain markdown. */
export function markdownMode(mode: string | undefined, wiki: boolean | undefined): string {
  if (wiki) return 'wiki';
  return mode === 'comment' || mode === 'gfm' ? mode : 'markdown';
}

/** /markup's Mode: Wiki=true means wiki; '' means markdown; unknown modes fail later with 422. */
export function markupMode(mode: string | undefined, wiki: boolean | undefined): string {
  if (wiki) return 'wiki';
  return mode || 'markdown';
}

/**
 * Renders markdown to sanitized HTML the way Gitea's POST /markup does for a mode.
 * Throws MarkupError (422) for an unknown mode or a file type we cannot render.
 */
export async function renderMarkup(req: RenderRequest): Promise<string> {
  const mode = (req.mode || 'markdown') as MarkupMode;
  if (!(MARKUP_MODES as readonly string[]).includes(mode)) throw new MarkupError(`Unknown mode: ${req.mode}`);
  if (mode === 'file') {
    const file = req.filePath ?? '';
    const dot = file.lastIndexOf('.');
    const ext = dot >= 0 && dot > file.lastIndexOf('/') ? file.slice(dot).toLowerCase() : '';
    if (!MARKDOWN_EXTENSIONS.includes(ext)) throw new MarkupError(`unsupported file to render: ${JSON.stringify(file)}`);
  }
  if (!req.text) return '';

  const env: Env = { ctx: parseContext(req.appUrl, req.context, req.filePath), mode, slugs: new Map() };
  const md = mode === 'comment' ? commentMd : documentMd;
  const tokens = md.parse(req.text, env);
  headingIds(tokens, env);
  taskLists(tokens);
  resolveLinks(tokens, env);
  if (mode !== 'markdown') {
    const candidates = mentionCandidates(tokens);
    const allowed = new Set<string>();
    if (candidates.length && req.mentionable) for (const n of await req.mentionable(candidates)) allowed.add(n.toLowerCase());
    linkReferences(tokens, env, allowed);
  }
  return sanitize(md.renderer.render(tokens, md.options, env));
}

/** POST /markdown/raw: the body rendered as a plain markdown document. */
export function renderRaw(text: string, appUrl: string): Promise<string> {
  return renderMarkup({ mode: 'markdown', text, appUrl });
}
