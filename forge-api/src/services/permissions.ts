/**
 * Who may do what (Gitea's access_model / organization rules), computed from the rows:
 * site admins and owners have owner access; org repositories grant access through teams
 * (the Owners team, includes_all_repositories teams, or team_repo links); collaborators get
 * their mode; public repositories are readable by everyone who may see their owner.
 * Restricted users see only what they are explicitly given.
 */
import type { Prisma } from './database';
import { AccessMode } from './convert';
import type { Repository, User } from './records';

export interface RepoAccess {
  mode: number;
  read: boolean;
  write: boolean;
  admin: boolean;
}

/**
 * A caller's access to a repository as its JSON `permissions` shows it (Gitea's convert.ToRepo):
 * `mode` gives `admin`, the code unit's mode `code` gives `push` and `pull`. They differ only
 * for members of teams whose units carry different modes.
 */
export interface RepoModes {
  mode: number;
  code: number;
}

/** The unit whose mode a repository's `push` and `pull` show. */
const CODE_UNIT = 'repo.code';

export interface OrgPermissions {
  is_owner: boolean;
  is_admin: boolean;
  can_write: boolean;
  can_read: boolean;
  can_create_repository: boolean;
}

export const USER_TYPE_INDIVIDUAL = 0;
export const USER_TYPE_ORGANIZATION = 1;

/**
 * The doer as list queries see it. A request made with a `public-only` token carries
 * `publicOnly` on its doer (set once, by the auth plugin), and every list query that goes
 * through readableRepoFilter / visibleOwnerTypes then leaves out private repositories and
 * everything of non-public owners: one rule for all lists instead of a check per route.
 */
export type Viewer = User & { publicOnly?: boolean };

/** The `public-only` restriction as a repository filter. */
export const PUBLIC_REPOS_OF_PUBLIC_OWNERS = { isPrivate: false, owner: { visibility: 0 } } as const;

/**
 * The `public-only` restriction for one repository: what PUBLIC_REPOS_OF_PUBLIC_OWNERS keeps
 * out of lists, a route on a single repository refuses (403, plugins/repo-assignment.ts).
 */
export function hiddenFromPublicOnly(repo: Pick<Repository, 'isPrivate'> & { owner: Pick<User, 'visibility'> }): boolean {
  return repo.isPrivate || repo.owner.visibility !== 0;
}

/** The doer of a request made with a public-only token. */
export function publicOnlyViewer(user: User): Viewer {
  return { ...user, publicOnly: true };
}

/**
 * Owner visibilities (0 public, 1 limited, 2 private) a viewer may list: `all` when the viewer
 * may see every one (admin, the user itself), else public + limited for signed-in,
 * unrestricted users, public only otherwise and always for public-only tokens.
 */
export function visibleOwnerTypes(viewer: Viewer | null, all = viewer?.isAdmin === true): number[] {
  if (viewer?.publicOnly) return [0];
  if (all) return [0, 1, 2];
  return viewer && !viewer.isRestricted ? [0, 1] : [0];
}

/**
 * Prisma filter for the users a viewer may see listed (Gitea's isUserVisibleToViewerCond, used
 * by the follower lists): everyone for site admins; public users for anonymous and restricted
 * viewers and public-only tokens; otherwise every non-private user, the viewer, those who
 * follow the viewer, members of the viewer's organizations and those organizations.
 */
export function visibleUserFilter(viewer: Viewer | null): Record<string, unknown> {
  if (viewer?.publicOnly) return { visibility: 0 };
  if (viewer?.isAdmin) return {};
  if (!viewer || viewer.isRestricted) return { visibility: 0 };
  return {
    OR: [
      { visibility: { not: 2 } },
      { id: viewer.id },
      { following: { some: { followId: viewer.id } } },
      { orgMemberships: { some: { org: { orgMembers: { some: { userId: viewer.id } } } } } },
      { orgMembers: { some: { userId: viewer.id } } },
    ],
  };
}

function access(mode: number): RepoAccess {
  return { mode, read: mode >= AccessMode.Read, write: mode >= AccessMode.Write, admin: mode >= AccessMode.Admin };
}

export class PermissionService {
  constructor(private readonly prisma: Prisma) {}

  /** Highest team authorization of a user in an org (0 = not a team member). */
  async orgAuthorizeLevel(userId: number, orgId: number): Promise<number> {
    const memberships = await this.prisma.teamUser.findMany({
      where: { userId, orgId },
      select: { team: { select: { authorize: true } } },
    });
    return memberships.reduce<number>((m, t) => Math.max(m, t.team.authorize), AccessMode.None);
  }

  async isOrgMember(userId: number, orgId: number): Promise<boolean> {
    return (await this.prisma.orgUser.count({ where: { orgId, userId } })) > 0;
  }

