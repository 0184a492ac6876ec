/**
 * Pull requests (Gitea's services/pull): an issue whose isPull is set plus its PullRequest row.
 * The issue is created through the tracker's one creation path (IssueService.create), which
 * numbers it in the repository's one sequence and writes the pull request's row in the same
 * transaction. Title, body, labels, milestone, assignees, state and deadline are the issue's
 * and change through the issue rules; base, head and merge state are the pull request's.
 */
import { AccessMode, type IssueConverter, type RepoWithOwner } from '../convert';
import { toPullRequest, type PullParts } from '../convert/pull';
import type { ConvertContext } from '../convert';
import type { Converter } from '../convert';
import type { Prisma, PrismaNS } from '../database';
import { ConflictError, DomainError, InvalidError, MalformedError, NotFoundError, PermissionDeniedError, PreconditionFailedError, ValidationError } from '../errors';
import { listRefTips } from '../git/refs';
import type { IssueService } from '../issues/issues';
import type { LabelService } from '../issues/labels';
import { ReviewCommentType, type PullReviewService } from './reviews';
import type { RepoCtx } from '../issues/context';
import type { PermissionService } from '../permissions';
import type { User } from '../records';
import type { PullRequest } from '../../../generated/prisma/client';
import type { PullChecker } from './checker';
import type { ReviewRequestService } from './review-requests';
import { toTeam } from '../convert/team';
import { branchTip, PullFlow, pullHeadRef } from './git';
import type { PushComments } from './push-comments';
import { runGit } from '../git/run';
import { CommentType } from '../issues/issues';

export interface CreatePullInput {
  head: string;
  base: string;
  title: string;
  body?: string;
  assignee?: string;
  assignees?: string[];
  milestone?: number;
  labels?: number[];
  due_date?: string;
  reviewers?: string[];
  team_reviewers?: string[];
  allow_maintainer_edit?: boolean;
}

export interface EditPullInput {
  title?: string;
  body?: string;
  base?: string;
  assignee?: string;
  assignees?: string[];
  milestone?: number;
  labels?: number[];
  state?: string;
  due_date?: string | null;
  unset_due_date?: boolean;
  allow_maintainer_edit?: boolean;
  content_version?: number;
}

export interface ListPullsQuery {
  state?: string;
  sort?: string;
  milestone?: number;
  labels?: number[];
  poster?: string;
  base_branch?: string;
}

type PullCtx = RepoCtx & { doer: User };
type Prisma_OrderBy = PrismaNS.PullRequestOrderByWithRelationInput;

export interface PullServiceDeps {
  prisma: Prisma;
  reviewRequests: ReviewRequestService;
  /** Official flags are re-decided when the base branch changes. */
  reviews: PullReviewService;
  issues: IssueService;
  labels: LabelService;
  convert: Converter;
  issueConvert: IssueConverter;
  permissions: PermissionService;
  checker: PullChecker;
  /** The `pull_push` timeline entries. */
  pushComments: PushComments;
  repoByName(owner: string, name: string): Promise<RepoWithOwner | null>;
  repoById(id: number): Promise<RepoWithOwner | null>;
  diskPath(repo: RepoWithOwner): string;
  /** The repository with its parent, as its record shows it. */
  withParent(repo: RepoWithOwner): Promise<RepoWithOwner>;
}

/** Sort orders of the list (Gitea's applySorts), newest first by default. */
const SORTS: Record<string, { field: 'createdAt' | 'updatedAt' | 'closedAt' | 'numComments'; dir: 'asc' | 'desc' }[]> = {
  oldest: [{ field: 'createdAt', dir: 'asc' }],
  recentupdate: [{ field: 'updatedAt', dir: 'desc' }, { field: 'createdAt', dir: 'desc' }],
  recentclose: [{ field: 'closedAt', dir: 'desc' }, { field: 'createdAt', dir: 'desc' }],
  leastupdate: [{ field: 'updatedAt', dir: 'asc' }, { field: 'createdAt', dir: 'asc' }],
  mostcomment: [{ field: 'numComments', dir: 'desc' }, { field: 'createdAt', dir: 'desc' }],
  leastcomment: [{ field: 'numComments', dir: 'asc' }, { field: 'createdAt', dir: 'desc' }],
};

