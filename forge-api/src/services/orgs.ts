/**
 * Organizations are users of type 1 (as in Gitea). Creating one makes the creator a member of
 * its "Owners" team (owner access to everything, may create repositories).
 */
import { AlreadyExistsError, InvalidError, NotFoundError, PermissionDeniedError, ValidationError } from './errors';
import { checkEmail } from './names';
import { emitUserChanged } from './events';
import { AccessMode, visibilityValue } from './convert';
import type { Prisma } from './database';
import { checkUserName } from './names';
import { USER_TYPE_ORGANIZATION, visibleOwnerTypes, type PermissionService, type Viewer } from './permissions';
import type { User } from './records';
import { isUniqueViolation, type UserService } from './users';
import { unwatchLost } from './watches';

export interface CreateOrgInput {
  username: string;
  full_name?: string;
  email?: string;
  description?: string;
  website?: string;
  location?: string;
  visibility?: string;
  repo_admin_change_team_access?: boolean;
}

export const OWNER_TEAM = 'Owners';
/** Team visibility values (Gitea's structs.VisibleType). */
export const TEAM_VISIBILITY = { public: 0, limited: 1, private: 2 } as const;

/** Units an all-access team covers (Gitea's unit names). */
export const ALL_UNITS = ['repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.ext_wiki', 'repo.pulls', 'repo.releases', 'repo.projects', 'repo.packages', 'repo.actions'];

export class OrgService {
  constructor(
    private readonly prisma: Prisma,
    private readonly users: UserService,
    private readonly permissions: PermissionService,
  ) {}

  async findByName(name: string): Promise<User | null> {
    const u = await this.users.findByName(name);
    return u && u.type === USER_TYPE_ORGANIZATION ? u : null;
  }

  /** The org if `viewer` may see it, else 404 (Gitea hides invisible orgs). */
  async getVisible(name: string, viewer: User | null): Promise<User> {
    const org = await this.findByName(name);
    if (!org || !(await this.permissions.canSeeOwner(viewer, org))) throw new NotFoundError('not found', [`org does not exist [name: ${name}]`]);
    // A public-only token reaches public organizations only (Gitea's checkTokenPublicOnly).
    if ((viewer as Viewer | null)?.publicOnly && org.visibility !== 0) throw new PermissionDeniedError('token scope is limited to public orgs');
    return org;
  }

