/**
 * Commits as Gitea's `Commit` record: the parsed commit from the reader, forge users matched by
 * e-mail, and (on request) the changed files, line counts and signature verification of a
 * whole page at once.
 */
import type { Prisma } from '../database';
import type { Converter } from '../convert';
import type { RepoWithOwner } from '../convert/repository';
import type { User } from '../records';
import type { GitCommit, GitSignature } from '../git/reader';
import { commitFiles, commitStats, type CommitFiles, type CommitStat } from './diff-stats';
import { Lru } from './lru';
import { usersByCommitEmails } from '../commit-users';
import { gitDate, goPathEscape, repoUrls, ZERO_TIME } from './format';

export interface CommitJsonOptions {
  stat: boolean;
  files: boolean;
  verification: boolean;
}

export const ALL_COMMIT_PARTS: CommitJsonOptions = { stat: true, files: true, verification: true };

/** Gitea's `stat`, `files`, `verification` query flags: absent means true. */
export function commitOptionsFromQuery(q: { stat?: unknown; files?: unknown; verification?: unknown }): CommitJsonOptions {
  const flag = (v: unknown) => v === undefined || v === '' || formBool(v);
  return { stat: flag(q.stat), files: flag(q.files), verification: flag(q.verification) };
}

/** Go's strconv.ParseBool as Gitea's FormBool reads it: anything else is false. */
export function formBool(v: unknown): boolean {
  return v === true || /^(1|t|true)$/i.test(String(v ?? ''));
}

/** What Gitea answers for a signature it cannot check (no GPG/SSH keys are verified here). */
export function verificationOf(signature: GitSignature | null) {
  if (!signature) return { verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' };
  return { verified: false, reason: 'gpg.error.no_gpg_keys_found', signature: signature.signature, signer: null, payload: signature.payload };
}

export class CommitConverter {
  // What a commit changed never changes: both are kept by commit id (content-addressed, so the
  // same id in another repository is the same commit with the same parents).
  private readonly filesCache = new Lru<string, CommitFiles>(20_000);
  private readonly statsCache = new Lru<string, CommitStat>(20_000);

  constructor(
    private readonly prisma: Prisma,
    private readonly convert: Converter,
    private readonly rootUrl: string,
    private readonly noReplyAddress: string,
  ) {}

  /** Forge users of these commit e-mails, by lowercase e-mail (commit-users.ts). */
  usersByEmail(emails: Iterable<string>): Promise<Map<string, User>> {
    return usersByCommitEmails(this.prisma, this.noReplyAddress, emails);
  }

  async toJson(repo: RepoWithOwner, repoPath: string, commits: GitCommit[], opts: CommitJsonOptions): Promise<Record<string, unknown>[]> {
    const [users, files, stats] = await Promise.all([
      this.usersByEmail(commits.flatMap((c) => [c.author.email, c.committer.email])),
      opts.files ? cached(this.filesCache, commits, (missing) => commitFiles(repoPath, missing)) : Promise.resolve(null),
      opts.stat ? cached(this.statsCache, commits, (missing) => commitStats(repoPath, missing)) : Promise.resolve(null),
    ]);
    const urls = repoUrls(this.rootUrl, repo);
    const userJson = (email: string) => {
      const u = users.get(email.toLowerCase());
      return u ? this.convert.userPublic(u) : null;
    };
    return commits.map((c) => {
      const commitUrl = `${urls.api}/git/commits/${goPathEscape(c.oid)}`;
      const created = gitDate(c.committer);
      const f = files?.get(c.oid);
      const s = stats?.get(c.oid);
      return {
        url: commitUrl,
        sha: c.oid,
        created,
        html_url: `${urls.html}/commit/${goPathEscape(c.oid)}`,
        commit: {
          url: commitUrl,
          author: { name: c.author.name, email: c.author.email, date: gitDate(c.author) },
          committer: { name: c.committer.name, email: c.committer.email, date: gitDate(c.committer) },
          message: c.message,
          // Gitea links the commit's own id here, not its tree's.
          tree: { url: `${urls.api}/git/trees/${goPathEscape(c.oid)}`, sha: c.oid, created },
          verification: opts.verification ? verificationOf(c.signature) : null,
        },
        author: userJson(c.author.email),
        committer: userJson(c.committer.email),
        parents: c.parents.map((p) => ({ url: `${urls.api}/git/commits/${goPathEscape(p)}`, sha: p, created: ZERO_TIME })),
        files: f
          ? [
              ...f.added.map((filename) => ({ filename, status: 'added' })),
              ...f.removed.map((filename) => ({ filename, status: 'removed' })),
              ...f.modified.map((filename) => ({ filename, status: 'modified' })),
            ]
          : opts.files
            ? []
            : null,
        stats: opts.stat ? { total: (s?.additions ?? 0) + (s?.deletions ?? 0), additions: s?.additions ?? 0, deletions: s?.deletions ?? 0 } : null,
      };
    });
  }
}

async function cached<V>(cache: Lru<string, V>, commits: GitCommit[], load: (missing: GitCommit[]) => Promise<Map<string, V>>): Promise<Map<string, V>> {
  const out = new Map<string, V>();
  const missing: GitCommit[] = [];
  for (const c of commits) {
    const v = cache.get(c.oid);
    if (v !== undefined) out.set(c.oid, v);
    else missing.push(c);
  }
  if (missing.length > 0) {
    for (const [oid, v] of await load(missing)) {
      cache.set(oid, v);
      out.set(oid, v);
    }
  }
  return out;
}
