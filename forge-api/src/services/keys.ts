/**
 * The signed-in user's SSH keys (GET/POST /user/keys, GET/DELETE /user/keys/{id}, GET
 * /users/{username}/keys) over the PublicKey rows; adding goes through UserService's
 * addPublicKey (the same validation as the admin route). Principal keys (names an SSH
 * certificate may carry, Gitea's KeyTypePrincipal) are stored beside them but never listed
 * as keys; they are what certificate-signed HTTP requests are matched against.
 */
import { AlreadyExistsError, InvalidError, NotFoundError, PermissionDeniedError } from './errors';
import type { Prisma } from './database';
import type { User } from './records';

export class KeyService {
  constructor(private readonly prisma: Prisma) {}

  async list(ownerId: number, fingerprint: string | undefined, skip: number, take: number) {
    const where: Record<string, unknown> = { ownerId, kind: 'user' };
    if (fingerprint) where.fingerprint = fingerprint;
    const [rows, total] = await Promise.all([
      this.prisma.publicKey.findMany({ where, orderBy: { id: 'asc' }, skip, take }),
      this.prisma.publicKey.count({ where }),
    ]);
    return { rows, total };
  }

  async getOwn(user: User, id: number) {
    const key = await this.prisma.publicKey.findFirst({ where: { id, kind: 'user' } });
    if (!key || (key.ownerId !== user.id && !user.isAdmin)) throw new NotFoundError('not found', [`public key does not exist [id: ${id}]`]);
    return key;
  }

  /** Gitea's DeletePublicKey: someone else's key is 403, a missing one 404. */
  async deleteOwn(user: User, id: number, asAdminFor?: User): Promise<void> {
    const key = await this.prisma.publicKey.findFirst({ where: { id, kind: 'user' } });
    if (!key) throw new NotFoundError('not found', [`public key does not exist [id: ${id}]`]);
    const owner = asAdminFor ?? user;
    if (key.ownerId !== owner.id) throw new PermissionDeniedError(`user does not have access to the key [user_id: ${user.id}, key_id: ${id}]`);
    await this.prisma.publicKey.delete({ where: { id } });
  }

  /** Registers an SSH certificate principal for a user (Gitea's AddPrincipalKey). */
  async addPrincipal(user: User, principal: string) {
    const p = principal.trim();
    if (!p || /\s/.test(p)) throw new InvalidError('invalid principal');
    if (await this.prisma.publicKey.count({ where: { kind: 'principal', content: p } })) throw new AlreadyExistsError('Key content has been used as non-deploy key');
    return this.prisma.publicKey.create({
      data: { ownerId: user.id, name: p, content: p, fingerprint: `principal:${p}`, kind: 'principal', keyType: 'principal' },
    });
  }
}
