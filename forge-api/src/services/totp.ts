/**
 * TOTP (RFC 6238) through otplib's TOTP implementation (@otplib/totp, part of otplib) with
 * Node's crypto and a small base32 codec as plugins: otplib's default plugins (@noble/hashes,
 * @scure/base) are ESM-only, which jest in this CommonJS project cannot load.
 */
import crypto from 'node:crypto';
import { verifySync, generateSync } from '@otplib/totp';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * RFC 4648 base32 without padding; `alphabet` lets Gitea's other base32 forms (lower-case
 * client secrets, scratch tokens without look-alike characters) share the codec.
 */
export function base32Encode(data: Uint8Array, alphabet = ALPHABET): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of data) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Uint8Array {
  const clean = text.toUpperCase().replace(/=+$/, '').replace(/\s+/g, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const idx = ALPHABET.indexOf(ch);
    if (idx < 0) throw new Error('invalid base32');
    value = (value << 5) | idx;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

const nodeCrypto = {
  name: 'node',
  hmac(algorithm: string, key: Uint8Array, data: Uint8Array): Uint8Array {
    return new Uint8Array(crypto.createHmac(algorithm, key).update(data).digest());
  },
  randomBytes(length: number): Uint8Array {
    return new Uint8Array(crypto.randomBytes(length));
  },
  constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && crypto.timingSafeEqual(x, y);
  },
};

const base32 = { name: 'rfc4648', encode: base32Encode, decode: base32Decode };

/** A new base32 secret (160 bits, as authenticator apps expect). */
export function generateTotpSecret(): string {
  return base32Encode(crypto.randomBytes(20));
}

export function totpCode(secret: string, epochSeconds = Math.floor(Date.now() / 1000)): string {
  return generateSync({ secret, epoch: epochSeconds, crypto: nodeCrypto, base32 } as Parameters<typeof generateSync>[0]);
}

/** Valid for the current 30 s step and one step either side. */
export function verifyTotp(secret: string, code: string): boolean {
  if (!/^\d{6}$/.test(code)) return false;
  try {
    return verifySync({ secret, token: code, epochTolerance: 30, crypto: nodeCrypto, base32 } as Parameters<typeof verifySync>[0]).valid;
  } catch {
    return false;
  }
}
