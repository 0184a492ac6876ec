/**
 * Repositories: rows in the database, bare repositories on disk (services/git).
 * Creation validates everything first, writes the row, then the disk; a disk failure removes
 * the row again so the two never disagree. Creation, deletion and pushes are announced to the
 * notifier (feeds, webhooks).
 */
import { clearRepoStars } from './stars';
import path from 'node:path';
import { beginCreation, endCreation, markPending, recoverCreations } from './repo-creation';
import type { ForgeConfig } from '../config';
import { AlreadyExistsError, InvalidError, NotFoundError, PermissionDeniedError, ValidationError } from './errors';
import { AccessMode } from './convert';
import type { Prisma } from './database';
import * as git from './git';
import { recordRefs, takePush } from './git/push';
import { detachFork } from './git/fork';
import type { HotReads } from './fast-reads';
import type { Notifier } from './notify';
import { checkRepoName } from './names';
import { readableRepoSql, USER_TYPE_ORGANIZATION, type PermissionService, type RepoModes, type SqlCondition, type Viewer } from './permissions';
import type { Repository, User } from './records';
import { labelTemplate } from './templates';
import { isUniqueViolation } from './users';
import { watchedByAllReposTeams, WatchMode } from './watches';
import type { Prisma as PrismaTypes } from '../../generated/prisma/client';

type RepositoryCreateData = PrismaTypes.RepositoryUncheckedCreateInput;
type PrismaTx = Parameters<Parameters<Prisma['$transaction']>[0]>[0];

export type RepoWithOwner = Repository & { owner: User };

/** What a creation path tells insertRepository (see there). */
export interface NewRepository {
  name: string;
  /** The error for a name that turns out to be taken (the callers answer differently). */
  taken(): Error;
  /** Makes the git repository at `staging`. */
  build(staging: string): Promise<void>;
  /** The row's own columns; owner, name, size, branch count and watch count are filled in. */
  row(initial: git.RepoStats): Omit<RepositoryCreateData, 'ownerId' | 'ownerName' | 'name' | 'lowerName'>;
  /** More writes in the row's transaction (a fork's parent count). */
  within?(tx: PrismaTx, created: RepoWithOwner): Promise<void>;
  /** After the commit, before the creation is announced; returns the repository to announce. */
  afterCommit?(repo: RepoWithOwner): Promise<RepoWithOwner>;
}

export interface CreateRepoInput {
  name: string;
  description?: string;
  private?: boolean;
  issue_labels?: string;
  auto_init?: boolean;
  template?: boolean;
  gitignores?: string;
  license?: string;
  readme?: string;
  default_branch?: string;
  trust_model?: string;
  object_format_name?: string;
}

const TRUST_MODELS = new Set(['default', 'collaborator', 'committer', 'collaboratorcommitter']);

export interface SearchOptions {
  q?: string;
  /** `q` names topics (comma-separated), matched exactly. */
  topicOnly?: boolean;
  includeDesc?: boolean;
  uid?: number;
  priorityOwnerId?: number;
  teamId?: number;
  isPrivate?: boolean;
  includePrivate?: boolean;
  template?: boolean;
  archived?: boolean;
  mode?: string;
  exclusive?: boolean;
  sort?: string;
  order?: string;
  skip: number;
  take: number;
}

const SORTS: Record<string, string> = {
  alpha: 'lowerName',
  created: 'createdAt',
  updated: 'updatedAt',
  size: 'size',
  git_size: 'size',
  lfs_size: 'size',
  stars: 'numStars',
  forks: 'numForks',
  id: 'id',
};

/** Column of each sort key (SORTS) as SQL over `r`. */
const SORT_COLUMNS: Record<string, string> = Object.fromEntries(Object.entries(SORTS).map(([k, field]) => [k, `r."${field}"`]));

/**
 * A search without a keyword, user, team or priority owner (listing and exploring: the common
 * request) as one condition and order for the prepared statements of HotReads.repoPage: the
 * same filters and order as the Prisma query of RepoService.search, which serves every other
 * shape. `null`: not such a search.
 */