export class PullService {
  constructor(private readonly deps: PullServiceDeps) {}

  private get prisma() {
    return this.deps.prisma;
  }

  private get context(): ConvertContext {
    return this.deps.convert.context;
  }

  /** The pull requests of these issues, in the order of the ids given. */
  async byIssueIds(issueIds: number[]): Promise<PullRequest[]> {
    if (!issueIds.length) return [];
    const rows = await this.prisma.pullRequest.findMany({ where: { issueId: { in: issueIds } } });
    const byIssue = new Map(rows.map((r) => [r.issueId, r]));
    return issueIds.flatMap((id) => byIssue.get(id) ?? []);
  }

  /** The pull request numbered `index` in the repository, or 404 (an issue's number is not a pull request). */
  async byIndex(repoId: number, index: number): Promise<PullRequest> {
    const pr = Number.isSafeInteger(index) ? await this.prisma.pullRequest.findFirst({ where: { baseRepoId: repoId, index } }) : null;
    if (!pr) throw new NotFoundError('not found', [`pull request does not exist [id: 0, issue_id: 0, head_repo_id: 0, base_repo_id: ${repoId}, head_branch: , base_branch: ]`]);
    return pr;
  }

  /**
   * The repository and branch a `head` names (Gitea's GetHeadOwnerAndRepo): `branch` in the base
   * repository, `owner:branch` in that owner's fork of it (or the base repository when the owner
   * is its owner, or its parent when that is the owner's), `owner/repo:branch` in that repository.
   */
  private async headRepo(rc: PullCtx, head: string): Promise<{ repo: RepoWithOwner; branch: string }> {
    const colon = head.indexOf(':');
    if (colon < 0) return { repo: rc.repo, branch: head };
    const who = head.slice(0, colon);
    const branch = head.slice(colon + 1);
    const missing = () => new NotFoundError('not found', [`head repository of ${head} does not exist`]);
    if (who.includes('/')) {
      const [owner, name] = who.split('/');
      const repo = await this.deps.repoByName(owner, name);
      if (!repo) throw missing();
      return { repo, branch };
    }
    if (who.toLowerCase() === rc.repo.owner.lowerName) return { repo: rc.repo, branch };
    const owner = await this.prisma.user.findUnique({ where: { lowerName: who.toLowerCase() } });
    if (!owner) throw missing();
    const fork = await this.prisma.repository.findFirst({ where: { ownerId: owner.id, forkId: rc.repo.id }, include: { owner: true } });
    if (fork) return { repo: fork, branch };
    if (rc.repo.isFork && rc.repo.forkId) {
      const parent = await this.deps.repoById(rc.repo.forkId);
      if (parent && parent.ownerId === owner.id) return { repo: parent, branch };
    }
    throw missing();
  }

  /** Gitea's IsOwnerMemberCollaborator: owner, member of the owning organization, or collaborator. */
  private async isOwnerMemberCollaborator(repo: RepoWithOwner, user: User): Promise<boolean> {
    if (repo.ownerId === user.id) return true;
    if ((await this.prisma.collaboration.count({ where: { repoId: repo.id, userId: user.id } })) > 0) return true;
    return (await this.prisma.orgUser.count({ where: { orgId: repo.ownerId, userId: user.id } })) > 0;
  }

  private async codeMode(doer: User | null, repo: RepoWithOwner): Promise<number> {
    return this.deps.permissions.repoAccessMode(doer, repo, 'repo.code');
  }