  async isOrgOwner(userId: number, orgId: number): Promise<boolean> {
    return (await this.orgAuthorizeLevel(userId, orgId)) >= AccessMode.Owner;
  }

  /** Gitea's HasOrgOrUserVisible: may `viewer` see this user or organization at all? */
  async canSeeOwner(viewer: User | null, owner: User): Promise<boolean> {
    if (owner.visibility === 0) return true;
    if (!viewer) return false;
    if (viewer.isAdmin || viewer.id === owner.id) return true;
    if (owner.visibility === 1 && !viewer.isRestricted) return true;
    if (owner.type === USER_TYPE_ORGANIZATION) return this.isOrgMember(viewer.id, owner.id);
    return false;
  }

  /**
   * The caller's access to a repository: {mode, read, write, admin}; with `unit` (e.g.
   * 'repo.code' for git over HTTP) team access counts only as far as the team's mode for
   * that unit, as Gitea's unit permissions do.
   */
  async repoAccess(user: User | null, repo: Repository & { owner?: User }, unit?: string): Promise<RepoAccess> {
    return access(await this.repoAccessMode(user, repo, unit));
  }

  async repoAccessMode(user: User | null, repo: Repository & { owner?: User; collaborators?: { mode: number }[] }, unit?: string): Promise<number> {
    // `repo.collaborators`, when the caller loaded it filtered to `user`, saves a query.
    if (user?.isAdmin) return AccessMode.Owner;
    if (user && user.id === repo.ownerId) return AccessMode.Owner;
    const owner = repo.owner ?? (await this.prisma.user.findUniqueOrThrow({ where: { id: repo.ownerId } }));
    let mode: number = AccessMode.None;
    if (user) {
      if (owner.type === USER_TYPE_ORGANIZATION) {
        const teams = await this.prisma.teamUser.findMany({
          where: { userId: user.id, orgId: owner.id },
          select: {
            team: {
              select: {
                authorize: true,
                includesAllRepositories: true,
                repos: { where: { repoId: repo.id }, select: { id: true } },
                units: unit ? { where: { unitType: unit }, select: { accessMode: true } } : false,
              },
            },
          },
        });
        for (const { team } of teams) {
          if (team.authorize >= AccessMode.Owner) return AccessMode.Owner;
          if (!(team.includesAllRepositories || team.repos.length > 0)) continue;
          // A team without the unit gives no access to it (Gitea's UnitAccessMode).
          const unitMode = unit ? (team.units as { accessMode: number }[] | undefined)?.[0]?.accessMode ?? AccessMode.None : team.authorize;
          mode = Math.max(mode, unitMode);
        }
      }
      const collab = repo.collaborators
        ? repo.collaborators[0]
        : await this.prisma.collaboration.findUnique({ where: { repoId_userId: { repoId: repo.id, userId: user.id } }, select: { mode: true } });
      if (collab) mode = Math.max(mode, collab.mode);
    }
    if (mode < AccessMode.Read && !repo.isPrivate && !(user?.isRestricted ?? false) && (await this.canSeeOwner(user, owner))) {
      mode = AccessMode.Read;
    }
    return mode;
  }

  /**
   * repoAccessMode for every repository of a list, in at most three queries whatever the
   * list's length (teams of the owning organizations, collaborations, memberships of private
   * organizations) instead of up to three per repository.
   */
  async repoAccessModes(user: User | null, repos: (Repository & { owner: User })[]): Promise<number[]> {
    return (await this.repoPermissions(user, repos)).map((p) => p.mode);
  }

  /**
   * The access a repository's JSON `permissions` shows, for one repository (repoPermissions).
   * `mode`, when the caller has it from repoAccessMode, spares the queries where no team can
   * make the code unit's mode differ from it.
   */
  async repoModes(user: User | null, repo: Repository & { owner: User }, mode?: number): Promise<RepoModes> {
    if (mode !== undefined && (!user || user.isAdmin || user.id === repo.ownerId || repo.owner.type !== USER_TYPE_ORGANIZATION || mode >= AccessMode.Admin)) {
      return { mode, code: mode };
    }
    return (await this.repoPermissions(user, [repo]))[0];
  }