export function searchSql(viewer: Viewer | null, o: SearchOptions): { where: SqlCondition | null; orderBy: string } | null {
  if (o.q || o.uid || o.teamId || o.priorityOwnerId) return null;
  const conds: string[] = [];
  const params: unknown[] = [];
  const readable = readableRepoSql(viewer);
  if (readable) {
    conds.push(readable.sql);
    params.push(...readable.params);
  }
  const eq = (column: string, value: boolean) => {
    conds.push(`r."${column}" = ?`);
    params.push(value);
  };
  if (!o.includePrivate) eq('isPrivate', false);
  if (o.isPrivate !== undefined) eq('isPrivate', o.isPrivate);
  if (o.template !== undefined) eq('isTemplate', o.template);
  if (o.archived !== undefined) eq('isArchived', o.archived);
  if (o.mode === 'fork') eq('isFork', true);
  if (o.mode === 'source') {
    eq('isFork', false);
    eq('isMirror', false);
  }
  if (o.mode === 'mirror') eq('isMirror', true);
  const sort = o.sort || 'alpha';
  const dir = o.order === 'desc' ? 'DESC' : 'ASC';
  const column = SORT_COLUMNS[sort];
  const orderBy = sort === 'id' ? `${column} ${dir}` : `${column} ${dir}, r."id" ASC`;
  return { where: conds.length ? { sql: conds.join(' AND '), params } : null, orderBy };
}

export class RepoService {
  constructor(
    private readonly prisma: Prisma,
    readonly config: ForgeConfig,
    private readonly permissions: PermissionService,
    private readonly notifier: Notifier,
    private readonly hot: HotReads,
  ) {}

  async findInOwner(ownerId: number, name: string): Promise<RepoWithOwner | null> {
    return this.prisma.repository.findUnique({ where: { ownerId_lowerName: { ownerId, lowerName: name.toLowerCase() } }, include: { owner: true } });
  }

  async byId(id: number): Promise<RepoWithOwner | null> {
    return this.prisma.repository.findUnique({ where: { id }, include: { owner: true } });
  }

  diskPath(ownerName: string, name: string): string {
    return git.repositoryPath(this.config.reposDir, ownerName, name);
  }

  async findByOwnerAndName(owner: string, name: string): Promise<RepoWithOwner | null> {
    // The prepared statement getReadable uses (services/fast-reads.ts): every git request over
    // HTTP and SSH starts with this look-up, and a Prisma query costs ~10x its SQL here.
    return (await this.hot.repoByName(owner, name, null))?.repo ?? null;
  }

  /** The repository with the caller's access, or 404 when it is missing or unreadable. */
  /**
   * Gitea: a creator without admin access through a team becomes an admin collaborator of the
   * organization's new repository (created, forked or generated), so they can manage it.
   */
  async makeCreatorAdmin(doer: User, owner: User, repo: Repository): Promise<void> {
    if (owner.type !== USER_TYPE_ORGANIZATION || doer.isAdmin || (await this.permissions.repoAccessMode(doer, repo)) >= AccessMode.Admin) return;
    await this.prisma.collaboration.upsert({
      where: { repoId_userId: { repoId: repo.id, userId: doer.id } },
      create: { repoId: repo.id, userId: doer.id, mode: AccessMode.Admin },
      update: { mode: AccessMode.Admin },
    });
  }

  async getReadable(owner: string, name: string, doer: User | null): Promise<{ repo: RepoWithOwner; mode: number }> {
    // One prepared statement (services/fast-reads.ts): the repository, its owner and the
    // caller's collaboration; every repository route starts here.
    const found = await this.hot.repoByName(owner, name, doer?.id ?? null);
    const missing = () => new NotFoundError('not found', [`repository does not exist [id: 0, uid: 0, owner_name: ${owner}, name: ${name}]`]);
    if (!found) throw missing();
    const { repo, collabMode } = found;
    const mode = await this.permissions.repoAccessMode(doer, { ...repo, collaborators: collabMode === null ? [] : [{ mode: collabMode }] });
    if (mode < AccessMode.Read) throw missing();
    return { repo, mode };
  }

  /**
   * Gitea's CanCreateRepo / CanForkRepoIn: the limit an individual owner has reached (their
   * own max_repo_creation, else the site's), or null when `doer` may add one more.
   */
  async reachedRepoLimit(doer: User, owner: User): Promise<number | null> {
    if (doer.isAdmin || owner.type === USER_TYPE_ORGANIZATION) return null;
    const limit = owner.maxRepoCreation >= 0 ? owner.maxRepoCreation : this.config.maxCreationLimit;
    if (limit >= 0 && (await this.prisma.repository.count({ where: { ownerId: owner.id } })) >= limit) return limit;
    return null;
  }

