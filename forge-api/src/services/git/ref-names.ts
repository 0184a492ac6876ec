/**
 * Ref names, checked without starting a process.
 *
 * `checkRefFormat` follows git's own check (refs.c check_refname_format, as run by
 * `git check-ref-format [--allow-onelevel] [--refspec-pattern] [--normalize]`), character for
 * character, so a name accepted here is one git accepts. `isValidBranchName` / `isValidTagName`
 * add Gitea's rules for names given through the API (modules/git/ref.go IsValidRefPattern with
 * the binding's MaxSize(100)), so an API caller gets the same 422 as on Gitea.
 *
 * Names are checked on their UTF-8 bytes where git does (lengths, non-ASCII is allowed).
 */

export interface CheckRefFormatOptions {
  /** `--allow-onelevel`: a name without any `/` is allowed (git refuses `foo` by default). */
  allowOnelevel?: boolean;
  /** `--refspec-pattern`: one `*` is allowed in the whole name. */
  refspecPattern?: boolean;
  /** `--normalize`: leading `/` removed and `//` collapsed before the check. */
  normalize?: boolean;
}

/** Characters no component may contain (git's refname_disposition 4): controls, space, DEL, `: ? [ \ ^ ~`. */
function isForbiddenChar(c: number): boolean {
  return c < 0x20 || c === 0x7f || c === 0x20 || c === 0x3a || c === 0x3f || c === 0x5b || c === 0x5c || c === 0x5e || c === 0x7e;
}

/** What git would store for this name under `--normalize`, or the name unchanged. */
export function normalizeRefName(name: string): string {
  return name.replace(/^\/+/, '').replace(/\/{2,}/g, '/');
}

/**
 * Why git would refuse this ref name, or null when `git check-ref-format` accepts it.
 * With `normalize` the name is checked (and would be stored) after `normalizeRefName`.
 */
export function refFormatError(input: string, options: CheckRefFormatOptions = {}): string | null {
  const name = options.normalize ? normalizeRefName(input) : input;
  if (name === '@') return 'is "@"';
  let starsLeft = options.refspecPattern ? 1 : 0;
  let components = 0;
  let start = 0;
  for (;;) {
    let end = start;
    let last = 0;
    for (; end < name.length && name.charCodeAt(end) !== 0x2f; end++) {
      const c = name.charCodeAt(end);
      if (c === 0x2e /* . */ && last === 0x2e) return 'contains ".."';
      if (c === 0x7b /* { */ && last === 0x40 /* @ */) return 'contains "@{"';
      if (c === 0x2a /* * */) {
        if (starsLeft === 0) return 'contains "*"';
        starsLeft--;
      } else if (isForbiddenChar(c)) return `contains a forbidden character (${c < 0x21 || c === 0x7f ? `0x${c.toString(16)}` : String.fromCharCode(c)})`;
      last = c;
    }
    const component = name.slice(start, end);
    if (component.length === 0) return name.length === 0 ? 'is empty' : 'has an empty component';
    if (component.startsWith('.')) return 'has a component starting with "."';
    if (component.endsWith('.lock')) return 'has a component ending with ".lock"';
    components++;
    if (end >= name.length) break;
    start = end + 1;
  }
  if (name.endsWith('.')) return 'ends with "."';
  if (!options.allowOnelevel && components < 2) return 'has only one level';
  return null;
}

/** `git check-ref-format [options] <name>` succeeds. */
export function checkRefFormat(name: string, options: CheckRefFormatOptions = {}): boolean {
  return refFormatError(name, options) === null;
}

/**
 * `git check-ref-format --branch <name>` succeeds for a plain name (no `@{-N}` / `@` shorthand,
 * which git expands against a work tree): `refs/heads/<name>` is a valid ref, the name does not
 * start with `-` and is not `HEAD`.
 */
export function checkBranchRefFormat(name: string): boolean {
  return !name.startsWith('-') && name !== 'HEAD' && checkRefFormat(`refs/heads/${name}`);
}

/**
 * Gitea's IsValidRefPattern: a name that could be a ref (one level allowed), stricter than git
 * on nothing and laxer only on the leading `-`, which git refuses for branches; both are checked.
 */
function isGiteaRefPattern(name: string): boolean {
  if (!name || name === '@') return false;
  if (/[\x00-\x20\x7f\\~^:?*[]/.test(name)) return false;
  if (name.startsWith('/') || name.startsWith('.') || name.includes('/.')) return false;
  if (name.endsWith('.lock') || name.includes('.lock/')) return false;
  if (name.includes('..') || name.includes('//') || name.includes('@{')) return false;
  if (name.endsWith('/') || name.endsWith('.')) return false;
  return true;
}

/** Gitea's MaxSize(100) on branch and tag names in API bodies (characters, as Go counts runes). */
export const MAX_REF_NAME_LENGTH = 100;

/** A branch name the API accepts: Gitea's GitRefName + MaxSize(100), and a branch git can create. */
export function isValidBranchName(name: string): boolean {
  return Array.from(name).length <= MAX_REF_NAME_LENGTH && isGiteaRefPattern(name) && checkBranchRefFormat(name);
}

/** A tag name git can create under refs/tags/ (Gitea checks it with IsValidRefPattern too). */
export function isValidTagName(name: string): boolean {
  return isGiteaRefPattern(name) && !name.startsWith('-') && checkRefFormat(`refs/tags/${name}`);
}