  /** The open pull request for this head and base, if any (Gitea's GetUnmergedPullRequest). */
  private async openFor(headRepoId: number, baseRepoId: number, headBranch: string, baseBranch: string): Promise<PullRequest | null> {
    return this.prisma.pullRequest.findFirst({ where: { headRepoId, baseRepoId, headBranch, baseBranch, flow: PullFlow.GitHub, hasMerged: false, issue: { isClosed: false } } });
  }

  private alreadyExists(pr: PullRequest): ConflictError {
    return new ConflictError(
      `pull request already exists for these targets [id: ${pr.id}, issue_id: ${pr.index}, head_repo_id: ${pr.headRepoId ?? 0}, base_repo_id: ${pr.baseRepoId}, head_branch: ${pr.headBranch}, base_branch: ${pr.baseBranch}]`,
    );
  }

  async create(rc: PullCtx, input: CreatePullInput) {
    if (!input.head) throw new ValidationError('[Head]: Required');
    if (!input.base) throw new ValidationError('[Base]: Required');
    if (!input.title) throw new ValidationError('[Title]: Required');
    if (input.head === input.base) throw new InvalidError('Invalid PullRequest: There are no changes between the head and the base');
    const head = await this.headRepo(rc, input.head);
    if ((await this.codeMode(rc.doer, head.repo)) < AccessMode.Read) throw new NotFoundError('not found', ["Can't read headRepo UnitTypeCode"]);
    const basePath = this.deps.diskPath(rc.repo);
    const headPath = this.deps.diskPath(head.repo);
    const [baseTip, headTip] = await Promise.all([branchTip(basePath, input.base), branchTip(headPath, head.branch)]);
    if (!baseTip || !headTip) {
      // Gitea's words for a missing ref; a tag or commit names something, but only branches are compared here.
      throw new NotFoundError(`ref "${!baseTip ? input.base : head.branch}" does not exist`);
    }
    const existing = await this.openFor(head.repo.id, rc.repo.id, head.branch, input.base);
    if (existing) throw this.alreadyExists(existing);
    if (input.milestone && input.milestone > 0) {
      const m = await this.prisma.milestone.findFirst({ where: { id: input.milestone, repoId: rc.repo.id } });
      if (!m) throw new NotFoundError('not found', ['milestone does not exist']);
    }
    const mayCreate = rc.doer.isAdmin || (await this.isOwnerMemberCollaborator(rc.repo, rc.doer)) || (await this.codeMode(rc.doer, head.repo)) >= AccessMode.Write;
    if (!mayCreate) throw new PermissionDeniedError('user should be a collaborator or a member of the organization for base repo');
    const allowMaintainerEdit = input.allow_maintainer_edit ?? rc.repo.defaultAllowMaintainerEdit;
    let prId = 0;
    let checkFailed: unknown = null;
    // Gitea's API applies the labels, milestone and assignees of a new pull request whoever
    // opens it (the issue API keeps them for writers), hence canWrite here.
    await this.deps.issues.create(
      { ...rc, canWrite: true },
      { title: input.title, body: input.body, assignee: input.assignee, assignees: input.assignees, milestone: input.milestone, labels: input.labels, due_date: input.due_date },
      {
        writeRow: async (tx, issue) => {
          const row = await tx.pullRequest.create({
            data: { issueId: issue.id, index: issue.index, baseRepoId: rc.repo.id, baseBranch: input.base, headRepoId: head.repo.id, headBranch: head.branch, allowMaintainerEdit },
          });
          prId = row.id;
        },
        // The first check runs before the announcement and the answer (as Gitea's creation
        // does): refs/pull/{index}/head exists and mergeable, merge_base and the diff size are
        // known when a webhook or the client first reads the pull request.
        created: async () => {
          await this.deps.checker.check(prId).catch(async (err) => {
            await this.deps.checker.enqueue([prId]);
            checkFailed = err;
          });
          if (!checkFailed) await this.listCommits(rc.repo, rc.doer, prId);
        },
      },
    );
    if (checkFailed) throw checkFailed;
    return this.json(rc, await this.prisma.pullRequest.findUniqueOrThrow({ where: { id: prId } }));
  }

