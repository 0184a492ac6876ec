/**
 * Writing files through the API (Gitea's ChangeRepoFiles and ApplyDiffPatch): every request is
 * one commit made with the plumbing commit writer, checked against the branch tip it is built
 * on with Gitea's rules and messages. When another writer moved the branch between our read and
 * our ref update, the whole request is redone on the new tip, so its checks (the `sha` of an
 * update or delete) see the other commit: a conflicting write then fails with Gitea's 422 "sha
 * does not match", a non-conflicting one lands on top, and no commit is ever dropped. A branch
 * that keeps moving past MAX_ATTEMPTS is a 409.
 */
import { noReplyEmail } from '../commit-users';
import { AlreadyExistsError, ConflictError, InvalidError, NotFoundError } from '../errors';
import { fmtTime } from '../convert/common';
import type { RepoWithOwner } from '../convert/repository';
import { repoApiUrl, repoHtmlUrl } from './urls';
import { NULL_OID, RefChangedError, IndexChangeError, writeCommit, type FileChange, type Signature } from '../git/commit-writer';
import { runGit } from '../git/run';
import { cleanTreePath } from '../git/tree-path';
import type { User } from '../records';
import { ContentService, type ContentsResponse } from './contents';
import { treeEntries, type TreeEntry } from './git-read';

const MAX_ATTEMPTS = 8;

export type FileOperation = 'create' | 'update' | 'delete' | 'rename' | 'upload';

export interface FileChangeInput {
  operation: FileOperation;
  path: string;
  fromPath?: string;
  /** Decoded content (create, update, upload). */
  content?: Buffer;
  sha?: string;
}

export interface Identity {
  name?: string;
  email?: string;
}

export interface CommitOptions {
  message?: string;
  branch?: string;
  newBranch?: string;
  forcePush?: boolean;
  author?: Identity;
  committer?: Identity;
  /** RFC 3339 strings as the API receives them. */
  dates?: { author?: string; committer?: string };
  signoff?: boolean;
}

export interface FileCommitResponse {
  url: string;
  sha: string;
  created: string;
  html_url: string;
  author: { name: string; email: string; date: string };
  committer: { name: string; email: string; date: string };
  parents: { url: string; sha: string; created: string }[];
  message: string;
  tree: { url: string; sha: string; created: string };
}