  /** May `doer` create repositories owned by `owner`? (403 otherwise) */
  async assertCanCreateIn(doer: User, owner: User): Promise<void> {
    if (doer.isAdmin) return;
    if (owner.type === USER_TYPE_ORGANIZATION) {
      if (!(await this.permissions.canCreateOrgRepo(doer.id, owner.id))) {
        throw new PermissionDeniedError('Given user is not allowed to create repository in organization.');
      }
      return;
    }
    if (owner.id !== doer.id) throw new PermissionDeniedError('Given user is not allowed to create repository for another user.');
  }

  async create(doer: User, owner: User, input: CreateRepoInput): Promise<RepoWithOwner> {
    checkRepoName(input.name);
    const defaultBranch = input.default_branch || this.config.defaultBranch;
    if (!git.isValidBranchName(defaultBranch)) throw new ValidationError('[DefaultBranch]: GitRefName');
    const objectFormat = input.object_format_name || 'sha1';
    if (objectFormat !== 'sha1') throw new InvalidError(`unsupported object format: ${objectFormat}`);
    let labels: { name: string; color: string; description: string; exclusive: boolean }[] = [];
    if (input.issue_labels) {
      const set = labelTemplate(input.issue_labels);
      if (!set) throw new InvalidError(`failed to load label template "${input.issue_labels}"`);
      labels = set;
    }
    if (input.readme && input.readme !== 'Default') throw new InvalidError(`readme template "${input.readme}" does not exist`);
    const limit = await this.reachedRepoLimit(doer, owner);
    if (limit !== null) throw new PermissionDeniedError(`user has reached maximum limit of repositories [limit: ${limit}]`);
    const lowerName = input.name.toLowerCase();
    const exists = await this.prisma.repository.count({ where: { ownerId: owner.id, lowerName } });
    if (exists) throw new AlreadyExistsError('The repository with the same name already exists.');
    const trustModel = input.trust_model && TRUST_MODELS.has(input.trust_model) ? input.trust_model : 'default';
    const diskPath = this.diskPath(owner.name, input.name);
    if (await git.repositoryExists(diskPath)) throw new AlreadyExistsError('The repository with the same name already exists.');
    const rootUrl = this.config.rootUrl;
    const taken = () => new AlreadyExistsError('The repository with the same name already exists.');
    return this.insertRepository(doer, owner, {
      name: input.name,
      taken,
      async build(staging) {
        try {
          await git.initRepository(staging, {
            defaultBranch,
            autoInit: input.auto_init
              ? {
                  readme: { name: input.name, description: input.description ?? '', template: input.readme || 'Default', cloneUrlHttps: `${rootUrl}${owner.name}/${input.name}.git`, owner: owner.name },
                  license: input.license || undefined,
                  gitignores: input.gitignores ? input.gitignores.split(',').map((s) => s.trim()).filter(Boolean) : undefined,
                  author: { name: doer.fullName || doer.name, email: doer.email || `${doer.lowerName}@noreply.localhost` },
                  owner: owner.name,
                  repoName: input.name,
                }
              : undefined,
          });
        } catch (err) {
          if (err instanceof git.UnknownTemplateError) throw new InvalidError(`${err.kind} template "${err.template}" does not exist`);
          throw err;
        }
      },
      // The row is written with what is on disk (an auto_init commit makes it non-empty), so
      // a crash between its commit and afterPush's refresh cannot leave an "empty" repository
      // that does have its initial commit.
      row: (initial) => ({
        description: input.description ?? '',
        isPrivate: input.private ?? false,
        isTemplate: input.template ?? false,
        trustModel,
        objectFormatName: objectFormat,
        defaultBranch,
        isEmpty: initial.empty,
        licenses: input.auto_init && input.license ? input.license : '',
        labels: labels.length
          ? { create: labels.map((l) => ({ name: l.name, color: `#${l.color.replace(/^#/, '')}`, description: l.description, exclusive: l.exclusive })) }
          : undefined,
      }),
      // The initial commit is an internal push (Gitea skips its hooks): no push event, feed row
      // or webhook; the refs are recorded so the next push diffs against them.
      afterCommit: async (repo) => {
        await recordRefs(diskPath).catch(() => undefined);
        return input.auto_init ? this.afterPush(doer, repo.id) : repo;
      },
    });
  }

