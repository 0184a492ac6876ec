/**
 * Reading a repository's files as Gitea's contents API shows them (ContentsResponse): files,
 * folders, symlinks and submodules of a branch, tag or commit, with the last commit of each
 * entry, LFS pointers recognised, and the blobs /raw and /media serve.
 */
import type { ForgeConfig } from '../../config';
import type { RepoWithOwner } from '../convert/repository';
import { repoApiUrl, repoHtmlUrl } from './urls';
import { InvalidError, NotFoundError } from '../errors';
import type { GitReader, GitReaderPool } from '../git/reader';
import { runGit } from '../git/run';
import { memoByRefs } from '../git/ref-memo';
import { cleanTreePath, escapeTreePath, TreePathError } from '../git/tree-path';
import { isLinearHistory, knownLastCommit, lastCommit, lastCommitsOfEntries, listFolder, objectSize, readBlob, resolveRef, treeEntries, treeEntry, type LastCommit, type ResolvedRef, type TreeEntry } from './git-read';
import { parseLfsPointer, LFS_POINTER_MAX } from './lfs';

/** Gitea's [api] DEFAULT_MAX_BLOB_SIZE: larger blobs are listed without content. */
export const MAX_BLOB_SIZE = 10 * 1024 * 1024;
/** A file's last commit is found with its whole folder's up to this many entries (one walk for all). */
const FOLDER_WALK_MAX = 500;
/** Gitea's [api] DEFAULT_MAX_RESPONSE_SIZE: file-contents stops adding files past it. */
export const MAX_RESPONSE_SIZE = 100 * 1024 * 1024;

export interface ContentsOptions {
  content: boolean;
  lfsMetadata: boolean;
  commitMetadata: boolean;
  commitMessage: boolean;
}

export interface ContentsLinks {
  self: string;
  git: string | null;
  html: string | null;
}

/** Gitea's ContentsResponse, keys in Gitea's order. */
export interface ContentsResponse {
  name: string;
  path: string;
  sha: string;
  last_commit_sha?: string;
  last_committer_date?: string;
  last_author_date?: string;
  last_commit_message?: string;
  type: 'file' | 'dir' | 'symlink' | 'submodule' | '';
  size: number;
  encoding: string | null;
  content: string | null;
  target: string | null;
  url: string;
  html_url: string | null;
  git_url: string | null;
  download_url: string | null;
  submodule_git_url: string | null;
  _links: ContentsLinks;
  lfs_oid?: string;
  lfs_size?: number;
}

export interface ContentsResult {
  file?: ContentsResponse;
  dir?: ContentsResponse[];
}

