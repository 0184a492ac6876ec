/**
 * Commit statuses (Gitea's commit_status): CI systems report a state per context on a commit;
 * the combined status of a commit is made of the newest status of each context. Numbered per
 * repository and commit (`index`, the `id` Gitea shows), announced to webhooks as `status`.
 */
import { createHash } from 'crypto';
import type { Prisma } from '../database';
import type { Converter } from '../convert';
import type { RepoWithOwner } from '../convert/repository';
import { ConflictError, NotFoundError } from '../errors';
import type { Notifier } from '../notify';
import type { User } from '../records';
import type { GitDataService } from './index';
import { goPathEscape, repoUrls } from './format';

export const COMMIT_STATUS_STATES = ['pending', 'success', 'error', 'failure', 'warning', 'skipped'] as const;

export interface CreateStatusInput {
  state: string;
  target_url?: string;
  description?: string;
  context?: string;
}

type StatusRow = {
  id: number;
  index: number;
  repoId: number;
  state: string;
  sha: string;
  targetUrl: string;
  description: string;
  context: string;
  contextHash: string;
  creatorId: number;
  createdAt: Date;
  updatedAt: Date;
};

/** Gitea's order names for status lists. */
const ORDERS: Record<string, { field: 'createdAt' | 'updatedAt' | 'index'; dir: 'asc' | 'desc' }> = {
  oldest: { field: 'createdAt', dir: 'asc' },
  recentupdate: { field: 'updatedAt', dir: 'desc' },
  leastupdate: { field: 'updatedAt', dir: 'asc' },
  leastindex: { field: 'index', dir: 'desc' },
  highestindex: { field: 'index', dir: 'asc' },
};

/** RFC 3339 to the second, as Gitea writes its unix timestamps. */
function seconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Gitea's combination: failure if any is error, failure or warning; success if every one is
 * success or skipped; pending otherwise (and for no statuses at all).
 */
export function combineStates(states: string[]): string {
  let ok = 0;
  for (const s of states) {
    if (s === 'error' || s === 'failure' || s === 'warning') return 'failure';
    if (s === 'success' || s === 'skipped') ok++;
  }
  return ok > 0 && ok === states.length ? 'success' : 'pending';
}

export class CommitStatusService {
  constructor(
    private readonly prisma: Prisma,
    private readonly rootUrl: string,
    private readonly convert: Converter,
    private readonly gitData: GitDataService,
    private readonly notifier: Notifier,
  ) {}

  /** The commit a ref names for /commits/{ref}/status(es): branch, tag, or an id of 7+ hex digits. */
  async resolveRef(repo: RepoWithOwner, ref: string): Promise<string> {
    const reader = this.gitData.reader(repo);
    const name = ref || repo.defaultBranch;
    if (!/[\0\n]/.test(name)) {
      for (const candidate of [`refs/heads/${name}`, `refs/tags/${name}`]) {
        const oid = await reader.resolveCommit(candidate);
        if (oid) return oid;
      }
      if (/^[0-9a-f]{7,64}$/.test(name)) {
        const oid = await reader.resolveCommit(name);
        if (oid) return oid;
      }
      // Gitea also answers for a ref with ~N / ^N suffixes (main~1).
      if (/[~^]/.test(name)) {
        const oid = await this.gitData.resolveCompareRef(repo, name);
        if (oid) return oid;
      }
    }
    throw new NotFoundError(`object does not exist [id: ${name}, rel_path: ]`);
  }

