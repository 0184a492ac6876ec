/**
 * A repository's wiki: the bare repository `<repo>.wiki.git` beside the code (git clients clone
 * and push it over HTTP like the code), one Markdown file per page on the branch `main`, named
 * as Gitea names them (wiki-names.ts). Pages are written with the commit writer (temporary
 * index, compare-and-swap of the branch), so a concurrent edit is a conflict, never a lost page.
 */
import fs from 'node:fs';
import type { ForgeConfig } from '../config';
import { InvalidError, MalformedError, NotFoundError } from './errors';
import { NULL_OID, writeCommit, type FileChange } from './git/commit-writer';
import { countCommits, logCommits, type GitCommit, type GitReaderPool } from './git/reader';
import { runGit } from './git/run';
import type { Notifier } from './notify';
import type { User } from './records';
import type { RepoService, RepoWithOwner } from './repos';
import { gitPathToWebPath, reservedSegment, titleToWebPath, webPathToGitPath, webPathToTitle } from './wiki-names';

export const WIKI_BRANCH = 'main';
const REF = `refs/heads/${WIKI_BRANCH}`;
/** Gitea's setting.Git.CommitsRangeSize: revisions per page. */
const REVISIONS_PER_PAGE = 50;
/** Gitea's [api] DEFAULT_MAX_BLOB_SIZE: larger pages are sent without content. */
const MAX_BLOB_SIZE = 10 * 1024 * 1024;

function iso(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function wikiCommitJson(c: GitCommit) {
  return {
    sha: c.oid,
    author: { name: c.author.name, email: c.author.email, date: iso(c.author.when) },
    // Gitea's field is spelled so.
    commiter: { name: c.committer.name, email: c.committer.email, date: iso(c.committer.when) },
    message: c.message,
  };
}

function decodeBase64(s: string | undefined): Buffer {
  const text = (s ?? '').replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    const at = text.search(/[^A-Za-z0-9+/=]/);
    throw new MalformedError(`illegal base64 data at input byte ${at < 0 ? text.length : at}`);
  }
  return Buffer.from(text, 'base64');
}

export class WikiService {
  constructor(
    private readonly config: ForgeConfig,
    private readonly repos: RepoService,
    private readonly readers: GitReaderPool,
    private readonly notifier: Notifier,
  ) {}

  /** The wiki's bare repository, beside the code's. */
  wikiPath(repo: RepoWithOwner): string {
    return this.repos.diskPath(repo.owner.name, repo.name).replace(/\.git$/, '.wiki.git');
  }

  /** Gitea's InitWiki: the bare repository with HEAD on the wiki branch, if missing. */
  async init(repo: RepoWithOwner): Promise<string> {
    const p = this.wikiPath(repo);
    if (!fs.existsSync(p)) {
      await runGit(['init', '--bare', '--quiet', p]);
      await runGit(['symbolic-ref', 'HEAD', REF], { cwd: p });
    }
    return p;
  }

  /** The wiki's head commit, or 404 when there is no wiki (yet). */
  private async head(repo: RepoWithOwner): Promise<{ repoPath: string; head: string }> {
    const repoPath = this.wikiPath(repo);
    const head = fs.existsSync(repoPath) ? await this.readers.reader(repoPath).resolveCommit(REF) : null;
    if (!head) throw new NotFoundError('no such file or directory');
    return { repoPath, head };
  }

  private async lastCommit(repoPath: string, file: string): Promise<GitCommit> {
    const [c] = await logCommits(this.readers.reader(repoPath), { revs: [REF], paths: [file], limit: 1 });
    if (!c) throw new NotFoundError('not found', [`no commit touches ${file}`]);
    return c;
  }

  private meta(repo: RepoWithOwner, webPath: string, c: GitCommit) {
    return {
      title: webPathToTitle(webPath),
      html_url: `${this.config.rootUrl}${repo.owner.name}/${repo.name}/wiki/${webPath}`,
      sub_url: webPath,
      last_commit: wikiCommitJson(c),
    };
  }

  /** The file of a page in the head tree: the escaped name, or Gitea's older unescaped one. */
  private async findFile(repoPath: string, head: string, webPath: string): Promise<{ file: string; oid: string; size: number } | null> {
    const reader = this.readers.reader(repoPath);
    const gitPath = webPathToGitPath(webPath);
    const candidates = [gitPath];
    try {
      candidates.push(decodeURIComponent(gitPath.replace(/\+/g, '%2B')));
    } catch {
      /* no second spelling */
    }
    for (const file of candidates) {
      const info = await reader.info(`${head}:${file}`);
      if (info && info.type === 'blob') return { file, oid: info.oid, size: info.size };
    }
    return null;
  }

  private async content(repoPath: string, head: string, webPath: string): Promise<{ base64: string; file: string } | null> {
    const found = await this.findFile(repoPath, head, webPath);
    if (!found) return null;
    if (found.size > MAX_BLOB_SIZE) return { base64: '', file: found.file };
    const blob = await this.readers.reader(repoPath).readBlob(found.oid);
    return { base64: blob ? blob.content.toString('base64') : '', file: found.file };
  }

