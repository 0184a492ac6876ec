/**
 * The teams of an organization's repository (Gitea's repo/teams.go over GetRepoTeams,
 * TeamAddRepository, RemoveRepositoryFromTeam): listed Owners first then by name; adding and
 * removing go through TeamService so team repository counts stay right. A team that includes
 * all repositories keeps the repository on removal, as Gitea's RemoveRepositoryFromTeam does.
 */
import type { Prisma } from './database';
import { InvalidError, NotAllowedError, NotFoundError, PermissionDeniedError } from './errors';
import { OWNER_TEAM } from './orgs';
import { USER_TYPE_ORGANIZATION, type PermissionService } from './permissions';
import type { Repository, User } from './records';
import type { TeamService, TeamWithUnits } from './teams';
import { linkedTo } from './assignees';

type RepoWithOwner = Repository & { owner: User };

export class RepoTeamService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
    private readonly teams: TeamService,
  ) {}

  /** Teams linked to the repository: the Owners team first, then by name (Gitea's order). */
  async list(repo: RepoWithOwner): Promise<TeamWithUnits[]> {
    const rows = await this.prisma.team.findMany({ where: { orgId: repo.ownerId, ...linkedTo(repo) }, include: { units: true } });
    const key = (t: TeamWithUnits) => (t.lowerName === OWNER_TEAM.toLowerCase() ? '' : t.name);
    return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id - b.id));
  }

  /** The organization's team of that name (404 with Gitea's message when there is none). */
  async byName(repo: RepoWithOwner, name: string): Promise<TeamWithUnits> {
    const team = await this.prisma.team.findUnique({ where: { orgId_lowerName: { orgId: repo.ownerId, lowerName: name.toLowerCase() } }, include: { units: true } });
    if (!team) throw new NotFoundError(`team does not exist [org_id ${repo.ownerId}, team_id 0, name: ${name}]`);
    return team;
  }

  async has(team: TeamWithUnits, repo: Repository): Promise<boolean> {
    return this.teams.hasRepo(team, repo);
  }

  /**
   * Gitea's CanChangeRepoTeamAccess: organization owners and site admins, or every repository
   * admin when the organization lets them (repo_admin_change_team_access).
   */
  async mayChange(doer: User, repo: RepoWithOwner): Promise<boolean> {
    if (repo.owner.repoAdminChangeTeamAccess || doer.isAdmin) return true;
    return this.permissions.isOrgOwner(doer.id, repo.ownerId);
  }

  /** PUT /repos/{owner}/{repo}/teams/{team}: 422 when the team has the repository already. */
  async add(doer: User, repo: RepoWithOwner, name: string): Promise<void> {
    const team = await this.changeable(doer, repo, name);
    if (await this.has(team, repo)) throw new InvalidError(`team '${team.name}' is already added to repo`);
    await this.teams.addRepo(team, repo);
  }

  /** DELETE /repos/{owner}/{repo}/teams/{team}: 422 when the team does not have the repository. */
  async remove(doer: User, repo: RepoWithOwner, name: string): Promise<void> {
    const team = await this.changeable(doer, repo, name);
    if (!(await this.has(team, repo))) throw new InvalidError(`team '${team.name}' was not added to repo`);
    if (team.includesAllRepositories) return;
    await this.teams.removeRepo(team, repo);
  }

  private async changeable(doer: User, repo: RepoWithOwner, name: string): Promise<TeamWithUnits> {
    orgOwned(repo);
    if (!(await this.mayChange(doer, repo))) throw new PermissionDeniedError('Must be an organization owner');
    return this.byName(repo, name);
  }
}

/** Gitea answers the team routes of a repository a user owns with 405. */
export function orgOwned(repo: RepoWithOwner): void {
  if (repo.owner.type !== USER_TYPE_ORGANIZATION) throw new NotAllowedError('repo is not owned by an organization');
}
