/**
 * Two-factor enrolment as Gitea offers it: a TOTP secret proposed to the user, enrolled once they
 * confirm it with a passcode from their authenticator, a scratch token shown once for signing in
 * without the authenticator (single use: Gitea replaces it with an unknown one when it is used),
 * regenerated or dropped with the enrolment on request.
 *
 * The forge keeps no web sessions, so the proposed secret travels in the enrolment form with a
 * proof: an HMAC, under the server's secret key, of the user's id and the secret. A form made on
 * another site cannot carry a valid proof for the signed-in user (it cannot read the forge's
 * page), which also makes the proof the form's CSRF token.
 */
import crypto from 'node:crypto';
import type { Prisma } from './database';
import { ConflictError, InvalidError, NotFoundError } from './errors';
import { loadProviderKey } from './oauth2/provider-key';
import type { User } from './records';
import { base32Encode, generateTotpSecret, verifyTotp } from './totp';

/** Where an account enrols (Gitea's path), and Gitea's words for an account that must first. */
export const TWO_FACTOR_ENROL_PATH = '/user/settings/security/two_factor/enroll';
export const TWO_FACTOR_REQUIRED_MESSAGE = 'You must set up two-factor authentication to get access to repositories, or try to log in again.';

/** Gitea's scratch token alphabet: base32 without the look-alikes 0, O, 1 and I. */
const SCRATCH_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

function scratchToken(): string {
  // 6 random bytes as base32 (10 characters), as Gitea makes them.
  return base32Encode(crypto.randomBytes(6), SCRATCH_ALPHABET);
}

/** PBKDF2-SHA256, 10,000 rounds, 50 bytes, hex: Gitea's scratch hash. */
const hashScratch = (token: string, salt: string) => crypto.pbkdf2Sync(token, salt, 10_000, 50, 'sha256').toString('hex');

export interface EnrolmentOffer {
  secret: string;
  /** The otpauth:// URI authenticator apps read (from a QR code or pasted). */
  uri: string;
  proof: string;
}

export class TwoFactorService {
  constructor(
    private readonly prisma: Prisma,
    private readonly issuer: string,
  ) {}

  isEnrolled(user: Pick<User, 'totpSecret'>): boolean {
    return !!user.totpSecret;
  }

  private async proofOf(userId: number, secret: string): Promise<string> {
    const { cookieKey } = await loadProviderKey(this.prisma);
    return crypto.createHmac('sha256', cookieKey).update(`two-factor-enrol\n${userId}\n${secret}`).digest('base64url');
  }

  /** A new secret to enrol (nothing is stored until the user confirms it). */
  async offer(user: User): Promise<EnrolmentOffer> {
    if (this.isEnrolled(user)) throw new ConflictError('two-factor authentication is already enrolled');
    const secret = generateTotpSecret();
    // Without colons: the label's separator.
    const issuer = this.issuer.replaceAll(':', '');
    const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(user.name)}`;
    const uri = `otpauth://totp/${label}?${new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: '6', period: '30' })}`;
    return { secret, uri, proof: await this.proofOf(user.id, secret) };
  }

  /** The offer again for a secret whose proof holds (a form sent back with a wrong passcode), else null. */
  async offerFor(user: User, secret: string, proof: string): Promise<EnrolmentOffer | null> {
    if (!(await this.proofHolds(user.id, secret, proof))) return null;
    const offer = await this.offer(user);
    return { ...offer, secret, uri: offer.uri.replace(/secret=[^&]*/, `secret=${secret}`), proof };
  }

  private async proofHolds(userId: number, secret: string, proof: string): Promise<boolean> {
    const expected = Buffer.from(await this.proofOf(userId, secret));
    const given = Buffer.from(proof);
    return expected.length === given.length && crypto.timingSafeEqual(expected, given);
  }

  /** Whether `passcode` is a current passcode of the user's authenticator (false when not enrolled). */
  async verifyPasscode(user: User, passcode: string): Promise<boolean> {
    return !!user.totpSecret && verifyTotp(user.totpSecret, passcode.trim());
  }

  /** Enrols the offered secret if the passcode matches it; returns the scratch token, shown once. */
  async enrol(user: User, secret: string, proof: string, passcode: string): Promise<string> {
    if (this.isEnrolled(user)) throw new ConflictError('two-factor authentication is already enrolled');
    if (!(await this.proofHolds(user.id, secret, proof))) throw new InvalidError('the enrolment form is not valid; start again');
    if (!verifyTotp(secret, passcode.trim())) throw new InvalidError('the passcode is not correct');
    const token = scratchToken();
    const salt = crypto.randomBytes(8).toString('hex').slice(0, 10);
    await this.prisma.$transaction([
      this.prisma.user.update({ where: { id: user.id }, data: { totpSecret: secret, totpLastUsed: null } }),
      this.prisma.twoFactorScratch.upsert({ where: { userId: user.id }, create: { userId: user.id, salt, hash: hashScratch(token, salt) }, update: { salt, hash: hashScratch(token, salt), updatedAt: new Date() } }),
    ]);
    return token;
  }

  /** A new scratch token for an enrolled user (the old one stops working). */
  async regenerateScratch(user: User): Promise<string> {
    if (!this.isEnrolled(user)) throw new NotFoundError('two-factor authentication is not enrolled');
    const token = scratchToken();
    const salt = crypto.randomBytes(8).toString('hex').slice(0, 10);
    await this.prisma.twoFactorScratch.upsert({ where: { userId: user.id }, create: { userId: user.id, salt, hash: hashScratch(token, salt) }, update: { salt, hash: hashScratch(token, salt), updatedAt: new Date() } });
    return token;
  }

  async disable(user: User): Promise<void> {
    if (!this.isEnrolled(user)) throw new NotFoundError('two-factor authentication is not enrolled');
    await this.prisma.$transaction([
      this.prisma.user.update({ where: { id: user.id }, data: { totpSecret: null, totpLastUsed: null } }),
      this.prisma.twoFactorScratch.deleteMany({ where: { userId: user.id } }),
    ]);
  }

  /**
   * The second factor of a web sign-in: a passcode of the authenticator, or the scratch token,
   * which is then replaced by one nobody knows (used once, as in Gitea). True when it verifies;
   * always true for a user without two-factor authentication.
   */
  async verifySecondFactor(user: User, code: string): Promise<boolean> {
    if (!user.totpSecret) return true;
    const given = code.trim();
    if (verifyTotp(user.totpSecret, given)) return true;
    if (!/^[A-Z2-9]{10}$/i.test(given)) return false;
    const row = await this.prisma.twoFactorScratch.findUnique({ where: { userId: user.id } });
    if (!row) return false;
    const a = Buffer.from(hashScratch(given.toUpperCase(), row.salt));
    const b = Buffer.from(row.hash);
    if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) return false;
    // Spent: a conditional update, so two sign-ins racing with the same token let one through.
    const salt = crypto.randomBytes(8).toString('hex').slice(0, 10);
    const spent = await this.prisma.twoFactorScratch.updateMany({ where: { userId: user.id, hash: row.hash }, data: { salt, hash: hashScratch(scratchToken(), salt), updatedAt: new Date() } });
    return spent.count === 1;
  }
}