  /** The first `pull_push` entry of a new pull request: its commits, by its author. */
  private async listCommits(repo: RepoWithOwner, author: User, prId: number): Promise<void> {
    const pr = await this.prisma.pullRequest.findUniqueOrThrow({ where: { id: prId } });
    await this.deps.pushComments.record(this.deps.diskPath(repo), author, pr, `refs/heads/${pr.baseBranch}`, pullHeadRef(pr.index), false);
  }

  /**
   * An AGit pull request (AgitService): its head is the pushed commit, kept at
   * refs/pull/{index}/head of the repository itself; `headBranch` is the name shown for it.
   */
  async createAgit(rc: PullCtx, input: { base: string; headBranch: string; headCommit: string; title: string; body: string }): Promise<PullRequest> {
    let prId = 0;
    const repoPath = this.deps.diskPath(rc.repo);
    await this.deps.issues.create(
      rc,
      { title: input.title, body: input.body },
      {
        writeRow: async (tx, issue) => {
          const row = await tx.pullRequest.create({
            data: { issueId: issue.id, index: issue.index, baseRepoId: rc.repo.id, baseBranch: input.base, headRepoId: rc.repo.id, headBranch: input.headBranch, headCommitId: input.headCommit, flow: PullFlow.AGit },
          });
          prId = row.id;
        },
        // The head ref, the first check and the first timeline entry come before the announcement, as for any new pull request.
        created: async (issue) => {
          await runGit(['update-ref', pullHeadRef(issue.index), input.headCommit], { cwd: repoPath });
          await this.deps.checker.check(prId).catch(() => this.deps.checker.enqueue([prId]));
          await this.listCommits(rc.repo, rc.doer, prId);
        },
      },
    );
    return this.prisma.pullRequest.findUniqueOrThrow({ where: { id: prId } });
  }

  async list(rc: RepoCtx, q: ListPullsQuery, skip: number, take: number) {
    const issue: Record<string, unknown>[] = [];
    const state = (q.state ?? '').trim();
    if (state === 'closed') issue.push({ isClosed: true });
    else if (state === 'open') issue.push({ isClosed: false });
    if (q.labels?.length) issue.push({ labels: { some: { labelId: { in: q.labels } } } });
    if (q.milestone && q.milestone > 0) issue.push({ milestoneId: q.milestone });
    if (q.poster) {
      const u = await this.prisma.user.findUnique({ where: { lowerName: q.poster.toLowerCase() } });
      if (!u) throw new MalformedError(`user redirect does not exist [name: ${q.poster}]`);
      issue.push({ posterId: u.id });
    }
    const where = { baseRepoId: rc.repo.id, ...(q.base_branch ? { baseBranch: q.base_branch } : {}), issue: { AND: issue } };
    // Any sort is accepted (Gitea's default order for others); "constructor" is not one of ours.
    const sortKey = (q.sort ?? '').trim();
    const sorts = (Object.hasOwn(SORTS, sortKey) ? SORTS[sortKey] : undefined) ?? [{ field: 'createdAt', dir: 'desc' as const }];
    const last: 'asc' | 'desc' = sorts.every((s) => s.dir === 'asc') ? 'asc' : 'desc';
    // An open pull request has no closing time: last in "recently closed" (Gitea's closed_unix 0).
    const orderBy: Prisma_OrderBy[] = [
      ...sorts.map((s): Prisma_OrderBy => ({ issue: { [s.field]: s.field === 'closedAt' ? { sort: s.dir, nulls: 'last' } : s.dir } })),
      { issueId: last },
    ];
    const [rows, total] = await Promise.all([this.prisma.pullRequest.findMany({ where, orderBy, skip, take }), this.prisma.pullRequest.count({ where })]);
    return { data: await this.jsonMany(rc, rows), total };
  }

