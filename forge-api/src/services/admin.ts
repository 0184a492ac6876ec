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

export class AdminService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
  ) {}

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