  /** GET /wiki/pages: the root's regular files, paged over all entries as Gitea does. */
  async listPages(repo: RepoWithOwner, page: number, limit: number) {
    const { repoPath, head } = await this.head(repo);
    const tree = await this.readers.reader(repoPath).readTree(head);
    const entries = tree?.entries ?? [];
    const skip = (page - 1) * limit;
    const pages = [];
    for (let i = skip; i < Math.min(entries.length, page * limit); i++) {
      const e = entries[i];
      if (e.type !== 'blob' || e.mode !== '100644') continue;
      const webPath = gitPathToWebPath(e.name);
      if (webPath === null) continue;
      pages.push(this.meta(repo, webPath, await this.lastCommit(repoPath, e.name)));
    }
    return { pages, total: entries.length };
  }

  /** GET /wiki/page/{name}: the page with its sidebar and footer. */
  async page(repo: RepoWithOwner, webPath: string) {
    const { repoPath, head } = await this.head(repo);
    const page = await this.content(repoPath, head, webPath);
    if (!page) throw new NotFoundError('not found', [`wiki page does not exist [name: ${webPath}]`]);
    const sidebar = await this.content(repoPath, head, '_Sidebar');
    const footer = await this.content(repoPath, head, '_Footer');
    const commitCount = await countCommits(repoPath, { revs: [REF], paths: [page.file] });
    return {
      ...this.meta(repo, webPath, await this.lastCommit(repoPath, page.file)),
      content_base64: page.base64,
      commit_count: commitCount,
      sidebar: sidebar?.base64 ?? '',
      footer: footer?.base64 ?? '',
    };
  }

  /** GET /wiki/revisions/{name}: 50 commits per page, newest first, and their total. */
  async revisions(repo: RepoWithOwner, webPath: string, page: number) {
    const { repoPath, head } = await this.head(repo);
    const found = await this.findFile(repoPath, head, webPath || 'Home');
    if (!found) throw new NotFoundError('not found', [`wiki page does not exist [name: ${webPath}]`]);
    const count = await countCommits(repoPath, { revs: [REF], paths: [found.file] });
    const commits = await logCommits(this.readers.reader(repoPath), { revs: [REF], paths: [found.file], skip: (page - 1) * REVISIONS_PER_PAGE, limit: REVISIONS_PER_PAGE });
    return { commits: commits.map(wikiCommitJson), count };
  }

  /** POST /wiki/new. Returns the new page's web path. */
  async create(doer: User, repo: RepoWithOwner, title: string, contentBase64: string | undefined, message: string | undefined): Promise<string> {
    if (!title.trim()) throw new MalformedError('title is required');
    const webPath = titleToWebPath(title);
    const content = decodeBase64(contentBase64);
    await this.write(doer, repo, null, webPath, content, message || `Add ${JSON.stringify(title)}`, true);
    await this.notifier.wikiChanged(doer, repo, webPath, 'created', message || `Add ${JSON.stringify(title)}`);
    return webPath;
  }

  /** PATCH /wiki/page/{name}: new content, and a new name when a title is given (Gitea's "unnamed" when not). */
  async edit(doer: User, repo: RepoWithOwner, oldWebPath: string, title: string | undefined, contentBase64: string | undefined, message: string | undefined): Promise<string> {
    const newWebPath = titleToWebPath(title ?? '');
    const msg = message || `Update ${JSON.stringify(newWebPath)}`;
    const content = decodeBase64(contentBase64);
    await this.write(doer, repo, oldWebPath, newWebPath, content, msg, false);
    await this.notifier.wikiChanged(doer, repo, newWebPath, 'edited', msg);
    return newWebPath;
  }

  /** DELETE /wiki/page/{name}. */
  async delete(doer: User, repo: RepoWithOwner, webPath: string): Promise<void> {
    const repoPath = await this.init(repo);
    const head = await this.readers.reader(repoPath).resolveCommit(REF);
    const found = head ? await this.findFile(repoPath, head, webPath) : null;
    if (!head || !found) throw new NotFoundError('resource does not exist');
    const msg = `Delete page ${JSON.stringify(webPath)}`;
    await writeCommit({ repoPath, ref: REF, base: head, changes: [{ kind: 'delete', path: found.file }], message: msg, author: this.sig(doer), committer: this.sig(doer) });
    await this.notifier.wikiChanged(doer, repo, webPath, 'deleted', msg);
  }

  private sig(doer: User) {
    return { name: doer.fullName || doer.name, email: doer.email };
  }

  /** Gitea's updateWikiPage: one commit that adds (or renames and rewrites) a page file. */
  private async write(doer: User, repo: RepoWithOwner, oldWebPath: string | null, newWebPath: string, content: Buffer, message: string, isNew: boolean): Promise<void> {
    const reserved = reservedSegment(newWebPath);
    if (reserved) throw new MalformedError(`wiki title is reserved: ${reserved}`);
    const repoPath = await this.init(repo);
    const head = await this.readers.reader(repoPath).resolveCommit(REF);
    const existing = head ? await this.findFile(repoPath, head, newWebPath) : null;
    const newFile = existing?.file ?? webPathToGitPath(newWebPath);
    const changes: FileChange[] = [];
    if (isNew) {
      if (existing) throw new MalformedError(`wiki page already exists [title: ${newFile}]`);
    } else if (oldWebPath !== null && oldWebPath !== newWebPath && head) {
      const old = await this.findFile(repoPath, head, oldWebPath);
      if (old) changes.push({ kind: 'delete', path: old.file });
    }
    changes.push({ kind: 'write', path: newFile, content });
    if (newFile.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) throw new InvalidError(`invalid wiki page name [name: ${newWebPath}]`);
    await writeCommit({ repoPath, ref: REF, base: head, expectedOld: head ?? NULL_OID, changes, message, author: this.sig(doer), committer: this.sig(doer) });
  }
}
