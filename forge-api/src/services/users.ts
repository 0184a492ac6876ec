/** Users (individuals): create, edit, rename, delete, look up, search; emails; public keys. */
import { dropUserStars } from './stars';
import { dropUserOAuth2 } from './oauth2/applications';
import crypto from 'node:crypto';
import { AlreadyExistsError, InvalidError, InvalidPasswordError, ValidationError } from './errors';
import { visibilityValue } from './convert';
import type { Prisma } from './database';
import { checkEmail, checkUserName } from './names';
import { emitUserChanged } from './events';
import { PasswordHasher } from './passwords';
import { USER_TYPE_INDIVIDUAL, USER_TYPE_ORGANIZATION } from './permissions';
import type { User } from './records';

export const MIN_PASSWORD_LENGTH = 8;

export interface CreateUserInput {
  username: string;
  email: string;
  password: string;
  full_name?: string;
  login_name?: string;
  source_id?: number;
  must_change_password?: boolean;
  restricted?: boolean;
  visibility?: string;
  admin?: boolean;
  created_at?: string;
}

/**
 * Only local accounts exist here (source 0): any other login source is Gitea's "does not
 * exist" (422), never stored.
 */
function checkLoginSource(sourceId: number | undefined): void {
  if (sourceId) throw new ValidationError(`login source does not exist [id: ${sourceId}]`);
}

export interface EditUserInput {
  login_name?: string;
  source_id?: number;
  active?: boolean;
  admin?: boolean;
  allow_create_organization?: boolean;
  allow_git_hook?: boolean;
  allow_import_local?: boolean;
  description?: string;
  email?: string;
  full_name?: string;
  location?: string;
  max_repo_creation?: number;
  must_change_password?: boolean;
  password?: string;
  prohibit_login?: boolean;
  restricted?: boolean;
  visibility?: string;
  website?: string;
}

import { isUniqueViolation } from './db-errors';
import { visibleOwnerTypes } from './permissions';
export { isUniqueViolation };

export class UserService {
  constructor(
    private readonly prisma: Prisma,
    private readonly passwords = new PasswordHasher(),
  ) {}

  /**
   * Whether `password` is the user's. A hash made with an older setting (PASSWORD_HASH_ALGO
   * changed since) is replaced by one with the current setting, as Gitea does at login.
   */
  async verifyPassword(user: User, password: string): Promise<boolean> {
    if (!(await this.passwords.verify(password, user.passwordHash))) return false;
    if (!this.passwords.isCurrent(user.passwordHash)) {
      const passwordHash = await this.passwords.hash(password);
      await this.prisma.user.updateMany({ where: { id: user.id, passwordHash: user.passwordHash }, data: { passwordHash } });
    }
    return true;
  }

  /** A user or organization by name (case-insensitive). */
  async findByName(name: string): Promise<User | null> {
    return this.prisma.user.findUnique({ where: { lowerName: name.toLowerCase() } });
  }

  /** Of these names, those of existing users and organizations, as spelled there (markup @mentions). */
  async existingNames(names: string[]): Promise<string[]> {
    const rows = await this.prisma.user.findMany({ where: { lowerName: { in: names.map((n) => n.toLowerCase()) } }, select: { name: true } });
    return rows.map((r) => r.name);
  }

  async findById(id: number): Promise<User | null> {
    return this.prisma.user.findUnique({ where: { id } });
  }

  async findIndividual(name: string): Promise<User | null> {
    const u = await this.findByName(name);
    return u && u.type === USER_TYPE_INDIVIDUAL ? u : null;
  }

  /** An individual user by an activated e-mail address of theirs (case-insensitive). */
  async findIndividualByEmail(email: string): Promise<User | null> {
    const row = await this.prisma.emailAddress.findUnique({ where: { lowerEmail: email.toLowerCase() }, select: { isActivated: true, user: true } });
    return row?.isActivated && row.user.type === USER_TYPE_INDIVIDUAL ? row.user : null;
  }

