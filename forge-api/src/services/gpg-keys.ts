/**
 * Users' OpenPGP keys as Gitea keeps them (models/asymkey): GET/POST /user/gpg_keys, GET/DELETE
 * /user/gpg_keys/{id}, GET /users/{username}/gpg_keys, the verification token and POST
 * /user/gpg_key_verify. Keys are parsed with OpenPGP.js. A key is stored as its primary key and
 * one row per subkey, each with Gitea's key id (16 upper-case hex digits), capabilities from
 * its algorithm, creation time and expiry (the primary user id's self-signature lifetime; a
 * subkey's own binding lifetime, else the primary's). Adding a key needs one of its user ids to
 * be an activated address of the user, unless a signature of the verification token comes
 * with it (then the key is verified); a key id can exist once on the whole forge.
 */
import crypto from 'node:crypto';
import * as openpgp from 'openpgp';
import { InvalidError, NotFoundError } from './errors';
import type { Prisma } from './database';
import type { User } from './records';
import { fmtTime } from './convert/common';
import type { GpgKey } from '../../generated/prisma/client';

/** OpenPGP.js algorithm names that can encrypt / sign (go-crypto's PublicKeyAlgorithm.CanEncrypt / CanSign). */
const ENCRYPTS = new Set(['rsaEncryptSign', 'rsaEncrypt', 'elgamal', 'ecdh', 'x25519', 'x448']);
const SIGNS = new Set(['rsaEncryptSign', 'rsaSign', 'dsa', 'ecdsa', 'eddsaLegacy', 'ed25519', 'ed448']);
/** Packet tags of a public key and a public subkey (RFC 4880 4.3). */
const PUBLIC_KEY_TAG = 6;
const PUBLIC_SUBKEY_TAG = 14;

const keyIdOf = (k: { getKeyID(): { toHex(): string } }) => k.getKeyID().toHex().toUpperCase();