  /**
   * The one way a repository comes to exist (created, forked, generated, migrated). `build`
   * makes the git repository in a staging folder; it is moved into place and committed with
   * its row, the creator's automatic watch and `within`'s writes in one transaction (see
   * repo-creation.ts for what a crash at each step leaves and how start-up undoes it); then
   * an organization's creator becomes admin if no team makes them one, `afterCommit` runs and
   * the creation is announced.
   */
  async insertRepository(doer: User, owner: User, spec: NewRepository): Promise<RepoWithOwner> {
    const diskPath = this.diskPath(owner.name, spec.name);
    const creation = await beginCreation(this.config.reposDir);
    let repo: RepoWithOwner;
    try {
      await spec.build(creation.staging);
      const initial = await git.repoStats(creation.staging);
      await markPending(creation, diskPath);
      try {
        await git.renameRepository(creation.staging, diskPath);
      } catch (err) {
        if (err instanceof git.RepositoryExistsError) throw spec.taken();
        throw err;
      }
      try {
        repo = await this.prisma.$transaction(async (tx) => {
          const created = await tx.repository.create({
            data: {
              ...spec.row(initial),
              ownerId: owner.id,
              ownerName: owner.name,
              name: spec.name,
              lowerName: spec.name.toLowerCase(),
              size: initial.sizeKiB,
              numBranches: initial.branchCount,
              numWatches: 1,
            },
            include: { owner: true },
          });
          // Gitea's [service] AUTO_WATCH_NEW_REPOS (default true): the creator watches the new
          // repository (mode auto), so issue notifications and feeds reach them.
          await tx.watch.create({ data: { userId: doer.id, repoId: created.id, mode: WatchMode.Auto } });
          await watchedByAllReposTeams(tx, owner, created.id);
          await spec.within?.(tx, created);
          return created;
        });
      } catch (err) {
        await git.deleteRepository(diskPath);
        if (isUniqueViolation(err)) throw spec.taken();
        throw err;
      }
    } finally {
      await endCreation(creation);
    }
    await this.makeCreatorAdmin(doer, owner, repo);
    if (spec.afterCommit) repo = await spec.afterCommit(repo);
    await this.notifier.repositoryCreated(doer, repo);
    return repo;
  }