export const UNSIGNED_VERIFICATION = { verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' };

export interface FilesResponse {
  files: (ContentsResponse | null)[];
  commit: FileCommitResponse;
  verification: typeof UNSIGNED_VERIFICATION;
}

/** Refuses a write to a protected branch (Gitea's CanWriteToBranch / VerifyBranchProtection); set by the branch service. */
export type BranchGuard = (doer: User, repo: RepoWithOwner, branch: string, paths: string[]) => Promise<void>;

const GO_ZERO = '0001-01-01T00:00:00Z';

/** The commit a branch points at, or null when it does not exist. */
async function branchTip(repoPath: string, branch: string): Promise<string | null> {
  const out = await runGit(['rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`], { cwd: repoPath }).catch(() => '');
  return out.trim() || null;
}

/** Gitea's git identity of a user: full name else user name; the no-reply address when the e-mail is private. */
export function gitIdentityOf(u: User, noReplyAddress: string): { name: string; email: string } {
  const name = (u.fullName || '').replace(/[<>\n]/g, '').trim() || u.name;
  const email = u.keepEmailPrivate ? noReplyEmail(u, noReplyAddress) : u.email;
  return { name, email };
}

/** A Signature from an RFC 3339 date (keeping its zone) or now. */
function signature(id: { name: string; email: string }, date: string | undefined): Signature {
  if (!date) return { ...id, date: new Date() };
  const when = new Date(date);
  if (Number.isNaN(when.getTime())) throw new InvalidError(`invalid date: ${date}`);
  const zone = /([+-])(\d\d):?(\d\d)$/.exec(date);
  const tz = zone ? (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) : 0;
  return { ...id, date: when, tzOffsetMinutes: tz };
}

/** Gitea's commit message for a change without one ("Add a, b\nUpdate c\nDelete d"). */
export function defaultMessage(files: { operation: FileOperation; path: string }[]): string {
  const by = (ops: FileOperation[]) => files.filter((f) => ops.includes(f.operation)).map((f) => f.path);
  const create = by(['create']);
  const update = by(['update', 'upload', 'rename']);
  const del = by(['delete']);
  let message = '';
  if (create.length) message += `Add ${create.join(', ')}\n`;
  if (update.length) message += `Update ${update.join(', ')}\n`;
  if (del.length) message += `Delete ${del.join(', ')}`;
  return message.replace(/^\n+|\n+$/g, '');
}

interface PreparedFile extends FileChangeInput {
  treePath: string;
  fromTreePath: string;
}

export class ContentChangeService {
  /** Set by whoever enforces branch protections. */
  branchGuard: BranchGuard | null = null;

  constructor(
    private readonly contents: ContentService,
    private readonly refsChanged: (doer: User, repoId: number) => Promise<unknown>,
  ) {}

  /** The branch names of a change, with Gitea's defaults (new branch = branch = default branch). */
  branches(repo: RepoWithOwner, o: CommitOptions): { oldBranch: string; newBranch: string } {
    const oldBranch = o.branch || repo.defaultBranch;
    return { oldBranch, newBranch: o.newBranch || oldBranch };
  }

  /** POST/PUT/DELETE /contents/{path} and POST /contents: one commit of every change. */
  async changeFiles(doer: User, repo: RepoWithOwner, files: FileChangeInput[], o: CommitOptions): Promise<FilesResponse> {
    const { oldBranch, newBranch } = this.branches(repo, o);
    const prepared: PreparedFile[] = files.map((f) => {
      const treePath = cleanTreePath(f.path, { allowRoot: false });
      const fromTreePath = f.fromPath ? cleanTreePath(f.fromPath, { allowRoot: false }) : treePath;
      if (!['create', 'update', 'delete', 'rename', 'upload'].includes(f.operation)) {
        throw new InvalidError(`invalid file operation: ${f.operation} ${treePath}, supported operations are create, update, delete`);
      }
      return { ...f, treePath, fromTreePath };
    });
    // Gitea verifies the protection of the branch committed to; a new branch starts unprotected.
    if (this.branchGuard && newBranch === oldBranch) await this.branchGuard(doer, repo, newBranch, prepared.map((f) => f.treePath));
    const message = o.message || defaultMessage(prepared.map((f) => ({ operation: f.operation, path: f.treePath })));
    const written = await this.commitWithRetry(repo, oldBranch, newBranch, o, doer, message, async (base) => this.plan(repo, base, prepared));
    await this.refsChanged(doer, repo.id);
    const at = { kind: 'branch' as const, name: newBranch, commit: written };
    const entries = await treeEntries(this.contents.reader(repo), written, prepared.map((f) => f.treePath));
    const opts = { content: true, lfsMetadata: false, commitMetadata: true, commitMessage: false };
    const out: (ContentsResponse | null)[] = [];
    for (const f of prepared) {
      const e = entries.get(f.treePath);
      out.push(e ? await this.contents.response(repo, at, e, opts) : null);
    }
    return { files: out, commit: await this.commitResponse(repo, written), verification: UNSIGNED_VERIFICATION };
  }

  /** POST /diffpatch: the unified diff applied to the branch as one commit. */
  async applyPatch(doer: User, repo: RepoWithOwner, patch: string, o: CommitOptions): Promise<{ content: null; commit: FileCommitResponse; verification: typeof UNSIGNED_VERIFICATION }> {
    const { oldBranch, newBranch } = this.branches(repo, o);
    if (this.branchGuard && newBranch === oldBranch) await this.branchGuard(doer, repo, newBranch, []);
    const written = await this.commitWithRetry(repo, oldBranch, newBranch, o, doer, o.message ?? '', async () => ({ changes: [], patch }), true);
    await this.refsChanged(doer, repo.id);
    return { content: null, commit: await this.commitResponse(repo, written), verification: UNSIGNED_VERIFICATION };
  }

  private async commitWithRetry(
    repo: RepoWithOwner,
    oldBranch: string,
    newBranch: string,
    o: CommitOptions,
    doer: User,
    message: string,
    plan: (base: string | null) => Promise<{ changes: FileChange[]; patch?: string }>,
    needBranch = false,
  ): Promise<string> {
    const repoPath = this.contents.repoPath(repo);
    const me = gitIdentityOf(doer, this.contents.config.noReplyAddress);
    const authorId = { name: o.author?.name || o.committer?.name || me.name, email: o.author?.email || o.committer?.email || me.email };
    const committerId = { name: o.committer?.name || o.author?.name || me.name, email: o.committer?.email || o.author?.email || me.email };
    const authorDate = o.dates?.author || o.dates?.committer;
    const committerDate = o.dates?.committer || o.dates?.author;
    for (let attempt = 1; ; attempt++) {
      const base = await branchTip(repoPath, oldBranch);
      if (!base && (needBranch || !repo.isEmpty)) throw new NotFoundError(`branch does not exist [repo_id: ${repo.id} name: ${oldBranch}]`);
      let expectedOld = base ?? NULL_OID;
      if (newBranch !== oldBranch) {
        const existing = await branchTip(repoPath, newBranch);
        if (existing && !o.forcePush) throw new AlreadyExistsError(`branch already exists [name: ${newBranch}]`);
        expectedOld = existing || NULL_OID;
      }
      const { changes, patch } = await plan(base);
      try {
        const c = await writeCommit({
          repoPath,
          ref: `refs/heads/${newBranch}`,
          base,
          expectedOld,
          changes,
          patch,
          message,
          author: signature(authorId, authorDate),
          committer: signature(committerId, committerDate),
          signoff: o.signoff,
          reflogMessage: `forge: ${doer.name}`,
        });
        return c.commit;
      } catch (err) {
        if (err instanceof IndexChangeError) throw new InvalidError(err.message);
        if (!(err instanceof RefChangedError)) throw err;
        if (attempt >= MAX_ATTEMPTS) throw new ConflictError(`branch ${newBranch} changed while the commit was made; try again`);
      }
    }
  }

  /** Gitea's handleCheckErrors against the base commit, then the index changes. */
  private async plan(repo: RepoWithOwner, base: string | null, files: PreparedFile[]): Promise<{ changes: FileChange[] }> {
    const repoPath = this.contents.repoPath(repo);
    const lookups = new Set<string>();
    for (const f of files) {
      lookups.add(f.fromTreePath);
      const parts = f.treePath.split('/');
      for (let i = 1; i <= parts.length; i++) lookups.add(parts.slice(0, i).join('/'));
    }
    const entries: Map<string, TreeEntry> = base ? await treeEntries(this.contents.reader(repo), base, [...lookups]) : new Map();
    if (!base && files.some((f) => f.operation === 'delete')) throw new NotFoundError('repository is empty');
    const changes: FileChange[] = [];
    for (const f of files) {
      let executable = false;
      if (base && f.operation !== 'create') {
        const from = entries.get(f.fromTreePath);
        if (!from && f.operation !== 'upload') throw new NotFoundError(`object does not exist [id: , rel_path: ${f.fromTreePath}]`);
        if (from) executable = from.mode === '100755';
        if (f.sha && f.sha !== (from?.oid ?? '')) throw new InvalidError(`sha does not match [given: ${f.sha}, expected: ${from?.oid ?? ''}]`);
      }
      if (f.operation !== 'delete') {
        const parts = f.treePath.split('/');
        for (let i = 1; i <= parts.length; i++) {
          const sub = parts.slice(0, i).join('/');
          const e = entries.get(sub);
          if (!e) break;
          if (i < parts.length) {
            if (e.type !== 'tree') throw new InvalidError(`a file exists where you’re trying to create a subdirectory [path: ${sub}]`);
          } else if (e.mode === '120000') {
            throw new InvalidError(`a symbolic link exists where you’re trying to create a subdirectory [path: ${sub}]`);
          } else if (e.type === 'tree') {
            throw new InvalidError(`a directory exists where you’re trying to create a file [path: ${sub}]`);
          } else if (f.fromTreePath !== f.treePath || f.operation === 'create') {
            throw new AlreadyExistsError(`repository file already exists [path: ${f.treePath}]`);
          }
        }
      }
      const mode = executable ? '100755' : '100644';
      switch (f.operation) {
        case 'delete':
          changes.push({ kind: 'delete', path: f.treePath });
          break;
        case 'rename': {
          const from = entries.get(f.fromTreePath)!;
          if (f.fromTreePath !== f.treePath) changes.push({ kind: 'delete', path: f.fromTreePath });
          changes.push({ kind: 'write', path: f.treePath, oid: from.oid, mode: from.mode === '120000' ? '120000' : mode });
          break;
        }
        default:
          if (f.fromTreePath !== f.treePath && entries.has(f.fromTreePath)) changes.push({ kind: 'delete', path: f.fromTreePath });
          changes.push({ kind: 'write', path: f.treePath, content: f.content ?? Buffer.alloc(0), mode });
      }
    }
    return { changes };
  }

  /** Gitea's FileCommitResponse of a commit. */
  async commitResponse(repo: RepoWithOwner, sha: string): Promise<FileCommitResponse> {
    const repoPath = this.contents.repoPath(repo);
    const raw = await runGit(['show', '-s', '--format=%T%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%B', sha], { cwd: repoPath });
    const [tree, parents, an, ae, at, cn, ce, ct, ...msg] = raw.split('\0');
    const api = repoApiUrl(this.contents.config, repo);
    const meta = (kind: string, s: string) => ({ url: `${api}/git/${kind}/${s}`, sha: s, created: GO_ZERO });
    const date = (unix: string) => fmtTime(new Date(Number(unix) * 1000));
    return {
      ...meta('commits', sha),
      html_url: `${repoHtmlUrl(this.contents.config, repo)}/commit/${sha}`,
      author: { name: an, email: ae, date: date(at) },
      committer: { name: cn, email: ce, date: date(ct) },
      parents: parents.split(' ').filter(Boolean).map((p) => meta('commits', p)),
      message: msg.join('\0').replace(/\n$/, ''),
      tree: meta('trees', tree),
    };
  }
}
