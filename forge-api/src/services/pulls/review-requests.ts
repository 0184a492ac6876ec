/**
 * Requested reviewers of a pull request (Gitea's services/issue/review_request.go): a request is
 * a review of type REQUEST_REVIEW naming a user or a team; it leaves a review_request entry on
 * the timeline when added and when removed. Who may ask and whom (Gitea's isValidReviewRequest):
 * reviewers must read the pull requests and not be the poster; the poster, the owner,
 * collaborators and members of the organization's teams on the repository change requests; a
 * requested reviewer may withdraw their own request.
 */
import { AccessMode, type RepoWithOwner } from '../convert';
import { ReviewType } from '../convert/pull-review';
import type { Prisma, PrismaNS } from '../database';
import { InvalidError, NotFoundError, PermissionDeniedError } from '../errors';
import type { PermissionService } from '../permissions';
import type { Notifier } from '../notify/notifier';
import type { User } from '../records';
import type { RepoCtx } from '../issues/context';
import type { Issue, PullRequest, Review, Team } from '../../../generated/prisma/client';
import type { PullReviewService } from './reviews';
import { ReviewCommentType } from './reviews';
import type { BranchProtectionService } from '../branch-protection';
import type { TeamWithUnits } from '../teams';

type Ctx = RepoCtx & { doer: User };
type Tx = PrismaNS.TransactionClient;

export interface ReviewRequestDeps {
  prisma: Prisma;
  permissions: PermissionService;
  protections: BranchProtectionService;
  reviews: PullReviewService;
  notifier: Notifier;
}

const ORGANIZATION = 1;

export class ReviewRequestService {
  constructor(private readonly deps: ReviewRequestDeps) {}

  private get prisma() {
    return this.deps.prisma;
  }

  /** Gitea's parseReviewersByNames: users by name or e-mail, teams of the owning organization by name (ignored for a personal repository). */
  private async parse(repo: RepoWithOwner, users: string[], teams: string[]): Promise<{ users: User[]; teams: Team[] }> {
    const found: User[] = [];
    for (const name of users) {
      const u = name.includes('@')
        ? await this.prisma.user.findFirst({ where: { emails: { some: { lowerEmail: name.toLowerCase(), isActivated: true } } } })
        : await this.prisma.user.findUnique({ where: { lowerName: name.toLowerCase() } });
      if (!u) throw new NotFoundError(`user doesn't exist: ${name}`);
      found.push(u);
    }
    const foundTeams: Team[] = [];
    if (repo.owner.type === ORGANIZATION) {
      for (const name of teams) {
        const t = await this.prisma.team.findUnique({ where: { orgId_lowerName: { orgId: repo.ownerId, lowerName: name.toLowerCase() } } });
        if (!t) throw new NotFoundError(`team doesn't exist: ${name}`);
        foundTeams.push(t);
      }
    }
    return { users: found, teams: foundTeams };
  }

  /** Gitea's CanDoerChangeReviewRequests. */
  private async canChange(doer: User, repo: RepoWithOwner, posterId: number): Promise<boolean> {
    if (repo.isArchived) return false;
    if (doer.id === posterId || doer.id === repo.ownerId) return true;
    if (await this.prisma.collaboration.count({ where: { repoId: repo.id, userId: doer.id } })) return true;
    if (repo.owner.type !== ORGANIZATION) return false;
    const teams = await this.prisma.team.findMany({
      where: { orgId: repo.ownerId, members: { some: { userId: doer.id } }, OR: [{ includesAllRepositories: true }, { repos: { some: { repoId: repo.id } } }] },
      include: { units: true },
    });
    return teams.some((t) => t.units.some((u) => u.unitType === 'repo.pulls' && u.accessMode >= AccessMode.Read));
  }

  private invalid(reason: string, doer: User, repo: RepoWithOwner): InvalidError {
    return new InvalidError(`${reason} [user_id: ${doer.id}, repo_id: ${repo.id}]`);
  }

  /** The reviewer's latest approval, change request or request (Gitea's GetReviewByIssueIDAndUserID). */
  private latest(tx: Tx | Prisma, issueId: number, userId: number): Promise<Review | null> {
    return tx.review.findFirst({ where: { issueId, reviewerId: userId, type: { in: [ReviewType.Approve, ReviewType.Reject, ReviewType.Request] } }, orderBy: { id: 'desc' } });
  }

