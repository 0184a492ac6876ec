/**
 * HTTP signatures (draft-cavage-http-signatures, as Gitea's services/auth/httpsign.go uses
 * through 42wim/httpsig): a request carrying a `Signature` header is signed with the private
 * half of an SSH key registered on the account (keyId = the key's SHA256 fingerprint), or with
 * the key of an SSH certificate sent in `X-Ssh-Certificate` (raw base64 of the certificate);
 * the certificate must be signed by a CA in SSH_TRUSTED_USER_CA_KEYS, be valid now, and name a
 * principal registered on the account. Unlike Gitea (which silently falls back to anonymous)
 * every failure is a 401 here, so a client learns its signature did not verify.
 *
 * Signed requests authenticate like an API token without scopes (Gitea's IsApiToken).
 */
import crypto from 'node:crypto';
import sshpk from 'sshpk';
import type { FastifyRequest } from 'fastify';
import { UnauthenticatedError } from './errors';
import type { Prisma } from './database';
import type { User } from './records';

/** Clock skew accepted on (created) and (expires). */
const SKEW_S = 30;

export interface ParsedSignature {
  keyId: string;
  algorithm: string;
  headers: string[];
  signature: Buffer;
  created?: number;
  expires?: number;
}

/** Parses `keyId="..",algorithm="..",headers="..",signature=".."` (also after "Signature "). */
export function parseSignatureHeader(value: string): ParsedSignature | null {
  const v = value.replace(/^signature\s+/i, '');
  const params: Record<string, string> = {};
  const re = /([a-zA-Z]+)=(?:"([^"]*)"|([0-9.]+))\s*(?:,\s*|$)/g;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(v)) !== null) {
    if (m.index !== consumed) return null;
    params[m[1]] = m[2] ?? m[3];
    consumed = re.lastIndex;
  }
  if (consumed !== v.length || !params.keyId || !params.signature) return null;
  const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
  const created = num(params.created);
  const expires = num(params.expires);
  if ((created !== undefined && !Number.isFinite(created)) || (expires !== undefined && !Number.isFinite(expires))) return null;
  return {
    keyId: params.keyId,
    algorithm: params.algorithm ?? '',
    headers: (params.headers ?? 'date').toLowerCase().split(/\s+/).filter(Boolean),
    signature: Buffer.from(params.signature, 'base64'),
    created,
    expires,
  };
}

/** The signing string of the draft: one `name: value` line per listed header. */
export function signingString(request: Pick<FastifyRequest, 'method' | 'url' | 'headers'>, sig: ParsedSignature): string | null {
  const lines: string[] = [];
  for (const h of sig.headers) {
    if (h === '(request-target)') lines.push(`(request-target): ${request.method.toLowerCase()} ${request.url}`);
    else if (h === '(created)') {
      if (sig.created === undefined) return null;
      lines.push(`(created): ${sig.created}`);
    } else if (h === '(expires)') {
      if (sig.expires === undefined) return null;
      lines.push(`(expires): ${sig.expires}`);
    } else {
      const value = request.headers[h];
      if (value === undefined) return null;
      lines.push(`${h}: ${Array.isArray(value) ? value.join(', ') : value}`);
    }
  }
  return lines.join('\n');
}

/** Left-pads a raw key part (sshpk may drop leading zero bytes of fixed-size ed25519 values). */
function pad(buf: Buffer, len: number): Buffer {
  return buf.length >= len ? buf.subarray(buf.length - len) : Buffer.concat([Buffer.alloc(len - buf.length), buf]);
}

/** A Node public key for an SSH key: ed25519 from its raw 32 bytes, others through PKCS#8. */
export function publicKeyObject(key: sshpk.Key): crypto.KeyObject {
  if (key.type === 'ed25519') {
    const a = (key.part as unknown as Record<string, { data: Buffer }>).A.data;
    return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pad(a, 32).toString('base64url') }, format: 'jwk' });
  }
  return crypto.createPublicKey(key.toString('pkcs8'));
}

