/**
 * Repository and organization labels: colors accepted as #rgb, rgb, #rrggbb or rrggbb (stored
 * "#rrggbb", shown without '#'), exclusive scoped labels "scope/name". Duplicate names are
 * allowed, as in Gitea.
 */
import { dbId, idFromText } from '../ids';
import { InvalidError, NotFoundError, ValidationError } from '../errors';
import type { User } from '../records';
import type { TrackerContext } from './context';
import { labelScope, normalizeColor, type IssueConverter, type RepoWithOwner } from '../convert';
import { dropDuplicateExclusive } from './issues';
import { labelEvents } from './events';
import type { Issue, Label } from '../../../generated/prisma/client';
import type { Notifier } from '../notify/notifier';

export interface LabelInput {
  name?: string;
  color?: string;
  description?: string;
  exclusive?: boolean;
  is_archived?: boolean;
}

export type LabelOwner = { repo: RepoWithOwner } | { org: User };

function color(input: string): string {
  const c = normalizeColor(input);
  if (!c) throw new InvalidError(`bad color code: ${input}`);
  return c;
}

export class LabelService {
  constructor(
    private readonly ctx: TrackerContext,
    private readonly convert: IssueConverter,
    private readonly notifier: Notifier,
  ) {}

  private get prisma() {
    return this.ctx.prisma;
  }

  private whereOwner(owner: LabelOwner) {
    return 'repo' in owner ? { repoId: owner.repo.id } : { orgId: owner.org.id, repoId: null };
  }

  json(l: Label, owner: LabelOwner) {
    return 'repo' in owner ? this.convert.label(l, owner.repo) : this.convert.label(l, null, owner.org.name);
  }

  async list(owner: LabelOwner, sort: string | undefined, skip: number, take: number) {
    const where = this.whereOwner(owner);
    const orderBy =
      sort === 'reversealphabetically' ? [{ name: 'desc' as const }] : sort === 'leastissues' ? [{ numIssues: 'asc' as const }] : sort === 'mostissues' ? [{ numIssues: 'desc' as const }] : [{ name: 'asc' as const }];
    const [rows, total] = await Promise.all([
      this.prisma.label.findMany({ where, orderBy: [...orderBy, { id: 'asc' }], skip, take }),
      this.prisma.label.count({ where }),
    ]);
    return { data: rows.map((l) => this.json(l, owner)), total };
  }

  async find(owner: LabelOwner, id: number): Promise<Label> {
    const l = Number.isSafeInteger(id) ? await this.prisma.label.findFirst({ where: { id, ...this.whereOwner(owner) } }) : null;
    if (!l) throw new NotFoundError('not found', [`label does not exist [label_id: ${id}]`]);
    return l;
  }

  async create(owner: LabelOwner, input: LabelInput) {
    if (!input.name || !input.name.trim()) throw new ValidationError('[Name]: Required');
    if (input.color === undefined || input.color === '') throw new ValidationError('[Color]: Required');
    const row = await this.prisma.label.create({
      data: {
        ...('repo' in owner ? { repoId: owner.repo.id } : { orgId: owner.org.id }),
        name: input.name.trim(),
        color: color(input.color),
        description: input.description ?? '',
        exclusive: input.exclusive ?? false,
        archivedAt: input.is_archived ? new Date() : null,
      },
    });
    return this.json(row, owner);
  }

  async edit(owner: LabelOwner, id: number, input: LabelInput) {
    const l = await this.find(owner, id);
    const data: Record<string, unknown> = { updatedAt: new Date() };
    if (input.name !== undefined && input.name.trim() !== '') data.name = input.name.trim();
    if (input.color !== undefined && input.color !== '') data.color = color(input.color);
    if (input.description !== undefined) data.description = input.description;
    if (input.exclusive !== undefined) data.exclusive = input.exclusive;
    if (input.is_archived !== undefined) data.archivedAt = input.is_archived ? l.archivedAt ?? new Date() : null;
    return this.json(await this.prisma.label.update({ where: { id: l.id }, data }), owner);
  }

  async delete(owner: LabelOwner, id: number): Promise<void> {
    const l = await this.find(owner, id);
    await this.prisma.label.delete({ where: { id: l.id } });
  }

  // ---- labels on an issue ----