  private async checkUser(rc: Ctx, issue: Issue, reviewer: User, add: boolean): Promise<void> {
    const { doer, repo } = rc;
    if (reviewer.type === ORGANIZATION) throw this.invalid("Organization can't be added as reviewer", doer, repo);
    if (doer.type === ORGANIZATION) throw this.invalid("Organization can't be doer to add reviewer", doer, repo);
    const last = await this.latest(this.prisma, issue.id, reviewer.id);
    const canChange = await this.canChange(doer, repo, issue.posterId);
    if (add) {
      if ((await this.deps.permissions.repoAccessMode(reviewer, repo, 'repo.pulls')) < AccessMode.Read) throw this.invalid("Reviewer can't read", doer, repo);
      if (reviewer.id === issue.posterId && issue.originalAuthorId === 0) throw this.invalid("poster of pr can't be reviewer", doer, repo);
      if (canChange) return;
      if (doer.id === issue.posterId && issue.originalAuthorId === 0 && last && last.type !== ReviewType.Request) return;
      throw this.invalid("Doer can't choose reviewer", doer, repo);
    }
    if (canChange) return;
    if (last && last.type === ReviewType.Request && last.reviewerId === doer.id) return;
    throw this.invalid("Doer can't remove reviewer", doer, repo);
  }

  private async checkTeam(rc: Ctx, issue: Issue, team: Team, add: boolean): Promise<void> {
    const { doer, repo } = rc;
    if (doer.type === ORGANIZATION) throw this.invalid("Organization can't be doer to add reviewer", doer, repo);
    const canChange = await this.canChange(doer, repo, issue.posterId);
    if (add && repo.isPrivate && !(await this.prisma.teamRepo.count({ where: { teamId: team.id, repoId: repo.id } }))) {
      throw this.invalid("Reviewing team can't read repo", doer, repo);
    }
    if (!canChange) throw this.invalid(add ? "Doer can't choose reviewer" : "Doer can't remove reviewer", doer, repo);
  }

  private closedError(): PermissionDeniedError {
    return new PermissionDeniedError('cannot request a re-review on a closed or merged PR');
  }

  private async timeline(tx: Tx, rc: Ctx, issue: Issue, data: { reviewId?: number; assigneeId?: number; assigneeTeamId?: number; removedAssignee: boolean }): Promise<void> {
    const now = new Date();
    await tx.comment.create({
      data: { type: ReviewCommentType.ReviewRequest, issueId: issue.id, repoId: rc.repo.id, posterId: rc.doer.id, createdAt: now, updatedAt: now, review: { create: data } },
    });
  }

  /**
   * POST (add) or DELETE /requested_reviewers: each named reviewer checked and changed in turn,
   * as Gitea does; the added requests (not those that already existed) are returned.
   */
  async change(rc: Ctx, pr: PullRequest, input: { reviewers?: string[] | null; team_reviewers?: string[] | null }, add: boolean): Promise<Review[]> {
    const issue = await this.prisma.issue.findUniqueOrThrow({ where: { id: pr.issueId } });
    const { users, teams } = await this.parse(rc.repo, input.reviewers ?? [], input.team_reviewers ?? []);
    const added: Review[] = [];
    for (const reviewer of users) {
      await this.checkUser(rc, issue, reviewer, add);
      const r = add ? await this.addUser(rc, issue, pr, reviewer) : await this.removeUser(rc, issue, pr, reviewer);
      if (!r) continue;
      if (r !== true) added.push(r);
      await this.deps.notifier.pullRequestReviewRequested(rc.doer, rc.repo, issue, reviewer, add);
    }
    for (const team of teams) {
      await this.checkTeam(rc, issue, team, add);
      const r = add ? await this.addTeam(rc, issue, team) : await this.removeTeam(rc, issue, team);
      if (!r) continue;
      if (r !== true) added.push(r);
      await this.notifyMembers(rc, issue, team, add);
    }
    return added;
  }

  /** Gitea announces a team's request to each member but the pull request's poster. */
  private async notifyMembers(rc: Ctx, issue: Issue, team: Team, add: boolean): Promise<void> {
    const members = await this.prisma.teamUser.findMany({ where: { teamId: team.id, userId: { not: issue.posterId } }, include: { user: true }, orderBy: { userId: 'asc' } });
    for (const m of members) await this.deps.notifier.pullRequestReviewRequested(rc.doer, rc.repo, issue, m.user, add);
  }

