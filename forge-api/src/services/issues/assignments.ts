/**
 * Adding and removing an issue's assignees by name (POST / DELETE /issues/{index}/assignees)
 * and checking whether someone could be assigned, as Gitea's issue_service.AddAssignees /
 * RemoveAssignees and CheckIssueAssignee: only repository writers change assignees; every
 * name must be a user (422); an added user must be assignable (IssueService.canBeAssigned, 403
 * otherwise) and must not have blocked the doer; users already assigned (added) or not
 * assigned (removed) are skipped. Each change is a timeline event; new assignees are notified.
 */
import { InvalidError, NotFoundError, PermissionDeniedError, withoutBody } from '../errors';
import { refuseIfBlocked } from '../blocks';
import type { Notifier } from '../notify';
import type { User } from '../records';
import type { RepoCtx, TrackerContext } from './context';
import type { IssueService } from './issues';
import type { Issue } from '../../../generated/prisma/client';

const userMissing = (name: string) => `user does not exist [uid: 0, name: ${name}]`;

export class IssueAssignmentService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly issues: IssueService,
    private readonly notifier: Notifier,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  /** Users by name, in the order given (Gitea's GetUserIDsByNames: an unknown name is 422). */
  private async usersNamed(names: string[]): Promise<User[]> {
    const wanted = [...new Set(names.map((n) => n.toLowerCase()))];
    const rows = wanted.length ? await this.prisma.user.findMany({ where: { lowerName: { in: wanted }, type: 0 } }) : [];
    const byName = new Map(rows.map((u) => [u.lowerName, u]));
    return names.map((name) => {
      const u = byName.get(name.toLowerCase());
      if (!u) throw new InvalidError(userMissing(name));
      return u;
    });
  }

  /** Adds (`add`) or removes the named assignees; the issue as Gitea's JSON afterwards. */
  async change(rc: RepoCtx & { doer: User }, issue: Issue, names: string[], add: boolean) {
    // Gitea answers a non-writer with a bare 403.
    if (!rc.canWrite) throw withoutBody(new PermissionDeniedError('user should have permission to write issue'));
    const users = await this.usersNamed(names);
    const current = new Set((await this.prisma.issueAssignee.findMany({ where: { issueId: issue.id }, select: { assigneeId: true } })).map((a) => a.assigneeId));
    const changed = [...new Map(users.filter((u) => current.has(u.id) !== add).map((u) => [u.id, u])).values()];
    if (add) {
      for (const u of changed) {
        await refuseIfBlocked(this.prisma, rc.doer, [u.id]);
        if (!(await this.issues.canBeAssigned(u, rc.repo))) throw new PermissionDeniedError(`user doesn't have access to repo [user_id: ${u.id}, repo_name: ${rc.repo.name}]`);
      }
    }
    const ids = changed.map((u) => u.id);
    await this.prisma.$transaction((tx) => this.issues.writeAssigneeChanges(tx, issue, rc.doer, add ? ids : [], add ? [] : ids));
    if (ids.length) await this.notifier.issueAssigneesChanged(rc.doer, rc.repo, issue, add ? ids : [], add ? [] : ids);
    const notified = add ? ids.filter((id) => id !== rc.doer.id) : [];
    if (notified.length) await this.notifier.issueAssigned(rc.doer, rc.repo, issue, notified);
    return this.issues.json(issue.id, rc.repo, rc.doer);
  }

  /** GET /issues/{index}/assignees/{assignee}: 404 unless the user could be assigned. */
  async check(rc: RepoCtx, name: string): Promise<void> {
    const u = await this.prisma.user.findUnique({ where: { lowerName: name.toLowerCase() } });
    if (!u) throw new NotFoundError(userMissing(name));
    if (!(await this.issues.canBeAssigned(u, rc.repo))) throw new NotFoundError();
  }
}
