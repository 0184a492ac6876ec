/**
 * Sign-in state of the forge's HTML pages (the sign-in form, its two-factor step and the OAuth2
 * consent page), kept in signed cookies rather than a session table: the pages need only "who
 * signed in, until when" and "who typed the right password and still owes a passcode".
 *
 * A cookie is `<user id>.<expiry>.<nonce>.<HMAC>` under the server's secret key (kept in the database
 * with the OAuth2 provider's key, so every process of a cluster agrees). The HMAC also covers a
 * stamp of the account's credentials (password hash and TOTP secret), so changing the password or
 * the two-factor enrolment signs every browser out without a session row to delete; signing out
 * ends one session by remembering its HMAC until the cookie would have expired.
 *
 * Forms are protected against cross-site submission twice: the browser's own statement
 * (Sec-Fetch-Site / Origin, the check Gitea 1.27 makes with Go's CrossOriginProtection), and a
 * token in the form that only a page of the forge can know: an HMAC of a random cookie. Gitea's
 * sign-in form has neither (it skips the cross-origin check for signed-out pages), which lets
 * another site sign a browser into the attacker's account; the forge refuses that too.
 */
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Prisma } from './database';
import type { User } from './records';
import type { UserService } from './users';
import { loadProviderKey } from './oauth2/provider-key';

/** Gitea's default session cookie name ([session] COOKIE_NAME). */
export const SESSION_COOKIE = 'i_like_gitea';
/** The password step is done, the passcode is owed (Gitea keeps this in its session as twofaUid). */
export const TWO_FACTOR_COOKIE = 'gitea_twofa';
export const CSRF_COOKIE = '_csrf';
/** The OAuth2 provider's own record of who signed in (oidc-provider's session cookie, and its signature). */
const PROVIDER_SESSION_COOKIES = ['_session', '_session.sig'];
/** The form field carrying the CSRF token (Gitea's name before 1.24). */
export const CSRF_FIELD = '_csrf';

/** A signed cookie's value: user id, expiry (Unix seconds), nonce, HMAC. */
const SIGNED_COOKIE = /^(\d{1,15})\.(\d{1,12})\.([\w-]{22})\.([\w-]{43})$/;

/** Gitea's [session] SESSION_LIFE_TIME default: a day. */
const SESSION_SECONDS = 86_400;
/** Long enough to open the authenticator app. */
const TWO_FACTOR_SECONDS = 300;

type Kind = 'session' | 'two-factor';

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/**
 * A local path to go to after signing in, or '/' (Gitea's RedirectToCurrentSite): never another
 * site, so the sign-in form cannot be used to send a signed-in browser elsewhere.
 */
