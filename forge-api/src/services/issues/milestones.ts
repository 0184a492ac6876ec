/** Milestones of a repository, with open/closed issue counts kept by IssueService.recountMilestone. */
import { idFromText } from '../ids';
import { NotFoundError, ValidationError } from '../errors';
import type { RepoCtx, TrackerContext } from './context';
import type { IssueConverter } from '../convert';
import { parseDate } from './issues';
import type { Milestone } from '../../../generated/prisma/client';

export interface MilestoneInput {
  title?: string;
  description?: string;
  state?: string;
  due_on?: string | null;
}

export class MilestoneService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly convert: IssueConverter,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  /** state omitted = all (Gitea's handler, whatever its swagger says); name = case-insensitive match. */
  async list(rc: RepoCtx, state: string | undefined, name: string | undefined, skip: number, take: number) {
    const where: Record<string, unknown> = { repoId: rc.repo.id };
    if (state === 'open') where.isClosed = false;
    else if (state === 'closed') where.isClosed = true;
    let rows = await this.prisma.milestone.findMany({ where, orderBy: [{ deadline: { sort: 'asc', nulls: 'last' } }, { id: 'asc' }] });
    if (name) rows = rows.filter((m) => m.name.toLowerCase() === name.toLowerCase());
    return { data: rows.slice(skip, skip + take).map((m) => this.convert.milestone(m)), total: rows.length };
  }

  /** By id, or by name when the path segment is not a number. */
  async find(rc: RepoCtx, idOrName: string): Promise<Milestone> {
    const id = idFromText(idOrName);
    const m = id !== undefined
      ? await this.prisma.milestone.findFirst({ where: { id, repoId: rc.repo.id } })
      : (await this.prisma.milestone.findMany({ where: { repoId: rc.repo.id } })).find((x) => x.name.toLowerCase() === idOrName.toLowerCase()) ?? null;
    if (!m) throw new NotFoundError('not found', [`milestone does not exist [id: 0, repo_id: ${rc.repo.id}, name: ${idOrName}]`]);
    return m;
  }

  private state(value: string | undefined): boolean | undefined {
    if (value === undefined || value === '') return undefined;
    if (value !== 'open' && value !== 'closed') throw new ValidationError('[State]: In');
    return value === 'closed';
  }

  async create(rc: RepoCtx, input: MilestoneInput) {
    if (!input.title || !input.title.trim()) throw new ValidationError('[Title]: Required');
    const closed = this.state(input.state) ?? false;
    const now = new Date();
    const m = await this.prisma.milestone.create({
      data: { repoId: rc.repo.id, name: input.title.trim(), content: input.description ?? '', deadline: parseDate(input.due_on ?? undefined, 'Deadline') ?? null, isClosed: closed, closedAt: closed ? now : null, createdAt: now, updatedAt: now },
    });
    await this.recountRepo(rc.repo.id);
    return this.convert.milestone(m);
  }

  async edit(rc: RepoCtx, idOrName: string, input: MilestoneInput) {
    const m = await this.find(rc, idOrName);
    const data: Record<string, unknown> = { updatedAt: new Date() };
    if (input.title !== undefined && input.title.trim() !== '') data.name = input.title.trim();
    if (input.description !== undefined) data.content = input.description;
    if (input.due_on !== undefined) data.deadline = input.due_on ? parseDate(input.due_on, 'Deadline') : null;
    const closed = this.state(input.state);
    if (closed !== undefined && closed !== m.isClosed) {
      data.isClosed = closed;
      data.closedAt = closed ? new Date() : null;
    }
    const updated = await this.prisma.milestone.update({ where: { id: m.id }, data });
    await this.recountRepo(rc.repo.id);
    return this.convert.milestone(updated);
  }

  async delete(rc: RepoCtx, idOrName: string): Promise<void> {
    const m = await this.find(rc, idOrName);
    await this.prisma.milestone.delete({ where: { id: m.id } });
    await this.recountRepo(rc.repo.id);
  }

  private async recountRepo(repoId: number): Promise<void> {
    const [all, closed] = await Promise.all([
      this.prisma.milestone.count({ where: { repoId } }),
      this.prisma.milestone.count({ where: { repoId, isClosed: true } }),
    ]);
    await this.prisma.repository.update({ where: { id: repoId }, data: { numMilestones: all, numClosedMilestones: closed } });
  }
}