  async nameTaken(name: string): Promise<boolean> {
    const lower = name.toLowerCase();
    const [u, r] = await Promise.all([
      this.prisma.user.count({ where: { lowerName: lower } }),
      this.prisma.userRedirect.count({ where: { lowerName: lower } }),
    ]);
    return u + r > 0;
  }

  async emailTaken(email: string, exceptUserId?: number): Promise<boolean> {
    const row = await this.prisma.emailAddress.findUnique({ where: { lowerEmail: email.toLowerCase() } });
    return row !== null && row.userId !== exceptUserId;
  }

  checkPassword(password: string): void {
    if (password.length < MIN_PASSWORD_LENGTH) throw new InvalidPasswordError('PasswordIsRequired');
    if (password.length > 255) throw new InvalidPasswordError('PasswordComplexity');
  }

  async create(input: CreateUserInput): Promise<User> {
    checkLoginSource(input.source_id);
    checkUserName(input.username);
    checkEmail(input.email);
    this.checkPassword(input.password);
    const visibility = visibilityValue(input.visibility);
    if (input.visibility && visibility === undefined) throw new ValidationError(`[Visibility]: In`);
    if (await this.nameTaken(input.username)) throw new AlreadyExistsError(`user already exists [name: ${input.username}]`);
    if (await this.emailTaken(input.email)) throw new AlreadyExistsError(`e-mail already in use [email: ${input.email}]`);
    const passwordHash = await this.passwords.hash(input.password);
    try {
      return await this.prisma.user.create({
        data: {
          type: USER_TYPE_INDIVIDUAL,
          name: input.username,
          lowerName: input.username.toLowerCase(),
          email: input.email,
          fullName: input.full_name ?? '',
          loginName: input.login_name ?? input.username,
          loginSource: input.source_id ?? 0,
          passwordHash,
          mustChangePassword: input.must_change_password ?? true,
          isRestricted: input.restricted ?? false,
          isAdmin: input.admin ?? false,
          visibility: visibility ?? 0,
          createdAt: input.created_at ? new Date(input.created_at) : undefined,
          emails: { create: { email: input.email, lowerEmail: input.email.toLowerCase(), isPrimary: true, isActivated: true } },
        },
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AlreadyExistsError(`user already exists [name: ${input.username}]`);
      throw err;
    }
  }

  async edit(user: User, input: EditUserInput, doer: User): Promise<User> {
    // Gitea answers 500 here (its UpdateAuth error is not mapped); create's 422 is given instead.
    checkLoginSource(input.source_id);
    const data: Record<string, unknown> = {};
    if (input.email !== undefined && input.email !== '' && input.email !== user.email) {
      try {
        checkEmail(input.email);
      } catch {
        throw new InvalidError(`e-mail invalid [email: ${input.email}]`);
      }
      if (await this.emailTaken(input.email, user.id)) throw new AlreadyExistsError(`e-mail already in use [email: ${input.email}]`);
      data.email = input.email;
    }
    if (input.password !== undefined && input.password !== '') {
      this.checkPassword(input.password);
      data.passwordHash = await this.passwords.hash(input.password);
    }
    if (input.visibility !== undefined && input.visibility !== '') {
      const v = visibilityValue(input.visibility);
      if (v === undefined) throw new ValidationError('[Visibility]: In');
      data.visibility = v;
    }
    if (input.admin === false && user.isAdmin) {
      const admins = await this.prisma.user.count({ where: { isAdmin: true, type: USER_TYPE_INDIVIDUAL } });
      if (admins <= 1) throw new InvalidError('cannot remove the last admin');
    }
    const map: [keyof EditUserInput, string][] = [
      ['login_name', 'loginName'],
      ['source_id', 'loginSource'],
      ['active', 'isActive'],
      ['admin', 'isAdmin'],
      ['allow_create_organization', 'allowCreateOrganization'],
      ['allow_git_hook', 'allowGitHook'],
      ['allow_import_local', 'allowImportLocal'],
      ['description', 'description'],
      ['full_name', 'fullName'],
      ['location', 'location'],
      ['max_repo_creation', 'maxRepoCreation'],
      ['must_change_password', 'mustChangePassword'],
      ['prohibit_login', 'prohibitLogin'],
      ['restricted', 'isRestricted'],
      ['website', 'website'],
    ];
    for (const [from, to] of map) if (input[from] !== undefined) data[to] = input[from];
    void doer;
    const updated = await this.prisma.$transaction(async (tx) => {
      if (typeof data.email === 'string') {
        await tx.emailAddress.updateMany({ where: { userId: user.id, isPrimary: true }, data: { isPrimary: false } });
        await tx.emailAddress.deleteMany({ where: { userId: user.id, lowerEmail: data.email.toLowerCase() } });
        await tx.emailAddress.create({ data: { userId: user.id, email: data.email, lowerEmail: data.email.toLowerCase(), isPrimary: true } });
      }
      return tx.user.update({ where: { id: user.id }, data });
    });
    emitUserChanged(this.prisma, user.id);
    return updated;
  }

  /** Gitea refuses to delete users who still own repositories or organizations. */
  async delete(user: User, doer: User): Promise<void> {
    if (user.type !== USER_TYPE_INDIVIDUAL) throw new InvalidError('target is an organization');
    if (user.id === doer.id) throw new InvalidError('you cannot delete yourself');
    const repos = await this.prisma.repository.count({ where: { ownerId: user.id } });
    if (repos > 0) throw new InvalidError(`user still has ownership of repositories [uid: ${user.id}, count: ${repos}]`);
    const owned = await this.prisma.teamUser.count({ where: { userId: user.id, team: { authorize: 4 } } });
    if (owned > 0) throw new InvalidError(`user still has membership of organizations [uid: ${user.id}]`);
    if (user.isAdmin && (await this.prisma.user.count({ where: { isAdmin: true, type: USER_TYPE_INDIVIDUAL } })) <= 1) {
      throw new InvalidError('cannot delete the last admin');
    }
    // The user's stars go with the row; the starred repositories' stars_count must follow.
    await this.prisma.$transaction(async (tx) => {
      await dropUserStars(tx, user.id);
      await dropUserOAuth2(tx, user.id);
      await tx.twoFactorScratch.deleteMany({ where: { userId: user.id } });
      // Their follows go with the row too: the counters of the other side follow.
      await tx.user.updateMany({ where: { followers: { some: { userId: user.id } }, numFollowers: { gt: 0 } }, data: { numFollowers: { decrement: 1 } } });
      await tx.user.updateMany({ where: { following: { some: { followId: user.id } }, numFollowing: { gt: 0 } }, data: { numFollowing: { decrement: 1 } } });
      await tx.user.delete({ where: { id: user.id } });
    });
    emitUserChanged(this.prisma, user.id);
  }

  /** Renames a user or org; the old name keeps redirecting (UserRedirect). Disk moves are the caller's. */
  async rename(user: User, newName: string): Promise<void> {
    checkUserName(newName);
    if (newName.toLowerCase() !== user.lowerName && (await this.prisma.user.count({ where: { lowerName: newName.toLowerCase() } }))) {
      throw new AlreadyExistsError(`user already exists [name: ${newName}]`);
    }
    await this.prisma.$transaction(async (tx) => {
      await tx.userRedirect.deleteMany({ where: { lowerName: newName.toLowerCase() } });
      if (newName.toLowerCase() !== user.lowerName) {
        await tx.userRedirect.create({ data: { lowerName: user.lowerName, redirectUserId: user.id } });
      }
      await tx.user.update({ where: { id: user.id }, data: { name: newName, lowerName: newName.toLowerCase() } });
      await tx.repository.updateMany({ where: { ownerId: user.id }, data: { ownerName: newName } });
    });
    emitUserChanged(this.prisma, user.id);
  }

  /** Old name -> current user, for Gitea's redirects of renamed users. */
  async redirectTarget(name: string): Promise<User | null> {
    const r = await this.prisma.userRedirect.findUnique({ where: { lowerName: name.toLowerCase() }, include: { user: true } });
    return r?.user ?? null;
  }

  async list(where: Record<string, unknown>, skip: number, take: number) {
    const w = { type: USER_TYPE_INDIVIDUAL, ...where };
    const [rows, total] = await Promise.all([
      this.prisma.user.findMany({ where: w, orderBy: { lowerName: 'asc' }, skip, take }),
      this.prisma.user.count({ where: w }),
    ]);
    return { rows, total };
  }

  /** GET /users/search: keyword on name/full name/email, visible users only. */
  async search(viewer: User | null, q: string, uid: number | undefined, skip: number, take: number) {
    const where: Record<string, unknown> = { type: USER_TYPE_INDIVIDUAL, isActive: true };
    if (uid) where.id = uid;
    const visible = visibleOwnerTypes(viewer);
    if (visible.length < 3) where.visibility = { in: visible };
    if (q) {
      const lower = q.toLowerCase();
      where.OR = [{ lowerName: { contains: lower } }, { fullName: { contains: q } }];
    }
    const [rows, total] = await Promise.all([
      this.prisma.user.findMany({ where, orderBy: { lowerName: 'asc' }, skip, take }),
      this.prisma.user.count({ where }),
    ]);
    return { rows, total };
  }

  async emails(q: string, skip: number, take: number) {
    const where = q ? { OR: [{ lowerEmail: { contains: q.toLowerCase() } }, { user: { lowerName: { contains: q.toLowerCase() } } }] } : {};
    const [rows, total] = await Promise.all([
      this.prisma.emailAddress.findMany({ where, include: { user: true }, orderBy: [{ userId: 'asc' }, { id: 'asc' }], skip, take }),
      this.prisma.emailAddress.count({ where }),
    ]);
    return { rows, total };
  }

  async addPublicKey(user: User, input: { key: string; title: string; read_only?: boolean }) {
    const parsed = parsePublicKey(input.key);
    if (!parsed) throw new InvalidError('Unable to verify key content');
    if (await this.prisma.publicKey.count({ where: { fingerprint: parsed.fingerprint } })) {
      throw new AlreadyExistsError('Key content has been used as non-deploy key');
    }
    if (await this.prisma.publicKey.count({ where: { ownerId: user.id, name: input.title } })) {
      throw new AlreadyExistsError('Key title has been used');
    }
    return this.prisma.publicKey.create({
      // Gitea's AddPublicKey: a user's key acts with the user's own access; `read_only` is
      // accepted in the body (the option is shared with deploy keys) and ignored.
      data: { ownerId: user.id, name: input.title, content: parsed.content, fingerprint: parsed.fingerprint, mode: 2 },
    });
  }
}

const KEY_TYPES = new Set([
  'ssh-ed25519',
  'ssh-rsa',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
  'ssh-dss',
]);

/** OpenSSH authorized_keys line -> normalized content ("type base64") and SHA256 fingerprint. */
export function parsePublicKey(line: string): { content: string; fingerprint: string; type: string } | null {
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2 || !KEY_TYPES.has(parts[0])) return null;
  const blob = Buffer.from(parts[1], 'base64');
  if (blob.length < 8 || blob.toString('base64').replace(/=+$/, '') !== parts[1].replace(/=+$/, '')) return null;
  const len = blob.readUInt32BE(0);
  if (blob.subarray(4, 4 + len).toString() !== parts[0]) return null;
  const fingerprint = 'SHA256:' + crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
  return { content: `${parts[0]} ${parts[1]}`, fingerprint, type: parts[0] };
}

export { USER_TYPE_ORGANIZATION };
