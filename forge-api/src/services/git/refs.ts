/**
 * Branches and tags of a bare repository through git plumbing: listing (sorted and paged from
 * one `for-each-ref`), commit details for one page in one `git log --no-walk` process, and ref
 * changes as compare-and-swap `update-ref` calls, so a concurrent push makes the change fail
 * instead of being overwritten.
 */
import { GitCommandError, runGit } from './run';
import { memoByRefs } from './ref-memo';
import { Lru } from '../git-data/lru';

export const ZERO_OID = '0000000000000000000000000000000000000000';

export interface RefTip {
  /** Short name (without refs/heads/ or refs/tags/). */
  name: string;
  /** What the ref points at (for an annotated tag: the tag object). */
  oid: string;
  /** The commit it leads to. */
  commit: string;
  /** Committer time of that commit, seconds. */
  time: number;
}

export interface GitPerson {
  name: string;
  email: string;
  /** ISO 8601 with the person's own offset, as git records it. */
  date: string;
}

export interface CommitDetails {
  id: string;
  tree: string;
  parents: string[];
  author: GitPerson;
  committer: GitPerson;
  message: string;
}

/**
 * Every branch (or tag) with the commit it leads to, sorted as Gitea lists branches: newest
 * commit first, then by name. One process however many refs there are, kept until a ref
 * changes (ref-memo.ts).
 */
export async function listRefTips(repoPath: string, kind: 'heads' | 'tags'): Promise<RefTip[]> {
  return [...(await memoByRefs(repoPath, `listRefTips\0${kind}`, () => readRefTips(repoPath, kind)))];
}

async function readRefTips(repoPath: string, kind: 'heads' | 'tags'): Promise<RefTip[]> {
  // Tags in Gitea's order (newest peeled commit first); branches are sorted below.
  const sort = kind === 'tags' ? ['--sort=-*creatordate'] : [];
  const out = await runGit(
    ['for-each-ref', ...sort, '--format=%(refname)%00%(objectname)%00%(*objectname)%00%(objecttype)%00%(committerdate:unix)%00%(*committerdate:unix)', `refs/${kind}/`],
    { cwd: repoPath },
  ).catch((err) => {
    if (err instanceof GitCommandError) return '';
    throw err;
  });
  const prefix = `refs/${kind}/`;
  const tips: RefTip[] = [];
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [ref, oid, peeled, type, time, peeledTime] = line.split('\0');
    if (!ref.startsWith(prefix)) continue;
    // A tag of a tag of a commit peels to the commit; a tag of a tree or blob has no commit.
    if (type === 'commit') tips.push({ name: ref.slice(prefix.length), oid, commit: oid, time: Number(time) || 0 });
    else if (type === 'tag' && peeled) tips.push({ name: ref.slice(prefix.length), oid, commit: peeled, time: Number(peeledTime) || 0 });
  }
  if (kind === 'heads') tips.sort((a, b) => b.time - a.time || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return tips;
}

