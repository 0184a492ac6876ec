/**
 * Personal access tokens, stored as Gitea stores them: 40 lowercase hex characters shown once;
 * the row keeps a random salt, hex(PBKDF2-SHA256(token, salt, 10000, 50 bytes)) and the last
 * eight characters for lookup. Successful lookups are cached (bounded) so a token does not cost
 * a PBKDF2 per request; deleting a token drops it from the cache.
 */
import crypto from 'node:crypto';
import { AlreadyExistsError, InvalidError, NotFoundError, PermissionDeniedError } from './errors';
import type { Prisma } from './database';
import type { AccessToken, User } from './records';
import { eventsOf } from './events';
import { isUniqueViolation } from './db-errors';
import { canCreateChildScope, InvalidScopeError, parseScopes, scopeList, type ScopeSet } from './scopes';

const CACHE_SIZE = 256;
/** A verified token and its user are reused this long without a query (revocation through the
 * API and user changes through the services clear them at once). */
const HOT_TTL_MS = 2000;

export interface VerifiedToken {
  token: AccessToken;
  user: User;
  scopes: ScopeSet;
}

export function hashToken(token: string, salt: string): string {
  return crypto.pbkdf2Sync(token, salt, 10000, 50, 'sha256').toString('hex');
}

function randomSalt(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const bytes = crypto.randomBytes(10);
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
}

export class TokenService {
  /** sha256(token) -> token id */
  private cache = new Map<string, number>();
  /** sha256(token) -> verified result, for HOT_TTL_MS */
  private hot = new Map<string, { value: VerifiedToken; until: number }>();

  constructor(private readonly prisma: Prisma) {
    eventsOf(prisma).on('userChanged', (userId: number) => {
      for (const [k, v] of this.hot) if (v.value.user.id === userId) this.hot.delete(k);
    });
  }

  /**
   * `parent`: the scopes of the token that authenticated the request, when one did; the new
   * token may not be broader (Gitea 1.27) and stays public-only when the parent is.
   */
  async create(user: User, name: string, scopes: string[], parent: ScopeSet | null = null) {
    let set: ScopeSet;
    try {
      set = parseScopes(scopes);
    } catch (err) {
      if (err instanceof InvalidScopeError) throw new InvalidError(`invalid access token scope provided: ${err.message}`);
      throw err;
    }
    if (!scopeList(set).join(',')) throw new InvalidError('access token must have a scope');
    const usedName = () => new AlreadyExistsError('access token name has been used already');
    const exists = await this.prisma.accessToken.count({ where: { userId: user.id, name } });
    if (exists) throw usedName();
    if (parent) {
      if (!canCreateChildScope(parent, set)) throw new PermissionDeniedError('cannot create an access token with a broader scope than the authenticating token');
      if (parent.publicOnly) set.publicOnly = true;
    }
    const scope = scopeList(set).join(',');
    const secret = crypto.randomBytes(20).toString('hex');
    const salt = randomSalt();
    let row;
    try {
      row = await this.prisma.accessToken.create({
        data: { userId: user.id, name, tokenHash: hashToken(secret, salt), tokenSalt: salt, tokenLastEight: secret.slice(-8), scope },
      });
    } catch (err) {
      // Two requests with one name: the unique (user, name) index lets one through.
      if (isUniqueViolation(err)) throw usedName();
      throw err;
    }
    return { row, secret, scopes: scope.split(',') };
  }

  async list(userId: number, skip: number, take: number) {
    const [rows, total] = await Promise.all([
      this.prisma.accessToken.findMany({ where: { userId }, orderBy: { id: 'asc' }, skip, take }),
      this.prisma.accessToken.count({ where: { userId } }),
    ]);
    return { rows, total };
  }

  /**
   * The token a request presented in its Authorization header (GET / DELETE /token), with its
   * user: 404 "invalid access token" for any other credential (basic, a token in the query, a
   * signature or an OAuth2 grant), as Gitea reads the header only.
   */
  async presented(header: string | undefined, tokenId: number | null) {
    const bearer = header !== undefined && /^(token|bearer)\s+\S+$/i.test(header.trim());
    const row = bearer && tokenId !== null ? await this.prisma.accessToken.findUnique({ where: { id: tokenId }, include: { user: true } }) : null;
    if (!row) throw new NotFoundError('invalid access token');
    return { row, scopes: row.scope ? row.scope.split(',') : [] };
  }

  /** DELETE by numeric id or by name (422 when a name matches several, as Gitea). */
  async delete(userId: number, idOrName: string): Promise<void> {
    let id: number | null = null;
    if (/^\d{1,9}$/.test(idOrName)) {
      const row = await this.prisma.accessToken.findFirst({ where: { userId, id: Number(idOrName) } });
      id = row?.id ?? null;
    }
    if (id === null) {
      const rows = await this.prisma.accessToken.findMany({ where: { userId, name: idOrName } });
      if (rows.length > 1) throw new InvalidError(`multiple matches for token name '${idOrName}'`);
      id = rows[0]?.id ?? null;
    }
    if (id === null) throw new NotFoundError('not found', [`access token does not exist [id: 0, name: ${idOrName}]`]);
    await this.prisma.accessToken.delete({ where: { id } });
    for (const [k, v] of this.cache) if (v === id) this.cache.delete(k);
    for (const [k, v] of this.hot) if (v.value.token.id === id) this.hot.delete(k);
  }

  /** Resolves a presented token; null if it is not one of ours. */
  async verify(presented: string): Promise<VerifiedToken | null> {
    if (!/^[0-9a-f]{40}$/.test(presented)) return null;
    const key = crypto.createHash('sha256').update(presented).digest('hex');
    const hot = this.hot.get(key);
    if (hot && hot.until > Date.now()) return hot.value;
    const cachedId = this.cache.get(key);
    if (cachedId !== undefined) {
      const row = await this.prisma.accessToken.findUnique({ where: { id: cachedId }, include: { user: true } });
      if (row) {
        this.touch(row.id, row.lastUsedAt);
        return this.remember(key, { token: row, user: row.user, scopes: parseScopes(row.scope) });
      }
      this.cache.delete(key);
    }
    const candidates = await this.prisma.accessToken.findMany({ where: { tokenLastEight: presented.slice(-8) }, include: { user: true } });
    for (const row of candidates) {
      const expected = Buffer.from(row.tokenHash, 'hex');
      const actual = Buffer.from(hashToken(presented, row.tokenSalt), 'hex');
      if (expected.length === actual.length && crypto.timingSafeEqual(expected, actual)) {
        if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
        this.cache.set(key, row.id);
        this.touch(row.id, row.lastUsedAt);
        return this.remember(key, { token: row, user: row.user, scopes: parseScopes(row.scope) });
      }
    }
    return null;
  }

  private remember(key: string, value: VerifiedToken): VerifiedToken {
    if (this.hot.size >= CACHE_SIZE) this.hot.delete(this.hot.keys().next().value as string);
    this.hot.set(key, { value, until: Date.now() + HOT_TTL_MS });
    return value;
  }

  /** last_used_at, written at most once a minute per token to keep reads cheap. */
  private touch(id: number, last: Date | null): void {
    const now = new Date();
    if (last && now.getTime() - last.getTime() < 60_000) return;
    void this.prisma.accessToken.update({ where: { id }, data: { lastUsedAt: now, updatedAt: now } }).catch(() => undefined);
  }
}
