/**
 * Who can be assigned to a repository's issues and who can be asked to review its pull
 * requests (Gitea's GetRepoAssignees, pull_service.GetReviewers, CanBeAssigned and
 * CanDoerChangeReviewRequests). Gitea reads write access from its `access` table, which holds
 * collaborators and the members of the organization's teams linked to the repository (every
 * member of the Owners team); team members with read access to the issues or pull requests
 * unit count too. Lists hold active users ordered by name, the personal owner appended last.
 */
import { AccessMode } from './convert';
import type { Prisma } from './database';
import { InvalidError } from './errors';
import { USER_TYPE_ORGANIZATION, type PermissionService } from './permissions';
import type { Repository, User } from './records';

type RepoWithOwner = Repository & { owner: User };

/** Teams that have the repository: linked to it, or including every repository of the organization. */
export function linkedTo(repo: Repository) {
  return { OR: [{ includesAllRepositories: true }, { repos: { some: { repoId: repo.id } } }] };
}

export class AssigneeService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
  ) {}

  /** Teams of the repository's organization linked to it whose mode or unit modes reach `mode`. */
  private teamsWithUnitAccess(repo: Repository, mode: number, units: string[]) {
    return {
      orgId: repo.ownerId,
      AND: [
        linkedTo(repo),
        { OR: [{ authorize: { gte: mode } }, { units: { some: { unitType: { in: units }, accessMode: { gte: mode } } } }] },
      ],
    };
  }

  /** Active users of `ids` by name, then the personal owner when not among them. */
  private async usersByName(repo: RepoWithOwner, ids: Set<number>): Promise<User[]> {
    const users = ids.size ? await this.prisma.user.findMany({ where: { id: { in: [...ids] }, isActive: true }, orderBy: { name: 'asc' } }) : [];
    if (repo.owner.type !== USER_TYPE_ORGANIZATION && !ids.has(repo.ownerId)) users.push(repo.owner);
    return users;
  }

  private async teamMemberIds(where: Record<string, unknown>): Promise<number[]> {
    const rows = await this.prisma.teamUser.findMany({ where: { team: where }, select: { userId: true } });
    return rows.map((r) => r.userId);
  }

  /** GET /repos/{owner}/{repo}/assignees. */
  async assignees(repo: RepoWithOwner): Promise<User[]> {
    const ids = new Set<number>();
    const collaborators = await this.prisma.collaboration.findMany({ where: { repoId: repo.id, mode: { gte: AccessMode.Write } }, select: { userId: true } });
    for (const c of collaborators) ids.add(c.userId);
    if (repo.owner.type === USER_TYPE_ORGANIZATION) {
      const writers = await this.teamMemberIds({
        orgId: repo.ownerId,
        OR: [{ authorize: { gte: AccessMode.Owner } }, { AND: [{ authorize: { gte: AccessMode.Write } }, linkedTo(repo)] }],
      });
      const readers = await this.teamMemberIds(this.teamsWithUnitAccess(repo, AccessMode.Read, ['repo.issues', 'repo.pulls']));
      for (const id of [...writers, ...readers]) ids.add(id);
    }
    return this.usersByName(repo, ids);
  }

  /** GET /repos/{owner}/{repo}/reviewers: collaborators, and team members who read pull requests. */
  async reviewers(repo: RepoWithOwner): Promise<User[]> {
    const ids = new Set<number>();
    const collaborators = await this.prisma.collaboration.findMany({ where: { repoId: repo.id, mode: { gte: AccessMode.Read } }, select: { userId: true } });
    for (const c of collaborators) ids.add(c.userId);
    if (repo.owner.type === USER_TYPE_ORGANIZATION) {
      for (const id of await this.teamMemberIds(this.teamsWithUnitAccess(repo, AccessMode.Read, ['repo.pulls']))) ids.add(id);
    }
    return this.usersByName(repo, ids);
  }

  /**
   * Gitea's CanDoerChangeReviewRequests for a new pull request: never on an archived
   * repository; the owner, a collaborator, or a member of a team of the organization that has
   * the pull request unit and reads it. (A site admin is not special here, as in Gitea.)
   */
  async canChooseReviewers(doer: User, repo: RepoWithOwner): Promise<boolean> {
    if (repo.isArchived) return false;
    if (doer.id === repo.ownerId) return true;
    if ((await this.prisma.collaboration.count({ where: { repoId: repo.id, userId: doer.id } })) > 0) return true;
    if (repo.owner.type !== USER_TYPE_ORGANIZATION) return false;
    const teams = this.teamsWithUnitAccess(repo, AccessMode.Read, ['repo.pulls']);
    const n = await this.prisma.teamUser.count({ where: { userId: doer.id, team: { AND: [teams, { units: { some: { unitType: 'repo.pulls' } } }] } } });
    return n > 0;
  }

  /**
   * Gitea's CanBeAssigned: write access to the repository, or read access to its pull
   * requests; an organization is refused (400).
   */
  async canBeAssigned(user: User, repo: RepoWithOwner): Promise<boolean> {
    if (user.type === USER_TYPE_ORGANIZATION) {
      throw new InvalidError(`organization can't be added as assignee [user_id: ${user.id}, repo_id: ${repo.id}]`);
    }
    return mayBeAssigned(this.permissions, user, repo);
  }
}

/** CanBeAssigned for a user (not an organization): write access, or read access to the pull requests. */
async function mayBeAssigned(permissions: PermissionService, user: User, repo: RepoWithOwner): Promise<boolean> {
  if ((await permissions.repoAccessMode(user, repo)) >= AccessMode.Write) return true;
  return repo.hasPullRequests && (await permissions.repoAccessMode(user, repo, 'repo.pulls')) >= AccessMode.Read;
}

/**
 * Gitea's ReconsiderRepoIssuesAssignee, after a user lost a collaboration or left a team: in
 * each repository where they can no longer be assigned, their assignments go, silently (no
 * timeline entry, as Gitea deletes the rows). A public repository whose pull requests they
 * still read keeps them assigned; so does a repository made private (Gitea reconsiders nothing then).
 */
export async function reconsiderAssignments(prisma: Prisma, permissions: PermissionService, user: User, repoIds: number[]): Promise<void> {
  if (!repoIds.length || user.type === USER_TYPE_ORGANIZATION) return;
  const repos = await prisma.repository.findMany({ where: { id: { in: repoIds } }, include: { owner: true } });
  for (const repo of repos) {
    if (await mayBeAssigned(permissions, user, repo)) continue;
    await prisma.issueAssignee.deleteMany({ where: { assigneeId: user.id, issue: { repoId: repo.id } } });
  }
}