/** A key packet with go-crypto's new-format header, base64: Gitea's Base64EncPubKey. */
function packetBase64(body: Uint8Array, tag: number): string {
  const n = body.length;
  const len = n < 192 ? [n] : n < 8384 ? [((n - 192) >> 8) + 192, (n - 192) & 0xff] : [0xff, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
  return Buffer.concat([Buffer.from([0xc0 | tag, ...len]), Buffer.from(body)]).toString('base64');
}

/** Go's time.RFC1123Z in UTC: "Mon, 02 Jan 2006 15:04:05 +0000". */
function rfc1123z(d: Date): string {
  return d.toUTCString().replace(/GMT$/, '+0000');
}

const INVALID_SIGNATURE = 'The provided GPG key, signature and token do not match or token is out of date. Provide a valid signature for the token: ';

export interface GpgKeyEmail {
  email: string;
  verified: boolean;
}

/** Gitea's structs.GPGKey. */
export interface GpgKeyJson {
  id: number;
  primary_key_id: string;
  key_id: string;
  public_key: string;
  emails: GpgKeyEmail[] | null;
  subkeys: GpgKeyJson[] | null;
  can_sign: boolean;
  can_encrypt_comms: boolean;
  can_encrypt_storage: boolean;
  can_certify: boolean;
  verified: boolean;
  created_at: string;
  expires_at: string;
}

export class GpgKeyService {
  constructor(private readonly prisma: Prisma) {}

  /**
   * Gitea's VerificationToken: a hash of the user and the current minute (`minutes` from now;
   * the previous token, minutes = 0, is accepted too, so a token stays good for a minute or two).
   */
  verificationToken(user: User, minutes = 1): string {
    const at = new Date(Math.floor(Date.now() / 60000) * 60000 + minutes * 60000);
    const created = new Date(Math.floor(user.createdAt.getTime() / 1000) * 1000);
    return crypto.createHash('sha256').update(`${rfc1123z(at)}:${rfc1123z(created)}:${user.name}:${user.email}:${user.id}`).digest('hex');
  }

  async list(ownerId: number, skip: number, take: number) {
    const where = { ownerId, primaryKeyId: '' };
    const [rows, total] = await Promise.all([this.prisma.gpgKey.findMany({ where, orderBy: { id: 'asc' }, skip, take }), this.prisma.gpgKey.count({ where })]);
    return { data: await this.toJson(rows), total };
  }

  /** A primary key of the owner by id (404 for anyone else's, as Gitea's GetGPGKeyForUserByID). */
  async get(owner: User, id: number) {
    const row = await this.prisma.gpgKey.findFirst({ where: { id, ownerId: owner.id } });
    if (!row) throw new NotFoundError();
    const [json] = await this.toJson([row]);
    return json;
  }

  /** Deleting a missing or foreign key is no error (Gitea's DeleteGPGKey answers 204). */
  async delete(owner: User, id: number): Promise<void> {
    const row = await this.prisma.gpgKey.findFirst({ where: { id, ownerId: owner.id } });
    if (!row) return;
    await this.prisma.gpgKey.deleteMany({ where: { OR: [{ keyId: row.keyId }, { primaryKeyId: row.keyId }] } });
  }

  private async parse(armored: string): Promise<openpgp.PublicKey[]> {
    try {
      return (await openpgp.readKeys({ armoredKeys: armored })).map((k) => k.toPublic());
    } catch (err) {
      throw new InvalidError(`failed to parse gpg key ${(err as Error).message}`);
    }
  }

  /** The key of `keys` that made `signature` over the token (as given, or with a line ending added). */
  private async signer(keys: openpgp.PublicKey[], token: string, signature: string, endings: string[]): Promise<string | null> {
    let sig: openpgp.Signature;
    try {
      sig = await openpgp.readSignature({ armoredSignature: signature });
    } catch {
      return null;
    }
    for (const ending of endings) {
      const message = await openpgp.createMessage({ binary: Buffer.from(token + ending) });
      const result = await openpgp.verify({ message, signature: sig, verificationKeys: keys });
      for (const s of result.signatures) {
        try {
          await s.verified;
          return s.keyID.toHex().toUpperCase();
        } catch {
          // Not this one: try the next signature or line ending.
        }
      }
    }
    return null;
  }

  /** POST /user/gpg_keys: the first key added, as Gitea's JSON. */
  async add(owner: User, armored: string, signature = '') {
    let keys = await this.parse(armored);
    let verified = false;
    if (signature) {
      const tokens = [this.verificationToken(owner, 1), this.verificationToken(owner, 0)];
      let signerId: string | null = null;
      for (const token of tokens) if (!signerId) signerId = await this.signer(keys, token, signature, ['', '\n', '\r\n']);
      if (!signerId) throw new InvalidError(INVALID_SIGNATURE + tokens[0]);
      keys = keys.filter((k) => keyIdOf(k) === signerId || k.subkeys.some((s) => keyIdOf(s) === signerId));
      verified = true;
    }
    const activated = await this.prisma.emailAddress.findMany({ where: { userId: owner.id, isActivated: true } });
    const byLower = new Map(activated.map((e) => [e.lowerEmail, e]));
    const rows: Omit<GpgKey, 'id' | 'addedAt'>[][] = [];
    for (const key of keys) {
      const keyId = keyIdOf(key);
      if (await this.prisma.gpgKey.count({ where: { keyId } })) throw new InvalidError('A key with the same id already exists');
      const live = key.users.filter((u) => u.userID && !u.revocationSignatures.length);
      const emails: GpgKeyEmail[] = [];
      for (const u of live) {
        const e = byLower.get((u.userID!.email ?? '').trim().toLowerCase());
        if (e && !emails.some((x) => x.email === e.email)) emails.push({ email: e.email, verified: e.isActivated });
      }
      if (!verified && !emails.length) {
        throw new NotFoundError(`None of the emails attached to the GPG key could be found. It may still be added if you provide a valid signature for the token: ${this.verificationToken(owner, 1)}`);
      }
      const selfSig = (live.find((u) => u.selfCertifications.some((s) => s.isPrimaryUserID)) ?? live[0])?.selfCertifications.at(-1);
      const created = key.keyPacket.created;
      const lifetime = selfSig?.keyExpirationTime ?? 0;
      const expiresAt = lifetime ? new Date(created.getTime() + lifetime * 1000) : null;
      const algo = key.getAlgorithmInfo().algorithm;
      const primary = {
        ownerId: owner.id, keyId, primaryKeyId: '', content: packetBase64(key.keyPacket.write(), PUBLIC_KEY_TAG), armored, emails: JSON.stringify(emails), verified,
        canSign: SIGNS.has(algo), canEncryptComms: ENCRYPTS.has(algo), canEncryptStorage: ENCRYPTS.has(algo), canCertify: SIGNS.has(algo), createdAt: created, expiresAt,
      };
      const subs = key.subkeys.map((s) => {
        const subAlgo = s.getAlgorithmInfo().algorithm;
        const subLifetime = s.bindingSignatures.at(-1)?.keyExpirationTime ?? 0;
        return {
          ownerId: owner.id, keyId: keyIdOf(s), primaryKeyId: keyId, content: packetBase64(s.keyPacket.write(), PUBLIC_SUBKEY_TAG), armored: '', emails: '[]', verified: false,
          canSign: SIGNS.has(subAlgo), canEncryptComms: ENCRYPTS.has(subAlgo), canEncryptStorage: ENCRYPTS.has(subAlgo), canCertify: SIGNS.has(subAlgo),
          createdAt: s.keyPacket.created, expiresAt: subLifetime ? new Date(s.keyPacket.created.getTime() + subLifetime * 1000) : expiresAt,
        };
      });
      rows.push([primary, ...subs]);
    }
    const ids = await this.prisma.$transaction(async (tx) => {
      const out: number[] = [];
      for (const group of rows) {
        const [primary, ...subs] = group;
        out.push((await tx.gpgKey.create({ data: primary })).id);
        for (const s of subs) await tx.gpgKey.create({ data: s });
      }
      return out;
    });
    return this.get(owner, ids[0]);
  }

  /** POST /user/gpg_key_verify: a signature of the token by the key (or a subkey) marks it verified. */
  async verify(owner: User, keyIdInput: string, signature: string) {
    const keyId = keyIdInput.replace(/^0+/, '');
    if (!keyId) throw new NotFoundError();
    // Gitea trims the given id's leading zeros and then compares it with the stored 16-digit id,
    // so a key whose id starts with 0 can never be verified there; both spellings find it here.
    const row = await this.prisma.gpgKey.findFirst({ where: { ownerId: owner.id, keyId: { in: [keyId, keyId.padStart(16, '0')] } } });
    const tokens = [this.verificationToken(owner, 1), this.verificationToken(owner, 0)];
    if (!row) throw new NotFoundError();
    const primary = row.primaryKeyId ? await this.prisma.gpgKey.findFirst({ where: { keyId: row.primaryKeyId } }) : row;
    const keys = primary?.armored ? await this.parse(primary.armored) : [];
    let signerId: string | null = null;
    for (const token of tokens) if (!signerId) signerId = await this.signer(keys, token, signature, ['', '\n', '\n\n']);
    if (!signerId) throw new InvalidError(INVALID_SIGNATURE + tokens[0]);
    const subIds = (await this.prisma.gpgKey.findMany({ where: { primaryKeyId: row.keyId }, select: { keyId: true } })).map((s) => s.keyId);
    if (signerId !== row.keyId && !subIds.includes(signerId)) throw new NotFoundError();
    await this.prisma.gpgKey.update({ where: { id: row.id }, data: { verified: true } });
    const [json] = await this.toJson([{ ...row, verified: true }]);
    return json;
  }

  /** Gitea's GPGKey JSON: a primary key with its subkeys (subkeys list no emails). */
  private async toJson(rows: GpgKey[]) {
    const subs = rows.length ? await this.prisma.gpgKey.findMany({ where: { primaryKeyId: { in: rows.map((r) => r.keyId) } }, orderBy: { id: 'asc' } }) : [];
    const one = (k: GpgKey): GpgKeyJson => ({
      id: k.id,
      primary_key_id: k.primaryKeyId,
      key_id: k.keyId,
      public_key: k.content,
      emails: k.primaryKeyId ? null : (JSON.parse(k.emails) as GpgKeyEmail[]),
      subkeys: k.primaryKeyId ? null : subs.filter((s) => s.primaryKeyId === k.keyId).map(one),
      can_sign: k.canSign,
      can_encrypt_comms: k.canEncryptComms,
      can_encrypt_storage: k.canEncryptStorage,
      can_certify: k.canSign,
      verified: k.verified,
      created_at: fmtTime(k.createdAt),
      expires_at: k.expiresAt ? fmtTime(k.expiresAt) : '0001-01-01T00:00:00Z',
    });
    return rows.map(one);
  }
}
