/**
 * The repository's git data as Gitea's API shows it: refs, commits (single, paged history,
 * raw diff/patch), trees, blobs, annotated tags, notes and comparisons. Objects come from the
 * shared reader (services/git/reader.ts); history is paged by `git rev-list` itself.
 * Bad shas, refs and paths are domain errors with Gitea's messages, never a git failure.
 */
import { spawn } from 'child_process';
import type { Readable } from 'stream';
import type { ForgeConfig } from '../../config';
import type { RepoWithOwner } from '../convert/repository';
import { MalformedError, NotFoundError, ConflictError, InvalidError } from '../errors';
import { countCommits, listRefs, logCommitIds, type GitCommit, type GitReader, type GitReaderPool, type LogOptions, type TreeEntry } from '../git/reader';
import { parseLsTree } from '../git/ls-tree';
import { gitEnv, runGit } from '../git/run';
import type { RepoService } from '../repos';
import { ALL_COMMIT_PARTS, CommitConverter, verificationOf, type CommitJsonOptions } from './commits';
import { escapeSegments, gitDate, goPathEscape, repoUrls } from './format';
import { Lru } from './lru';
import { definitionFor } from './editorconfig';
import { languageStats } from './languages';
import { detectLicenses } from './licenses';

export { commitOptionsFromQuery, formBool, type CommitJsonOptions } from './commits';

/** Gitea's setting.Git.CommitsRangeSize: the most commits one page of history holds. */
export const COMMITS_RANGE_SIZE = 50;
/** Gitea's setting.API.DefaultGitTreesPerPage. */
export const GIT_TREES_PER_PAGE = 1000;
/** Gitea's setting.API.DefaultMaxBlobSize: larger blobs are answered without content. */
export const MAX_BLOB_SIZE = 10 * 1024 * 1024;

