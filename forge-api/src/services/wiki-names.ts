/**
 * Wiki page names as Gitea maps them (services/wiki/wiki_path.go), so a wiki pushed to Gitea or
 * to us names the same files: a title's spaces become dashes in the web path ("Home Page" ->
 * "Home-Page"); a title that has dashes of its own, or ends in ".md", keeps them and gets the
 * marker ".-" ("a-b" -> "a-b.-"); the file is the web path with spaces back and ".md" added
 * ("Home Page.md", "a-b.-.md"). Pure functions.
 */
import path from 'node:path';

export const RESERVED_WIKI_NAMES = ['_pages', '_new', '_edit', 'raw'];

/** Go's url.QueryEscape: everything but [A-Za-z0-9-_.~] escaped, space as "+". */
export function queryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** Go's url.QueryUnescape ("+" is a space); throws on a malformed escape. */
export function queryUnescape(s: string): string {
  return decodeEscapes(s.replace(/\+/g, ' '));
}

/** Go's url.PathUnescape ("+" stays); throws on a malformed escape. */
export function pathUnescape(s: string): string {
  return decodeEscapes(s);
}

function decodeEscapes(s: string): string {
  if (/%(?![0-9a-fA-F]{2})/.test(s)) throw new URIError(`invalid URL escape in ${JSON.stringify(s)}`);
  // Bytes, then UTF-8: Go unescapes bytes and keeps invalid UTF-8 as is.
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%') {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(s[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Gitea's util.PathJoinRelX: joined, backslashes as slashes, cleaned, relative, never above the root. */
export function pathJoinRelX(...elems: string[]): string {
  const joined = elems.map((e) => e.replace(/\\/g, '/')).join('/');
  return path.posix.normalize(`/${joined}`).replace(/^\/+/, '').replace(/\/+$/, '');
}

const hasDashMarker = (s: string) => s.endsWith('.-');

function unescapeSegment(s: string): string {
  const raw = hasDashMarker(s) ? s.slice(0, -2) : s.replace(/-/g, ' ');
  try {
    return queryUnescape(raw);
  } catch {
    return raw;
  }
}

function escapeSegToWeb(s: string, hadDashMarker: boolean): string {
  const marked = hadDashMarker || s.includes('-') || s.endsWith('.md') ? `${s}.-` : s.replace(/ /g, '-');
  return queryEscape(marked);
}

/** The segments of a web path as titles; a reserved one is refused. */
export function reservedSegment(webPath: string): string | null {
  for (const seg of webPath.split('/').map(unescapeSegment)) if (RESERVED_WIKI_NAMES.includes(seg)) return seg;
  return null;
}

/** The file in the wiki repository that holds the page of `webPath`. */
export function webPathToGitPath(webPath: string): string {
  if (webPath.endsWith('.md')) {
    let s = webPath;
    try {
      s = pathUnescape(webPath);
    } catch {
      /* kept as given */
    }
    return pathJoinRelX(s);
  }
  const parts = webPath.split('/').map((seg) => escapeSegToWeb(unescapeSegment(seg), hasDashMarker(seg)).replace(/%20/g, ' ').replace(/\+/g, ' '));
  return `${parts.join('/')}.md`;
}

/** The web path of a file of the wiki repository; null for a file that is not a page. */
export function gitPathToWebPath(file: string): string | null {
  if (!file.endsWith('.md')) return null;
  const parts: string[] = [];
  for (const seg of file.slice(0, -3).split('/')) {
    const dash = hasDashMarker(seg);
    const raw = dash ? seg.slice(0, -2) : seg.replace(/-/g, ' ');
    let title: string;
    try {
      title = queryUnescape(raw);
    } catch {
      return null;
    }
    parts.push(escapeSegToWeb(title, dash));
  }
  return parts.join('/');
}

/** The title shown for a web path. */
export function webPathToTitle(webPath: string): string {
  let display = path.posix.basename(webPath);
  if (display.endsWith('.md')) {
    display = display.slice(0, -3);
    try {
      display = pathUnescape(display);
    } catch {
      /* kept */
    }
  }
  return unescapeSegment(display);
}

/** The web path of a page name taken from a request path (its raw, still escaped, form). */
export function webPathFromRequest(raw: string): string {
  return pathJoinRelX(raw).replace(/\//g, '%2F');
}

/** The web path of a new page's title; an empty title is "unnamed", as Gitea names it. */
export function titleToWebPath(title: string): string {
  const t = pathJoinRelX('', escapeSegToWeb(title.trim(), false));
  return t === '' || t === '.' ? 'unnamed' : t;
}
