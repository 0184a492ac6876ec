/**
 * The provider's RS256 signing key and cookie secret: generated on the first start and kept in
 * the database (Gitea keeps its key in a file under the data directory), so that ID tokens
 * still verify and sessions survive after a restart, and every process of a cluster agrees.
 */
import crypto from 'node:crypto';
import type { JWK } from 'oidc-provider';
import type { Prisma } from '../database';
import { isUniqueViolation } from '../db-errors';

export interface ProviderKey {
  jwk: JWK;
  cookieKey: string;
}

const KEY_ROW = 1;

function generate(): { jwk: string; cookieKey: string } {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' }) as Record<string, string>;
  // kid: the RFC 7638 thumbprint, as Gitea names its key.
  const thumbprint = crypto
    .createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url');
  return { jwk: JSON.stringify({ ...jwk, kid: thumbprint, alg: 'RS256', use: 'sig' }), cookieKey: crypto.randomBytes(32).toString('base64url') };
}

export async function loadProviderKey(prisma: Prisma): Promise<ProviderKey> {
  let row = await prisma.oAuth2ProviderKey.findUnique({ where: { id: KEY_ROW } });
  if (!row) {
    try {
      row = await prisma.oAuth2ProviderKey.create({ data: { id: KEY_ROW, ...generate() } });
    } catch (err) {
      // Another process generated it first: use that one.
      if (!isUniqueViolation(err)) throw err;
      row = await prisma.oAuth2ProviderKey.findUniqueOrThrow({ where: { id: KEY_ROW } });
    }
  }
  return { jwk: JSON.parse(row.jwk) as JWK, cookieKey: row.cookieKey };
}
