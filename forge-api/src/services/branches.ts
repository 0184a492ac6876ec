/**
 * Branches of a repository (Gitea's /branches): list, get, create from a branch, tag or commit,
 * move (PUT), rename, delete. Git is the record (no branch table): every change is a
 * compare-and-swap `update-ref`, checked against the branch protection rules first, then
 * announced like a push (RepoService.afterPush: push/create/delete webhooks, feeds, stats).
 */
import { usersByCommitEmails } from './commit-users';
import type { ForgeConfig } from '../config';
import { firstMatch, type BranchProtectionService, type ProtectionRule } from './branch-protection';
import { AccessMode } from './convert';
import type { Prisma } from './database';
import { ConflictError, InvalidError, NotFoundError, PermissionDeniedError, ValidationError } from './errors';
import { repositoryPath } from './git';
import { isValidBranchName } from './git/ref-names';
import { deleteRef, listRefTips, readCommits, refNameTaken, RefConflictError, resolveCommit, resolveRef, updateRef, ZERO_OID, type CommitDetails } from './git/refs';
import { runGit } from './git/run';
import type { PermissionService } from './permissions';
import type { RepoService, RepoWithOwner } from './repos';
import type { User } from './records';

/** The repository of the path and who asks (request.repoCtx's parts the rules need). */
export interface BranchCtx {
  repo: RepoWithOwner;
  doer: User | null;
  /** Repository admin (or site admin): sees effective_branch_protection_name, renames protected branches. */
  isAdmin: boolean;
}

export interface PayloadUser {
  name: string;
  email: string;
  username: string;
}

export interface PayloadCommit {
  id: string;
  message: string;
  url: string;
  author: PayloadUser;
  committer: PayloadUser;
  verification: { verified: boolean; reason: string; signature: string; signer: null; payload: string };
  timestamp: string;
  added: null;
  removed: null;
  modified: null;
}

export interface BranchJson {
  name: string;
  commit: PayloadCommit;
  protected: boolean;
  required_approvals: number;
  enable_status_check: boolean;
  status_check_contexts: string[] | null;
  user_can_push: boolean;
  user_can_merge: boolean;
  effective_branch_protection_name: string;
}

/** git's %aI with a zero offset written as Z, as Go prints a UTC time. */
export function gitDate(iso: string): string {
  return iso.replace(/[+-]00:00$/, 'Z');
}