/** Go's url.QueryEscape. */
export function queryEscape(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function entryType(e: Pick<TreeEntry, 'mode'>): ContentsResponse['type'] {
  if (e.mode === '040000') return 'dir';
  if (e.mode === '160000') return 'submodule';
  if (e.mode === '120000') return 'symlink';
  if (e.mode === '100644' || e.mode === '100755') return 'file';
  return '';
}

export class ContentService {
  constructor(
    readonly config: ForgeConfig,
    private readonly diskPath: (repo: RepoWithOwner) => string,
    private readonly readers: GitReaderPool,
  ) {}

  repoPath(repo: RepoWithOwner): string {
    return this.diskPath(repo);
  }

  /** The repository's shared object reader. */
  reader(repo: RepoWithOwner): GitReader {
    return this.readers.reader(this.diskPath(repo));
  }

  /** Gitea's ResolveRefCommit with the default branch for an empty ref; 404 when nothing matches. */
  async resolve(repo: RepoWithOwner, ref: string | undefined): Promise<ResolvedRef> {
    const name = ref || repo.defaultBranch;
    // A branch or tag found is kept until a ref of the repository changes (at most one entry per
    // ref); names that match nothing and commit ids are looked up each time.
    const found = await memoByRefs(this.repoPath(repo), `resolveRef\0${name}`, () => resolveRef(this.reader(repo), name), { keep: (r) => r !== null && r.kind !== 'commit' });
    if (!found) throw new NotFoundError(`object does not exist [id: ${name}, rel_path: ]`);
    return found;
  }

  /** A path of the API: cleaned, or 400/422 (the route decides) with Gitea's message. */
  static path(raw: string): string {
    return cleanTreePath(raw);
  }

  /** GET /contents and /contents-ext: one file, or the entries of a folder. */
  async contents(repo: RepoWithOwner, ref: string | undefined, rawPath: string, o: ContentsOptions): Promise<ContentsResult> {
    const treePath = cleanTreePath(rawPath);
    if (repo.isEmpty && treePath === '') return { dir: [] };
    const at = await this.resolve(repo, ref);
    const repoPath = this.repoPath(repo);
    const entry = await treeEntry(this.reader(repo), at.commit, treePath);
    if (!entry) throw new NotFoundError(`object does not exist [id: , rel_path: ${treePath}]`);
    if (entry.type !== 'tree') return { file: await this.response(repo, at, entry, o) };
    const entries = await listFolder(this.reader(repo), at.commit, treePath);
    const commits = o.commitMetadata || o.commitMessage ? await lastCommitsOfEntries(repoPath, at.commit, treePath, entries.map((e) => e.name)) : new Map<string, LastCommit>();
    const sub = { ...o, content: false };
    return { dir: await Promise.all(entries.map((e) => this.response(repo, at, e, sub, commits.get(e.name) ?? null))) };
  }

  /** GET/POST /file-contents: each path's contents or null, within Gitea's count and size limits. */
  async fileContents(repo: RepoWithOwner, ref: string | undefined, paths: string[]): Promise<(ContentsResponse | null)[]> {
    const at = await this.resolve(repo, ref);
    const repoPath = this.repoPath(repo);
    const cleaned = paths.map((p) => {
      try {
        return cleanTreePath(p);
      } catch {
        return null;
      }
    });
    const entries = await treeEntries(this.reader(repo), at.commit, cleaned.filter((p): p is string => p !== null));
    const out: (ContentsResponse | null)[] = [];
    let size = 0;
    const o = { content: true, lfsMetadata: false, commitMetadata: true, commitMessage: false };
    for (const p of cleaned) {
      const entry = p === null ? undefined : entries.get(p);
      const item = entry ? await this.response(repo, at, entry, o) : null;
      if (item?.content) size += item.content.length;
      if (size > MAX_RESPONSE_SIZE) break;
      out.push(item);
      if (out.length === this.config.defaultPagingNum) break;
    }
    return out;
  }

  /** One entry as ContentsResponse. `last` is the entry's last commit when already known. */
  async response(repo: RepoWithOwner, at: ResolvedRef, entry: TreeEntry, o: ContentsOptions, last: LastCommit | null = null): Promise<ContentsResponse> {
    const repoPath = this.repoPath(repo);
    const api = repoApiUrl(this.config, repo);
    const html = repoHtmlUrl(this.config, repo);
    const escaped = escapeTreePath(entry.path);
    const self = `${api}/contents/${escaped}?ref=${queryEscape(at.name)}`;
    const refLink = `${at.kind}/${escapeTreePath(at.name)}`;
    const type = entryType(entry);
    const r: ContentsResponse = { name: entry.name, path: entry.path, sha: entry.oid } as ContentsResponse;
    if (o.commitMetadata || o.commitMessage) {
      const c = last ?? (await this.lastCommit(repo, at.commit, entry.path));
      if (c && o.commitMetadata) {
        r.last_commit_sha = c.sha;
        r.last_committer_date = c.committerDate;
        r.last_author_date = c.authorDate;
      }
      if (c && o.commitMessage) r.last_commit_message = c.message;
    }
    r.type = type;
    r.size = type === 'submodule' ? await objectSize(this.reader(repo), entry.oid) : entry.size;
    r.encoding = null;
    r.content = null;
    r.target = null;
    let lfs: { oid: string; size: number } | null = null;
    if (type === 'file') {
      if (o.content && entry.size <= MAX_BLOB_SIZE) {
        const data = await readBlob(this.reader(repo), entry.oid);
        r.encoding = 'base64';
        r.content = data.toString('base64');
        if (data.length > 0 && data.length < LFS_POINTER_MAX) lfs = parseLfsPointer(data);
      } else if (o.lfsMetadata && entry.size <= LFS_POINTER_MAX) {
        lfs = parseLfsPointer(await readBlob(this.reader(repo), entry.oid));
      }
    } else if (type === 'symlink') {
      r.target = (await readBlob(this.reader(repo), entry.oid)).subarray(0, 1024).toString('utf8');
    }
    r.url = self;
    r.html_url = type === 'submodule' ? null : `${html}/src/${refLink}/${escaped}`;
    r.git_url = type === 'submodule' ? null : `${api}/git/blobs/${entry.oid}`;
    r.download_url = type === 'file' || type === 'symlink' ? `${html}/raw/${refLink}/${escaped}` : null;
    r.submodule_git_url = type === 'submodule' ? await this.submoduleUrl(repoPath, at.commit, entry.path) : null;
    r._links = { self, git: r.git_url, html: r.html_url };
    if (lfs) {
      r.lfs_oid = lfs.oid;
      r.lfs_size = lfs.size;
    }
    return r;
  }

  /**
   * The last commit of `p`. Unknown yet and in a history without merges, it comes from one walk
   * over its folder that answers every entry of that folder at once, so reading the files of a
   * folder one by one costs one git process, not one per file.
   */
  private async lastCommit(repo: RepoWithOwner, commit: string, p: string): Promise<LastCommit | null> {
    const repoPath = this.repoPath(repo);
    const known = knownLastCommit(repoPath, commit, p);
    if (known) return known;
    if (p && (await isLinearHistory(repoPath, commit).catch(() => false))) {
      const slash = p.lastIndexOf('/');
      const dir = slash < 0 ? '' : p.slice(0, slash);
      const entries = await listFolder(this.reader(repo), commit, dir);
      if (entries.length > FOLDER_WALK_MAX) return lastCommit(repoPath, commit, p);
      const found = (await lastCommitsOfEntries(repoPath, commit, dir, entries.map((e) => e.name))).get(p.slice(slash + 1));
      if (found) return found;
    }
    return lastCommit(repoPath, commit, p);
  }

  private async submoduleUrl(repoPath: string, commit: string, p: string): Promise<string | null> {
    const out = await runGit(['config', '--blob', `${commit}:.gitmodules`, '--get-regexp', '^submodule\\..*\\.(path|url)$'], { cwd: repoPath }).catch(() => '');
    const paths = new Map<string, string>();
    const urls = new Map<string, string>();
    for (const line of out.split('\n')) {
      const m = /^submodule\.(.*)\.(path|url) (.*)$/.exec(line);
      if (m) (m[2] === 'path' ? paths : urls).set(m[1], m[3]);
    }
    for (const [name, sp] of paths) if (sp === p) return urls.get(name) || null;
    return null;
  }

  /**
   * /raw and /media: the blob at `{ref}/{path}` (Gitea's legacy ref-in-path rule: the shortest
   * leading segments naming a branch, then "HEAD", then a tag, then a full commit id; otherwise
   * the default branch) or at `path` of `?ref=`. Folders and submodules are 404.
   */
  async blobForServe(repo: RepoWithOwner, rawPath: string, queryRef: string | undefined): Promise<{ entry: TreeEntry; type: ContentsResponse['type']; lastModified: Date | null; repoPath: string }> {
    if (repo.isEmpty) throw new NotFoundError('repository is empty');
    const repoPath = this.repoPath(repo);
    const joined = [queryRef ?? '', rawPath].filter(Boolean).join('/');
    const { commit, treePath } = await this.legacyRef(repo, repoPath, joined, rawPath);
    let cleaned: string;
    try {
      cleaned = cleanTreePath(treePath, { allowRoot: false });
    } catch (err) {
      if (err instanceof TreePathError) throw new NotFoundError('not found');
      throw err;
    }
    const entry = await treeEntry(this.reader(repo), commit, cleaned);
    if (!entry || entry.type !== 'blob') throw new NotFoundError('not found');
    const last = await this.lastCommit(repo, commit, cleaned);
    return { entry, type: entryType(entry), lastModified: last ? new Date(last.committerDate) : null, repoPath };
  }

  private async legacyRef(repo: RepoWithOwner, repoPath: string, joined: string, reqPath: string): Promise<{ commit: string; treePath: string }> {
    const { branches, tags } = await memoByRefs(repoPath, 'legacyRef', async () => {
      const out = await runGit(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(*objectname)', 'refs/heads', 'refs/tags'], { cwd: repoPath });
      const heads = new Map<string, string>();
      const tagged = new Map<string, string>();
      for (const line of out.split('\n')) {
        const [name, oid, peeled] = line.split('\0');
        if (name?.startsWith('refs/heads/')) heads.set(name.slice(11), oid);
        else if (name?.startsWith('refs/tags/')) tagged.set(name.slice(10), peeled || oid);
      }
      return { branches: heads, tags: tagged };
    });
    const parts = joined.split('/');
    const byPrefix = (refs: Map<string, string>) => {
      for (let i = 0; i < parts.length; i++) {
        const name = parts.slice(0, i + 1).join('/');
        const oid = refs.get(name);
        if (oid) return { commit: oid, treePath: parts.slice(i + 1).join('/') };
      }
      return null;
    };
    const branch = byPrefix(branches);
    if (branch) return branch;
    if (parts[0] === 'HEAD' && branches.has(repo.defaultBranch)) return { commit: branches.get(repo.defaultBranch)!, treePath: parts.slice(1).join('/') };
    const tag = byPrefix(tags);
    if (tag) return tag;
    if (/^[0-9a-f]{40}$/.test(parts[0])) {
      const found = await resolveRef(this.reader(repo), parts[0]);
      if (!found) throw new NotFoundError('unable to find a git ref');
      return { commit: found.commit, treePath: parts.slice(1).join('/') };
    }
    const def = branches.get(repo.defaultBranch);
    if (!def) throw new NotFoundError('unable to find a git ref');
    return { commit: def, treePath: reqPath };
  }
}

export { InvalidError };
