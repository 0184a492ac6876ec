/**
 * Repository topics, as Gitea keeps them: one Topic row per name shared by repositories, a
 * RepoTopic row per (repository, topic), and the repository's sorted names copied into
 * Repository.topics so a repository's JSON needs no join. Every change rewrites that copy in
 * the same transaction. A topic's repo_count is counted from RepoTopic, so deleting a
 * repository (which cascades its RepoTopic rows) never leaves a stale count.
 */
import type { Prisma } from './database';
import { NotFoundError } from './errors';

/** Gitea's limits: at most 35 characters, 25 topics per repository. */
export const MAX_TOPIC_LENGTH = 35;
export const MAX_TOPICS_PER_REPO = 25;
const TOPIC_PATTERN = /^[a-z0-9][-.a-z0-9]*$/;

export function isValidTopic(name: string): boolean {
  return name.length <= MAX_TOPIC_LENGTH && TOPIC_PATTERN.test(name);
}

/** The normal form Gitea compares topics in: trimmed and lower case. */
export function normalizeTopic(name: string): string {
  return name.trim().toLowerCase();
}

/** Gitea's SanitizeAndValidateTopics: normalized, empty and repeated names dropped, split into valid and invalid. */
export function sanitizeTopics(names: readonly string[]): { valid: string[]; invalid: string[] } {
  const valid: string[] = [];
  const invalid: string[] = [];
  const seen = new Set<string>();
  for (const raw of names) {
    const name = normalizeTopic(raw);
    if (!name || seen.has(name)) continue;
    if (isValidTopic(name)) {
      valid.push(name);
      seen.add(name);
    } else {
      invalid.push(name);
    }
  }
  return { valid, invalid };
}

/** Repository.topics <-> a list of names. */
export function topicList(column: string): string[] {
  return column ? column.split(',') : [];
}

export interface TopicRecord {
  id: number;
  name: string;
  repoCount: number;
  createdAt: Date;
  updatedAt: Date;
}

type Tx = Parameters<Parameters<Prisma['$transaction']>[0]>[0];

export class TopicService {
  constructor(private readonly prisma: Prisma) {}

  /** One page of a repository's topic names, by name, and how many it has. */
  async listForRepo(repoId: number, skip: number, take: number): Promise<{ names: string[]; total: number }> {
    const where = { repos: { some: { repoId } } };
    const [rows, total] = await Promise.all([
      this.prisma.topic.findMany({ where, select: { name: true }, orderBy: { name: 'asc' }, skip, take }),
      this.prisma.topic.count({ where }),
    ]);
    return { names: rows.map((r) => r.name), total };
  }

  async countForRepo(repoId: number): Promise<number> {
    return this.prisma.repoTopic.count({ where: { repoId } });
  }

  /** Replaces the repository's topics by `names` (already sanitized and valid). */
  async replace(repoId: number, names: readonly string[]): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const current = await tx.repoTopic.findMany({ where: { repoId }, include: { topic: true } });
      const wanted = new Set(names);
      const have = new Set(current.map((rt) => rt.topic.name));
      const removed = current.filter((rt) => !wanted.has(rt.topic.name)).map((rt) => rt.topicId);
      if (removed.length > 0) {
        await tx.repoTopic.deleteMany({ where: { repoId, topicId: { in: removed } } });
        await tx.topic.updateMany({ where: { id: { in: removed } }, data: { updatedAt: new Date() } });
      }
      for (const name of names) if (!have.has(name)) await this.link(tx, repoId, name);
      await this.syncRepoColumn(tx, repoId);
    });
  }

  /** Adds one topic (valid, normalized); a topic the repository has already is left alone. */
  async add(repoId: number, name: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const existing = await tx.repoTopic.findFirst({ where: { repoId, topic: { name } } });
      if (existing) return;
      await this.link(tx, repoId, name);
      await this.syncRepoColumn(tx, repoId);
    });
  }

  /** Removes one topic from the repository; NotFound when it does not have it. */
  async remove(repoId: number, name: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const existing = await tx.repoTopic.findFirst({ where: { repoId, topic: { name } } });
      if (!existing) throw new NotFoundError('not found', [`topic is not exist [name: ${name}]`]);
      await tx.repoTopic.delete({ where: { repoId_topicId: { repoId, topicId: existing.topicId } } });
      await tx.topic.update({ where: { id: existing.topicId }, data: { updatedAt: new Date() } });
      await this.syncRepoColumn(tx, repoId);
    });
  }

  /**
   * GET /topics/search: topics whose name contains `keyword` (all of them when empty), most
   * used first, as Gitea orders by repo_count.
   */
  async search(keyword: string, skip: number, take: number): Promise<{ rows: TopicRecord[]; total: number }> {
    const where = keyword ? { name: { contains: keyword.toLowerCase() } } : {};
    const [rows, total] = await Promise.all([
      this.prisma.topic.findMany({
        where,
        include: { _count: { select: { repos: true } } },
        orderBy: [{ repos: { _count: 'desc' } }, { id: 'asc' }],
        skip,
        take,
      }),
      this.prisma.topic.count({ where }),
    ]);
    return { rows: rows.map(({ _count, ...t }) => ({ ...t, repoCount: _count.repos })), total };
  }

  private async link(tx: Tx, repoId: number, name: string): Promise<void> {
    const topic = await tx.topic.upsert({ where: { name }, create: { name }, update: { updatedAt: new Date() } });
    await tx.repoTopic.create({ data: { repoId, topicId: topic.id } });
  }

  private async syncRepoColumn(tx: Tx, repoId: number): Promise<void> {
    const rows = await tx.topic.findMany({ where: { repos: { some: { repoId } } }, select: { name: true }, orderBy: { name: 'asc' } });
    await tx.repository.update({ where: { id: repoId }, data: { topics: rows.map((r) => r.name).join(',') } });
  }
}
