/**
 * Forks (GET/POST /repos/{owner}/{repo}/forks) and the `parent` a fork's JSON embeds.
 * A fork is created as Gitea's ForkRepository does: one fork of a repository per owner, the
 * name defaults to the parent's, private when the parent (or its owner) is, the parent's fork
 * count follows. On disk it borrows the parent's objects (git/fork.ts); creation goes through
 * the same staging and marker steps as any repository (repo-creation.ts).
 */
import type { ForgeConfig } from '../config';
import type { RepoExtras } from './convert/repository';
import type { Prisma } from './database';
import { ConflictError, NotFoundError, PermissionDeniedError } from './errors';
import * as git from './git';
import { recordRefs } from './git/push';
import { cloneForFork, detachFork, relinkFork } from './git/fork';
import { checkRepoName } from './names';
import type { Notifier } from './notify';
import { USER_TYPE_ORGANIZATION, type PermissionService } from './permissions';
import type { RepoService, RepoWithOwner } from './repos';
import type { User } from './records';

export class ForkService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
    private readonly permissions: PermissionService,
    private readonly repos: RepoService,
    private readonly notifier: Notifier,
  ) {}

  /** The repository with its parent attached when it is a fork (for its JSON). */
  async withParent<T extends RepoWithOwner>(repo: T): Promise<T & RepoExtras> {
    if (!repo.isFork || !repo.forkId) return repo;
    const parent = await this.prisma.repository.findUnique({ where: { id: repo.forkId }, include: { owner: true } });
    return { ...repo, parent };
  }

  /** Forks of `repo` the viewer may read, oldest first, with the viewer's access to each. */
  async list(repo: RepoWithOwner, viewer: User | null, skip: number, take: number) {
    const where = { AND: [{ forkId: repo.id, isFork: true }, this.permissions.readableRepoFilter(viewer)] };
    const [rows, total] = await Promise.all([
      this.prisma.repository.findMany({ where, include: { owner: true }, orderBy: { id: 'asc' }, skip, take }),
      this.prisma.repository.count({ where }),
    ]);
    const modes = await this.permissions.repoPermissions(viewer, rows);
    const withParent = rows.map((r) => ({ ...r, parent: repo }));
    return { rows: withParent, modes, total };
  }

  /**
   * The owner a fork goes to: the doer, or an organization they may create repositories in
   * (404 when it is missing or hidden, 403 when they may not create there).
   */
  async targetOwner(doer: User, organization: string | undefined): Promise<User> {
    if (organization === undefined) return doer;
    const org = await this.prisma.user.findFirst({ where: { lowerName: organization.toLowerCase(), type: USER_TYPE_ORGANIZATION } });
    if (!org || !(await this.permissions.canSeeOwner(doer, org))) throw new NotFoundError('not found', [`organization does not exist [name: ${organization}]`]);
    if (!doer.isAdmin && !(await this.permissions.canCreateOrgRepo(doer.id, org.id))) {
      throw new PermissionDeniedError('User is not allowed to create repositories in this organization.');
    }
    return org;
  }

  async fork(doer: User, owner: User, base: RepoWithOwner, name: string | undefined): Promise<RepoWithOwner> {
    const forkName = name || base.name;
    checkRepoName(forkName);
    const limit = await this.repos.reachedRepoLimit(doer, owner);
    if (limit !== null) throw new ConflictError(`user has reached maximum limit of repositories [limit: ${limit}]`);
    const existing = await this.prisma.repository.findFirst({ where: { ownerId: owner.id, forkId: base.id, isFork: true } });
    if (existing) {
      throw new ConflictError(`repository is already forked by user [uname: ${owner.name}, repo path: ${base.owner.name}/${base.name}, fork path: ${owner.name}/${existing.name}]`);
    }
    const lowerName = forkName.toLowerCase();
    const taken = () => new ConflictError(`repository already exists [uname: ${owner.name}, name: ${forkName}]`);
    if (await this.prisma.repository.count({ where: { ownerId: owner.id, lowerName } })) throw taken();
    const finalPath = this.repos.diskPath(owner.name, forkName);
    if (await git.repositoryExists(finalPath)) throw taken();
    const parentPath = this.repos.diskPath(base.owner.name, base.name);
    const repo = await this.repos.insertRepository(doer, owner, {
      name: forkName,
      taken,
      async build(staging) {
        await cloneForFork(parentPath, staging, finalPath);
        await git.runGit(['--git-dir', staging, 'symbolic-ref', 'HEAD', `refs/heads/${base.defaultBranch}`]);
        // The refs the fork starts with are not news: its first push reports only what it changes.
        await recordRefs(staging);
      },
      row: () => ({
        description: base.description,
        defaultBranch: base.defaultBranch,
        isPrivate: base.isPrivate || base.owner.visibility === 2,
        isEmpty: base.isEmpty,
        isFork: true,
        forkId: base.id,
        objectFormatName: base.objectFormatName,
        licenses: base.licenses,
      }),
      async within(tx) {
        await tx.repository.update({ where: { id: base.id }, data: { numForks: { increment: 1 } } });
      },
    });
    const fork = { ...repo, parent: base } as RepoWithOwner;
    await this.notifier.repositoryForked(doer, base, fork);
    return fork;
  }

  /** After a repository's folder moved: its forks borrow objects from the new place. */
  async relinkForksOf(repoId: number): Promise<void> {
    const parent = await this.prisma.repository.findUnique({ where: { id: repoId }, include: { owner: true } });
    if (!parent) return;
    const forks = await this.prisma.repository.findMany({ where: { forkId: repoId }, include: { owner: true } });
    const parentPath = this.repos.diskPath(parent.owner.name, parent.name);
    for (const f of forks) await relinkFork(this.repos.diskPath(f.owner.name, f.name), parentPath);
  }

  /** Before a repository is deleted: each fork takes its own copy of the objects it borrows. */
  async detachForksOf(repoId: number): Promise<void> {
    const forks = await this.prisma.repository.findMany({ where: { forkId: repoId }, include: { owner: true } });
    for (const f of forks) await detachFork(this.repos.diskPath(f.owner.name, f.name));
  }
}
