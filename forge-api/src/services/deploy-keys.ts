/**
 * Deploy keys (GET/POST /repos/{owner}/{repo}/keys, GET/DELETE .../keys/{id}), Gitea's model:
 * one PublicKey row of kind "deploy" per key content (its fingerprint unique among ALL keys, so
 * a user's key cannot become a deploy key and the reverse), and one DeployKey row per
 * repository it is granted to, read-only (mode 1) or read-write (mode 2). The key row goes
 * when its last grant does.
 */
import type { Prisma } from './database';
import { AlreadyExistsError, InvalidError, NotFoundError } from './errors';
import type { RepoWithOwner } from './repos';
import type { User } from './records';
import { parsePublicKey } from './users';

export interface DeployKeyRow {
  id: number;
  keyId: number;
  repoId: number;
  name: string;
  fingerprint: string;
  mode: number;
  createdAt: Date;
  content: string;
}

export class DeployKeyService {
  constructor(private readonly prisma: Prisma) {}

  private async withContent(rows: { id: number; keyId: number; repoId: number; name: string; fingerprint: string; mode: number; createdAt: Date }[]): Promise<DeployKeyRow[]> {
    const keys = await this.prisma.publicKey.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.keyId))] } }, select: { id: true, content: true } });
    const content = new Map(keys.map((k) => [k.id, k.content]));
    return rows.map((r) => ({ ...r, content: content.get(r.keyId) ?? '' }));
  }

  async list(repo: RepoWithOwner, filter: { keyId?: number; fingerprint?: string }, skip: number, take: number) {
    const where: Record<string, unknown> = { repoId: repo.id };
    if (filter.keyId) where.keyId = filter.keyId;
    if (filter.fingerprint) where.fingerprint = filter.fingerprint;
    const [rows, total] = await Promise.all([
      this.prisma.deployKey.findMany({ where, orderBy: { id: 'asc' }, skip, take }),
      this.prisma.deployKey.count({ where }),
    ]);
    return { rows: await this.withContent(rows), total };
  }

  async get(repo: RepoWithOwner, id: number): Promise<DeployKeyRow> {
    const row = await this.prisma.deployKey.findUnique({ where: { id } });
    if (!row || row.repoId !== repo.id) throw new NotFoundError('not found', [`deploy key does not exist [id: ${id}]`]);
    return (await this.withContent([row]))[0];
  }

  async add(doer: User, repo: RepoWithOwner, input: { title: string; key: string; read_only?: boolean }): Promise<DeployKeyRow> {
    const parsed = parsePublicKey(input.key);
    if (!parsed) throw new InvalidError('Invalid key content: invalid key format');
    // Gitea keeps the line as sent (with its comment).
    const content = input.key.trim().split(/\s+/).join(' ');
    const mode = input.read_only ? 1 : 2;
    return this.prisma.$transaction(async (tx) => {
      let key = await tx.publicKey.findFirst({ where: { fingerprint: parsed.fingerprint } });
      if (key && key.kind !== 'deploy') throw new AlreadyExistsError('Key content has been used as non-deploy key');
      if (key && (await tx.deployKey.count({ where: { keyId: key.id, repoId: repo.id } }))) {
        throw new AlreadyExistsError('This key has already been added to this repository');
      }
      if (await tx.deployKey.count({ where: { repoId: repo.id, name: input.title } })) throw new AlreadyExistsError('A key with the same name already exists');
      if (!key) {
        key = await tx.publicKey.create({
          data: { ownerId: doer.id, name: input.title, content, fingerprint: parsed.fingerprint, mode, kind: 'deploy', keyType: 'deploy' },
        });
      }
      const row = await tx.deployKey.create({ data: { keyId: key.id, repoId: repo.id, name: input.title, fingerprint: key.fingerprint, mode } });
      return { ...row, content: key.content };
    });
  }

  /** Gitea's DeleteDeployKey: a missing id is not an error. */
  async remove(repo: RepoWithOwner, id: number): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const row = await tx.deployKey.findUnique({ where: { id } });
      if (!row) return;
      if (row.repoId !== repo.id) throw new NotFoundError('not found', [`deploy key ${id} does not belong to repository ${repo.id}`]);
      await tx.deployKey.delete({ where: { id } });
      if (!(await tx.deployKey.count({ where: { keyId: row.keyId } }))) await tx.publicKey.deleteMany({ where: { id: row.keyId, kind: 'deploy' } });
    });
  }
}