  /** The issue's labels, by name as Gitea lists them. */
  async ofIssue(repo: RepoWithOwner, issueId: number) {
    const rows = await this.prisma.issueLabel.findMany({ where: { issueId }, include: { label: true } });
    return rows.map((r) => r.label).sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id).map((l) => this.convert.label(l, repo));
  }

  /** Label ids or names -> labels of the repository or its organization (unknown ones: 422). */
  async resolve(repo: RepoWithOwner, items: (number | string)[]): Promise<Label[]> {
    const out: Label[] = [];
    for (const item of items) {
      const id = typeof item === 'number' ? dbId(item) : idFromText(item);
      const where = id !== undefined ? { id } : { name: item as string };
      const l = await this.prisma.label.findFirst({ where: { ...where, OR: [{ repoId: repo.id }, { orgId: repo.ownerId }] } });
      if (!l) throw new InvalidError(`label does not exist [label_id: ${item}]`);
      out.push(l);
    }
    return dropDuplicateExclusive(out);
  }

  /** Adds labels; an exclusive label replaces the issue's other labels of its scope. */
  async addToIssue(doer: User, repo: RepoWithOwner, issue: Issue, labels: Label[]) {
    const issueId = issue.id;
    const current = (await this.prisma.issueLabel.findMany({ where: { issueId }, include: { label: true } })).map((r) => r.label);
    const scopes = new Set(labels.filter((l) => l.exclusive && labelScope(l.name)).map((l) => labelScope(l.name)));
    const adding = new Set(labels.map((l) => l.id));
    const drop = current.filter((l) => !adding.has(l.id) && l.exclusive && scopes.has(labelScope(l.name))).map((l) => l.id);
    const have = new Set(current.map((l) => l.id));
    const now = new Date();
    const adds = labels.filter((l) => !have.has(l.id));
    // Each label added replaces the others of its exclusive scope first (Gitea's order of events).
    const dropped = new Set<number>();
    const changes: { labelId: number; added: boolean }[] = [];
    for (const l of adds) {
      const scope = l.exclusive ? labelScope(l.name) : '';
      for (const c of current) {
        if (scope && drop.includes(c.id) && !dropped.has(c.id) && labelScope(c.name) === scope) {
          dropped.add(c.id);
          changes.push({ labelId: c.id, added: false });
        }
      }
      changes.push({ labelId: l.id, added: true });
    }
    await this.prisma.$transaction([
      this.prisma.issueLabel.deleteMany({ where: { issueId, labelId: { in: drop } } }),
      this.prisma.issueLabel.createMany({ data: adds.map((l) => ({ issueId, labelId: l.id })) }),
      this.prisma.comment.createMany({ data: labelEvents(issue, doer.id, changes, now) }),
      this.prisma.issue.update({ where: { id: issueId }, data: { updatedAt: now } }),
    ]);
    await this.notifier.issueLabelsChanged(doer, repo, issue, false);
    return this.ofIssue(repo, issueId);
  }

  /** The issue's labels become `labels`: events for those added, then for those removed, each by id (as Gitea's ReplaceIssueLabels). */
  async replaceOnIssue(doer: User, repo: RepoWithOwner, issue: Issue, labels: Label[]) {
    const issueId = issue.id;
    const now = new Date();
    const current = new Set((await this.prisma.issueLabel.findMany({ where: { issueId }, select: { labelId: true } })).map((r) => r.labelId));
    const wanted = new Set(labels.map((l) => l.id));
    const byId = (a: number, b: number) => a - b;
    const changes = [
      ...[...wanted].filter((id) => !current.has(id)).sort(byId).map((labelId) => ({ labelId, added: true })),
      ...[...current].filter((id) => !wanted.has(id)).sort(byId).map((labelId) => ({ labelId, added: false })),
    ];
    await this.prisma.$transaction([
      this.prisma.issueLabel.deleteMany({ where: { issueId } }),
      this.prisma.issueLabel.createMany({ data: labels.map((l) => ({ issueId, labelId: l.id })) }),
      this.prisma.comment.createMany({ data: labelEvents(issue, doer.id, changes, now) }),
      this.prisma.issue.update({ where: { id: issueId }, data: { updatedAt: now } }),
    ]);
    await this.notifier.issueLabelsChanged(doer, repo, issue, false);
    return this.ofIssue(repo, issueId);
  }

  /** One label (`labelId`) or all of them (null, Gitea's ClearLabels). */
  async removeFromIssue(doer: User, repo: RepoWithOwner, issue: Issue, labelId: number | null): Promise<void> {
    if (labelId !== null) {
      const l = await this.prisma.label.findFirst({ where: { id: labelId, OR: [{ repoId: repo.id }, { orgId: repo.ownerId }] } });
      if (!l) throw new InvalidError(`label does not exist [label_id: ${labelId}]`);
    }
    // Clearing removes the labels in name order, one event each (Gitea's ClearIssueLabels).
    const removed = await this.prisma.issueLabel.findMany({ where: { issueId: issue.id, ...(labelId !== null ? { labelId } : {}) }, include: { label: true } });
    removed.sort((a, b) => a.label.name.localeCompare(b.label.name) || a.labelId - b.labelId);
    const now = new Date();
    await this.prisma.$transaction([
      this.prisma.issueLabel.deleteMany({ where: { issueId: issue.id, labelId: { in: removed.map((r) => r.labelId) } } }),
      this.prisma.comment.createMany({ data: labelEvents(issue, doer.id, removed.map((r) => ({ labelId: r.labelId, added: false })), now) }),
      this.prisma.issue.update({ where: { id: issue.id }, data: { updatedAt: now } }),
    ]);
    await this.notifier.issueLabelsChanged(doer, repo, issue, labelId === null);
  }
}