  /** GET /pulls/{base}/{head}: `head` is a branch of this repository, `owner:branch` or `owner/repo:branch`. */
  async byBaseHead(rc: RepoCtx, base: string, head: string): Promise<PullRequest> {
    let headRepoId = rc.repo.id;
    let headBranch = head;
    const colon = head.indexOf(':');
    if (colon >= 0) {
      headBranch = head.slice(colon + 1);
      const who = head.slice(0, colon);
      const [owner, name] = who.includes('/') ? who.split('/') : [who, rc.repo.name];
      const repo = await this.deps.repoByName(owner, name);
      if (!repo) throw new NotFoundError('not found', ['head repository does not exist']);
      headRepoId = repo.id;
    }
    // The newest one for the pair, as Gitea's GetPullRequestByBaseHeadInfo orders by id.
    const pr = await this.prisma.pullRequest.findFirst({ where: { baseRepoId: rc.repo.id, baseBranch: base, headRepoId, headBranch, flow: PullFlow.GitHub }, orderBy: { id: 'desc' } });
    if (!pr) throw new NotFoundError('not found', ['pull request does not exist']);
    return pr;
  }

  /** GET /commits/{sha}/pull: the pull request whose merge made this commit (Gitea's GetPullRequestByMergedCommit). */
  async byMergedCommit(repoId: number, sha: string): Promise<PullRequest> {
    const pr = sha ? await this.prisma.pullRequest.findFirst({ where: { baseRepoId: repoId, mergedCommitId: sha } }) : null;
    if (!pr) throw new NotFoundError(`pull request does not exist [id: 0, issue_id: 0, head_repo_id: 0, base_repo_id: ${repoId}, head_branch: , base_branch: ]`);
    return pr;
  }

  async edit(rc: PullCtx, pr: PullRequest, input: EditPullInput) {
    const issue = await this.deps.issues.byIndex(rc.repo.id, pr.index);
    if (issue.posterId !== rc.doer.id && !rc.canWrite) throw new PermissionDeniedError('user should be the poster or have write permission');
    if (input.content_version !== undefined && input.content_version !== issue.contentVersion) {
      throw new ConflictError('the issue has been changed since it was loaded, reload it and try again');
    }
    if (input.state !== undefined && pr.hasMerged) throw new PreconditionFailedError('cannot change state of this pull request, it was already merged');
    // The issue side: title, body, assignees, milestone, deadline, state.
    await this.deps.issues.edit(rc, issue, {
      title: input.title,
      body: input.body,
      assignee: input.assignee,
      assignees: input.assignees,
      // Gitea's option is a plain number: 0 leaves the milestone alone.
      milestone: input.milestone ? input.milestone : undefined,
      state: input.state,
      due_date: input.due_date,
      unset_due_date: input.unset_due_date,
    });
    if (rc.canWrite && input.labels !== undefined) {
      await this.deps.labels.replaceOnIssue(rc.doer, rc.repo, issue, await this.deps.issues.resolveLabels(rc.repo, input.labels));
    }
    if (!pr.hasMerged && input.base && input.base !== pr.baseBranch) await this.changeBase(rc, pr, input.base);
    if (input.allow_maintainer_edit !== undefined && input.allow_maintainer_edit !== pr.allowMaintainerEdit) {
      // Gitea's SetAllowEdits: only the author decides whether maintainers may push to the head.
      if (issue.posterId !== rc.doer.id) throw new PermissionDeniedError('SetAllowEdits: user has no permission for the action');
      await this.prisma.pullRequest.update({ where: { id: pr.id }, data: { allowMaintainerEdit: input.allow_maintainer_edit } });
    }
    return this.json(rc, await this.prisma.pullRequest.findUniqueOrThrow({ where: { id: pr.id } }));
  }

