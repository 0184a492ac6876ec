/**
 * GET /repos/issues/search: issues and pull requests of every repository the doer can read
 * (the one readable-repository rule, so a public-only token sees public ones only), newest
 * first, with Gitea's filters: `owner` (repositories that user or organization owns; unknown
 * is 400) and `team` (needs `owner`; the team's repositories), state, type, keyword, label and
 * milestone names (names of any repository; names that match nothing filter nothing, as
 * Gitea's look-up returns no ids then), created_by (unknown is 404), updated since / before,
 * and for a signed-in doer created / assigned / mentioned.
 */
import { InvalidError, NotFoundError } from '../errors';
import { ReviewType } from '../convert/pull-review';
import { CommentType } from './issues';
import { ReviewCommentType } from '../pulls/reviews';
import { readableRepoFilter, type Viewer } from '../permissions';
import type { TrackerContext } from './context';
import { keywordFilter, parseDate, type IssueService } from './issues';

export interface SearchIssuesQuery {
  state?: string;
  labels?: string;
  milestones?: string;
  q?: string;
  type?: string;
  since?: string;
  before?: string;
  assigned?: string;
  created?: string;
  mentioned?: string;
  review_requested?: string;
  reviewed?: string;
  owner?: string;
  team?: string;
  created_by?: string;
}

/** Go's strconv.ParseBool as Gitea's FormBool reads it: anything else is false. */
const formBool = (v: string | undefined) => v !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);

const names = (list: string | undefined) => (list ?? '').trim().split(',').filter((s) => s !== '');

export class IssueSearchService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly issues: IssueService,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  /** The repositories searched: readable, and owned by `owner` / given to `team` when named. */
  private async repoFilter(doer: Viewer | null, q: SearchIssuesQuery): Promise<Record<string, unknown>> {
    const and: Record<string, unknown>[] = [readableRepoFilter(doer)];
    if (q.owner) {
      const owner = await this.prisma.user.findUnique({ where: { lowerName: q.owner.toLowerCase() } });
      if (!owner) throw new InvalidError(`user does not exist [uid: 0, name: ${q.owner}]`);
      and.push({ ownerId: owner.id });
      if (q.team) {
        const team = await this.prisma.team.findFirst({ where: { orgId: owner.id, lowerName: q.team.toLowerCase() } });
        if (!team) throw new InvalidError(`team does not exist [org_id ${owner.id}, team_id 0, name ${q.team}]`);
        if (!team.includesAllRepositories) and.push({ teams: { some: { teamId: team.id } } });
      }
    } else if (q.team) {
      throw new InvalidError('owner organisation is required for filtering on team');
    }
    return { AND: and };
  }

  async search(doer: Viewer | null, q: SearchIssuesQuery, skip: number, take: number) {
    const since = parseDate(q.since, 'Since');
    const before = parseDate(q.before, 'Before');
    const and: Record<string, unknown>[] = [{ repo: await this.repoFilter(doer, q) }];
    const state = q.state ?? '';
    if (state === 'closed') and.push({ isClosed: true });
    else if (state !== 'all') and.push({ isClosed: false });
    if (q.type === 'issues') and.push({ isPull: false });
    else if (q.type === 'pulls') and.push({ isPull: true });
    const keyword = (q.q ?? '').trim();
    if (keyword) and.push(keywordFilter(this.ctx.provider, keyword));
    const labelNames = names(q.labels);
    if (labelNames.length) {
      const ids = (await this.prisma.label.findMany({ where: { name: { in: labelNames } }, select: { id: true } })).map((l) => l.id);
      if (ids.length) and.push({ labels: { some: { labelId: { in: ids } } } });
    }
    const milestoneNames = names(q.milestones).map((n) => n.toLowerCase());
    if (milestoneNames.length) {
      const all = await this.prisma.milestone.findMany({ select: { id: true, name: true } });
      const ids = all.filter((m) => milestoneNames.includes(m.name.toLowerCase())).map((m) => m.id);
      if (ids.length) and.push({ milestoneId: { in: ids } });
    }
    if (since) and.push({ updatedAt: { gte: since } });
    if (before) and.push({ updatedAt: { lte: before } });
    if (q.created_by) {
      const poster = await this.prisma.user.findUnique({ where: { lowerName: q.created_by.toLowerCase() } });
      if (!poster) throw new NotFoundError(`user does not exist [uid: 0, name: ${q.created_by}]`);
      and.push({ posterId: poster.id });
    }
    if (doer) {
      if (formBool(q.created)) and.push({ posterId: doer.id });
      if (formBool(q.assigned)) and.push({ assignees: { some: { assigneeId: doer.id } } });
      if (formBool(q.mentioned)) and.push({ body: { contains: `@${doer.name}` } });
      if (formBool(q.review_requested) || formBool(q.reviewed)) {
        const teamIds = (await this.prisma.teamUser.findMany({ where: { userId: doer.id }, select: { teamId: true } })).map((t) => t.teamId);
        const mine = { OR: [{ reviewerId: doer.id }, ...(teamIds.length ? [{ reviewerTeamId: { in: teamIds } }] : [])] };
        if (formBool(q.review_requested)) {
          // Gitea's rule: the latest approval, rejection or request of each reviewer (or team)
          // of the doer's is a pending request, on a pull request someone else opened.
          const rows = await this.prisma.review.findMany({
            where: { ...mine, type: { in: [ReviewType.Approve, ReviewType.Reject, ReviewType.Request] } },
            select: { id: true, issueId: true, reviewerId: true, reviewerTeamId: true, type: true },
            orderBy: { id: 'asc' },
          });
          const latest = new Map<string, (typeof rows)[number]>();
          for (const r of rows) latest.set(`${r.issueId}/${r.reviewerId}/${r.reviewerTeamId}`, r);
          const ids = [...new Set([...latest.values()].filter((r) => r.type === ReviewType.Request).map((r) => r.issueId))];
          and.push({ posterId: { not: doer.id } }, { id: { in: ids } });
        }
        if (formBool(q.reviewed)) {
          // Reviewed by the doer (or a team of theirs) or commented on by the doer, not opened by them.
          const reviewed = await this.prisma.review.findMany({ where: { ...mine, type: { not: ReviewType.Request } }, select: { issueId: true } });
          and.push(
            { posterId: { not: doer.id } },
            { OR: [{ id: { in: [...new Set(reviewed.map((r) => r.issueId))] } }, { comments: { some: { posterId: doer.id, type: { in: [CommentType.Comment, ReviewCommentType.Code, ReviewCommentType.Review] } } } }] },
          );
        }
      }
    }
    const where = { AND: and };
    const [rows, total] = await Promise.all([
      this.prisma.issue.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip, take, select: { id: true } }),
      this.prisma.issue.count({ where }),
    ]);
    return { data: await this.issues.toJsonMixed(rows.map((r) => r.id), doer), total };
  }
}
