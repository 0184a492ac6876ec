/**
 * Teams of an organization (Gitea's models/organization/team*.go and services/org/team.go):
 * access mode + per-unit modes, members (a team member is always an org member), repositories
 * (removing a repository from a team never deletes it), the Owners team that every org has
 * and that cannot lose its last member or be deleted.
 */
import { AlreadyExistsError, InvalidError } from './errors';
import { AccessMode } from './convert';
import type { Prisma } from './database';
import { readableRepoFilter, type PermissionService } from './permissions';
import { ALL_UNITS, OWNER_TEAM, TEAM_VISIBILITY } from './orgs';
import type { Repository, Team, User } from './records';
import { unwatchLost, watchForTeam } from './watches';
import { reconsiderAssignments } from './assignees';

/** Gitea's unit keys, in Gitea's unit-type order (the order units are listed in). */
export const UNIT_KEYS = ['repo.code', 'repo.issues', 'repo.pulls', 'repo.releases', 'repo.wiki', 'repo.ext_wiki', 'repo.ext_issues', 'repo.projects', 'repo.packages', 'repo.actions'];
/** Units that can only ever be read (Gitea caps external tracker/wiki at read). */
const READ_ONLY_UNITS = new Set(['repo.ext_wiki', 'repo.ext_issues']);

export const MODE_NAMES = ['none', 'read', 'write', 'admin', 'owner'] as const;
export function modeName(mode: number): string {
  return MODE_NAMES[mode] ?? 'none';
}
/** perm.ParseAccessMode: unknown strings are "none". */
export function parseMode(name: string | undefined): number {
  const i = (MODE_NAMES as readonly string[]).indexOf(name ?? '');
  return i < 0 ? AccessMode.None : i;
}

export type TeamWithUnits = Team & { units: { unitType: string; accessMode: number; id: number }[] };

export interface TeamInput {
  name?: string;
  description?: string;
  permission?: string;
  units?: string[];
  units_map?: Record<string, string>;
  includes_all_repositories?: boolean;
  can_create_org_repo?: boolean;
  visibility?: 'public' | 'limited' | 'private';
}

const VISIBILITY_NAMES = ['public', 'limited', 'private'] as const;

/** Gitea's NormalizeTeamVisibility: an unknown or missing name is private. */
export function teamVisibilityValue(name: string | undefined): number {
  return name && name in TEAM_VISIBILITY ? TEAM_VISIBILITY[name as keyof typeof TEAM_VISIBILITY] : TEAM_VISIBILITY.private;
}

export function teamVisibilityName(value: number): string {
  return VISIBILITY_NAMES[value] ?? 'private';
}

/**
 * The team visibilities a caller who is neither site admin, owner nor member of the team sees
 * (Gitea's VisibleTeamVisibilitiesFor): organization members limited and public teams, other
 * signed-in users public ones.
 */
export function visibleTeamVisibilities(isOrgMember: boolean): number[] {
  return isOrgMember ? [TEAM_VISIBILITY.limited, TEAM_VISIBILITY.public] : [TEAM_VISIBILITY.public];
}

interface UnitRow {
  unitType: string;
  accessMode: number;
}

/**
 * The mode a team gives on a repository as a whole (the forge's checks that name no unit): its
 * own for an admin team; else the lowest non-none mode of its units (external units ignored,
 * as unit_model.MinUnitAccessMode), at most write. Gitea 1.27 keeps a non-admin team's own
 * mode at none and decides by unit; checks that name a unit read the unit rows here too.
 */
function repoLevelMode(admin: boolean, units: UnitRow[]): number {
  if (admin) return AccessMode.Admin;
  let res: number = AccessMode.None;
  for (const u of units) {
    if (READ_ONLY_UNITS.has(u.unitType) || u.accessMode === AccessMode.None) continue;
    if (res === AccessMode.None || u.accessMode < res) res = u.accessMode;
  }
  return Math.min(res, AccessMode.Write);
}

/** The team's own mode as Gitea 1.27 parses it (ParseAccessMode(p, none, admin)): only "admin" counts. */
function isAdminPermission(permission: string | undefined): boolean {
  return permission === 'admin';
}

