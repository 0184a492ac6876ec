/**
 * Cross-references on the timeline, as Gitea writes them (models/issues/issue_xref.go and
 * services/issue/commit.go). An issue or pull request whose title or body mentions another
 * issue gives that issue an `issue_ref` / `pull_ref` entry; a comment gives a `comment_ref`; a
 * pushed commit whose message mentions an issue gives a `commit_ref`. Only issues the doer may
 * read are referenced, never one whose poster or repository owner blocked the doer. A close or
 * reopen keyword acts only from a pull request onto an issue, and only when the doer could
 * close the issue (its poster or a writer; the poster of a new pull request in the same
 * repository too, the merger deciding then): the referenced issues are closed or reopened when
 * the pull request is merged. A commit's keyword closes or reopens an issue once the commit
 * reaches the default branch (or the issue's own branch when it names one). Editing a text
 * re-reads it: references no longer there are neutered, as are those of a deleted comment.
 */
import { isBlockedBy } from '../blocks';
import { AccessMode } from '../convert';
import { findMarkdownReferences, findReferences, RefAction, timeLogSeconds, type IssueReference, type RefActionCode } from '../markup/references';
import { addTimeComment, TimeComment, wholeSeconds } from './time-tracking';
import type { NotifyListener, RepoWithOwner } from '../notify/notifier';
import type { PermissionService } from '../permissions';
import type { User } from '../records';
import type { PushedRef } from '../git/push';
import { ZERO_SHA } from '../git/push';
import { runGit } from '../git/run';
import type { Comment, Issue } from '../../../generated/prisma/client';
import type { TrackerContext } from './context';
import { CommentType, type IssueService } from './issues';

/** Gitea's CommentType numbers of the references. */
export const RefCommentType = { IssueRef: 3, CommitRef: 4, CommentRef: 5, PullRef: 6 } as const;

/**
 * The comment types whose text is read for references (Gitea's HasContentSupport): comments,
 * a review's line comments, its body and a dismissal's message.
 */
const TEXT_COMMENT_TYPES = new Set<number>([CommentType.Comment, 21, 22, 32]);

/** Commits of a new branch read for references (Gitea's CommitsBeforeLimit(10)). */
const NEW_BRANCH_COMMITS = 10;

export interface CrossReferenceDeps {
  appUrl: string;
  repoByName(owner: string, name: string): Promise<RepoWithOwner | null>;
  repoById(id: number): Promise<RepoWithOwner | null>;
  diskPath(repo: RepoWithOwner): string;
  repoHtml(repo: RepoWithOwner): string;
}

interface Found {
  issue: Issue;
  repo: RepoWithOwner;
  action: RefActionCode;
}