  async create(owner: User, input: CreateOrgInput, doer: User): Promise<User> {
    if (!doer.isAdmin && (!owner.allowCreateOrganization || owner.isRestricted)) {
      throw new PermissionDeniedError('Given user is not allowed to create organization.');
    }
    checkUserName(input.username);
    const visibility = visibilityValue(input.visibility);
    if (input.visibility && visibility === undefined) throw new ValidationError('[Visibility]: In');
    if (await this.users.nameTaken(input.username)) throw new AlreadyExistsError(`user already exists [name: ${input.username}]`);
    try {
      return await this.prisma.$transaction(async (tx) => {
        const org = await tx.user.create({
          data: {
            type: USER_TYPE_ORGANIZATION,
            name: input.username,
            lowerName: input.username.toLowerCase(),
            fullName: input.full_name ?? '',
            email: input.email ?? '',
            description: input.description ?? '',
            website: input.website ?? '',
            location: input.location ?? '',
            visibility: visibility ?? 0,
            repoAdminChangeTeamAccess: input.repo_admin_change_team_access ?? false,
            maxRepoCreation: -1,
          },
        });
        const team = await tx.team.create({
          data: {
            orgId: org.id,
            name: OWNER_TEAM,
            lowerName: OWNER_TEAM.toLowerCase(),
            authorize: AccessMode.Owner,
            includesAllRepositories: true,
            canCreateOrgRepo: true,
            visibility: TEAM_VISIBILITY.limited,
            numMembers: 1,
            units: { create: ALL_UNITS.map((unitType) => ({ orgId: org.id, unitType, accessMode: AccessMode.Owner })) },
          },
        });
        await tx.teamUser.create({ data: { orgId: org.id, teamId: team.id, userId: owner.id } });
        await tx.orgUser.create({ data: { orgId: org.id, userId: owner.id, isPublic: false } });
        return org;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AlreadyExistsError(`user already exists [name: ${input.username}]`);
      throw err;
    }
  }

  /**
   * Orgs of `user` as `viewer` may see them (Gitea's listUserOrgs): the user and admins see all;
   * others see public memberships of orgs whose visibility they may see.
   */
  async listForUser(user: User, viewer: User | null, skip: number, take: number) {
    const all = viewer !== null && (viewer.isAdmin || viewer.id === user.id);
    const visibilities = visibleOwnerTypes(viewer, all);
    const where = {
      type: USER_TYPE_ORGANIZATION,
      visibility: { in: visibilities },
      orgMembers: { some: all ? { userId: user.id } : { userId: user.id, isPublic: true } },
    };
    const [rows, total] = await Promise.all([
      this.prisma.user.findMany({ where, orderBy: { lowerName: 'asc' }, skip, take }),
      this.prisma.user.count({ where }),
    ]);
    return { rows, total };
  }

  async listAll(skip: number, take: number, visibilities = [0, 1, 2]) {
    const where = { type: USER_TYPE_ORGANIZATION, visibility: { in: visibilities } };
    const [rows, total] = await Promise.all([
      this.prisma.user.findMany({ where, orderBy: { lowerName: 'asc' }, skip, take }),
      this.prisma.user.count({ where }),
    ]);
    return { rows, total };
  }

  async members(org: User, publicOnly: boolean, skip: number, take: number) {
    const where = { orgMemberships: { some: publicOnly ? { orgId: org.id, isPublic: true } : { orgId: org.id } } };
    const [rows, total] = await Promise.all([
      this.prisma.user.findMany({ where, orderBy: { lowerName: 'asc' }, skip, take }),
      this.prisma.user.count({ where }),
    ]);
    return { rows, total };
  }

  /**
   * PATCH /orgs/{org} (Gitea's EditOrgOption): fields left out stay; an invalid e-mail is 422,
   * as Gitea's UpdateOrgEmailAddress; an unknown visibility is the binding's 422.
   */
  async edit(org: User, input: Omit<CreateOrgInput, 'username'>): Promise<User> {
    const data: Record<string, unknown> = {};
    if (input.email !== undefined) {
      if (input.email !== '') {
        try {
          checkEmail(input.email);
        } catch {
          throw new InvalidError(`e-mail invalid [email: ${input.email}]`);
        }
      }
      data.email = input.email;
    }
    if (input.visibility !== undefined && input.visibility !== '') {
      const visibility = visibilityValue(input.visibility);
      if (visibility === undefined) throw new ValidationError('[Visibility]: In');
      data.visibility = visibility;
    }
    if (input.full_name !== undefined) data.fullName = input.full_name;
    if (input.description !== undefined) data.description = input.description;
    if (input.website !== undefined) data.website = input.website;
    if (input.location !== undefined) data.location = input.location;
    if (input.repo_admin_change_team_access !== undefined) data.repoAdminChangeTeamAccess = input.repo_admin_change_team_access;
    if (!Object.keys(data).length) return org;
    const updated = await this.prisma.user.update({ where: { id: org.id }, data });
    emitUserChanged(this.prisma, org.id);
    return updated;
  }

  /**
   * DELETE /orgs/{org}: refused while it owns repositories or packages (Gitea's
   * ErrUserOwnRepos / ErrUserOwnPackages, which Gitea 1.27.3's API answers with a 500; 422 here).
   * Teams, memberships, follows and blocks go with the row.
   */
  async delete(org: User): Promise<void> {
    if (await this.prisma.repository.count({ where: { ownerId: org.id } })) throw new InvalidError(`user still has ownership of repositories [uid: ${org.id}]`);
    if (await this.prisma.package.count({ where: { ownerId: org.id } })) throw new InvalidError(`user still has ownership of packages [uid: ${org.id}]`);
    await this.prisma.$transaction(async (tx) => {
      // Those who followed the organization follow one fewer.
      await tx.user.updateMany({ where: { following: { some: { followId: org.id } }, numFollowing: { gt: 0 } }, data: { numFollowing: { decrement: 1 } } });
      await tx.user.delete({ where: { id: org.id } });
    });
    emitUserChanged(this.prisma, org.id);
  }

  async isMember(org: User, userId: number): Promise<boolean> {
    return (await this.prisma.orgUser.count({ where: { orgId: org.id, userId } })) > 0;
  }

  async isPublicMember(org: User, userId: number): Promise<boolean> {
    return (await this.prisma.orgUser.count({ where: { orgId: org.id, userId, isPublic: true } })) > 0;
  }

  /**
   * PUT/DELETE /orgs/{org}/public_members/{username}: members change their own visibility,
   * owners and site admins anyone's (403 "Cannot change member visibility" otherwise). A user
   * who is not a member changes nothing (Gitea updates no row).
   */
  async setMembershipPublic(org: User, user: User, doer: User, isPublic: boolean): Promise<void> {
    if (user.id !== doer.id && !doer.isAdmin && !(await this.permissions.isOrgOwner(doer.id, org.id))) throw new PermissionDeniedError('Cannot change member visibility');
    await this.prisma.orgUser.updateMany({ where: { orgId: org.id, userId: user.id }, data: { isPublic } });
  }

  /**
   * DELETE /orgs/{org}/members/{username} (Gitea's RemoveOrgUser): the membership, the user's
   * teams of the organization and their watches of its repositories go; the last member of
   * the Owners team cannot leave (Gitea 1.27.3 answers a 500 there; 422 here). Not a member:
   * nothing to do.
   */
  async removeMember(org: User, user: User): Promise<void> {
    if (!(await this.isMember(org, user.id))) return;
    const ownerTeam = await this.prisma.team.findFirst({ where: { orgId: org.id, authorize: AccessMode.Owner, lowerName: OWNER_TEAM.toLowerCase() }, include: { members: { select: { userId: true } } } });
    if (ownerTeam && ownerTeam.members.length === 1 && ownerTeam.members[0].userId === user.id) {
      throw new InvalidError(`user is the last member of owner team [uid: ${user.id}]`);
    }
    await this.prisma.$transaction(async (tx) => {
      await tx.orgUser.deleteMany({ where: { orgId: org.id, userId: user.id } });
      const teams = await tx.teamUser.findMany({ where: { orgId: org.id, userId: user.id }, select: { teamId: true, team: { select: { includesAllRepositories: true } } } });
      const teamIds = teams.map((t) => t.teamId);
      // Gitea unwatches the organization's public repositories and those of the user's teams
      // there (read before the memberships go); the rest the user can no longer read follows.
      const unwatched = teams.some((t) => t.team.includesAllRepositories) ? {} : { OR: [{ isPrivate: false }, { teams: { some: { teamId: { in: teamIds } } } }] };
      const all = await tx.repository.findMany({ where: { ownerId: org.id }, select: { id: true } });
      const gone = await tx.repository.findMany({ where: { ownerId: org.id, ...unwatched }, select: { id: true } });
      await tx.teamUser.deleteMany({ where: { orgId: org.id, userId: user.id } });
      if (teamIds.length) await tx.team.updateMany({ where: { id: { in: teamIds }, numMembers: { gt: 0 } }, data: { numMembers: { decrement: 1 } } });
      await unwatchLost(tx, user, all.map((r) => r.id), gone.map((r) => r.id));
    });
  }
}