export function localRedirect(to: string | null | undefined): string {
  if (!to || !to.startsWith('/') || to.startsWith('//') || to.startsWith('/\\') || /[\r\n]/.test(to)) return '/';
  return to;
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

export class WebSessionService {
  private key: Promise<string> | null = null;

  constructor(
    private readonly prisma: Prisma,
    private readonly users: UserService,
    private readonly secureCookies: boolean,
  ) {}

  private async mac(text: string): Promise<string> {
    this.key ??= loadProviderKey(this.prisma).then((k) => k.cookieKey);
    return crypto.createHmac('sha256', await this.key).update(text).digest('base64url');
  }

  private static stamp(user: User): string {
    return crypto.createHash('sha256').update(`${user.passwordHash}\n${user.totpSecret ?? ''}`).digest('base64url');
  }

  private setCookie(reply: FastifyReply, name: string, value: string, maxAgeSeconds: number | null): void {
    const attrs = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
    if (maxAgeSeconds !== null) attrs.push(`Max-Age=${maxAgeSeconds}`);
    // A cookie being removed: also a past expiry, for clients that do not read Max-Age=0 (curl's jar).
    if (maxAgeSeconds === 0) attrs.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
    if (this.secureCookies) attrs.push('Secure');
    // (Fastify adds each set-cookie value to those already set.)
    reply.header('set-cookie', attrs.join('; '));
  }

  private async issue(reply: FastifyReply, kind: Kind, user: User): Promise<void> {
    const seconds = kind === 'session' ? SESSION_SECONDS : TWO_FACTOR_SECONDS;
    const expires = Math.floor(Date.now() / 1000) + seconds;
    // The nonce makes every sign-in its own session (two in the same second are two), which
    // signing out ends alone.
    const nonce = crypto.randomBytes(16).toString('base64url');
    const mac = await this.mac(`${kind}\n${user.id}\n${expires}\n${nonce}\n${WebSessionService.stamp(user)}`);
    // A session cookie for the browser (gone when it closes); the expiry inside bounds it anyway.
    this.setCookie(reply, kind === 'session' ? SESSION_COOKIE : TWO_FACTOR_COOKIE, `${user.id}.${expires}.${nonce}.${mac}`, kind === 'session' ? null : seconds);
  }

  private async userOf(request: FastifyRequest, kind: Kind): Promise<User | null> {
    const value = readCookie(request, kind === 'session' ? SESSION_COOKIE : TWO_FACTOR_COOKIE);
    const m = value && SIGNED_COOKIE.exec(value);
    if (!m || Number(m[2]) * 1000 <= Date.now()) return null;
    const user = await this.users.findById(Number(m[1]));
    if (!user || !user.isActive || user.prohibitLogin) return null;
    const expected = Buffer.from(await this.mac(`${kind}\n${user.id}\n${m[2]}\n${m[3]}\n${WebSessionService.stamp(user)}`));
    const given = Buffer.from(m[4]);
    if (!(expected.length === given.length && crypto.timingSafeEqual(expected, given))) return null;
    if (kind === 'session' && (await this.prisma.signedOutSession.findUnique({ where: { mac: m[4] } }))) return null;
    return user;
  }

  /** The user signed in with this browser, or null. */
  signedInUser(request: FastifyRequest): Promise<User | null> {
    return this.userOf(request, 'session');
  }

  /** The user whose password was right and who still owes the second factor, or null. */
  pendingSecondFactor(request: FastifyRequest): Promise<User | null> {
    return this.userOf(request, 'two-factor');
  }

  /** Signs the browser in (and ends a pending two-factor step). */
  async signIn(reply: FastifyReply, user: User): Promise<void> {
    this.setCookie(reply, TWO_FACTOR_COOKIE, '', 0);
    await this.issue(reply, 'session', user);
  }

  /**
   * Signs the browser out, as Gitea destroys its session: the session cookie stops counting (its
   * MAC is remembered until it would have expired, so a copy of it is refused too), and the
   * browser forgets it, a pending two-factor step and the OAuth2 provider's session.
   */
  async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const m = SIGNED_COOKIE.exec(readCookie(request, SESSION_COOKIE) ?? '');
    const now = new Date();
    if (m && Number(m[2]) * 1000 > now.getTime()) {
      const expiresAt = new Date(Number(m[2]) * 1000);
      await this.prisma.signedOutSession.upsert({ where: { mac: m[4] }, create: { mac: m[4], expiresAt }, update: {} });
    }
    // What has expired needs no remembering.
    await this.prisma.signedOutSession.deleteMany({ where: { expiresAt: { lt: now } } });
    for (const name of [SESSION_COOKIE, TWO_FACTOR_COOKIE, ...PROVIDER_SESSION_COOKIES]) this.setCookie(reply, name, '', 0);
  }

  /** Remembers, for a few minutes, that this browser gave the right password of an enrolled account. */
  awaitSecondFactor(reply: FastifyReply, user: User): Promise<void> {
    return this.issue(reply, 'two-factor', user);
  }

  /**
   * The CSRF token for this browser's forms, setting its cookie on the reply when it has none
   * yet (the token is an HMAC of the cookie, so a page of another site can know neither).
   */
  async csrfToken(request: FastifyRequest, reply: FastifyReply): Promise<string> {
    let cookie = readCookie(request, CSRF_COOKIE);
    if (!cookie || !/^[\w-]{43}$/.test(cookie)) {
      cookie = crypto.randomBytes(32).toString('base64url');
      this.setCookie(reply, CSRF_COOKIE, cookie, null);
    }
    return this.mac(`csrf\n${cookie}`);
  }

  /**
   * Whether a form POST comes from a page of the forge: not announced as cross-site by the
   * browser, and carrying the token of this browser's CSRF cookie.
   */
  async formFromForge(request: FastifyRequest, form: URLSearchParams, rootUrl: string): Promise<boolean> {
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
    // Browsers without Fetch Metadata: the Origin they send must be the forge's.
    const origin = request.headers.origin;
    if (site === undefined && origin && origin !== new URL(rootUrl).origin && hostOf(origin) !== request.headers.host) return false;
    const cookie = readCookie(request, CSRF_COOKIE);
    const given = form.get(CSRF_FIELD) ?? '';
    if (!cookie || !given) return false;
    const expected = Buffer.from(await this.mac(`csrf\n${cookie}`));
    const actual = Buffer.from(given);
    return expected.length === actual.length && crypto.timingSafeEqual(expected, actual);
  }
}
