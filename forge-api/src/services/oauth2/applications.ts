/**
 * OAuth2 applications a user registers (Gitea's /user/applications/oauth2): the clients of the
 * forge's OAuth2/OpenID provider. The client secret is shown once, at creation and each time an
 * edit regenerates it (as Gitea's API does); only its SHA-256 is stored: a secret is 32 random
 * bytes, so a fast hash loses nothing against guessing, and the provider can compare it.
 * Deleting an application deletes every grant, code and token issued to it.
 */
import crypto from 'node:crypto';
import type { Prisma } from '../database';
import { InvalidError, NotFoundError } from '../errors';
import { enabledBuiltins, type BuiltinApplication } from './builtin-applications';
import { base32Encode } from '../totp';

export interface OAuth2ApplicationRow {
  id: number;
  userId: number;
  name: string;
  clientId: string;
  clientSecretHash: string;
  confidentialClient: boolean;
  skipSecondaryAuthorization: boolean;
  redirectUris: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApplicationInput {
  name: string;
  redirectUris: string[];
  confidentialClient?: boolean;
  skipSecondaryAuthorization?: boolean;
}

/** What the provider needs to know about any client, registered or built in. */
export interface OAuth2Client {
  clientId: string;
  name: string;
  /** SHA-256 hex of the secret; null for public clients. */
  secretHash: string | null;
  confidential: boolean;
  skipSecondaryAuthorization: boolean;
  redirectUris: string[];
  builtin: boolean;
}

const LOWER_BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Gitea's secret format: `gto_` and 52 lowercase base32 characters (256 random bits). */
function newClientSecret(): string {
  return `gto_${base32Encode(crypto.randomBytes(32), LOWER_BASE32)}`;
}

export function hashClientSecret(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Gitea accepts http(s) URLs with a host (and the site's custom schemes, not configurable here). */
function invalidRedirectUri(uris: string[]): string | null {
  for (const u of uris) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(u);
    } catch {
      parsed = null;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || !parsed.hostname) return u;
  }
  return null;
}

/**
 * What goes with a deleted user (as Gitea's DeleteUser): their applications, everything issued
 * to those applications, and every grant and token the user gave any application.
 */
export async function dropUserOAuth2(tx: Pick<Prisma, 'oAuth2Application' | 'oAuth2ProviderRecord'>, userId: number): Promise<void> {
  const apps = await tx.oAuth2Application.findMany({ where: { userId }, select: { clientId: true } });
  await tx.oAuth2ProviderRecord.deleteMany({ where: { OR: [{ accountId: String(userId) }, { clientId: { in: apps.map((a) => a.clientId) } }] } });
  await tx.oAuth2Application.deleteMany({ where: { userId } });
}

export class OAuth2ApplicationService {
  private readonly builtins: BuiltinApplication[];

  constructor(
    private readonly prisma: Prisma,
    defaultApplications: readonly string[],
  ) {
    this.builtins = enabledBuiltins(defaultApplications);
  }

  async create(userId: number, input: ApplicationInput): Promise<{ row: OAuth2ApplicationRow; secret: string }> {
    const bad = invalidRedirectUri(input.redirectUris);
    if (bad !== null) throw new InvalidError(`invalid redirect URI: ${bad}`);
    const secret = newClientSecret();
    const row = await this.prisma.oAuth2Application.create({
      data: {
        userId,
        name: input.name,
        clientId: crypto.randomUUID(),
        clientSecretHash: hashClientSecret(secret),
        confidentialClient: input.confidentialClient ?? false,
        skipSecondaryAuthorization: input.skipSecondaryAuthorization ?? false,
        redirectUris: JSON.stringify(input.redirectUris),
      },
    });
    return { row, secret };
  }

  async list(userId: number, skip: number, take: number) {
    const [rows, total] = await Promise.all([
      this.prisma.oAuth2Application.findMany({ where: { userId }, orderBy: { id: 'asc' }, skip, take }),
      this.prisma.oAuth2Application.count({ where: { userId } }),
    ]);
    return { rows, total };
  }

  async get(userId: number, id: number): Promise<OAuth2ApplicationRow> {
    const row = await this.prisma.oAuth2Application.findFirst({ where: { id, userId } });
    if (!row) throw new NotFoundError('not found');
    return row;
  }

  /** Gitea's edit replaces every field and regenerates the secret, which the answer shows. */
  async update(userId: number, id: number, input: ApplicationInput): Promise<{ row: OAuth2ApplicationRow; secret: string }> {
    const bad = invalidRedirectUri(input.redirectUris);
    if (bad !== null) throw new InvalidError(`invalid redirect URI: ${bad}`);
    await this.get(userId, id);
    const secret = newClientSecret();
    const row = await this.prisma.oAuth2Application.update({
      where: { id },
      data: {
        name: input.name,
        clientSecretHash: hashClientSecret(secret),
        confidentialClient: input.confidentialClient ?? false,
        skipSecondaryAuthorization: input.skipSecondaryAuthorization ?? false,
        redirectUris: JSON.stringify(input.redirectUris),
        updatedAt: new Date(),
      },
    });
    return { row, secret };
  }

  /** Deletes the application and, with it, every grant, code, access and refresh token issued to it. */
  async delete(userId: number, id: number): Promise<void> {
    const row = await this.get(userId, id);
    await this.prisma.$transaction([
      this.prisma.oAuth2Application.delete({ where: { id: row.id } }),
      this.prisma.oAuth2ProviderRecord.deleteMany({ where: { clientId: row.clientId } }),
    ]);
  }

  /** A client of the provider by client id: an enabled built-in or a registered application. */
  async findClient(clientId: string): Promise<OAuth2Client | null> {
    const builtin = this.builtins.find((b) => b.clientId === clientId);
    if (builtin) {
      return { clientId, name: builtin.displayName, secretHash: null, confidential: false, skipSecondaryAuthorization: false, redirectUris: builtin.redirectUris, builtin: true };
    }
    const row = await this.prisma.oAuth2Application.findUnique({ where: { clientId } });
    if (!row) return null;
    return {
      clientId,
      name: row.name,
      secretHash: row.confidentialClient ? row.clientSecretHash : null,
      confidential: row.confidentialClient,
      skipSecondaryAuthorization: row.skipSecondaryAuthorization,
      redirectUris: JSON.parse(row.redirectUris) as string[],
      builtin: false,
    };
  }
}

/**
 * Gitea's redirect URI rule: an exact match, ignoring ASCII case and a trailing slash; for a
 * public client a loopback http URI also matches with its port left out (RFC 8252 7.3: native
 * apps listen on whatever port is free).
 */
export function redirectUriAllowed(client: Pick<OAuth2Client, 'confidential' | 'redirectUris'>, uri: string): boolean {
  const norm = (u: string) => u.toLowerCase().replace(/\/$/, '');
  const candidates = [uri];
  if (!client.confidential) {
    try {
      const parsed = new URL(uri);
      const host = parsed.hostname.replace(/^\[|\]$/g, '');
      const loopback = /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1';
      if (parsed.protocol === 'http:' && parsed.port !== '' && loopback) {
        parsed.port = '';
        candidates.push(parsed.toString());
      }
    } catch {
      // not a URL: only the exact comparison applies
    }
  }
  const registered = client.redirectUris.map(norm);
  return candidates.some((c) => registered.includes(norm(c)));
}