  async create(doer: User, repo: RepoWithOwner, sha: string, input: CreateStatusInput) {
    const commit = await this.gitData.findCommit(repo, sha);
    if (!commit) throw new NotFoundError(`object does not exist [id: ${sha}, rel_path: ]`);
    const context = (input.context ?? '').trim();
    const data = {
      repoId: repo.id,
      sha: commit.oid,
      state: input.state,
      targetUrl: (input.target_url ?? '').trim(),
      description: (input.description ?? '').trim(),
      context,
      contextHash: createHash('sha1').update(context).digest('hex'),
      creatorId: doer.id,
    };
    // Gitea keeps whole seconds: statuses of one second then list in the order they were made.
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    let row: StatusRow | null = null;
    for (let attempt = 0; attempt < 5 && !row; attempt++) {
      try {
        row = await this.prisma.$transaction(async (tx) => {
          const last = await tx.commitStatus.findFirst({ where: { repoId: repo.id, sha: commit.oid }, orderBy: { index: 'desc' }, select: { index: true } });
          return tx.commitStatus.create({ data: { ...data, index: (last?.index ?? 0) + 1, createdAt: now, updatedAt: now } });
        });
      } catch (err) {
        // Two reports on one commit at once took the same index: take the next one.
        if (attempt === 4) throw new ConflictError('commit status index is taken, try again');
        void err;
      }
    }
    const json = this.toJson(repo, row!, new Map([[doer.id, doer]]));
    await this.notifier.commitStatusCreated(doer, repo, { commit, status: row!, json });
    return json;
  }

  private async creators(rows: StatusRow[]): Promise<Map<number, User>> {
    const ids = [...new Set(rows.map((r) => r.creatorId))];
    const users = ids.length ? await this.prisma.user.findMany({ where: { id: { in: ids } } }) : [];
    return new Map(users.map((u) => [u.id, u as User]));
  }

  toJson(repo: RepoWithOwner, row: StatusRow, creators: Map<number, User>) {
    const creator = creators.get(row.creatorId);
    return {
      id: row.index,
      status: row.state,
      target_url: row.targetUrl,
      description: row.description,
      url: `${repoUrls(this.rootUrl, repo).api}/statuses/${goPathEscape(row.sha)}`,
      context: row.context,
      creator: creator ? this.convert.userPublic(creator) : null,
      created_at: seconds(row.createdAt),
      updated_at: seconds(row.createdAt),
    };
  }

  /** Every status of a commit id (no check that the commit exists, as Gitea). */
  async list(repo: RepoWithOwner, sha: string, q: { sort?: string; state?: string; skip: number; take: number }) {
    const where: Record<string, unknown> = { repoId: repo.id, sha };
    if (q.state && (COMMIT_STATUS_STATES as readonly string[]).includes(q.state)) where.state = q.state;
    const order = ORDERS[q.sort ?? ''] ?? { field: 'createdAt', dir: 'desc' };
    const [rows, total] = await Promise.all([
      this.prisma.commitStatus.findMany({ where, orderBy: [{ [order.field]: order.dir }, { id: 'asc' }], skip: q.skip, take: q.take }),
      this.prisma.commitStatus.count({ where }),
    ]);
    const creators = await this.creators(rows);
    return { data: rows.map((r) => this.toJson(repo, r, creators)), total };
  }

  /** The newest status of each context, newest context first, paged; and how many contexts. */
  async latest(repo: RepoWithOwner, sha: string, skip: number, take: number) {
    const where = { repoId: repo.id, sha };
    const groups = await this.prisma.commitStatus.groupBy({ by: ['contextHash'], where, _max: { index: true } });
    const indexes = groups.map((g) => g._max.index ?? 0).sort((a, b) => b - a);
    const page = indexes.slice(skip, skip + take);
    const rows = page.length ? await this.prisma.commitStatus.findMany({ where: { ...where, index: { in: page } }, orderBy: { id: 'asc' } }) : [];
    return { rows, total: indexes.length };
  }

  /** GET /commits/{ref}/status: Gitea's CombinedStatus of the page of newest statuses. */
  async combined(repo: RepoWithOwner, sha: string, repoJson: unknown, skip: number, take: number) {
    const { rows, total } = await this.latest(repo, sha, skip, take);
    const creators = await this.creators(rows);
    const api = repoUrls(this.rootUrl, repo).api;
    return {
      total,
      json: {
        state: rows.length ? combineStates(rows.map((r) => r.state)) : 'pending',
        sha,
        total_count: rows.length,
        statuses: rows.length ? rows.map((r) => this.toJson(repo, r, creators)) : null,
        repository: repoJson,
        commit_url: `${api}/commits/${goPathEscape(sha)}`,
        url: `${api}/commits/${goPathEscape(sha)}/status`,
      },
    };
  }
}