/**
 * The unit rows Gitea 1.27 stores: every unit for an admin team; else `units_map` as given
 * (each value parsed, unknown ones none), or `units` each with the permission when it is
 * read or write (none otherwise); null when neither is given.
 */
function unitsFrom(input: TeamInput, admin: boolean): UnitRow[] | null {
  if (admin) {
    return UNIT_KEYS.map((unitType) => ({ unitType, accessMode: READ_ONLY_UNITS.has(unitType) ? AccessMode.Read : AccessMode.Admin }));
  }
  if (input.units_map && Object.keys(input.units_map).length > 0) {
    // Unknown keys are dropped, as Gitea's TypeFromKey maps them to an invalid unit.
    return Object.entries(input.units_map)
      .filter(([k]) => UNIT_KEYS.includes(k))
      .map(([unitType, m]) => ({ unitType, accessMode: m === 'owner' ? AccessMode.None : parseMode(m) }));
  }
  if (input.units && input.units.length > 0) {
    const mode = input.permission === 'read' ? AccessMode.Read : input.permission === 'write' ? AccessMode.Write : AccessMode.None;
    return [...new Set(input.units.filter((k) => UNIT_KEYS.includes(k)))].map((unitType) => ({ unitType, accessMode: mode }));
  }
  return null;
}

const unitOrder = (a: { unitType: string }, b: { unitType: string }) => UNIT_KEYS.indexOf(a.unitType) - UNIT_KEYS.indexOf(b.unitType);