  /** Gitea's ChangeTargetBranch: the new base must exist and no other open pull request may hold the pair. */
  private async changeBase(rc: PullCtx, pr: PullRequest, base: string): Promise<void> {
    if (!(await branchTip(this.deps.diskPath(rc.repo), base))) throw new NotFoundError(`new base '${base}' not exist`);
    const issue = await this.deps.issues.byIndex(rc.repo.id, pr.index);
    if (issue.isClosed) throw new InvalidError(`issue is closed [id: ${issue.id}]`);
    if (pr.headRepoId !== null) {
      const other = await this.openFor(pr.headRepoId, pr.baseRepoId, pr.headBranch, base);
      if (other && other.id !== pr.id) throw this.alreadyExists(other);
    }
    const moved = await this.prisma.pullRequest.update({ where: { id: pr.id }, data: { baseBranch: base } });
    await this.deps.reviews.recalculateOfficial(rc.repo, moved);
    const now = new Date();
    await this.prisma.comment.create({
      data: { type: CommentType.ChangeTargetBranch, issueId: pr.issueId, repoId: pr.baseRepoId, posterId: rc.doer.id, oldRef: pr.baseBranch, newRef: base, createdAt: now, updatedAt: now },
    });
    const checked = await this.deps.checker.check(pr.id);
    // The commits are listed anew against the new base (Gitea drops the earlier pull_push entries).
    await this.deps.pushComments.relist(this.deps.diskPath(rc.repo), rc.doer, checked ?? moved);
  }

  /**
   * Gitea's AdjustPullsCausedByBranchDeleted (a push or the API deleted `branch`): the open pull
   * requests from it are closed, each with a delete_branch entry; those into it move to the
   * default branch (change_target_branch), unless one for that pair is open already.
   */
  async branchDeleted(pusher: User, repo: RepoWithOwner, branch: string): Promise<void> {
    for (const pr of await this.openWithHead(repo.id, branch)) {
      const base = pr.baseRepoId === repo.id ? repo : await this.deps.repoById(pr.baseRepoId);
      if (!base) continue;
      try {
        await this.deps.issues.setClosed(await this.ctxFor(pusher, base), pr.issue, true);
      } catch (err) {
        // Open dependencies keep it open (Gitea goes on with the others).
        if (err instanceof DomainError) continue;
        throw err;
      }
      const now = new Date();
      await this.prisma.comment.create({ data: { type: CommentType.DeleteBranch, issueId: pr.issueId, repoId: pr.baseRepoId, posterId: pusher.id, oldRef: branch, createdAt: now, updatedAt: now } });
    }
    if (branch === repo.defaultBranch) return;
    const into = await this.prisma.pullRequest.findMany({ where: { baseRepoId: repo.id, baseBranch: branch, hasMerged: false, issue: { isClosed: false } }, orderBy: { id: 'asc' } });
    if (!into.length) return;
    const rc = await this.ctxFor(pusher, repo);
    for (const pr of into) {
      try {
        await this.changeBase(rc, pr, repo.defaultBranch);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
      }
    }
  }

  private async ctxFor(doer: User, repo: RepoWithOwner): Promise<PullCtx> {
    const mode = await this.deps.permissions.repoAccessMode(doer, repo);
    return { repo, mode, doer, canWrite: mode >= AccessMode.Write, isAdmin: mode >= AccessMode.Admin };
  }

  /** Open pull requests a push to `branch` of the repository may change (as base or as head). */
  async affectedByPush(repoId: number, branch: string): Promise<number[]> {
    const rows = await this.prisma.pullRequest.findMany({
      where: { hasMerged: false, issue: { isClosed: false }, OR: [{ baseRepoId: repoId, baseBranch: branch }, { headRepoId: repoId, headBranch: branch, flow: PullFlow.GitHub }] },
      select: { id: true },
    });
    return rows.map((r) => r.id);
  }