  /**
   * The overall mode (repoAccessMode's rule) and the code unit's mode of every repository of a
   * list, in the same at most three queries. The code unit's mode is Gitea's
   * UnitAccessMode(repo.code): for a member of teams that hold the repository (other than the
   * Owners team) it is the best of those teams' modes for the code unit, of the public read
   * access and, for a collaborator, of the overall mode; an admin or owner keeps the overall
   * mode; everyone else has the overall mode.
   */
  async repoPermissions(user: User | null, repos: (Repository & { owner: User })[]): Promise<RepoModes[]> {
    if (user?.isAdmin) return repos.map(() => ({ mode: AccessMode.Owner, code: AccessMode.Owner }));
    const others = user ? repos.filter((r) => r.ownerId !== user.id) : [];
    const orgIds = [...new Set(others.filter((r) => r.owner.type === USER_TYPE_ORGANIZATION).map((r) => r.ownerId))];
    const repoIds = others.map((r) => r.id);
    const hiddenOrgIds = [...new Set(others.filter((r) => r.owner.type === USER_TYPE_ORGANIZATION && r.owner.visibility !== 0 && !(r.owner.visibility === 1 && !user!.isRestricted)).map((r) => r.ownerId))];
    const [teams, collabs, memberships] = await Promise.all([
      user && orgIds.length
        ? this.prisma.teamUser.findMany({
            where: { userId: user.id, orgId: { in: orgIds } },
            select: {
              orgId: true,
              team: {
                select: {
                  authorize: true,
                  includesAllRepositories: true,
                  repos: { where: { repoId: { in: repoIds } }, select: { repoId: true } },
                  units: { where: { unitType: CODE_UNIT }, select: { accessMode: true } },
                },
              },
            },
          })
        : [],
      user && repoIds.length ? this.prisma.collaboration.findMany({ where: { userId: user.id, repoId: { in: repoIds } }, select: { repoId: true, mode: true } }) : [],
      user && hiddenOrgIds.length ? this.prisma.orgUser.findMany({ where: { userId: user.id, orgId: { in: hiddenOrgIds } }, select: { orgId: true } }) : [],
    ]);
    const collabOf = new Map(collabs.map((c) => [c.repoId, c.mode]));
    const memberOf = new Set(memberships.map((m) => m.orgId));
    const owner = { mode: AccessMode.Owner, code: AccessMode.Owner };
    return repos.map((repo): RepoModes => {
      if (user && user.id === repo.ownerId) return owner;
      let mode: number = AccessMode.None;
      // The code unit's mode from the teams holding the repository; null: no such team.
      let teamCode: number | null = null;
      const collab = user ? collabOf.get(repo.id) : undefined;
      if (user && repo.owner.type === USER_TYPE_ORGANIZATION) {
        for (const { orgId, team } of teams) {
          if (orgId !== repo.ownerId) continue;
          if (team.authorize >= AccessMode.Owner) return owner;
          if (!(team.includesAllRepositories || team.repos.some((t) => t.repoId === repo.id))) continue;
          mode = Math.max(mode, team.authorize);
          teamCode = Math.max(teamCode ?? AccessMode.None, team.units[0]?.accessMode ?? AccessMode.None);
        }
      }
      if (collab !== undefined) mode = Math.max(mode, collab);
      const publicRead = !repo.isPrivate && !(user?.isRestricted ?? false) && this.ownerVisibleTo(user, repo.owner, memberOf);
      if (mode < AccessMode.Read && publicRead) mode = AccessMode.Read;
      if (teamCode === null || mode >= AccessMode.Admin) return { mode, code: mode };
      const code = Math.max(teamCode, collab !== undefined ? mode : AccessMode.None, publicRead ? AccessMode.Read : AccessMode.None);
      return { mode, code };
    });
  }

  /** canSeeOwner with the viewer's memberships of the owners already loaded. */
  private ownerVisibleTo(viewer: User | null, owner: User, memberOf: Set<number>): boolean {
    if (owner.visibility === 0) return true;
    if (!viewer) return false;
    if (viewer.isAdmin || viewer.id === owner.id) return true;
    if (owner.visibility === 1 && !viewer.isRestricted) return true;
    return owner.type === USER_TYPE_ORGANIZATION && memberOf.has(owner.id);
  }

  /** GET /users/{username}/orgs/{org}/permissions */
  async orgPermissions(userId: number, orgId: number): Promise<OrgPermissions> {
    const level = await this.orgAuthorizeLevel(userId, orgId);
    return {
      is_owner: level > AccessMode.Admin,
      is_admin: level > AccessMode.Write,
      can_write: level > AccessMode.Read,
      can_read: level > AccessMode.None,
      can_create_repository: await this.canCreateOrgRepo(userId, orgId),
    };
  }

  async canCreateOrgRepo(userId: number, orgId: number): Promise<boolean> {
    const n = await this.prisma.teamUser.count({
      where: { userId, orgId, team: { OR: [{ authorize: { gte: AccessMode.Owner } }, { canCreateOrgRepo: true }] } },
    });
    return n > 0;
  }

  /**
   * Gitea's "collaborative" repositories of a user (SearchRepositoryCondition with OwnerID):
   * those a collaboration or a team grants them, and the public repositories of the private
   * organizations they belong to. Alternatives for an OR.
   */
  grantedRepoFilters(userId: number): Record<string, unknown>[] {
    const memberOf = { members: { some: { userId } } };
    return [
      { collaborators: { some: { userId } } },
      { teams: { some: { team: memberOf } } },
      { owner: { teams: { some: { ...memberOf, OR: [{ authorize: { gte: AccessMode.Owner } }, { includesAllRepositories: true }] } } } },
      { isPrivate: false, owner: { type: USER_TYPE_ORGANIZATION, visibility: 2, orgMembers: { some: { userId } } } },
    ];
  }

