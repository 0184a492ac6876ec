/** Site administration: cron task listing, unadopted repositories. */
import type { ForgeConfig } from '../config';
import type { Prisma } from './database';
import { listRepositoryDirs } from './git';
import { compileGlob, type Glob } from './glob';

export interface CronTaskInfo {
  name: string;
  schedule: string;
  next: string;
  prev: string;
  exec_times: number;
}

const DAY_MS = 24 * 3600 * 1000;

export class AdminService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
  ) {}

  /** NodeInfo's usage: individual users (all, active in the last month and half year), issues, comments. */
  async usage() {
    const now = Date.now();
    const users = (lastLoginAfter?: Date) => this.prisma.user.count({ where: { type: 0, ...(lastLoginAfter ? { lastLoginAt: { gte: lastLoginAfter } } : {}) } });
    return {
      users: { total: await users(), activeMonth: await users(new Date(now - 30 * DAY_MS)), activeHalfyear: await users(new Date(now - 182 * DAY_MS)) },
      localPosts: await this.prisma.issue.count(),
      localComments: await this.prisma.comment.count(),
    };
  }

  /**
   * The scheduled jobs this server runs: the rows of CronTask the scheduler keeps (a task
   * appears once the scheduler has registered it).
   */
  async cronTasks(): Promise<CronTaskInfo[]> {
    const rows = await this.prisma.cronTask.findMany({ orderBy: { name: 'asc' } });
    const t = (d: Date | null) => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : '0001-01-01T00:00:00Z');
    return rows.map((r) => ({ name: r.name, schedule: r.schedule, next: t(r.nextAt), prev: t(r.prevAt), exec_times: r.execTimes }));
  }

  /**
   * "owner/name" of every repository folder on disk without a database row (Gitea's unadopted).
   * The query is Gitea's: `<owner glob>[/<repo glob>]`, matched by the linear glob matcher (it
   * is user input); a glob that does not compile matches nothing.
   */
  /**
   * The folder name on disk of owner/name when it is a repository without a row (the case of
   * the path may differ from the folder's), else null: adopt and delete act only on these.
   */
  async unadoptedDir(ownerName: string, name: string): Promise<string | null> {
    const want = `${ownerName}/${name}`.toLowerCase();
    const dir = (await listRepositoryDirs(this.config.reposDir)).find((d) => d.fullName.toLowerCase() === want);
    if (!dir) return null;
    const row = await this.prisma.repository.findFirst({ where: { lowerName: name.toLowerCase(), owner: { lowerName: ownerName.toLowerCase() } }, select: { id: true } });
    return row ? null : dir.name;
  }

  async unadopted(query: string): Promise<string[]> {
    const dirs = await listRepositoryDirs(this.config.reposDir);
    const repos = await this.prisma.repository.findMany({ select: { ownerName: true, lowerName: true } });
    const known = new Set(repos.map((r) => `${r.ownerName.toLowerCase()}/${r.lowerName}`));
    let owner: Glob | null = null;
    let repo: Glob | null = null;
    if (query) {
      const slash = query.indexOf('/');
      try {
        owner = compileGlob(slash < 0 ? query : query.slice(0, slash));
        if (slash >= 0) repo = compileGlob(query.slice(slash + 1));
      } catch {
        return [];
      }
    }
    return dirs
      .map((d) => d.fullName)
      .filter((full) => !known.has(full.toLowerCase()))
      .filter((full) => {
        const [o, r] = full.split('/');
        return (!owner || owner.match(o)) && (!repo || repo.match(r));
      });
  }
}
