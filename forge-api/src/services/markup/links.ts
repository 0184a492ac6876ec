/**
 * Where relative links in rendered markdown point, from the request's Context (a URL path such
 * as /{owner}/{repo}/src/branch/{branch}/{dir}) and FilePath, as Gitea's RenderMarkup reads them.
 */
export interface LinkContext {
  /** Absolute application URL with a trailing slash. */
  appUrl: string;
  /** The raw Context path ('' when none). */
  context: string;
  owner?: string;
  repo?: string;
  /** e.g. "branch/main" (without the tree path). */
  refPath: string;
  /** Folder of the rendered file inside the repository ('' at the root). */
  treePath: string;
}

function dirname(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : p.slice(0, i);
}

export function parseContext(appUrl: string, context: string | undefined, filePath: string | undefined): LinkContext {
  const ctx: LinkContext = { appUrl, context: context ?? '', refPath: '', treePath: '' };
  let linkPath = (context ?? '').trim();
  // A full URL to this application counts as its path.
  if (/^https?:\/\//i.test(linkPath) && linkPath.startsWith(appUrl)) linkPath = linkPath.slice(appUrl.length);
  else if (/^https?:\/\//i.test(linkPath)) return ctx;
  const appPath = new URL(appUrl).pathname; // sub-path installs: "/gitea/"
  if (appPath !== '/' && linkPath.startsWith(appPath)) linkPath = linkPath.slice(appPath.length);
  linkPath = linkPath.replace(/^\/+/, '');
  const fields = linkPath.split('/');
  if (fields.length >= 5 && fields[2] === 'src' && ['branch', 'commit', 'tag'].includes(fields[3])) {
    ctx.owner = fields[0];
    ctx.repo = fields[1];
    ctx.treePath = dirname(filePath ?? '');
    let ref = fields.slice(3).join('/').replace(/\/+$/, '');
    if (ctx.treePath && ref.endsWith(`/${ctx.treePath}`)) ref = ref.slice(0, -(ctx.treePath.length + 1));
    ctx.refPath = ref;
  } else if (fields.length === 2 && fields[0] && fields[1]) {
    ctx.owner = fields[0];
    ctx.repo = fields[1];
    ctx.treePath = dirname(filePath ?? '');
  }
  return ctx;
}

export function repoLink(ctx: LinkContext): string | null {
  return ctx.owner && ctx.repo ? `${ctx.appUrl}${ctx.owner}/${ctx.repo}` : null;
}

function join(...parts: string[]): string {
  return parts
    .filter((p) => p !== '')
    .map((p, i) => (i === 0 ? p.replace(/\/+$/, '') : p.replace(/^\/+|\/+$/g, '')))
    .join('/');
}

export function isAbsolute(link: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//');
}

export type LinkKind = 'default' | 'media';

/**
 * Resolves a link found in markdown. Absolute URLs and in-page anchors stay; "/x" becomes an
 * absolute link on this application; relative ones resolve against the repository file view
 * (src/ for links, media/ for images), the wiki, or the Context path.
 */
export function resolveLink(ctx: LinkContext, mode: string, link: string, kind: LinkKind): string {
  if (!link || isAbsolute(link) || link.startsWith('#')) return link;
  if (link.startsWith('/')) return ctx.appUrl + link.replace(/^\/+/, '');
  const repo = repoLink(ctx);
  if (mode === 'wiki' && repo) return join(repo, 'wiki', kind === 'media' ? 'raw' : '', link);
  if (mode !== 'markdown' && repo) return join(repo, kind === 'media' ? 'media' : 'src', ctx.refPath, ctx.treePath, link);
  if (ctx.context) {
    const base = isAbsolute(ctx.context) ? ctx.context : ctx.appUrl + ctx.context.replace(/^\/+/, '');
    return join(base, link);
  }
  return link;
}