/** html.EscapeString of Go. */
function escapeHtml(s: string): string {
  return s.replace(/[&'<>"]/g, (c) => ({ '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;' })[c]!);
}

export class CrossReferenceService implements NotifyListener {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly permissions: PermissionService,
    private readonly issues: IssueService,
    private readonly deps: CrossReferenceDeps,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  private unitOf(issue: Pick<Issue, 'isPull'>) {
    return issue.isPull ? 'repo.pulls' : 'repo.issues';
  }

  /** The issue a reference names, with what the doer may make it do (Gitea's verifyReferencedIssue); null when it must not count. */
  private async verify(doer: User, origin: Issue, fromComment: boolean, ref: IssueReference, originRepo: RepoWithOwner): Promise<Found | null> {
    const repo = ref.owner ? await this.deps.repoByName(ref.owner, ref.name) : originRepo;
    if (!repo) return null;
    const issue = await this.prisma.issue.findUnique({ where: { repoId_index: { repoId: repo.id, index: ref.index } } });
    if (!issue) return null;
    // Close and reopen act only from a pull request onto an issue.
    let action: RefActionCode = issue.isPull || !origin.isPull ? RefAction.None : ref.action;
    if (issue.repoId !== origin.repoId || ref.action !== RefAction.None) {
      const mode = await this.permissions.repoAccessMode(doer, repo, this.unitOf(issue));
      if (mode < AccessMode.Read) return null;
      if (await isBlockedBy(this.prisma, doer, [issue.posterId, repo.ownerId])) return null;
      if (ref.action !== RefAction.None && doer.id !== issue.posterId && mode < AccessMode.Write && (issue.repoId !== origin.repoId || fromComment)) {
        action = RefAction.None;
      }
    }
    return { issue, repo, action };
  }

  /** The referenced issues of a text, one entry per issue (a later keyword wins; the origin itself left out). */
  private async collect(doer: User, origin: Issue, originRepo: RepoWithOwner, refs: IssueReference[], fromComment: boolean): Promise<Found[]> {
    const out: Found[] = [];
    for (const ref of refs) {
      const found = await this.verify(doer, origin, fromComment, ref, originRepo);
      if (!found || found.issue.id === origin.id) continue;
      const seen = out.find((f) => f.issue.id === found.issue.id);
      if (!seen) out.push(found);
      else if (found.action !== RefAction.None) seen.action = found.action;
    }
    return out;
  }

  /**
   * Writes the references of `origin` (its title and body, or `comment`): with `removeOld`,
   * the entries it wrote before stay when still meant, the others are neutered.
   */
  private async write(doer: User, repo: RepoWithOwner, origin: Issue, comment: Comment | null, removeOld: boolean): Promise<void> {
    const refs = comment
      ? findMarkdownReferences(comment.content, this.deps.appUrl)
      : [...findReferences(origin.title, this.deps.appUrl), ...findMarkdownReferences(origin.body, this.deps.appUrl)];
    let found = await this.collect(doer, origin, repo, refs, comment !== null);
    if (removeOld) {
      const old = await this.prisma.comment.findMany({
        where: { refIssueId: origin.id, refCommentId: comment?.id ?? null, refAction: { in: [RefAction.None, RefAction.Closes, RefAction.Reopens] } },
        select: { id: true, issueId: true, refAction: true },
      });
      const neuter: number[] = [];
      for (const c of old) {
        const i = found.findIndex((f) => f.issue.id === c.issueId && f.action === c.refAction);
        if (i >= 0) found = found.filter((_, j) => j !== i);
        else neuter.push(c.id);
      }
      if (neuter.length) await this.prisma.comment.updateMany({ where: { id: { in: neuter } }, data: { refAction: RefAction.Neutered } });
    }
    const type = comment ? RefCommentType.CommentRef : origin.isPull ? RefCommentType.PullRef : RefCommentType.IssueRef;
    for (const f of found) {
      const now = new Date();
      await this.prisma.comment.create({
        data: {
          type, issueId: f.issue.id, repoId: f.issue.repoId, posterId: doer.id, refRepoId: origin.repoId, refIssueId: origin.id,
          refCommentId: comment?.id ?? null, refAction: f.action, refIsPull: origin.isPull, createdAt: now, updatedAt: now,
        },
      });
    }
  }

  async issueCreated(doer: User, repo: RepoWithOwner, issue: Issue): Promise<void> {
    await this.write(doer, repo, issue, null, false);
  }

  async issueEdited(doer: User, repo: RepoWithOwner, issue: Issue): Promise<void> {
    const now = await this.prisma.issue.findUnique({ where: { id: issue.id } });
    if (now) await this.write(doer, repo, now, null, true);
  }

  async commentCreated(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment): Promise<void> {
    if (TEXT_COMMENT_TYPES.has(comment.type)) await this.write(doer, repo, issue, comment, false);
  }

  async reviewTextWritten(doer: User, repo: RepoWithOwner, issue: Issue, comments: Comment[]): Promise<void> {
    for (const c of comments) await this.commentCreated(doer, repo, issue, c);
  }

  async commentEdited(doer: User, repo: RepoWithOwner, issue: Issue, comment: Comment): Promise<void> {
    if (!TEXT_COMMENT_TYPES.has(comment.type)) return;
    const now = await this.prisma.comment.findUnique({ where: { id: comment.id } });
    if (now) await this.write(doer, repo, issue, now, true);
  }

  async commentDeleted(_doer: User, _repo: RepoWithOwner, issue: Issue, comment: Comment): Promise<void> {
    await this.prisma.comment.updateMany({
      where: { refIssueId: issue.id, refCommentId: comment.id, refAction: { in: [RefAction.None, RefAction.Closes, RefAction.Reopens] } },
      data: { refAction: RefAction.Neutered },
    });
  }

  /** A merged pull request closes or reopens the issues it references with a keyword (the latest reference to each wins). */
  async pullRequestMerged(doer: User, _repo: RepoWithOwner, pull: Issue): Promise<void> {
    const rows = await this.prisma.comment.findMany({
      where: { refIssueId: pull.id, refAction: { in: [RefAction.Closes, RefAction.Reopens] } },
      orderBy: { id: 'asc' },
    });
    const latest = new Map<number, number>();
    for (const r of rows) latest.set(r.issueId, r.refAction);
    const merged = await this.prisma.pullRequest.findUnique({ where: { issueId: pull.id }, select: { mergedCommitId: true } });
    for (const [issueId, action] of latest) {
      const issue = await this.prisma.issue.findUnique({ where: { id: issueId } });
      if (!issue) continue;
      await this.setClosed(doer, issue, action === RefAction.Closes, merged?.mergedCommitId ?? '', true);
    }
  }

  /** Closes (or reopens) `issue` in `doer`'s name; open dependencies keep it open. */
  private async setClosed(doer: User, issue: Issue, closed: boolean, _commit: string, allowDependencies: boolean): Promise<void> {
    if (issue.isClosed === closed) return;
    const repo = await this.deps.repoById(issue.repoId);
    if (!repo) return;
    const mode = await this.permissions.repoAccessMode(doer, repo);
    try {
      await this.issues.setClosed({ repo, mode, doer, canWrite: mode >= AccessMode.Write, isAdmin: mode >= AccessMode.Admin }, issue, closed);
    } catch (err) {
      if (!allowDependencies) throw err;
    }
  }

  private async addTime(user: User, issue: Issue, seconds: number, at: Date): Promise<void> {
    const when = wholeSeconds(Number.isNaN(at.getTime()) ? new Date() : at);
    await this.prisma.$transaction(async (tx) => {
      const t = await tx.trackedTime.create({ data: { issueId: issue.id, userId: user.id, time: seconds, createdAt: when } });
      await addTimeComment(tx, issue, user.id, TimeComment.AddTimeManual, `|${seconds}`, wholeSeconds(new Date()), t.id);
    });
  }

  /** Commits pushed to a branch: references in their messages (Gitea's UpdateIssuesCommit), oldest first. */
  async pushed(pusher: User, repo: RepoWithOwner, ref: PushedRef): Promise<void> {
    if (!ref.ref.startsWith('refs/heads/') || ref.after === ZERO_SHA) return;
    const branch = ref.ref.slice('refs/heads/'.length);
    const commits: { sha: string; date: Date; message: string }[] = [];
    if (ref.before === ZERO_SHA) {
      // A new branch: its newest commits that no ref held before (those others held were read
      // when they were pushed), already read for the push events; no git process per branch,
      // which matters for a push of hundreds of branches.
      for (const c of ref.commits.slice(0, NEW_BRANCH_COMMITS)) commits.push({ sha: c.id, date: new Date(c.timestamp), message: c.message });
    } else {
      // A moved branch: every commit it gained, also those another branch held (a merge into the default branch closes).
      const out = await runGit(['log', '-z', '--format=%H%x00%aI%x00%B', `${ref.before}..${ref.after}`], { cwd: this.deps.diskPath(repo) }).catch(() => '');
      const fields = out.split('\0');
      for (let i = 0; i + 2 < fields.length; i += 3) commits.push({ sha: fields[i].replace(/^\n/, ''), date: new Date(fields[i + 1]), message: fields[i + 2] });
    }
    const repoPath = new URL(this.deps.repoHtml(repo)).pathname;
    for (const c of commits.reverse()) {
      const marked = new Set<string>();
      for (const r of findReferences(c.message, this.deps.appUrl)) {
        const refRepo = r.owner ? await this.deps.repoByName(r.owner, r.name) : repo;
        if (!refRepo) continue;
        const issue = await this.prisma.issue.findUnique({ where: { repoId_index: { repoId: refRepo.id, index: r.index } } });
        if (!issue) continue;
        const key = `${issue.id}:${r.action}`;
        if (marked.has(key)) continue;
        marked.add(key);
        const mode = await this.permissions.repoAccessMode(pusher, refRepo, this.unitOf(issue));
        const canClose = mode >= AccessMode.Write || issue.posterId === pusher.id;
        if (!canClose && mode < AccessMode.Read) continue;
        if (issue.isPull) {
          const pr = await this.prisma.pullRequest.findUnique({ where: { issueId: issue.id }, select: { mergedCommitId: true } });
          if (pr?.mergedCommitId === c.sha) continue;
        }
        const subject = c.message.split('\n', 1)[0];
        const blocked = (await isBlockedBy(this.prisma, pusher, [issue.posterId, refRepo.ownerId])) && (await this.permissions.repoAccessMode(pusher, refRepo)) < AccessMode.Admin;
        if (blocked) continue;
        const exists = await this.prisma.comment.count({ where: { type: RefCommentType.CommitRef, issueId: issue.id, commitSha: c.sha } });
        if (!exists) {
          const now = new Date();
          await this.prisma.comment.create({
            data: {
              type: RefCommentType.CommitRef, issueId: issue.id, repoId: issue.repoId, posterId: pusher.id, commitSha: c.sha, createdAt: now, updatedAt: now,
              content: `<a href="${escapeHtml(repoPath)}/commit/${escapeHtml(encodeURIComponent(c.sha))}">${escapeHtml(subject)}</a>`,
            },
          });
        }
        if (issue.isPull || !canClose || (r.action !== RefAction.Closes && r.action !== RefAction.Reopens)) continue;
        // Only the default branch closes, or the branch the issue names.
        const issueBranch = issue.ref.replace(/^refs\/heads\//, '');
        if (issue.ref ? branch !== issueBranch : branch !== repo.defaultBranch) continue;
        const current = await this.prisma.issue.findUnique({ where: { id: issue.id } });
        if (!current) continue;
        if (r.action === RefAction.Closes && !current.isClosed) {
          // "Fixes #N @1h30m": the time is tracked on the issue in the pusher's name, at the commit's date.
          const seconds = r.timeLog ? timeLogSeconds(r.timeLog) : 0;
          if (seconds > 0) await this.addTime(pusher, current, seconds, c.date);
          await this.setClosed(pusher, current, true, c.sha, true);
        }
        else if (r.action === RefAction.Reopens && current.isClosed) await this.setClosed(pusher, current, false, c.sha, true);
      }
    }
  }
}
