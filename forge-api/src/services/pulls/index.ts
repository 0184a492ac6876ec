/** Pull requests: the service, the background checker and the listener that feeds it pushes. */
import type { ForgeConfig } from '../../config';
import type { Converter } from '../convert';
import type { Prisma } from '../database';
import type { TrackerServices } from '../issues';
import type { NotifyListener, RepoWithOwner } from '../notify/notifier';
import type { PermissionService } from '../permissions';
import type { RepoService } from '../repos';
import type { ForkService } from '../forks';
import type { PushedRef } from '../git/push';
import { ZERO_SHA } from '../git/push';
import type { User } from '../records';
import { PullChecker } from './checker';
import { PullService } from './pulls';

export interface PullServices {
  pulls: PullService;
  checker: PullChecker;
}

/** Queues the open pull requests of a pushed branch (as base or head) for a check. */
export class PullPushListener implements NotifyListener {
  constructor(private readonly services: PullServices) {}

  async pushed(_pusher: User, repo: RepoWithOwner, ref: PushedRef): Promise<void> {
    if (!ref.ref.startsWith('refs/heads/') || ref.after === ZERO_SHA) return;
    const ids = await this.services.pulls.affectedByPush(repo.id, ref.ref.slice('refs/heads/'.length));
    await this.services.checker.enqueue(ids);
  }
}

export function createPullServices(
  prisma: Prisma,
  _config: ForgeConfig,
  deps: { convert: Converter; permissions: PermissionService; repos: RepoService; forks: ForkService; tracker: TrackerServices; logError(err: unknown, what: string): void },
): PullServices {
  const diskPath = (r: RepoWithOwner) => deps.repos.diskPath(r.owner.name, r.name);
  const checker = new PullChecker({
    prisma,
    repoPath: async (id) => {
      const r = await deps.repos.byId(id);
      return r ? diskPath(r) : null;
    },
    onError: deps.logError,
  });
  const pulls = new PullService({
    prisma,
    issues: deps.tracker.issues,
    labels: deps.tracker.labels,
    convert: deps.convert,
    issueConvert: deps.tracker.convert,
    permissions: deps.permissions,
    checker,
    repoByName: (o, n) => deps.repos.findByOwnerAndName(o, n),
    repoById: (id) => deps.repos.byId(id),
    diskPath,
    withParent: (r) => deps.forks.withParent(r),
  });
  return { pulls, checker };
}

export { PullStatus } from './git';