const FULL_OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Gitea's IsValidRefPattern: what could name a ref or a commit id. */
export function isValidRefPattern(name: string): boolean {
  if (/[\x00-\x1f\x7f \\~^:?*[]/.test(name)) return false;
  if (/^[/.]/.test(name) || name.includes('/.') || name.includes('..') || name.includes('//') || name.includes('@{')) return false;
  if (name.endsWith('.lock') || name.includes('.lock/') || /[/.]$/.test(name) || name === '@') return false;
  return true;
}

function objectDoesNotExist(id: string): string {
  return `object does not exist [id: ${id}, rel_path: ]`;
}

/** Go's NewIDFromString error for a string that is no full object id. */
function badIdMessage(id: string): string {
  return `length ${Buffer.byteLength(id)} has no matched object format: ${id}`;
}

export interface CommitListQuery {
  sha?: string;
  path?: string;
  not?: string;
  since?: string;
  until?: string;
  page: number;
  limit: number;
}

export interface CommitPage {
  commits: Record<string, unknown>[];
  total: number;
  page: number;
  /** The page size Gitea reports in X-PerPage and uses for the Link header. */
  pageSize: number;
}

export class GitDataService {
  readonly commits: CommitConverter;
  // Counts and pages of history below a commit id never change: kept by id and filters.
  private readonly countCache = new Lru<string, number>(5_000);
  private readonly pageCache = new Lru<string, string[]>(5_000);
  private readonly languageCache = new Lru<string, [string, number][]>(1_000);
  private readonly licenseCache = new Lru<string, string[]>(1_000);

  constructor(
    private readonly config: ForgeConfig,
    private readonly readers: GitReaderPool,
    private readonly repos: RepoService,
    commits: CommitConverter,
  ) {
    this.commits = commits;
  }

  path(repo: RepoWithOwner): string {
    return this.repos.diskPath(repo.owner.name, repo.name);
  }

  reader(repo: RepoWithOwner): GitReader {
    return this.readers.reader(this.path(repo));
  }

  private urls(repo: RepoWithOwner) {
    return repoUrls(this.config.rootUrl, repo);
  }

  // ------------------------------------------------------------------------------------------
  // refs

  /** Refs whose name starts with refs/<filter> (remote-tracking refs left out); none is a 404. */
  async refs(repo: RepoWithOwner, filter: string) {
    const prefix = filter ? `refs/${filter}` : 'refs/';
    const refs = (await listRefs(this.path(repo), prefix)).filter((r) => !r.name.startsWith('refs/remotes/'));
    if (refs.length === 0) throw new NotFoundError();
    const api = this.urls(repo).api;
    return refs.map((r) => ({
      ref: r.name,
      url: `${api}/git/${escapeSegments(r.name)}`,
      object: { type: r.type, sha: r.oid, url: `${api}/git/${goPathEscape(r.type)}s/${goPathEscape(r.oid)}` },
    }));
  }

  // ------------------------------------------------------------------------------------------
  // commits

  /** The commit a sha, branch or tag names (tags peeled), or null. */
  async findCommit(repo: RepoWithOwner, rev: string): Promise<GitCommit | null> {
    const reader = this.reader(repo);
    const oid = await reader.resolveCommit(rev);
    return oid ? reader.readCommit(oid) : null;
  }

  async commitJson(repo: RepoWithOwner, commit: GitCommit, opts: CommitJsonOptions = ALL_COMMIT_PARTS): Promise<Record<string, unknown>> {
    return (await this.commits.toJson(repo, this.path(repo), [commit], opts))[0];
  }

  /** GET /git/commits/{sha} */
  async singleCommit(repo: RepoWithOwner, sha: string, opts: CommitJsonOptions) {
    if (!isValidRefPattern(sha)) throw new InvalidError(`no valid ref or sha: ${sha}`);
    const commit = await this.findCommit(repo, sha);
    if (!commit) throw new NotFoundError(`commit doesn't exist: ${sha}`);
    return this.commitJson(repo, commit, opts);
  }

  /** GET /git/commits/{sha}.diff|.patch: git's output, streamed. */
  async rawDiff(repo: RepoWithOwner, sha: string, type: 'diff' | 'patch'): Promise<Readable> {
    const commit = await this.findCommit(repo, sha);
    if (!commit) throw new NotFoundError(`commit doesn't exist: ${sha}`);
    const parent = commit.parents[0];
    let args: string[];
    if (type === 'diff') {
      args = parent ? ['diff', '--find-renames=50%', parent, commit.oid, '--'] : ['show', commit.oid, '--'];
    } else {
      args = parent
        ? ['format-patch', '--no-signature', '--stdout', `${commit.oid}...${parent}`, '--']
        : ['format-patch', '--no-signature', '--stdout', '--root', commit.oid, '--'];
    }
    return this.stream(repo, args);
  }

  private stream(repo: RepoWithOwner, args: string[]): Readable {
    const proc = spawn('git', args, { cwd: this.path(repo), env: gitEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    proc.on('error', () => proc.stdout.destroy());
    return proc.stdout;
  }

  /** GET /commits: one page of history, paged by git (Gitea's rules for sha/path/not/since/until). */
  async listCommits(repo: RepoWithOwner, q: CommitListQuery, opts: CommitJsonOptions): Promise<CommitPage> {
    const since = q.since ? parseRfc3339(q.since, 'since') : undefined;
    const until = q.until ? parseRfc3339(q.until, 'until') : undefined;
    if (repo.isEmpty) throw new ConflictError('Git Repository is empty.');
    const reader = this.reader(repo);
    const page = Math.max(1, q.page);
    const pageSize = Math.min(q.limit, COMMITS_RANGE_SIZE);

    const start = q.sha ? q.sha : repo.defaultBranch;
    const head = await reader.resolveCommit(start.startsWith('-') ? '' : start);
    if (!head) {
      if (!q.sha) throw new NotFoundError(`branch does not exist [name: ${repo.defaultBranch}]`);
      throw new NotFoundError(objectDoesNotExist(q.sha));
    }
    const not: string[] = [];
    if (q.not) {
      const n = await reader.resolveCommit(q.not.startsWith('-') ? '' : q.not);
      if (!n) throw new NotFoundError(objectDoesNotExist(q.not));
      not.push(n);
    }
    const paths = q.path ? [q.path] : undefined;
    const walk: LogOptions = { revs: [head], not, paths, since, until };
    const total = await this.count(repo, walk);
    if (paths && total === 0) {
      const anyAtAll = since || until ? await this.count(repo, { revs: [head], not, paths }) : 0;
      if (anyAtAll === 0) throw new NotFoundError();
    }
    // With a path Gitea pages by its fixed range size, whatever `limit` says.
    const step = paths ? COMMITS_RANGE_SIZE : pageSize;
    const ids = await this.page(repo, { ...walk, skip: (page - 1) * step, limit: step });
    const commits = (await reader.readCommits(ids)).filter((c): c is GitCommit => c !== null);
    return { commits: await this.commits.toJson(repo, this.path(repo), commits, opts), total, page, pageSize };
  }

  private walkKey(o: LogOptions): string {
    return JSON.stringify([o.revs, o.not ?? [], o.paths ?? [], o.since?.getTime() ?? null, o.until?.getTime() ?? null, o.skip ?? 0, o.limit ?? null]);
  }

  private async count(repo: RepoWithOwner, o: LogOptions): Promise<number> {
    const key = this.walkKey(o);
    let n = this.countCache.get(key);
    if (n === undefined) {
      n = await countCommits(this.path(repo), o);
      this.countCache.set(key, n);
    }
    return n;
  }

  private async page(repo: RepoWithOwner, o: LogOptions): Promise<string[]> {
    const key = this.walkKey(o);
    let ids = this.pageCache.get(key);
    if (!ids) {
      ids = await logCommitIds(this.path(repo), o);
      this.pageCache.set(key, ids);
    }
    return ids;
  }

  // ------------------------------------------------------------------------------------------
  // trees, blobs, tags, notes

  /** GET /git/trees/{sha}: Gitea pages the (recursive) entry list itself. */
  async tree(repo: RepoWithOwner, sha: string, pageIn: number, perPageIn: number, recursive: boolean) {
    const reader = this.reader(repo);
    const notFound = new MalformedError(`sha not found [${sha}]`);
    if (!isValidRefPattern(sha) && !FULL_OID.test(sha)) throw notFound;
    const resolved = await reader.info(sha);
    if (!resolved || resolved.type === 'blob') throw notFound;
    const root = await reader.readTree(resolved.oid);
    if (!root) throw notFound;
    const entries: { path: string; entry: TreeEntry; size?: number }[] = [];
    if (recursive) entries.push(...(await lsTreeRecursive(this.path(repo), root.oid)));
    else for (const e of root.entries) entries.push({ path: e.name, entry: e });

    const perPage = perPageIn <= 0 || perPageIn > GIT_TREES_PER_PAGE ? GIT_TREES_PER_PAGE : perPageIn;
    const page = Math.max(pageIn, 1);
    const api = this.urls(repo).api;
    const out = {
      sha: resolved.oid,
      url: `${api}/git/trees/${goPathEscape(resolved.oid)}`,
      tree: null as unknown[] | null,
      truncated: false,
      page,
      total_count: entries.length,
    };
    const start = perPage * (page - 1);
    if (start < 0 || start >= entries.length) return out;
    const end = Math.min(start + perPage, entries.length);
    out.truncated = end < entries.length;
    const slice = entries.slice(start, end);
    const blobs = slice.filter((e) => e.entry.type === 'blob' && e.size === undefined);
    const sizes = await reader.infos(blobs.map((e) => e.entry.oid));
    const sizeOf = new Map(blobs.map((e, i) => [e.entry.oid, sizes[i]?.size ?? 0]));
    out.tree = slice.map(({ path, entry, size }) => ({
      path,
      mode: entry.mode.padStart(6, '0'),
      type: entry.type,
      size: entry.type === 'blob' ? size ?? sizeOf.get(entry.oid) ?? 0 : 0,
      sha: entry.oid,
      url: entry.type === 'tree' ? `${api}/git/trees/${entry.oid}` : entry.type === 'commit' ? '' : `${api}/git/blobs/${entry.oid}`,
    }));
    return out;
  }

  /** GET /git/blobs/{sha}: any object's content in base64, as Gitea (it does not check the type). */
  async blob(repo: RepoWithOwner, sha: string) {
    if (!FULL_OID.test(sha)) throw new MalformedError(badIdMessage(sha));
    const reader = this.reader(repo);
    const info = await reader.info(sha);
    if (!info) throw new MalformedError(objectDoesNotExist(sha));
    const url = `${this.urls(repo).api}/git/blobs/${goPathEscape(info.oid)}`;
    if (info.size > MAX_BLOB_SIZE) return { content: null, encoding: null, url, sha: info.oid, size: info.size };
    const obj = await reader.read(info.oid);
    if (!obj) throw new MalformedError(objectDoesNotExist(sha));
    const content = obj.content.toString('base64');
    const out: Record<string, unknown> = { content, encoding: 'base64', url, sha: obj.oid, size: obj.size };
    const lfs = lfsPointer(obj.content);
    if (lfs) Object.assign(out, { lfs_oid: lfs.oid, lfs_size: lfs.size });
    return out;
  }

  /** GET /git/tags/{sha}: an annotated tag object. */
  async annotatedTag(repo: RepoWithOwner, sha: string) {
    if (!FULL_OID.test(sha)) throw new MalformedError(badIdMessage(sha));
    const reader = this.reader(repo);
    const tag = await reader.readTag(sha);
    if (!tag) throw new MalformedError(objectDoesNotExist(sha));
    const commitOid = await reader.resolveCommit(tag.oid);
    if (!commitOid) throw new MalformedError(objectDoesNotExist(tag.object));
    const api = this.urls(repo).api;
    return {
      tag: tag.tag,
      sha: tag.oid,
      url: `${api}/git/tags/${goPathEscape(tag.oid)}`,
      message: tag.message,
      tagger: tag.tagger ? { name: tag.tagger.name, email: tag.tagger.email, date: gitDate(tag.tagger) } : null,
      object: { type: tag.objectType, url: `${api}/git/commits/${goPathEscape(commitOid)}`, sha: commitOid },
      verification: verificationOf(tag.signature),
    };
  }

  /** GET /git/notes/{sha}: the note on a commit and the notes commit that last changed it. */
  async note(repo: RepoWithOwner, sha: string, opts: { verification: boolean; files: boolean }) {
    if (!isValidRefPattern(sha)) throw new InvalidError(`no valid ref or sha: ${sha}`);
    const reader = this.reader(repo);
    const oid = FULL_OID.test(sha) ? sha : await reader.resolve(sha);
    if (!oid) throw new NotFoundError(objectDoesNotExist(sha));
    const notesHead = await reader.resolveCommit('refs/notes/commits');
    if (!notesHead) throw new NotFoundError(`commit doesn't exist: ${sha}`);
    const found = await this.findNote(reader, `${notesHead}^{tree}`, oid, '');
    if (!found) throw new NotFoundError(`commit doesn't exist: ${sha}`);
    const blob = await reader.readBlob(found.blob);
    const [last] = await logCommitIds(this.path(repo), { revs: [notesHead], paths: [found.path], limit: 1 });
    const commit = last ? await reader.readCommit(last) : null;
    if (!blob || !commit) throw new NotFoundError(`commit doesn't exist: ${sha}`);
    return { message: blob.content.toString('utf8'), commit: await this.commitJson(repo, commit, { stat: true, ...opts }) };
  }

  /** A note's path under the notes tree, with git's fan-out folders (ab/cdef...). */
  private async findNote(reader: GitReader, tree: string, oid: string, prefix: string): Promise<{ path: string; blob: string } | null> {
    const t = await reader.readTree(tree);
    if (!t) return null;
    const rest = oid.slice(prefix.replace(/\//g, '').length);
    const exact = t.entries.find((e) => e.name === rest && e.type === 'blob');
    if (exact) return { path: prefix + exact.name, blob: exact.oid };
    const fan = t.entries.find((e) => e.type === 'tree' && e.name.length === 2 && rest.startsWith(e.name));
    return fan ? this.findNote(reader, fan.oid, oid, `${prefix}${fan.name}/`) : null;
  }

  // ------------------------------------------------------------------------------------------
  // languages, licenses, editorconfig (of the default branch, as Gitea's indexers see it)

  private async defaultHead(repo: RepoWithOwner): Promise<string | null> {
    if (repo.isEmpty) return null;
    return this.reader(repo).resolveCommit(`refs/heads/${repo.defaultBranch}`);
  }

  /** GET /languages: bytes per language, largest first. */
  async languages(repo: RepoWithOwner): Promise<LanguageSizes> {
    const head = await this.defaultHead(repo);
    if (!head) return {};
    let stats = this.languageCache.get(head);
    if (!stats) {
      stats = await languageStats(this.reader(repo), head);
      this.languageCache.set(head, stats);
    }
    return Object.fromEntries(stats);
  }

  /** GET /licenses: the SPDX ids found in the default branch's LICENSE file. */
  async licenses(repo: RepoWithOwner): Promise<string[]> {
    const head = await this.defaultHead(repo);
    if (!head) return [];
    const reader = this.reader(repo);
    const info = await reader.info(`${head}:LICENSE`);
    if (!info || info.type !== 'blob') return [];
    let ids = this.licenseCache.get(info.oid);
    if (!ids) {
      const blob = await reader.readBlob(info.oid);
      ids = blob && blob.size <= 1024 * 1024 ? detectLicenses(blob.content.toString('utf8')) : [];
      this.licenseCache.set(info.oid, ids);
    }
    return ids;
  }

  /** GET /editorconfig/{filename}: the definition the root .editorconfig gives that name. */
  async editorconfig(repo: RepoWithOwner, file: string, ref?: string) {
    if (repo.isEmpty) throw new NotFoundError('repository is empty');
    const reader = this.reader(repo);
    let commit: string | null = null;
    if (ref) commit = await this.resolveCompareRef(repo, ref);
    commit ??= await this.defaultHead(repo);
    if (!commit) throw new NotFoundError(`branch does not exist [name: ${repo.defaultBranch}]`);
    const blob = await reader.readBlob(`${commit}:.editorconfig`);
    if (!blob) throw new NotFoundError(`object does not exist [id: , rel_path: .editorconfig]`);
    return definitionFor(blob.content.toString('utf8'), file);
  }

  // ------------------------------------------------------------------------------------------
  // compare

  /** A branch, then a tag, then a commit id (Gitea's guess by short name); with ~N/^N suffixes. */
  async resolveCompareRef(repo: RepoWithOwner, ref: string): Promise<string | null> {
    const reader = this.reader(repo);
    const m = /^(.*?)((?:[~^][0-9]*)*)$/.exec(ref);
    const name = m ? m[1] : ref;
    const suffix = m ? m[2] : '';
    if (!name || name.includes(':') || !isValidRefPattern(name)) return null;
    let oid: string | null = null;
    for (const candidate of [`refs/heads/${name}`, `refs/tags/${name}`]) {
      oid = await reader.resolveCommit(candidate);
      if (oid) break;
    }
    if (!oid && /^[0-9a-f]{7,64}$/.test(name)) oid = await reader.resolveCommit(name);
    if (!oid) return null;
    return suffix ? reader.resolveCommit(`${oid}${suffix}`) : oid;
  }

  /** GET /compare/{base}...{head} (or base..head, or just head against the default branch). */
  async compare(repo: RepoWithOwner, basehead: string, opts: { verification: boolean; files: boolean; refsOnly?: boolean }) {
    const { base, head, sep } = parseBasehead(basehead);
    const baseName = base || repo.defaultBranch;
    const headName = head || repo.defaultBranch;
    const baseOid = await this.resolveCompareRef(repo, baseName);
    if (!baseOid) throw new NotFoundError(`ref "${baseName}" does not exist`);
    const headOid = await this.resolveCompareRef(repo, headName);
    if (!headOid) throw new NotFoundError(`ref "${headName}" does not exist`);
    if (opts.refsOnly) return { base: baseOid, head: headOid, sep, json: null };
    const reader = this.reader(repo);
    const ids = await logCommitIds(this.path(repo), { revs: [headOid], not: [baseOid] });
    const commits = (await reader.readCommits(ids)).filter((c): c is GitCommit => c !== null);
    return {
      base: baseOid,
      head: headOid,
      sep,
      json: { total_commits: commits.length, commits: await this.commits.toJson(repo, this.path(repo), commits, { stat: true, ...opts }) },
    };
  }

  /** ?output=diff|patch of a comparison: `git diff base...head` / `git format-patch base...head`. */
  compareRaw(repo: RepoWithOwner, base: string, head: string, sep: string, patch: boolean): Readable {
    const range = `${base}${sep}${head}`;
    return this.stream(repo, patch ? ['format-patch', '--binary', '--stdout', range, '--'] : ['diff', '-p', range, '--']);
  }
}

export interface LanguageSizes {
  [language: string]: number;
}

type RecursiveEntry = { path: string; entry: TreeEntry; size?: number };

/**
 * Recursive listings read lately, by tree id (a tree id fixes everything below it). Only
 * listings of up to TREE_CACHE_ENTRIES entries are kept, so the cache holds at most
 * 32 x 10,000 small entries.
 */
const recursiveTrees = new Lru<string, Promise<RecursiveEntry[]>>(32);
const TREE_CACHE_ENTRIES = 10_000;

/** Every entry below a tree with blob sizes, folders before their contents: one `git ls-tree -r -t -l`, kept. */
function lsTreeRecursive(repoPath: string, tree: string): Promise<RecursiveEntry[]> {
  const kept = recursiveTrees.get(tree);
  if (kept) return kept;
  const p = readTreeRecursive(repoPath, tree);
  recursiveTrees.set(tree, p);
  p.then((entries) => entries.length > TREE_CACHE_ENTRIES && recursiveTrees.delete(tree), () => recursiveTrees.delete(tree));
  return p;
}

async function readTreeRecursive(repoPath: string, tree: string): Promise<RecursiveEntry[]> {
  const out = await runGit(['ls-tree', '-r', '-t', '-l', '-z', '--end-of-options', tree], { cwd: repoPath });
  return parseLsTree(out).map(({ mode, type, oid, path: name, size }) => ({
    path: name,
    entry: { mode: mode.replace(/^0+/, ''), type: type as TreeEntry['type'], oid, name },
    size: type === 'blob' ? size ?? 0 : undefined,
  }));
}

function parseBasehead(param: string): { base: string; head: string; sep: string } {
  for (const sep of ['...', '..']) {
    const i = param.indexOf(sep);
    if (i >= 0) return { base: param.slice(0, i), head: param.slice(i + sep.length), sep };
  }
  return { base: '', head: param, sep: '...' };
}

/** Go's time.Parse(time.RFC3339): a full date-time with a zone. */
function parseRfc3339(value: string, name: string): Date {
  const m = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.exec(value);
  const d = m ? new Date(value) : null;
  if (!d || Number.isNaN(d.getTime())) throw new InvalidError(`invalid '${name}' format, expected ISO 8601 (RFC3339)`);
  return d;
}

/** A Git LFS pointer file's object id and size, as Gitea reads them from a small blob. */
function lfsPointer(content: Buffer): { oid: string; size: number } | null {
  if (content.length > 1024 || !content.subarray(0, 40).toString('utf8').startsWith('version https://git-lfs.github.com/spec/v1')) return null;
  const text = content.toString('utf8');
  const oid = /^oid sha256:([0-9a-f]{64})$/m.exec(text);
  const size = /^size (\d+)$/m.exec(text);
  return oid && size ? { oid: oid[1], size: Number(size[1]) } : null;
}