  /**
   * Adopts a repository folder that has no row (Gitea's AdoptRepository): a private repository
   * of `owner` with what is on disk (default branch from HEAD, size, branches), watched by the
   * doer and announced as created. The folder must be an unadopted one (see unadoptedDir).
   */
  async adopt(doer: User, owner: User, dirName: string): Promise<RepoWithOwner> {
    const diskPath = this.diskPath(owner.name, dirName);
    const stats = await git.repoStats(diskPath);
    let repo: RepoWithOwner;
    try {
      repo = await this.prisma.$transaction(async (tx) => {
        const created = await tx.repository.create({
          data: {
            ownerId: owner.id,
            ownerName: owner.name,
            name: dirName,
            lowerName: dirName.toLowerCase(),
            isPrivate: true,
            defaultBranch: stats.defaultBranch || this.config.defaultBranch,
            isEmpty: stats.empty,
            size: stats.sizeKiB,
            numBranches: stats.branchCount,
            numWatches: 1,
          },
          include: { owner: true },
        });
        await tx.watch.create({ data: { userId: doer.id, repoId: created.id, mode: WatchMode.Auto } });
        await watchedByAllReposTeams(tx, owner, created.id);
        return created;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new NotFoundError('repository already exists');
      throw err;
    }
    await recordRefs(diskPath).catch(() => undefined);
    await this.notifier.repositoryCreated(doer, repo);
    return repo;
  }

  /** Deletes an unadopted repository folder from disk (Gitea's DeleteUnadoptedRepository). */
  async deleteUnadopted(owner: User, dirName: string): Promise<void> {
    await git.deleteRepository(this.diskPath(owner.name, dirName));
  }

  /** Start-up: undoes what a crash interrupted in create() (repo-creation.ts). */
  async recoverInterruptedCreations(): Promise<string[]> {
    return recoverCreations(this.config.reposDir, async (finalPath) => {
      const rel = path.relative(this.config.reposDir, finalPath).split(path.sep);
      if (rel.length !== 2 || !rel[1].endsWith('.git')) return true;
      return (await this.prisma.repository.count({ where: { owner: { lowerName: rel[0] }, lowerName: rel[1].slice(0, -4) } })) > 0;
    });
  }

  /**
   * After a push (or the first commit of an auto-initialised repository): refreshes size,
   * empty flag and default branch from disk, then announces each changed ref. `pusher` null
   * (a push the forge cannot attribute) counts as the owner's.
   */
  async afterPush(pusher: User | null, repoId: number): Promise<RepoWithOwner> {
    const found = await this.prisma.repository.findUniqueOrThrow({ where: { id: repoId }, include: { owner: true } });
    const diskPath = this.diskPath(found.owner.name, found.name);
    const stats = await git.repoStats(diskPath);
    const repo = await this.prisma.repository.update({
      where: { id: repoId },
      data: {
        size: stats.sizeKiB,
        isEmpty: stats.empty,
        numBranches: stats.branchCount,
        ...(stats.defaultBranch ? { defaultBranch: stats.defaultBranch } : {}),
        updatedAt: new Date(),
      },
      include: { owner: true },
    });
    let refs: Awaited<ReturnType<typeof takePush>> = [];
    try {
      refs = await takePush(diskPath);
    } catch (err) {
      this.notifier.logError(err, 'pushed');
    }
    for (const ref of refs) await this.notifier.pushed(pusher ?? repo.owner, repo, ref);
    return repo;
  }

  /**
   * A ref the forge changed itself (a commit through /contents, a branch or tag created or
   * deleted through the API, a release's new tag, a wiki edit): announced exactly as a git push
   * over HTTP by `doer` (push/create/delete webhooks, the activity feed) and the repository's
   * size, empty flag, branch count and default branch refreshed. Call it after the ref moved.
   */
  async refsChanged(doer: User, repoId: number): Promise<RepoWithOwner> {
    return this.afterPush(doer, repoId);
  }

  /** Size and empty flag of every repository from disk (the update_repo_size task). */
  async refreshSizes(): Promise<void> {
    const all = await this.prisma.repository.findMany({ include: { owner: true } });
    for (const r of all) {
      const stats = await git.repoStats(this.diskPath(r.owner.name, r.name)).catch(() => null);
      if (stats) await this.prisma.repository.update({ where: { id: r.id }, data: { size: stats.sizeKiB, isEmpty: stats.empty, numBranches: stats.branchCount } });
    }
  }

  /** Deletes the row and the repository on disk. Needs owner access (403 otherwise). */
  async delete(doer: User, repo: RepoWithOwner, mode: number): Promise<void> {
    if (mode < AccessMode.Owner) {
      // Gitea's reqOwner(): repository owner, org owner or site admin.
      throw new PermissionDeniedError('user should be the owner of the repo');
    }
    // Announced while the row (and the repository's own hooks) still exist, as Gitea does.
    await this.notifier.repositoryDeleting(doer, repo);
    // Forks borrow this repository's objects (git/fork.ts): they take their own copy first, and
    // stop being forks, as Gitea resets fork_id of a deleted repository's forks.
    const forks = await this.prisma.repository.findMany({ where: { forkId: repo.id }, include: { owner: true } });
    for (const f of forks) await detachFork(this.diskPath(f.owner.name, f.name));
    await this.prisma.$transaction(async (tx) => {
      if (forks.length) await tx.repository.updateMany({ where: { forkId: repo.id }, data: { forkId: null, isFork: false } });
      if (repo.isFork && repo.forkId) await tx.repository.updateMany({ where: { id: repo.forkId, numForks: { gt: 0 } }, data: { numForks: { decrement: 1 } } });
      // Stars go with the row; their users' starred_repos_count must follow.
      await clearRepoStars(tx, repo.id);
      await tx.repository.delete({ where: { id: repo.id } });
    });
    await git.deleteRepository(this.diskPath(repo.owner.name, repo.name));
  }

  /**
   * DELETE /orgs/{org}/repos: every repository of the owner, one after the other (the caller
   * has checked ownership of the organization). Returns how many there were.
   */
  async deleteAllOf(doer: User, owner: User): Promise<number> {
    const all = await this.prisma.repository.findMany({ where: { ownerId: owner.id }, include: { owner: true }, orderBy: { id: 'asc' } });
    for (const repo of all) await this.delete(doer, repo, AccessMode.Owner);
    return all.length;
  }

  /**
   * Repositories of an owner visible to the viewer, by name; the total counts the same rows.
   * Gitea 1.27.3's GET /orgs/{org}/repos differs on purpose here: for any signed-in viewer (member
   * or not) its X-Total-Count counts every repository of the organization, private ones the viewer
   * cannot see included (anonymous viewers get the public count). That leaks how many private
   * repositories an organization has and makes its Link headers promise pages that come back
   * empty, so the forge counts only what it lists (the items are the same as Gitea's).
   */
  async listForOwner(owner: User, viewer: User | null, skip: number, take: number) {
    const where = { AND: [{ ownerId: owner.id }, this.permissions.readableRepoFilter(viewer)] };
    const [rows, total] = await Promise.all([
      this.prisma.repository.findMany({ where, include: { owner: true }, orderBy: { lowerName: 'asc' }, skip, take }),
      this.prisma.repository.count({ where }),
    ]);
    return { rows, total };
  }

  /** GET /repos/search (Gitea's SearchRepository options). */
  async search(viewer: User | null, o: SearchOptions) {
    const plain = searchSql(viewer, o);
    if (plain) return this.hot.repoPage(plain.where, plain.orderBy, o.skip, o.take);
    const and: Record<string, unknown>[] = [this.permissions.readableRepoFilter(viewer)];
    if (!o.includePrivate) and.push({ isPrivate: false });
    if (o.q) {
      // Gitea splits the keyword at commas; a topic search matches topic names exactly, a plain
      // one matches names, topics (and descriptions when asked) by substring.
      const words = o.q.split(',');
      if (o.topicOnly) {
        and.push({ repoTopics: { some: { topic: { name: { in: words.map((w) => w.toLowerCase()) } } } } });
      } else {
        const or: Record<string, unknown>[] = [];
        for (const w of words) {
          const lower = w.toLowerCase();
          or.push({ lowerName: { contains: lower } }, { repoTopics: { some: { topic: { name: { contains: lower } } } } });
          if (o.includeDesc) or.push({ description: { contains: w } });
        }
        and.push({ OR: or });
      }
    }
    if (o.uid) {
      const owned = { ownerId: o.uid };
      const collab = { NOT: owned, OR: this.permissions.grantedRepoFilters(o.uid) };
      if (o.mode === 'collaborative') and.push({ NOT: owned }, collab);
      else and.push(o.exclusive ? owned : { OR: [owned, collab] });
    }
    if (o.teamId) and.push({ teams: { some: { teamId: o.teamId } } });
    if (o.isPrivate !== undefined) and.push({ isPrivate: o.isPrivate });
    if (o.template !== undefined) and.push({ isTemplate: o.template });
    if (o.archived !== undefined) and.push({ isArchived: o.archived });
    if (o.mode === 'fork') and.push({ isFork: true });
    if (o.mode === 'source') and.push({ isFork: false, isMirror: false });
    if (o.mode === 'mirror') and.push({ isMirror: true });
    const where = { AND: and };
    const field = SORTS[o.sort || 'alpha'];
    const dir = (o.order || 'asc') as 'asc' | 'desc';
    const orderBy: Record<string, string>[] = [{ [field]: dir }];
    if (field !== 'id') orderBy.push({ id: 'asc' });
    if (!o.priorityOwnerId) {
      const [page, total] = await Promise.all([
        this.prisma.repository.findMany({ where, include: { owner: true }, orderBy, skip: o.skip, take: o.take }),
        this.prisma.repository.count({ where }),
      ]);
      return { rows: page, total };
    }
    const total = await this.prisma.repository.count({ where });
    // Gitea orders the priority owner's repositories first.
    const first = { AND: [...and, { ownerId: o.priorityOwnerId }] };
    const rest = { AND: [...and, { NOT: { ownerId: o.priorityOwnerId } }] };
    const nFirst = await this.prisma.repository.count({ where: first });
    let rows: RepoWithOwner[] = [];
    if (o.skip < nFirst) rows = await this.prisma.repository.findMany({ where: first, include: { owner: true }, orderBy, skip: o.skip, take: o.take });
    if (rows.length < o.take) {
      rows.push(
        ...(await this.prisma.repository.findMany({ where: rest, include: { owner: true }, orderBy, skip: Math.max(0, o.skip - nFirst), take: o.take - rows.length })),
      );
    }
    return { rows, total };
  }

  /** Access modes for many repositories at once, as their JSON shows them (lists). */
  async accessModes(viewer: User | null, repos: RepoWithOwner[]): Promise<RepoModes[]> {
    return this.permissions.repoPermissions(viewer, repos);
  }

  static isValidSort(sort: string): boolean {
    return sort in SORTS;
  }
}