  private async addUser(rc: Ctx, issue: Issue, pr: PullRequest, reviewer: User): Promise<Review | null> {
    const official = await this.deps.reviews.isOfficialReviewer(rc.repo, pr, reviewer);
    return this.prisma.$transaction(async (tx) => {
      const last = await this.latest(tx, issue.id, reviewer.id);
      if (last) {
        if (last.type === ReviewType.Request) return null;
        if (issue.isClosed || pr.hasMerged) throw this.closedError();
      }
      // A request from an official reviewer replaces their earlier verdict until they review again.
      if (official) await tx.review.updateMany({ where: { issueId: issue.id, reviewerId: reviewer.id }, data: { official: false } });
      const review = await tx.review.create({ data: { type: ReviewType.Request, reviewerId: reviewer.id, issueId: issue.id, official } });
      await this.timeline(tx, rc, issue, { reviewId: review.id, assigneeId: reviewer.id, removedAssignee: false });
      return review;
    });
  }

  /** Whether a request was there to withdraw. */
  private async removeUser(rc: Ctx, issue: Issue, pr: PullRequest, reviewer: User): Promise<boolean> {
    const official = await this.deps.reviews.isOfficialReviewer(rc.repo, pr, reviewer);
    return this.prisma.$transaction(async (tx) => {
      const last = await this.latest(tx, issue.id, reviewer.id);
      if (!last || last.type !== ReviewType.Request) return false;
      await tx.review.delete({ where: { id: last.id } });
      if (official) await this.deps.reviews.restoreLatestOfficial(tx, issue.id, reviewer.id);
      await this.timeline(tx, rc, issue, { assigneeId: reviewer.id, removedAssignee: true });
      return true;
    });
  }

  private async addTeam(rc: Ctx, issue: Issue, team: Team): Promise<Review | null> {
    return this.prisma.$transaction(async (tx) => {
      if (await tx.review.findFirst({ where: { issueId: issue.id, reviewerTeamId: team.id, type: ReviewType.Request } })) return null;
      // Gitea clears the team's official flag right after creating the request, this one included.
      const review = await tx.review.create({ data: { type: ReviewType.Request, reviewerTeamId: team.id, issueId: issue.id, official: false } });
      await this.timeline(tx, rc, issue, { reviewId: review.id, assigneeTeamId: team.id, removedAssignee: false });
      return review;
    });
  }

  private async removeTeam(rc: Ctx, issue: Issue, team: Team): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const req = await tx.review.findFirst({ where: { issueId: issue.id, reviewerTeamId: team.id, type: ReviewType.Request } });
      if (!req) return false;
      await tx.review.delete({ where: { id: req.id } });
      await this.timeline(tx, rc, issue, { assigneeTeamId: team.id, removedAssignee: true });
      return true;
    });
  }

  /**
   * What a pull request's record shows as `requested_reviewers` and `requested_reviewers_teams`
   * (Gitea's LoadRequestedReviewers / PullRequestList.LoadReviews): not only open requests but
   * each reviewer's latest undismissed approval, change request or request (and comment, on
   * the record of one pull request), in the order they were last updated; teams by their
   * latest request.
   */
  async requestedOf(issueIds: number[], withComments: boolean): Promise<Map<number, { users: User[]; teams: TeamWithUnits[] }>> {
    const out = new Map<number, { users: User[]; teams: TeamWithUnits[] }>();
    if (!issueIds.length) return out;
    const types: number[] = [ReviewType.Approve, ReviewType.Reject, ReviewType.Request, ...(withComments ? [ReviewType.Comment] : [])];
    const rows = await this.prisma.review.findMany({
      where: { issueId: { in: issueIds }, OR: [{ reviewerTeamId: 0, dismissed: false, type: { in: types } }, { reviewerTeamId: { gt: 0 } }] },
      orderBy: { id: 'asc' },
    });
    if (!rows.length) return out;
    const latest = new Map<string, Review>();
    for (const r of rows) latest.set(r.reviewerTeamId ? `${r.issueId}/t${r.reviewerTeamId}` : `${r.issueId}/u${r.reviewerId}`, r);
    const picked = [...latest.values()].sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime() || a.id - b.id);
    const users = new Map((await this.prisma.user.findMany({ where: { id: { in: picked.map((r) => r.reviewerId).filter((id) => id > 0) } } })).map((u) => [u.id, u]));
    const teamIds = picked.map((r) => r.reviewerTeamId).filter((id) => id > 0);
    const teams = new Map((teamIds.length ? await this.prisma.team.findMany({ where: { id: { in: teamIds } }, include: { units: true } }) : []).map((t) => [t.id, t]));
    for (const r of picked) {
      const entry = out.get(r.issueId) ?? { users: [], teams: [] };
      const u = r.reviewerTeamId ? undefined : users.get(r.reviewerId);
      const t = r.reviewerTeamId ? teams.get(r.reviewerTeamId) : undefined;
      if (u) entry.users.push(u);
      if (t) entry.teams.push(t);
      out.set(r.issueId, entry);
    }
    return out;
  }
}