/** The object a full ref name points at, or null. */
export async function resolveRef(repoPath: string, fullRef: string): Promise<string | null> {
  try {
    return (await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', fullRef], { cwd: repoPath })).trim() || null;
  } catch (err) {
    if (err instanceof GitCommandError) return null;
    throw err;
  }
}

/** The commit a revision (branch, tag, full or short sha) leads to, or null. */
export async function resolveCommit(repoPath: string, rev: string): Promise<string | null> {
  if (!rev || rev.startsWith('-') || rev.includes('\0')) return null;
  return resolveRef(repoPath, `${rev}^{commit}`);
}

const FIELDS = ['%H', '%T', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%B'];

/** Commits read lately, by id: a commit id fixes its content, so an entry never goes stale. */
const commitDetails = new Lru<string, CommitDetails>(5_000);

/**
 * Details of these commits (in the order given, duplicates allowed): the ones read lately from
 * memory, the others from one git process.
 */
export async function readCommits(repoPath: string, ids: string[]): Promise<Map<string, CommitDetails>> {
  const map = new Map<string, CommitDetails>();
  const unique: string[] = [];
  for (const id of new Set(ids)) {
    const kept = commitDetails.get(id);
    if (kept) map.set(id, kept);
    else unique.push(id);
  }
  if (!unique.length) return map;
  const out = await runGit(['log', '--no-walk=unsorted', '-z', `--format=${FIELDS.join('%x00')}`, '--stdin'], { cwd: repoPath, input: unique.join('\n') + '\n' });
  const parts = out.split('\0');
  for (let i = 0; i + FIELDS.length <= parts.length; i += FIELDS.length) {
    const [id, tree, parents, an, ae, ad, cn, ce, cd, message] = parts.slice(i, i + FIELDS.length);
    if (!id) break;
    map.set(id, {
      id,
      tree,
      parents: parents ? parents.split(' ') : [],
      author: { name: an, email: ae, date: ad },
      committer: { name: cn, email: ce, date: cd },
      message,
    });
    commitDetails.set(id, map.get(id)!);
  }
  return map;
}

export class RefConflictError extends Error {}

/**
 * Points `fullRef` at `newOid` if it still points at `oldOid` (ZERO_OID: must not exist yet);
 * a ref that moved meanwhile, or a name that collides with an existing ref directory or file
 * (`a` vs `a/b`), throws RefConflictError.
 */
export async function updateRef(repoPath: string, fullRef: string, newOid: string, oldOid: string, message = ''): Promise<void> {
  try {
    await runGit(['update-ref', '-m', message || 'forge', '--', fullRef, newOid, oldOid], { cwd: repoPath });
  } catch (err) {
    if (err instanceof GitCommandError) throw new RefConflictError(err.stderr.trim());
    throw err;
  }
}

/** Deletes `fullRef` if it still points at `oldOid`. */
export async function deleteRef(repoPath: string, fullRef: string, oldOid: string): Promise<void> {
  try {
    await runGit(['update-ref', '-d', '--', fullRef, oldOid], { cwd: repoPath });
  } catch (err) {
    if (err instanceof GitCommandError) throw new RefConflictError(err.stderr.trim());
    throw err;
  }
}

/** Does a ref with this full name exist, or one that would collide with it as file vs directory? */
export async function refNameTaken(repoPath: string, fullRef: string): Promise<'exists' | 'conflict' | null> {
  const out = await runGit(['for-each-ref', '--format=%(refname)', `${fullRef.split('/').slice(0, 2).join('/')}/`], { cwd: repoPath }).catch(() => '');
  for (const ref of out.split('\n')) {
    if (!ref) continue;
    if (ref === fullRef) return 'exists';
    if (ref.startsWith(`${fullRef}/`) || fullRef.startsWith(`${ref}/`)) return 'conflict';
  }
  return null;
}

/** An annotated tag object: tagger and message (null for a lightweight tag's commit). */
export interface TagObject {
  oid: string;
  object: string;
  type: string;
  tag: string;
  tagger: GitPerson | null;
  message: string;
}

export async function readTagObject(repoPath: string, oid: string): Promise<TagObject | null> {
  const type = (await runGit(['cat-file', '-t', oid], { cwd: repoPath }).catch(() => '')).trim();
  if (type !== 'tag') return null;
  const raw = await runGit(['cat-file', 'tag', oid], { cwd: repoPath });
  const split = raw.indexOf('\n\n');
  const header = split >= 0 ? raw.slice(0, split) : raw;
  const body = split >= 0 ? raw.slice(split + 2) : '';
  const fields: Record<string, string> = {};
  for (const line of header.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) fields[line.slice(0, sp)] = line.slice(sp + 1);
  }
  let tagger: GitPerson | null = null;
  const m = /^(.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(fields.tagger ?? '');
  if (m) tagger = { name: m[1], email: m[2], date: isoWithOffset(Number(m[3]), m[4]) };
  // A signature follows the message; it is not part of it.
  const sig = body.search(/-----BEGIN (PGP|SSH) SIGNATURE-----/);
  return { oid, object: fields.object ?? '', type: fields.type ?? '', tag: fields.tag ?? '', tagger, message: sig >= 0 ? body.slice(0, sig) : body };
}

/** A unix time shown in the given `+hhmm` offset, as git's %aI does. */
export function isoWithOffset(seconds: number, offset: string): string {
  const sign = offset.startsWith('-') ? -1 : 1;
  const minutes = sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(3, 5)));
  const local = new Date((seconds + minutes * 60) * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  return `${local}${minutes === 0 && offset === '+0000' ? 'Z' : `${offset.slice(0, 3)}:${offset.slice(3)}`}`;
}

/** Writes an annotated tag object for `target` and returns its id. */
export async function writeTagObject(repoPath: string, name: string, target: string, tagger: { name: string; email: string }, message: string): Promise<string> {
  const type = (await runGit(['cat-file', '-t', target], { cwd: repoPath })).trim();
  const now = Math.floor(Date.now() / 1000);
  const body = `object ${target}\ntype ${type}\ntag ${name}\ntagger ${tagger.name} <${tagger.email}> ${now} +0000\n\n${message.endsWith('\n') || !message ? message : `${message}\n`}`;
  return (await runGit(['mktag'], { cwd: repoPath, input: body })).trim();
}
