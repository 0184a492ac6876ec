/**
 * Organizations are users of type 1 (as in Gitea). Creating one makes the creator a member of
 * its "Owners" team (owner access to everything, may create repositories).
 */
import { AlreadyExistsError, NotFoundError, PermissionDeniedError, ValidationError } from './errors';
import { AccessMode, visibilityValue } from './convert';
import type { Prisma } from './database';
import { checkUserName } from './names';
import { USER_TYPE_ORGANIZATION, visibleOwnerTypes, type PermissionService, type Viewer } from './permissions';
import type { User } from './records';
import { isUniqueViolation, type UserService } from './users';

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
}