export class TeamService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
  ) {}

  /**
   * Which of the organization's teams `viewer` may list (Gitea's ApplyTeamListFilter): site
   * admins and owners all of them; others the teams they are in plus those whose visibility
   * admits them.
   */
  async listFilter(orgId: number, viewer: User): Promise<{ userId?: number; visibilities?: number[] }> {
    if (viewer.isAdmin || (await this.permissions.isOrgOwner(viewer.id, orgId))) return {};
    return { userId: viewer.id, visibilities: visibleTeamVisibilities(await this.permissions.isOrgMember(viewer.id, orgId)) };
  }

  /**
   * May `viewer`, who is not a member of the team nor an owner of its organization, read its
   * metadata? (Gitea's CanNonMemberReadMeta: public teams to whoever sees the organization,
   * limited ones to its members, private ones to nobody.)
   */
  async nonMemberCanRead(team: Team, org: User, viewer: User): Promise<boolean> {
    if (team.visibility === TEAM_VISIBILITY.public) return this.permissions.canSeeOwner(viewer, org);
    if (team.visibility === TEAM_VISIBILITY.limited) return this.permissions.isOrgMember(viewer.id, team.orgId);
    return false;
  }

  async get(id: number): Promise<TeamWithUnits | null> {
    return this.prisma.team.findUnique({ where: { id }, include: { units: true } });
  }

  isOwnerTeam(team: Team): boolean {
    return team.lowerName === OWNER_TEAM.toLowerCase() && team.authorize >= AccessMode.Owner;
  }

  async isMember(teamId: number, userId: number): Promise<boolean> {
    return (await this.prisma.teamUser.count({ where: { teamId, userId } })) > 0;
  }

  /**
   * Teams of an org; `userId` limits to teams the user is in; `q` matches the name (and the
   * description with includeDesc), case-insensitively.
   */
  /**
   * The organization's teams matching `q`; with `userId`, only the teams that user is in, or
   * (with `visibilities`) whose visibility is one of those.
   */
  async search(orgId: number, o: { userId?: number; visibilities?: number[]; q?: string; includeDesc?: boolean; skip: number; take: number }) {
    const where: Record<string, unknown> = { orgId };
    if (o.userId !== undefined) {
      const mine = { members: { some: { userId: o.userId } } };
      if (o.visibilities?.length) where.OR = [mine, { visibility: { in: o.visibilities } }];
      else Object.assign(where, mine);
    }
    const q = (o.q ?? '').trim().toLowerCase();
    let rows = await this.prisma.team.findMany({ where, include: { units: true }, orderBy: { lowerName: 'asc' } });
    // Case-insensitive matching done here: SQLite's LIKE and PostgreSQL's differ on case.
    if (q) rows = rows.filter((t) => t.lowerName.includes(q) || (o.includeDesc && t.description.toLowerCase().includes(q)));
    return { rows: rows.slice(o.skip, o.skip + o.take), total: rows.length };
  }

  /** Every team the user is in, across organizations (GET /user/teams). */
  async ofUser(userId: number, skip: number, take: number) {
    const where = { members: { some: { userId } } };
    const [rows, total] = await Promise.all([
      this.prisma.team.findMany({ where, include: { units: true }, orderBy: [{ orgId: 'asc' }, { lowerName: 'asc' }], skip, take }),
      this.prisma.team.count({ where }),
    ]);
    return { rows, total };
  }

  async create(org: User, input: TeamInput): Promise<TeamWithUnits> {
    const name = input.name ?? '';
    const admin = isAdminPermission(input.permission);
    const units = unitsFrom(input, admin);
    // Gitea answers 500 "units permission should not be empty" here; a client error is what it is.
    if (!units) throw new InvalidError('units permission should not be empty');
    if (await this.prisma.team.count({ where: { orgId: org.id, lowerName: name.toLowerCase() } })) {
      throw new AlreadyExistsError(`team already exists [org_id: ${org.id}, name: ${name}]`);
    }
    const team = await this.prisma.team.create({
      data: {
        orgId: org.id,
        name,
        lowerName: name.toLowerCase(),
        description: input.description ?? '',
        authorize: repoLevelMode(admin, units),
        includesAllRepositories: input.includes_all_repositories ?? false,
        canCreateOrgRepo: input.can_create_org_repo ?? false,
        visibility: teamVisibilityValue(input.visibility),
        units: { create: units.map((u) => ({ orgId: org.id, ...u })) },
      },
      include: { units: true },
    });
    if (team.includesAllRepositories) await this.linkAllRepos(team);
    return (await this.get(team.id)) as TeamWithUnits;
  }

  /** services/org.UpdateTeam: the Owners team keeps its mode, includes-all and repo creation. */
  async edit(team: TeamWithUnits, input: TeamInput): Promise<TeamWithUnits> {
    const owner = this.isOwnerTeam(team);
    const data: Record<string, unknown> = {};
    if (input.can_create_org_repo !== undefined) data.canCreateOrgRepo = owner || input.can_create_org_repo;
    if (input.name) {
      if (owner && input.name.toLowerCase() !== team.lowerName) throw new InvalidError('the owner team name cannot be changed');
      if (input.name.toLowerCase() !== team.lowerName && (await this.prisma.team.count({ where: { orgId: team.orgId, lowerName: input.name.toLowerCase() } }))) {
        throw new AlreadyExistsError(`team already exists [org_id: ${team.orgId}, name: ${input.name}]`);
      }
      data.name = input.name;
      data.lowerName = input.name.toLowerCase();
    }
    if (input.description !== undefined) data.description = input.description;
    // The Owners team's visibility is fixed (limited).
    if (input.visibility !== undefined && !owner) data.visibility = teamVisibilityValue(input.visibility);
    let admin = team.authorize >= AccessMode.Admin;
    let includeAll = team.includesAllRepositories;
    if (!owner && input.permission) {
      admin = isAdminPermission(input.permission);
      if (input.includes_all_repositories !== undefined) includeAll = data.includesAllRepositories = input.includes_all_repositories;
    }
    const units = owner ? null : unitsFrom(input, admin);
    if (!owner) data.authorize = repoLevelMode(admin, units ?? team.units);
    await this.prisma.$transaction(async (tx) => {
      await tx.team.update({ where: { id: team.id }, data });
      if (units) {
        await tx.teamUnit.deleteMany({ where: { teamId: team.id } });
        for (const u of units) await tx.teamUnit.create({ data: { orgId: team.orgId, teamId: team.id, ...u } });
      }
    });
    const updated = (await this.get(team.id)) as TeamWithUnits;
    if (includeAll && !team.includesAllRepositories) await this.linkAllRepos(updated);
    return updated;
  }

  async delete(team: Team): Promise<void> {
    if (this.isOwnerTeam(team)) throw new InvalidError('the owner team cannot be deleted');
    const members = await this.prisma.teamUser.findMany({ where: { teamId: team.id }, select: { user: true } });
    const repoIds = await this.repoIds(team);
    await this.prisma.team.delete({ where: { id: team.id } });
    for (const { user } of members) {
      await unwatchLost(this.prisma, user, repoIds);
      await this.dropOrgMembershipIfNoTeam(team.orgId, user);
    }
  }

  async members(team: Team, skip: number, take: number): Promise<{ rows: User[]; total: number }> {
    const where = { teamMemberships: { some: { teamId: team.id } } };
    const [rows, total] = await Promise.all([
      this.prisma.user.findMany({ where, orderBy: { lowerName: 'asc' }, skip, take }),
      this.prisma.user.count({ where }),
    ]);
    return { rows, total };
  }

  /** Adds a user (an organization cannot join a team); joins the org as a private member. */
  async addMember(team: Team, user: User): Promise<void> {
    if (user.type !== 0) throw new InvalidError('an organization cannot be a team member');
    if (await this.isMember(team.id, user.id)) return;
    await this.prisma.$transaction(async (tx) => {
      await tx.teamUser.create({ data: { orgId: team.orgId, teamId: team.id, userId: user.id } });
      await tx.team.update({ where: { id: team.id }, data: { numMembers: { increment: 1 } } });
      const inOrg = await tx.orgUser.count({ where: { orgId: team.orgId, userId: user.id } });
      if (!inOrg) await tx.orgUser.create({ data: { orgId: team.orgId, userId: user.id, isPublic: false } });
    });
    await watchForTeam(this.prisma, [user.id], await this.repoIds(team));
  }

  async removeMember(team: Team, user: User): Promise<void> {
    if (!(await this.isMember(team.id, user.id))) return;
    if (this.isOwnerTeam(team) && (await this.prisma.teamUser.count({ where: { teamId: team.id } })) <= 1) {
      // Gitea's ErrLastOrgOwner.
      throw new InvalidError(`user is the last member of owner team [uid: ${user.id}]`);
    }
    await this.prisma.$transaction(async (tx) => {
      await tx.teamUser.deleteMany({ where: { teamId: team.id, userId: user.id } });
      await tx.team.update({ where: { id: team.id }, data: { numMembers: { decrement: 1 } } });
    });
    const repoIds = await this.repoIds(team);
    await unwatchLost(this.prisma, user, repoIds);
    // Assignments where the member can no longer be assigned go (Gitea's removeTeamMember).
    await reconsiderAssignments(this.prisma, this.permissions, user, repoIds);
    await this.dropOrgMembershipIfNoTeam(team.orgId, user);
  }

  /**
   * Gitea removes an org membership when the user's last team goes, and with it the watches
   * of the organization's public repositories (its RemoveOrgUser).
   */
  private async dropOrgMembershipIfNoTeam(orgId: number, user: User): Promise<void> {
    if ((await this.prisma.teamUser.count({ where: { orgId, userId: user.id } })) > 0) return;
    const { count } = await this.prisma.orgUser.deleteMany({ where: { orgId, userId: user.id } });
    if (!count) return;
    const open = await this.prisma.repository.findMany({ where: { ownerId: orgId, isPrivate: false }, select: { id: true } });
    await unwatchLost(this.prisma, user, [], open.map((r) => r.id));
  }

  private async memberIds(team: Team): Promise<number[]> {
    return (await this.prisma.teamUser.findMany({ where: { teamId: team.id }, select: { userId: true } })).map((m) => m.userId);
  }

  /** Repositories the team covers: every org repository for includes-all teams. */
  async repos(team: Team, viewer: User | null, skip: number, take: number) {
    const covered = team.includesAllRepositories ? { ownerId: team.orgId } : { teams: { some: { teamId: team.id } } };
    const where = { AND: [covered, readableRepoFilter(viewer)] };
    const [rows, total] = await Promise.all([
      this.prisma.repository.findMany({ where, include: { owner: true }, orderBy: { lowerName: 'asc' }, skip, take }),
      this.prisma.repository.count({ where }),
    ]);
    return { rows, total };
  }

  async repoIds(team: Team): Promise<number[]> {
    const where = team.includesAllRepositories ? { ownerId: team.orgId } : { teams: { some: { teamId: team.id } } };
    return (await this.prisma.repository.findMany({ where, select: { id: true } })).map((r) => r.id);
  }

  async hasRepo(team: Team, repo: Repository): Promise<boolean> {
    if (repo.ownerId !== team.orgId) return false;
    if (team.includesAllRepositories) return true;
    return (await this.prisma.teamRepo.count({ where: { teamId: team.id, repoId: repo.id } })) > 0;
  }

  async addRepo(team: Team, repo: Repository): Promise<void> {
    if (repo.ownerId !== team.orgId) throw new InvalidError('repository does not belong to the team\'s organization');
    if (await this.prisma.teamRepo.count({ where: { teamId: team.id, repoId: repo.id } })) return;
    await this.prisma.$transaction([
      this.prisma.teamRepo.create({ data: { orgId: team.orgId, teamId: team.id, repoId: repo.id } }),
      this.prisma.team.update({ where: { id: team.id }, data: { numRepos: { increment: 1 } } }),
    ]);
    await watchForTeam(this.prisma, await this.memberIds(team), [repo.id]);
  }

  /** Unlinks only: the repository itself stays; members who no longer read it stop watching it. */
  async removeRepo(team: Team, repo: Repository): Promise<void> {
    const n = await this.prisma.teamRepo.deleteMany({ where: { teamId: team.id, repoId: repo.id } });
    if (!n.count) return;
    await this.prisma.team.update({ where: { id: team.id }, data: { numRepos: { decrement: n.count } } });
    const members = await this.prisma.teamUser.findMany({ where: { teamId: team.id }, select: { user: true } });
    for (const { user } of members) await unwatchLost(this.prisma, user, [repo.id]);
  }

  /** includes_all_repositories teams get a link to every current repository of the org. */
  private async linkAllRepos(team: Team): Promise<void> {
    const repos = await this.prisma.repository.findMany({ where: { ownerId: team.orgId }, select: { id: true } });
    for (const r of repos) {
      if (!(await this.prisma.teamRepo.count({ where: { teamId: team.id, repoId: r.id } }))) {
        await this.prisma.teamRepo.create({ data: { orgId: team.orgId, teamId: team.id, repoId: r.id } });
      }
    }
    await this.prisma.team.update({ where: { id: team.id }, data: { numRepos: repos.length } });
    await watchForTeam(this.prisma, await this.memberIds(team), repos.map((r) => r.id));
  }

  /** Units as Gitea lists them: names, and name -> mode. */
  unitsOf(team: TeamWithUnits): { units: string[]; units_map: Record<string, string> } {
    return teamUnitsJson(team);
  }
}

/**
 * A team's `permission`, `units` and `units_map` as Gitea 1.27 shows them: an admin or owner
 * team its mode, every unit and that mode for each; any other team "none" and its unit rows.
 */
export function teamUnitsJson(team: TeamWithUnits): { permission: string; units: string[]; units_map: Record<string, string> } {
  if (team.authorize >= AccessMode.Admin) {
    const mode = modeName(team.authorize);
    return { permission: mode, units: [...UNIT_KEYS], units_map: Object.fromEntries(UNIT_KEYS.map((k) => [k, mode])) };
  }
  const sorted = [...team.units].sort(unitOrder);
  return { permission: 'none', units: sorted.map((u) => u.unitType), units_map: Object.fromEntries(sorted.map((u) => [u.unitType, modeName(u.accessMode)])) };
}

/** All units an owner/admin team holds (used by organization creation and tests). */
export { ALL_UNITS };