export class BranchService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
    private readonly permissions: PermissionService,
    readonly protections: BranchProtectionService,
    private readonly repos: RepoService,
  ) {}

  diskPath(repo: RepoWithOwner): string {
    return repositoryPath(this.config.reposDir, repo.owner.name, repo.name);
  }

  htmlUrl(repo: RepoWithOwner): string {
    return `${this.config.rootUrl}${repo.owner.name}/${repo.name}`;
  }

  /** User names of commit e-mails (commit-users.ts). */
  private async usernames(emails: string[]): Promise<Map<string, string>> {
    const users = await usersByCommitEmails(this.prisma, this.config.noReplyAddress, emails);
    return new Map([...users].map(([email, u]) => [email, u.name]));
  }

  /** Gitea's PayloadCommit for commits of this repository. */
  async payloadCommits(repo: RepoWithOwner, commits: CommitDetails[]): Promise<Map<string, PayloadCommit>> {
    const names = await this.usernames(commits.flatMap((c) => [c.author.email, c.committer.email]));
    const out = new Map<string, PayloadCommit>();
    const base = this.htmlUrl(repo);
    for (const c of commits) {
      out.set(c.id, {
        id: c.id,
        message: c.message,
        url: `${base}/commit/${c.id}`,
        author: { name: c.author.name, email: c.author.email, username: names.get(c.author.email.toLowerCase()) ?? '' },
        committer: { name: c.committer.name, email: c.committer.email, username: names.get(c.committer.email.toLowerCase()) ?? '' },
        // Commit signatures are not verified (no signing keys configured): Gitea's answer for an unsigned commit.
        verification: { verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' },
        timestamp: gitDate(c.author.date),
        added: null,
        removed: null,
        modified: null,
      });
    }
    return out;
  }

  private async branchJson(ctx: BranchCtx, name: string, commit: PayloadCommit, rule: ProtectionRule | null, writer: boolean): Promise<BranchJson> {
    if (!rule) {
      return {
        name,
        commit,
        protected: false,
        required_approvals: 0,
        enable_status_check: false,
        status_check_contexts: [],
        user_can_push: writer,
        user_can_merge: writer,
        effective_branch_protection_name: '',
      };
    }
    const doer = ctx.doer;
    return {
      name,
      commit,
      protected: true,
      required_approvals: rule.settings.required_approvals,
      enable_status_check: rule.settings.enable_status_check,
      status_check_contexts: rule.settings.status_check_contexts,
      user_can_push: doer ? await this.protections.canUserPush(rule, doer, ctx.repo) : false,
      user_can_merge: doer ? await this.protections.canUserMerge(rule, doer, ctx.repo) : false,
      effective_branch_protection_name: ctx.isAdmin ? rule.ruleName : '',
    };
  }

  private async canWrite(ctx: BranchCtx): Promise<boolean> {
    return ctx.doer ? (await this.permissions.repoAccessMode(ctx.doer, ctx.repo, 'repo.code')) >= AccessMode.Write : false;
  }

  /** One page of branches (newest commit first, then by name), `q` a case-insensitive substring. */
  async list(ctx: BranchCtx, skip: number, take: number, q?: string): Promise<{ data: BranchJson[]; total: number }> {
    const repoPath = this.diskPath(ctx.repo);
    let tips = await listRefTips(repoPath, 'heads');
    if (q) {
      const needle = q.toLowerCase();
      tips = tips.filter((t) => t.name.toLowerCase().includes(needle));
    }
    const page = tips.slice(skip, skip + take);
    const commits = await readCommits(repoPath, page.map((t) => t.commit));
    const payloads = await this.payloadCommits(ctx.repo, [...commits.values()]);
    const rules = await this.protections.list(ctx.repo.id);
    const writer = await this.canWrite(ctx);
    const data: BranchJson[] = [];
    for (const t of page) {
      const commit = payloads.get(t.commit);
      if (!commit) continue;
      data.push(await this.branchJson(ctx, t.name, commit, firstMatch(rules, t.name), writer));
    }
    return { data, total: tips.length };
  }

  /** The tip of a branch as a webhook PayloadCommit, or null when the branch does not exist. */
  async tipPayloadCommit(repo: RepoWithOwner, name: string): Promise<PayloadCommit | null> {
    const oid = await resolveRef(this.diskPath(repo), `refs/heads/${name}`);
    if (!oid) return null;
    const commits = await readCommits(this.diskPath(repo), [oid]);
    return (await this.payloadCommits(repo, [...commits.values()])).get(oid) ?? null;
  }

  private async tip(ctx: BranchCtx, name: string): Promise<string | null> {
    if (!name || name.includes('\0') || !isValidBranchName(name)) return null;
    return resolveRef(this.diskPath(ctx.repo), `refs/heads/${name}`);
  }

  async get(ctx: BranchCtx, name: string): Promise<BranchJson> {
    const oid = await this.tip(ctx, name);
    if (!oid) throw new NotFoundError('not found');
    return this.jsonFor(ctx, name, oid);
  }

  private async jsonFor(ctx: BranchCtx, name: string, oid: string): Promise<BranchJson> {
    const commits = await readCommits(this.diskPath(ctx.repo), [oid]);
    const payload = (await this.payloadCommits(ctx.repo, [...commits.values()])).get(oid);
    if (!payload) throw new NotFoundError('not found');
    return this.branchJson(ctx, name, payload, await this.protections.ruleFor(ctx.repo.id, name), await this.canWrite(ctx));
  }

  private notEmptyNorMirror(repo: RepoWithOwner): void {
    if (repo.isEmpty) throw new NotFoundError('Git Repository is empty.');
    if (repo.isMirror) throw new PermissionDeniedError('Git Repository is a mirror.');
  }

  /** A ref change the forge makes is checked by the same rules as a push (Gitea pushes through its hooks). */
  private async checkAsPush(ctx: BranchCtx & { doer: User }, ref: string, oldOid: string, newOid: string): Promise<void> {
    const repoPath = this.diskPath(ctx.repo);
    let force = false;
    if (oldOid !== ZERO_OID && newOid !== ZERO_OID) force = (await runGit(['rev-list', '--max-count=1', oldOid, `^${newOid}`], { cwd: repoPath })).trim() !== '';
    const update = { ref, oldOid, newOid, force };
    const refusal = await this.protections.checkBranchUpdates(ctx.repo, ctx.doer, [update], async (u) => changedFiles(repoPath, u.oldOid, u.newOid));
    if (refusal) throw new PermissionDeniedError(refusal);
  }

  async create(ctx: BranchCtx & { doer: User }, input: { new_branch_name?: string; old_branch_name?: string; old_ref_name?: string }): Promise<BranchJson> {
    const name = input.new_branch_name ?? '';
    if (!name) throw new ValidationError('[BranchName]: Required');
    if (!isValidBranchName(name)) throw new ValidationError(Array.from(name).length > 100 ? '[BranchName]: MaxSize' : '[BranchName]: GitRefName');
    for (const [field, value] of [['OldBranchName', input.old_branch_name], ['OldRefName', input.old_ref_name]] as const) {
      if (value && (Array.from(value).length > 100 || !/^[^\s~^:?*[\\]+$/.test(value) || value.includes('..') || value.includes('@{'))) throw new ValidationError(`[${field}]: GitRefName`);
    }
    this.notEmptyNorMirror(ctx.repo);
    const repoPath = this.diskPath(ctx.repo);
    let from: string | null;
    if (input.old_ref_name) {
      from = await resolveCommit(repoPath, input.old_ref_name);
      // Gitea answers 500 here (its error is not classified); a missing start point is a 404.
      if (!from) throw new NotFoundError(`The old ref does not exist`);
    } else if (input.old_branch_name) {
      from = (await this.tip(ctx, input.old_branch_name)) && (await resolveCommit(repoPath, `refs/heads/${input.old_branch_name}`));
      if (!from) throw new NotFoundError('The old branch does not exist');
    } else {
      from = await resolveCommit(repoPath, `refs/heads/${ctx.repo.defaultBranch}`);
      if (!from) throw new NotFoundError('The old branch does not exist');
    }
    const ref = `refs/heads/${name}`;
    const taken = await refNameTaken(repoPath, ref);
    if (taken === 'exists') throw new ConflictError('The branch already exists.');
    if (taken === 'conflict') throw new ConflictError('The branch with the same name already exists.');
    if (await resolveRef(repoPath, `refs/tags/${name}`)) throw new ConflictError('The branch with the same tag already exists.');
    await this.checkAsPush(ctx, ref, ZERO_OID, from);
    try {
      await updateRef(repoPath, ref, from, ZERO_OID, `branch: created from API`);
    } catch (err) {
      if (err instanceof RefConflictError) throw new ConflictError('The branch already exists.');
      throw err;
    }
    await this.announce(ctx);
    return this.jsonFor(ctx, name, from);
  }

  async delete(ctx: BranchCtx & { doer: User }, name: string): Promise<void> {
    this.notEmptyNorMirror(ctx.repo);
    if (name === ctx.repo.defaultBranch) throw new PermissionDeniedError('can not delete default or pull request target branch');
    if (await this.protections.ruleFor(ctx.repo.id, name)) throw new PermissionDeniedError('branch protected');
    const oid = await this.tip(ctx, name);
    if (!oid) throw new NotFoundError('not found');
    try {
      await deleteRef(this.diskPath(ctx.repo), `refs/heads/${name}`, oid);
    } catch (err) {
      if (err instanceof RefConflictError) throw new ConflictError('the branch changed meanwhile');
      throw err;
    }
    await this.announce(ctx);
  }

  /** PUT: points the branch at another commit (fast-forward, or with `force`), checked like a push. */
  async update(ctx: BranchCtx & { doer: User }, name: string, input: { new_commit_id?: string; old_commit_id?: string; force?: boolean }): Promise<void> {
    if (!input.new_commit_id) throw new ValidationError('[NewCommitID]: Required');
    this.notEmptyNorMirror(ctx.repo);
    const repoPath = this.diskPath(ctx.repo);
    const current = await this.tip(ctx, name);
    if (!current) throw new NotFoundError('not found');
    if (input.old_commit_id) {
      const expected = await resolveCommit(repoPath, input.old_commit_id);
      if (!expected) throw new NotFoundError('not found');
      if (expected !== current) throw new InvalidError(`branch commit does not match [expected: ${expected}, given: ${current}]`);
    }
    const target = await resolveCommit(repoPath, input.new_commit_id);
    if (!target) throw new NotFoundError('not found');
    if (target === current) return;
    const force = (await runGit(['rev-list', '--max-count=1', current, `^${target}`], { cwd: repoPath })).trim() !== '';
    if (force && !input.force) throw new InvalidError(`Force push ${name} need a confirm force parameter`);
    await this.checkAsPush(ctx, `refs/heads/${name}`, current, target);
    try {
      await updateRef(repoPath, `refs/heads/${name}`, target, current, 'branch: updated from API');
    } catch (err) {
      if (err instanceof RefConflictError) throw new ConflictError('the branch changed meanwhile');
      throw err;
    }
    await this.announce(ctx);
  }

  async rename(ctx: BranchCtx & { doer: User }, from: string, to: string): Promise<void> {
    if (!to) throw new ValidationError('[Name]: Required');
    if (!isValidBranchName(to)) throw new ValidationError(Array.from(to).length > 100 ? '[Name]: MaxSize' : '[Name]: GitRefName');
    this.notEmptyNorMirror(ctx.repo);
    const repoPath = this.diskPath(ctx.repo);
    const same = 'Cannot rename a branch using the same name or rename to a branch that already exists.';
    if (from === to || (await this.tip(ctx, to))) throw new InvalidError(same);
    const oid = await this.tip(ctx, from);
    if (!oid) throw new NotFoundError("Branch doesn't exist.");
    const adminOnly = 'User must be a repo or site admin to rename default or protected branches.';
    if (from === ctx.repo.defaultBranch && !ctx.isAdmin) throw new PermissionDeniedError(adminOnly);
    if ((await this.protections.byName(ctx.repo.id, from)) && !ctx.isAdmin) throw new PermissionDeniedError(adminOnly);
    const rule = await this.protections.ruleFor(ctx.repo.id, to);
    if (rule && !(await this.protections.canUserPush(rule, ctx.doer, ctx.repo))) throw new PermissionDeniedError('Failed to rename branch due to branch protection rules.');
    const taken = await refNameTaken(repoPath, `refs/heads/${to}`);
    if (taken) throw new InvalidError(same);
    try {
      // `git branch -m` moves the ref and its log, and HEAD with it when it is the default branch.
      await runGit(['branch', '-m', '--', from, to], { cwd: repoPath });
    } catch {
      throw new ConflictError('the branch could not be renamed');
    }
    await this.protections.renameRule(ctx.repo.id, from, to);
    if (from === ctx.repo.defaultBranch) await this.prisma.repository.update({ where: { id: ctx.repo.id }, data: { defaultBranch: to } });
    await this.announce(ctx);
  }

  private async announce(ctx: BranchCtx & { doer: User }): Promise<void> {
    await this.announceChange(ctx.doer, ctx.repo);
  }

  /** Refreshes the repository's stats and announces the ref changes like a push. */
  async announceChange(doer: User, repo: RepoWithOwner): Promise<void> {
    await this.repos.refsChanged(doer, repo.id);
  }
}

/** Paths an update changes (for protected file patterns); a new branch compares with nothing. */
export async function changedFiles(repoPath: string, oldOid: string, newOid: string): Promise<string[]> {
  if (/^0+$/.test(newOid)) return [];
  const args = /^0+$/.test(oldOid) ? ['diff-tree', '-r', '--name-only', '--no-commit-id', '-z', '--root', newOid] : ['diff', '--name-only', '-z', oldOid, newOid];
  const out = await runGit(args, { cwd: repoPath }).catch(() => '');
  return out.split('\0').filter(Boolean);
}

