/**
 * Repository transfers (POST /repos/{owner}/{repo}/transfer, /transfer/accept, /transfer/reject),
 * as Gitea's StartRepositoryTransfer: a site admin, the new owner themself, or a member allowed
 * to create repositories in the target organization moves the repository at once (202);
 * anyone else leaves a pending transfer (201) that the recipient (or, for an organization, a
 * member who may create repositories there) accepts or rejects, and the recipient gets read
 * access meanwhile so they can see it. Moving: the folder (and the wiki's) goes to the new
 * owner, collaborators who are the new owner or members of the new organization are dropped,
 * the old organization's teams lose the repository, the new one's "all repositories" teams and
 * the chosen teams gain it, and forks borrowing its objects are relinked.
 */
import { promises as fs } from 'node:fs';
import type { Prisma } from './database';
import { AccessMode } from './convert';
import { ConflictError, InvalidError, NotFoundError, PermissionDeniedError } from './errors';
import * as git from './git';
import { USER_TYPE_ORGANIZATION, type PermissionService } from './permissions';
import type { RepoService, RepoWithOwner } from './repos';
import type { User } from './records';
import { watchForTeam } from './watches';

export const STATUS_READY = 0;
export const STATUS_PENDING_TRANSFER = 1;

export class TransferService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
    private readonly repos: RepoService,
    private readonly folderMoved: (repoId: number) => Promise<void>,
  ) {}

  /** Returns the repository after the call and whether the transfer is only pending. */
  async start(doer: User, repo: RepoWithOwner, newOwnerName: string, teamIds: number[] | undefined): Promise<{ repo: RepoWithOwner; pending: boolean }> {
    const missing = () => new NotFoundError('The new owner does not exist or cannot be found');
    const newOwner = await this.prisma.user.findFirst({ where: { lowerName: (newOwnerName ?? '').toLowerCase() } });
    if (!newOwner) throw missing();
    const isOrg = newOwner.type === USER_TYPE_ORGANIZATION;
    if (isOrg && !doer.isAdmin && newOwner.visibility === 2 && !(await this.permissions.isOrgMember(doer.id, newOwner.id))) throw missing();
    let teams: { id: number; orgId: number }[] = [];
    if (teamIds !== undefined) {
      if (!isOrg) throw new InvalidError('Teams can only be added to organization-owned repositories');
      for (const id of teamIds) {
        const team = await this.prisma.team.findUnique({ where: { id }, select: { id: true, orgId: true } });
        if (!team) throw new InvalidError(`team ${id} not found`);
        if (team.orgId !== newOwner.id) throw new PermissionDeniedError(`team ${id} belongs not to org ${newOwner.id}`);
        teams.push(team);
      }
    }
    if (repo.status === STATUS_PENDING_TRANSFER) throw new ConflictError('repository is already being transferred [uname: , name: ]');
    if (!doer.isAdmin && !isOrg) {
      const limit = newOwner.maxRepoCreation;
      if (limit >= 0 && (await this.prisma.repository.count({ where: { ownerId: newOwner.id } })) >= limit) {
        throw new PermissionDeniedError(`user has reached maximum limit of repositories [limit: ${limit}]`);
      }
    }
    const direct = doer.isAdmin || doer.id === newOwner.id || (isOrg && (await this.permissions.canCreateOrgRepo(doer.id, newOwner.id)));
    if (direct) {
      return { repo: await this.move(repo, newOwner, teams.map((t) => t.id)), pending: false };
    }
    if ((await this.permissions.repoAccessMode(newOwner, repo)) < AccessMode.Read) {
      await this.prisma.collaboration.upsert({
        where: { repoId_userId: { repoId: repo.id, userId: newOwner.id } },
        create: { repoId: repo.id, userId: newOwner.id, mode: AccessMode.Read },
        update: {},
      });
    }
    teams = teams.filter(Boolean);
    await this.prisma.$transaction([
      this.prisma.repoTransfer.upsert({
        where: { repoId: repo.id },
        create: { repoId: repo.id, doerId: doer.id, recipientId: newOwner.id, teamIds: teams.map((t) => t.id).join(',') },
        update: { doerId: doer.id, recipientId: newOwner.id, teamIds: teams.map((t) => t.id).join(','), createdAt: new Date(), updatedAt: new Date() },
      }),
      this.prisma.repository.update({ where: { id: repo.id }, data: { status: STATUS_PENDING_TRANSFER } }),
    ]);
    return { repo: await this.reload(repo.id), pending: true };
  }

  private async pendingFor(doer: User, repo: RepoWithOwner) {
    const t = await this.prisma.repoTransfer.findUnique({ where: { repoId: repo.id } });
    if (!t || repo.status !== STATUS_PENDING_TRANSFER) throw new NotFoundError(`repository doesn't have a pending transfer [repo_id: ${repo.id}]`);
    const recipient = await this.prisma.user.findUniqueOrThrow({ where: { id: t.recipientId } });
    const allowed =
      recipient.type === USER_TYPE_ORGANIZATION ? doer.isAdmin || (await this.permissions.canCreateOrgRepo(doer.id, recipient.id)) : recipient.id === doer.id;
    if (!allowed) throw new PermissionDeniedError('permission denied');
    return { t, recipient };
  }

  async accept(doer: User, repo: RepoWithOwner): Promise<RepoWithOwner> {
    const { t, recipient } = await this.pendingFor(doer, repo);
    const teamIds = t.teamIds ? t.teamIds.split(',').map(Number) : [];
    return this.move(repo, recipient, teamIds);
  }

  async reject(doer: User, repo: RepoWithOwner): Promise<RepoWithOwner> {
    await this.pendingFor(doer, repo);
    await this.prisma.$transaction([
      this.prisma.repoTransfer.delete({ where: { repoId: repo.id } }),
      this.prisma.repository.update({ where: { id: repo.id }, data: { status: STATUS_READY } }),
    ]);
    return this.reload(repo.id);
  }

  /** The repo_transfer JSON of a repository with a pending transfer (Gitea's ToRepoTransfer). */
  async transferJson(repo: RepoWithOwner, user: (u: User) => unknown): Promise<Record<string, unknown> | null> {
    if (repo.status !== STATUS_PENDING_TRANSFER) return null;
    const t = await this.prisma.repoTransfer.findUnique({ where: { repoId: repo.id } });
    if (!t) return null;
    const [doer, recipient] = await Promise.all([this.prisma.user.findUnique({ where: { id: t.doerId } }), this.prisma.user.findUnique({ where: { id: t.recipientId } })]);
    const ids = t.teamIds ? t.teamIds.split(',').map(Number) : [];
    const teams = ids.length ? await this.prisma.team.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } }) : [];
    return {
      doer: doer ? user(doer) : null,
      recipient: recipient ? user(recipient) : null,
      teams: teams.map((tm) => ({ id: tm.id, name: tm.name, description: tm.description, includes_all_repositories: tm.includesAllRepositories, can_create_org_repo: tm.canCreateOrgRepo })),
    };
  }

  private reload(id: number): Promise<RepoWithOwner> {
    return this.prisma.repository.findUniqueOrThrow({ where: { id }, include: { owner: true } });
  }

  /** Gitea's transferOwnership. */
  private async move(repo: RepoWithOwner, newOwner: User, teamIds: number[]): Promise<RepoWithOwner> {
    if (repo.ownerId !== newOwner.id) {
      const taken = () => new InvalidError(`repository already exists [uname: ${newOwner.name}, name: ${repo.name}]`);
      if (await this.prisma.repository.count({ where: { ownerId: newOwner.id, lowerName: repo.lowerName } })) throw taken();
      const from = this.repos.diskPath(repo.owner.name, repo.name);
      const to = this.repos.diskPath(newOwner.name, repo.name);
      if (await git.repositoryExists(to)) throw taken();
      await git.renameRepository(from, to);
      try {
        await this.prisma.$transaction(async (tx) => {
          await tx.repository.update({ where: { id: repo.id }, data: { ownerId: newOwner.id, ownerName: newOwner.name, status: STATUS_READY, updatedAt: new Date() } });
          // Collaborators who are now the owner or members of the owning organization.
          const collaborators = await tx.collaboration.findMany({ where: { repoId: repo.id } });
          for (const c of collaborators) {
            const drop = c.userId === newOwner.id || (newOwner.type === USER_TYPE_ORGANIZATION && (await tx.orgUser.count({ where: { orgId: newOwner.id, userId: c.userId } })) > 0);
            if (drop) await tx.collaboration.delete({ where: { id: c.id } });
          }
          const before = await tx.teamRepo.findMany({ where: { repoId: repo.id }, select: { teamId: true } });
          await tx.teamRepo.deleteMany({ where: { repoId: repo.id } });
          const touched = new Set(before.map((b) => b.teamId));
          if (newOwner.type === USER_TYPE_ORGANIZATION) {
            const all = await tx.team.findMany({ where: { orgId: newOwner.id, OR: [{ includesAllRepositories: true }, { id: { in: teamIds } }] } });
            for (const team of all) {
              await tx.teamRepo.create({ data: { orgId: newOwner.id, teamId: team.id, repoId: repo.id } });
              touched.add(team.id);
            }
            // Members of the teams that now hold it watch it, as any repository added to a team.
            const members = await tx.teamUser.findMany({ where: { teamId: { in: all.map((t) => t.id) } }, select: { userId: true }, distinct: ['userId'] });
            await watchForTeam(tx, members.map((m) => m.userId), [repo.id]);
          }
          for (const teamId of touched) await tx.team.update({ where: { id: teamId }, data: { numRepos: await tx.teamRepo.count({ where: { teamId } }) } });
          await tx.repoTransfer.deleteMany({ where: { repoId: repo.id } });
        });
      } catch (err) {
        await git.renameRepository(to, from).catch(() => undefined);
        throw err;
      }
      const wikiFrom = from.replace(/\.git$/, '.wiki.git');
      if (await git.repositoryExists(wikiFrom)) await git.renameRepository(wikiFrom, to.replace(/\.git$/, '.wiki.git')).catch(() => undefined);
      await this.folderMoved(repo.id);
    } else {
      await this.prisma.$transaction([
        this.prisma.repoTransfer.deleteMany({ where: { repoId: repo.id } }),
        this.prisma.repository.update({ where: { id: repo.id }, data: { status: STATUS_READY } }),
      ]);
    }
    return this.reload(repo.id);
  }
}