  /** Open pull requests whose head is `branch` of the repository, with their issues. */
  async openWithHead(repoId: number, branch: string) {
    return this.prisma.pullRequest.findMany({
      where: { headRepoId: repoId, headBranch: branch, flow: PullFlow.GitHub, hasMerged: false, issue: { isClosed: false } },
      include: { issue: true },
    });
  }

  repoById(id: number): Promise<RepoWithOwner | null> {
    return this.deps.repoById(id);
  }

  async json(rc: RepoCtx, pr: PullRequest) {
    return (await this.jsonMany(rc, [pr], true))[0];
  }

  /**
   * structs.PullRequest for pull requests of one base repository: the issues in one load, the
   * branch tips of each repository involved from one `git for-each-ref`, repository records
   * once per repository.
   */
  async jsonMany(rc: RepoCtx, prs: PullRequest[], single = false) {
    if (!prs.length) return [];
    const issues = await this.deps.issues.loadFull(prs.map((p) => p.issueId));
    const issueJson = new Map((await this.deps.issues.toJson(issues, rc.repo, rc.doer)).map((j) => [j.id, j]));
    const repos = new Map<number, RepoWithOwner | null>([[rc.repo.id, rc.repo]]);
    for (const p of prs) if (p.headRepoId && !repos.has(p.headRepoId)) repos.set(p.headRepoId, await this.deps.repoById(p.headRepoId));
    const tips = new Map<number, Map<string, string>>();
    const repoJson = new Map<number, Record<string, unknown> | null>();
    for (const [id, repo] of repos) {
      if (!repo) continue;
      const heads = await listRefTips(this.deps.diskPath(repo), 'heads').catch(() => []);
      tips.set(id, new Map(heads.map((t) => [t.name, t.commit])));
      const modes = await this.deps.permissions.repoModes(rc.doer, repo, id === rc.repo.id ? rc.mode : undefined);
      repoJson.set(id, modes.mode >= AccessMode.Read ? this.deps.convert.repo(await this.deps.withParent(repo), modes) : null);
    }
    const mergers = single ? await this.prisma.user.findMany({ where: { id: { in: prs.flatMap((p) => (p.mergerId ? [p.mergerId] : [])) } } }) : [];
    const requested = await this.deps.reviewRequests.requestedOf(prs.map((p) => p.issueId), single);
    const reviewCounts = await this.prisma.comment.groupBy({ by: ['issueId'], where: { issueId: { in: prs.map((p) => p.issueId) }, type: ReviewCommentType.Review }, _count: { _all: true } });
    const reviewComments = new Map(reviewCounts.map((r) => [r.issueId, r._count._all]));
    const orgs = new Map<number, unknown>();
    for (const t of [...requested.values()].flatMap((r) => r.teams)) {
      if (!orgs.has(t.orgId)) {
        const org = await this.prisma.user.findUnique({ where: { id: t.orgId } });
        orgs.set(t.orgId, org ? this.deps.convert.org(org) : null);
      }
    }
    return prs.map((p) => {
      const parts: PullParts = {
        baseRepoJson: repoJson.get(p.baseRepoId)!,
        headRepoJson: p.headRepoId ? (repoJson.get(p.headRepoId) ?? null) : null,
        baseSha: tips.get(p.baseRepoId)?.get(p.baseBranch) ?? '',
        headBranchSha: p.headRepoId ? (tips.get(p.headRepoId)?.get(p.headBranch) ?? '') : '',
        merger: mergers.find((u) => u.id === p.mergerId),
        requestedReviewers: (requested.get(p.issueId)?.users ?? []).map((u) => this.deps.convert.userPublic(u)),
        requestedTeams: (requested.get(p.issueId)?.teams ?? []).map((t) => toTeam(t, (orgs.get(t.orgId) as Record<string, unknown> | null) ?? null)),
        reviewComments: reviewComments.get(p.issueId) ?? 0,
        single,
      };
      return toPullRequest(this.context, p, issueJson.get(p.issueId)!, parts);
    });
  }
}