  /** The repository filter for lists: readableRepoFilter below. */
  readableRepoFilter(viewer: Viewer | null): Record<string, unknown> {
    return readableRepoFilter(viewer);
  }
}

/**
 * Prisma filter for the repositories a viewer may read (used by search and lists), the same
 * rules as repoAccessMode expressed as one query (compared with it by
 * forge-api/test/permission-forms.test.ts).
 */
export function readableRepoFilter(viewer: Viewer | null): Record<string, unknown> {
  if ((viewer as Viewer | null)?.publicOnly) {
    const { publicOnly: _p, ...user } = viewer as Viewer;
    return { AND: [readableRepoFilter(user as User), PUBLIC_REPOS_OF_PUBLIC_OWNERS] };
  }
  if (viewer?.isAdmin) return {};
  const visibleOwners = viewer ? (viewer.isRestricted ? [0] : [0, 1]) : [0];
  const publicCond: Record<string, unknown>[] = [{ isPrivate: false, owner: { visibility: { in: visibleOwners } } }];
  if (!viewer) return { OR: publicCond };
  const memberOf = { members: { some: { userId: viewer.id } } };
  const ors: Record<string, unknown>[] = [
    { ownerId: viewer.id },
    { collaborators: { some: { userId: viewer.id } } },
    { teams: { some: { team: memberOf } } },
    { owner: { teams: { some: { ...memberOf, OR: [{ authorize: { gte: AccessMode.Owner } }, { includesAllRepositories: true }] } } } },
  ];
  if (!viewer.isRestricted) ors.push(...publicCond, { isPrivate: false, owner: { orgMembers: { some: { userId: viewer.id } } } });
  return { OR: ors };
}

/** A SQL condition with its `?` parameters, in order. */
export interface SqlCondition {
  sql: string;
  params: unknown[];
}

/** `r."ownerId"` is one of the users of these visibilities (one look-up per owner, not per repository). */
function ownerVisibleSql(visibilities: number[]): string {
  return `r."ownerId" IN (SELECT "id" FROM "User" WHERE "visibility" IN (${visibilities.map((v) => String(Math.trunc(v))).join(', ')}))`;
}

/**
 * readableRepoFilter as a SQL condition over the repository aliased `r` (the same rules, the
 * same order; for the prepared statements of services/fast-reads.ts). `null`: no condition (a
 * site admin reads everything). forge-api/test/permission-forms.test.ts compares this, the
 * Prisma filter, repoAccessMode and repoAccessModes on random users, organizations, teams and
 * repositories.
 */
export function readableRepoSql(viewer: Viewer | null): SqlCondition | null {
  if (viewer?.publicOnly) {
    const { publicOnly: _p, ...user } = viewer;
    const inner = readableRepoSql(user as User);
    const pub = `r."isPrivate" = ? AND ${ownerVisibleSql([0])}`;
    return inner ? { sql: `(${inner.sql}) AND ${pub}`, params: [...inner.params, false] } : { sql: pub, params: [false] };
  }
  if (viewer?.isAdmin) return null;
  const visibleOwners = viewer ? (viewer.isRestricted ? [0] : [0, 1]) : [0];
  const publicCond = `(r."isPrivate" = ? AND ${ownerVisibleSql(visibleOwners)})`;
  if (!viewer) return { sql: publicCond, params: [false] };
  const id = viewer.id;
  const ors = [
    `r."ownerId" = ?`,
    `EXISTS (SELECT 1 FROM "Collaboration" c WHERE c."repoId" = r."id" AND c."userId" = ?)`,
    `EXISTS (SELECT 1 FROM "TeamRepo" tr JOIN "TeamUser" tu ON tu."teamId" = tr."teamId" WHERE tr."repoId" = r."id" AND tu."userId" = ?)`,
    `EXISTS (SELECT 1 FROM "Team" t JOIN "TeamUser" tu ON tu."teamId" = t."id" WHERE t."orgId" = r."ownerId" AND tu."userId" = ? AND (t."authorize" >= ${AccessMode.Owner} OR t."includesAllRepositories" = ?))`,
  ];
  const params: unknown[] = [id, id, id, id, true];
  if (!viewer.isRestricted) {
    ors.push(publicCond, `(r."isPrivate" = ? AND EXISTS (SELECT 1 FROM "OrgUser" ou WHERE ou."orgId" = r."ownerId" AND ou."userId" = ?))`);
    params.push(false, false, id);
  }
  return { sql: `(${ors.join(' OR ')})`, params };
}