/** Verifies with the algorithms the key type allows (Gitea ignores the `algorithm` field). */
export function verifyWithKey(key: sshpk.Key, data: string, signature: Buffer): boolean {
  let pub: crypto.KeyObject;
  try {
    pub = publicKeyObject(key);
  } catch {
    return false;
  }
  if (key.type === 'ed25519') return crypto.verify(null, Buffer.from(data), pub, signature);
  if (key.type === 'rsa') return ['sha1', 'sha256', 'sha512'].some((alg) => crypto.verify(alg, Buffer.from(data), pub, signature));
  return false;
}

function fail(msg: string): never {
  throw new UnauthenticatedError(msg);
}

export class HttpSignatureService {
  constructor(
    private readonly prisma: Prisma,
    /** Read at use time: the trusted CA keys (authorized_keys lines). */
    private readonly trustedCaKeys: () => string[],
  ) {}

  private checkTimes(sig: ParsedSignature): void {
    const now = Math.floor(Date.now() / 1000);
    if (sig.expires !== undefined && now > sig.expires + SKEW_S) fail('signature has expired');
    if (sig.created !== undefined && sig.created > now + SKEW_S) fail('signature created in the future');
  }

  /** The user a signed request authenticates as; throws 401 when anything does not verify. */
  async verify(request: FastifyRequest): Promise<User> {
    const header = request.headers.signature;
    const sig = typeof header === 'string' ? parseSignatureHeader(header) : null;
    if (!sig) fail('invalid http signature');
    const data = signingString(request, sig);
    if (data === null) fail('invalid http signature: a signed header is missing');
    this.checkTimes(sig);
    const certHeader = request.headers['x-ssh-certificate'];
    if (typeof certHeader === 'string' && certHeader) return this.verifyCertificate(certHeader, sig, data);
    return this.verifyKey(sig, data);
  }

  private async verifyKey(sig: ParsedSignature, data: string): Promise<User> {
    const row = await this.prisma.publicKey.findFirst({ where: { fingerprint: sig.keyId, kind: 'user' }, include: { owner: true } });
    if (!row) fail(`no public key found for keyid ${sig.keyId}`);
    let key: sshpk.Key;
    try {
      key = sshpk.parseKey(row.content, 'ssh');
    } catch {
      fail('stored public key cannot be parsed');
    }
    if (!verifyWithKey(key, data, sig.signature)) fail('http signature verification failed');
    await this.prisma.publicKey.update({ where: { id: row.id }, data: { updatedAt: new Date() } }).catch(() => undefined);
    return row.owner;
  }

  private async verifyCertificate(b64: string, sig: ParsedSignature, data: string): Promise<User> {
    const trusted = this.trustedCaKeys();
    if (!trusted.length) fail('ssh certificates are not accepted: no trusted user CA keys are configured');
    const blob = Buffer.from(b64, 'base64');
    if (blob.length < 8) fail('invalid ssh certificate');
    const typeLen = blob.readUInt32BE(0);
    const type = blob.subarray(4, 4 + typeLen).toString('latin1');
    if (!/-cert-v0\d@openssh\.com$/.test(type)) fail('no certificate found');
    let cert: sshpk.Certificate;
    try {
      cert = sshpk.parseCertificate(`${type} ${blob.toString('base64')}`, 'openssh');
    } catch {
      fail('invalid ssh certificate');
    }
    const cas = trusted.flatMap((line) => {
      try {
        return [sshpk.parseKey(line, 'ssh')];
      } catch {
        return [];
      }
    });
    if (!cas.some((ca) => cert.isSignedByKey(ca))) fail('certificate is not signed by a trusted CA');
    if (cert.isExpired(new Date())) fail('certificate has expired or is not yet valid');
    if (!verifyWithKey(cert.subjectKey, data, sig.signature)) fail('http signature verification failed');
    const principals = cert.subjects.map((s) => s.uid).filter((p): p is string => typeof p === 'string' && p !== '');
    for (const principal of principals) {
      const row = await this.prisma.publicKey.findFirst({ where: { kind: 'principal', content: principal }, include: { owner: true } });
      if (row) return row.owner;
    }
    return fail('no valid principal found');
  }
}
