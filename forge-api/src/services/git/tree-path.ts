/**
 * File paths inside a git tree, as the API receives them (the `{filepath}` of /contents, /raw,
 * /media, the `path`/`from_path` of a file change). A path names an entry of a tree, never a file
 * of the server: it is cleaned the way Gitea cleans it (empty and `.` components and surrounding
 * slashes dropped) and refused when it could not name a tree entry or would be dangerous to hand
 * to git: a `..` component, an absolute path, a NUL or other control byte, a `.git` component in
 * any case (also the spellings NTFS and HFS+ treat as `.git`), a component over 255 bytes or a
 * path over 4096 bytes.
 *
 * Gitea resolves `..` lexically (`a/../b` is `b`) instead of refusing it; we refuse it, because a
 * path that climbs is a client bug or an attack and no tree entry is ever named `..`.
 */
import { InvalidError } from '../errors';

/** Bytes of a path (PATH_MAX on Linux); git itself has no lower limit. */
export const MAX_TREE_PATH_BYTES = 4096;
/** Bytes of one component (NAME_MAX): a checkout of a longer name fails on every common file system. */
export const MAX_TREE_NAME_BYTES = 255;

/** Gitea's ErrFilenameInvalid: 422 on writes; reads answer it with their own status. */
export class TreePathError extends InvalidError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`path contains a malformed path component [path: ${path}]`, [reason]);
  }
}

/** `.git` as git's verify_path sees it, including `.GIT`, `.git.`, `.git ` (NTFS) and `git~1` (8.3 short name). */
function isDotGit(component: string): boolean {
  const lower = component.toLowerCase();
  if (lower === 'git~1') return true;
  // HFS+ ignores some zero-width code points; NTFS ignores trailing dots and spaces.
  const folded = lower.replace(/[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g, '').replace(/[. ]+$/, '');
  return folded === '.git';
}

/**
 * The cleaned path (no leading/trailing slash, no empty or `.` components; "" for the root), or
 * TreePathError. `allowRoot` false refuses a path that cleans to the root (a file change must
 * name a file).
 */
export function cleanTreePath(raw: string, options: { allowRoot?: boolean } = {}): string {
  const allowRoot = options.allowRoot ?? true;
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new TreePathError(raw, 'control character in path');
  if (raw.startsWith('/')) throw new TreePathError(raw, 'absolute path');
  if (Buffer.byteLength(raw, 'utf8') > MAX_TREE_PATH_BYTES) throw new TreePathError(raw, `path longer than ${MAX_TREE_PATH_BYTES} bytes`);
  const parts: string[] = [];
  for (const part of raw.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') throw new TreePathError(raw, '".." component');
    if (isDotGit(part)) throw new TreePathError(raw, '".git" component');
    if (Buffer.byteLength(part, 'utf8') > MAX_TREE_NAME_BYTES) throw new TreePathError(raw, `component longer than ${MAX_TREE_NAME_BYTES} bytes`);
    parts.push(part);
  }
  const cleaned = parts.join('/');
  if (!allowRoot && cleaned === '') throw new TreePathError(raw, 'empty path');
  return cleaned;
}

/** One path segment escaped as Go's url.PathEscape does (Gitea builds its URLs with it). */
export function pathEscape(segment: string): string {
  let out = '';
  for (const byte of Buffer.from(segment, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~$&+:=@]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The path's components, each escaped for a URL (Gitea's PathEscapeSegments). */
export function escapeTreePath(p: string): string {
  return p.split('/').map(pathEscape).join('/');
}
