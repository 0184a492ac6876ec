/**
 * AGit pull requests (Gitea's services/agit): `git push origin HEAD:refs/for/<base>[/<topic>]`
 * with `-o topic=<topic>` opens a pull request from the pushed commit into <base>, or moves the
 * head of the open one of the same pusher, base and topic. Nothing is stored under refs/for:
 * the head lives at refs/pull/{index}/head of the repository itself, the head branch is
 * `<pusher>/<topic>` (so two users' topics never collide) and the client is told that
 * refs/pull/{index}/head changed. Push options: `topic`, `title` and `description` (either
 * may be "{base64}<text>" to carry new lines; by default the commit's subject and body),
 * `force-push` (required to replace a head that the new commit does not contain).
 */
import { AccessMode, type RepoWithOwner } from '../convert';
import type { Prisma } from '../database';
import { DomainError } from '../errors';
import type { PermissionService } from '../permissions';
import type { User } from '../records';
import type { ProcReceiveAnswer, ProcReceiveCommand, ProcReceiveResult } from '../git/proc-receive';
import { PROC_RECEIVE_REFS } from '../git/transport';
import { RefChangedError, updateRef } from '../git/commit-writer';
import { resolveRef } from '../git/refs';
import { runGit } from '../git/run';
import type { PullChecker } from './checker';
import type { PullHeadMoves } from './head-moves';
import type { PullService } from './pulls';
import { branchTip, PullFlow, pullHeadRef } from './git';

const FOR_PREFIX = `${PROC_RECEIVE_REFS}/`;
const ZERO = /^0+$/;

export interface AgitDeps {
  prisma: Prisma;
  pulls: PullService;
  checker: PullChecker;
  headMoves: PullHeadMoves;
  permissions: PermissionService;
  repoHtml(repo: RepoWithOwner): string;
}

/** Push options as Gitea reads them: `key=value`, or `key` alone for an empty value; the last one wins. */
export function parsePushOptions(lines: string[]): Map<string, string> {
  const options = new Map<string, string>();
  for (const line of lines) {
    const eq = line.indexOf('=');
    if (eq < 0) options.set(line, '');
    else options.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return options;
}

/** A boolean option: present and empty, or a truth value as Go's ParseBool reads it. */
function optionIsTrue(value: string | undefined): boolean {
  return value !== undefined && ['', '1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

/** A text option; "{base64}..." carries text with new lines (kept as written when it is not base64). */
export function optionText(value: string | undefined): string {
  if (!value) return '';
  if (!value.startsWith('{base64}')) return value;
  const encoded = value.slice('{base64}'.length);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return value;
  return Buffer.from(encoded, 'base64').toString('utf8');
}

export class AgitService {
  constructor(private readonly deps: AgitDeps) {}

  /**
   * The base branch and topic of refs/for/<rest>: <rest> when it is a branch (the topic then
   * comes from the push option), else the shortest leading part of <rest> that is a branch,
   * with the remainder as the topic; null when no such branch exists.
   */
  private async baseAndTopic(repoPath: string, rest: string): Promise<{ base: string; topic: string } | null> {
    if (await branchTip(repoPath, rest)) return { base: rest, topic: '' };
    for (let i = rest.indexOf('/'); i >= 0; i = rest.indexOf('/', i + 1)) {
      if (await branchTip(repoPath, rest.slice(0, i))) return { base: rest.slice(0, i), topic: rest.slice(i + 1) };
    }
    return null;
  }

  /** The commands of one push under refs/for/ (after pre-receive accepted them), in order. */
  async procReceive(repo: RepoWithOwner, repoPath: string, pusher: User, commands: ProcReceiveCommand[], optionLines: string[]): Promise<ProcReceiveAnswer> {
    const options = parsePushOptions(optionLines);
    const results: ProcReceiveResult[] = [];
    const urls: string[] = [];
    for (const c of commands) {
      const result = await this.one(repo, repoPath, pusher, c, options);
      results.push(result);
      if ('refname' in result) urls.push(`${this.deps.repoHtml(repo)}/pulls/${result.refname.split('/')[2]}`);
    }
    // Gitea's push message, the same whether the pull request was just opened or moved.
    const message = urls.map((url) => `\nVisit the existing pull request:\n  ${url}\n\n`).join('');
    return { results, message };
  }

  private async one(repo: RepoWithOwner, repoPath: string, pusher: User, c: ProcReceiveCommand, options: Map<string, string>): Promise<ProcReceiveResult> {
    if (ZERO.test(c.newOid)) return { ref: c.ref, error: "Can't delete not exist branch" };
    if (!c.ref.startsWith(FOR_PREFIX)) return { ref: c.ref, fallThrough: true };
    const target = await this.baseAndTopic(repoPath, c.ref.slice(FOR_PREFIX.length));
    if (!target) return { ref: c.ref, error: 'base-branch does not exist' };
    const topic = target.topic || options.get('topic') || '';
    if (!topic) return { ref: c.ref, error: 'topic-branch is not set' };
    const owner = pusher.lowerName + '/';
    const headBranch = topic.startsWith(owner) ? topic : owner + topic;

    const open = await this.deps.prisma.pullRequest.findFirst({
      where: { baseRepoId: repo.id, headRepoId: repo.id, baseBranch: target.base, headBranch, flow: PullFlow.AGit, hasMerged: false, issue: { isClosed: false } },
      include: { issue: true },
    });
    if (!open) {
      let title = optionText(options.get('title'));
      let body = optionText(options.get('description'));
      if (!title || !body) {
        const message = await runGit(['log', '-1', '--format=%B', c.newOid], { cwd: repoPath });
        const nl = message.indexOf('\n');
        title ||= (nl < 0 ? message : message.slice(0, nl)).trim();
        body ||= (nl < 0 ? '' : message.slice(nl + 1)).trim();
      }
      const mode = await this.deps.permissions.repoAccessMode(pusher, repo);
      const rc = { repo, mode, doer: pusher, canWrite: mode >= AccessMode.Write, isAdmin: mode >= AccessMode.Admin };
      let pr;
      try {
        pr = await this.deps.pulls.createAgit(rc, { base: target.base, headBranch, headCommit: c.newOid, title, body });
      } catch (err) {
        // A rule of opening an issue (a title too long, a pusher the owner blocked): said to the client.
        if (err instanceof DomainError) return { ref: c.ref, error: err.message };
        throw err;
      }
      return { ref: c.ref, refname: pullHeadRef(pr.index), newOid: c.newOid };
    }

    const ref = pullHeadRef(open.index);
    const old = await resolveRef(repoPath, ref);
    if (!old) throw new Error(`${ref} is missing`);
    if (old === c.newOid) return { ref: c.ref, error: 'new commit is same with old commit' };
    const force = optionIsTrue(options.get('force-push'));
    if (!force) {
      const lost = (await runGit(['rev-list', '--max-count=1', old, `^${c.newOid}`], { cwd: repoPath })).trim();
      if (lost) return { ref: c.ref, error: 'request `force-push` push option' };
    }
    try {
      await updateRef(repoPath, ref, c.newOid, old, `AGit push by ${pusher.name}`);
    } catch (err) {
      // Another push of the same topic moved it first.
      if (err instanceof RefChangedError) return { ref: c.ref, error: 'the pull request was updated meanwhile, fetch and push again' };
      throw err;
    }
    await this.deps.checker.enqueue([open.id]);
    await this.deps.headMoves.moved(pusher, repo, repo, open, old, c.newOid, force);
    return { ref: c.ref, refname: ref, oldOid: old, newOid: c.newOid, forced: force };
  }
}
