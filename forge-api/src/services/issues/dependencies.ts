/**
 * Issue dependencies ("issue depends on dependency", i.e. dependency blocks issue), across
 * repositories the caller can read. Adding or removing needs write access to the dependent
 * issue's repository and read access to the other; both repositories must have dependencies
 * enabled (404 otherwise, as Gitea). Self, duplicate and two-issue cycles are refused with
 * 422 (Gitea answers 500 for the last two; a client error is the honest code).
 */
import { InvalidError, NotFoundError, ValidationError } from '../errors';
import { AccessMode } from '../convert';
import type { User } from '../records';
import type { RepoCtx, TrackerContext } from './context';
import { CommentType, type IssueService } from './issues';
import type { Issue } from '../../../generated/prisma/client';

export interface IssueMeta {
  owner?: string;
  repo?: string;
  index: number;
}

const notFound = () => new NotFoundError('not found', ['issue does not exist']);

export class DependencyService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly issues: IssueService,
    private readonly repos: { findByOwnerAndName(owner: string, name: string): Promise<(RepoCtx['repo']) | null> },
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  assertEnabled(rc: RepoCtx): void {
    if (!rc.repo.enableDependencies) throw notFound();
  }

  /** Issues the caller can read among `ids` (others are left out of lists). */
  private async readable(ids: number[], doer: User | null): Promise<number[]> {
    if (!ids.length) return [];
    const rows = await this.prisma.issue.findMany({ where: { id: { in: ids } }, include: { repo: { include: { owner: true } } } });
    const ok = new Set<number>();
    const modes = new Map<number, number>();
    for (const r of rows) {
      if (!modes.has(r.repoId)) modes.set(r.repoId, r.repo.hasIssues ? await this.ctx.accessMode(doer, r.repo) : 0);
      if ((modes.get(r.repoId) ?? 0) >= AccessMode.Read) ok.add(r.id);
    }
    return ids.filter((id) => ok.has(id));
  }

  /** GET dependencies (what blocks `issue`) or blocks (what `issue` blocks), paged after filtering. */
  async list(rc: RepoCtx, issue: Issue, kind: 'dependencies' | 'blocks', skip: number, take: number) {
    this.assertEnabled(rc);
    const rows =
      kind === 'dependencies'
        ? (await this.prisma.issueDependency.findMany({ where: { issueId: issue.id }, orderBy: { id: 'asc' } })).map((d) => d.dependencyId)
        : (await this.prisma.issueDependency.findMany({ where: { dependencyId: issue.id }, orderBy: { id: 'asc' } })).map((d) => d.issueId);
    const visible = await this.readable(rows, rc.doer);
    return { data: await this.issues.toJsonMixed(visible.slice(skip, skip + take), rc.doer), total: visible.length };
  }

  /** The issue named by a request body ({owner, repo, index}; owner/repo default to the path's). */
  async resolve(rc: RepoCtx, meta: IssueMeta): Promise<{ issue: Issue; mode: number; repo: RepoCtx['repo'] }> {
    if (!meta || typeof meta.index !== 'number') throw new ValidationError('[Index]: Required');
    let repo = rc.repo;
    if ((meta.owner && meta.owner.toLowerCase() !== rc.repo.owner.lowerName) || (meta.repo && meta.repo.toLowerCase() !== rc.repo.lowerName)) {
      const found = await this.repos.findByOwnerAndName(meta.owner || rc.repo.owner.name, meta.repo || rc.repo.name);
      if (!found) throw notFound();
      repo = found;
    }
    const mode = repo.id === rc.repo.id ? rc.mode : await this.ctx.accessMode(rc.doer, repo);
    if (mode < AccessMode.Read || !repo.hasIssues) throw notFound();
    const issue = await this.prisma.issue.findUnique({ where: { repoId_index: { repoId: repo.id, index: meta.index } } });
    if (!issue) throw notFound();
    return { issue, mode, repo };
  }

  /**
   * Makes `dependent` depend on `blocker`. `dependentMode` must be write (404 otherwise, as
   * Gitea hides it); both repositories must allow dependencies.
   */
  async add(doer: User, dependent: { issue: Issue; mode: number; repo: RepoCtx['repo'] }, blocker: { issue: Issue; mode: number; repo: RepoCtx['repo'] }) {
    if (!dependent.repo.enableDependencies || !blocker.repo.enableDependencies || dependent.repo.isArchived) throw notFound();
    if (dependent.mode < AccessMode.Write) throw notFound();
    if (blocker.mode < AccessMode.Read) throw notFound();
    const [a, b] = [dependent.issue, blocker.issue];
    if (a.id === b.id) throw new InvalidError(`an issue cannot depend on itself [issue id: ${a.id}]`);
    if (await this.prisma.issueDependency.count({ where: { issueId: a.id, dependencyId: b.id } })) {
      throw new InvalidError(`issue dependency does already exist [issue id: ${a.id}, dependency id: ${b.id}]`);
    }
    if (await this.prisma.issueDependency.count({ where: { issueId: b.id, dependencyId: a.id } })) {
      throw new InvalidError(`circular dependencies exists (two issues blocking each other) [issue id: ${a.id}, dependency id: ${b.id}]`);
    }
    const now = new Date();
    await this.prisma.$transaction([
      this.prisma.issueDependency.create({ data: { userId: doer.id, issueId: a.id, dependencyId: b.id } }),
      this.prisma.comment.create({ data: { type: CommentType.AddDependency, issueId: a.id, repoId: a.repoId, posterId: doer.id, dependentIssueId: b.id, createdAt: now, updatedAt: now } }),
      this.prisma.comment.create({ data: { type: CommentType.AddDependency, issueId: b.id, repoId: b.repoId, posterId: doer.id, dependentIssueId: a.id, createdAt: now, updatedAt: now } }),
    ]);
  }

  async remove(doer: User, dependent: { issue: Issue; mode: number; repo: RepoCtx['repo'] }, blocker: { issue: Issue; mode: number; repo: RepoCtx['repo'] }) {
    if (!dependent.repo.enableDependencies || !blocker.repo.enableDependencies || dependent.repo.isArchived) throw notFound();
    if (dependent.mode < AccessMode.Write || blocker.mode < AccessMode.Read) throw notFound();
    const [a, b] = [dependent.issue, blocker.issue];
    const gone = await this.prisma.issueDependency.deleteMany({ where: { issueId: a.id, dependencyId: b.id } });
    if (!gone.count) throw new NotFoundError('not found', ['issue dependency does not exist']);
    const now = new Date();
    await this.prisma.comment.createMany({
      data: [
        { type: CommentType.RemoveDependency, issueId: a.id, repoId: a.repoId, posterId: doer.id, dependentIssueId: b.id, createdAt: now, updatedAt: now },
        { type: CommentType.RemoveDependency, issueId: b.id, repoId: b.repoId, posterId: doer.id, dependentIssueId: a.id, createdAt: now, updatedAt: now },
      ],
    });
  }
}
