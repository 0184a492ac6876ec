import crypto from 'node:crypto';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';

const pbkdf2 = promisify(crypto.pbkdf2);
const scrypt = promisify(crypto.scrypt) as (password: string, salt: string, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;

/**
 * Gitea's names for its password hash settings ([security] PASSWORD_HASH_ALGO) and the
 * parameters each stands for; a setting may also spell the parameters out ("pbkdf2$10000$50").
 * argon2 is not offered: Node 20's crypto has no argon2 and it would need a native module.
 */
const ALIASES: Record<string, string> = {
  pbkdf2: 'pbkdf2$50000$50',
  pbkdf2_v2: 'pbkdf2$50000$50',
  pbkdf2_v1: 'pbkdf2$10000$50',
  pbkdf2_hi: 'pbkdf2$320000$50',
  scrypt: 'scrypt$65536$16$2$50',
  bcrypt: 'bcrypt$10',
};

type Params = { kind: 'pbkdf2'; iterations: number; keyLength: number } | { kind: 'scrypt'; n: number; r: number; p: number; keyLength: number } | { kind: 'bcrypt'; cost: number };

function positive(text: string | undefined): number {
  const n = Number(text);
  return Number.isInteger(n) && n > 0 ? n : NaN;
}

function parseSetting(setting: string): Params {
  const spec = ALIASES[setting] ?? setting;
  const [kind, ...rest] = spec.split('$');
  const nums = rest.map(positive);
  const ok = (count: number) => nums.length === count && nums.every((n) => !Number.isNaN(n));
  if (kind === 'pbkdf2' && ok(2)) return { kind, iterations: nums[0], keyLength: nums[1] };
  if (kind === 'scrypt' && ok(4)) return { kind, n: nums[0], r: nums[1], p: nums[2], keyLength: nums[3] };
  if (kind === 'bcrypt' && ok(1) && nums[0] >= 4 && nums[0] <= 31) return { kind, cost: nums[0] };
  throw new Error(`PASSWORD_HASH_ALGO: unknown or malformed "${setting}" (one of ${Object.keys(ALIASES).join(', ')}, or e.g. pbkdf2$50000$50)`);
}

function paramsText(p: Params): string {
  if (p.kind === 'pbkdf2') return `pbkdf2$${p.iterations}$${p.keyLength}`;
  if (p.kind === 'scrypt') return `scrypt$${p.n}$${p.r}$${p.p}$${p.keyLength}`;
  return `bcrypt$${p.cost}`;
}

/**
 * Stored form: "<parameters>$<salt>$<hex key>" for pbkdf2 (SHA-256) and scrypt, as Gitea derives
 * them, and bcrypt's own "$2b$..." string. The parameters travel with each hash, so changing the
 * setting never locks anyone out: old hashes still verify and are replaced at the next login
 * (users.verifyPassword), as Gitea does.
 */
export class PasswordHasher {
  private readonly params: Params;
  readonly setting: string;

  constructor(setting = 'pbkdf2') {
    this.params = parseSetting(setting);
    this.setting = paramsText(this.params);
  }

  async hash(password: string): Promise<string> {
    const p = this.params;
    if (p.kind === 'bcrypt') return bcrypt.hash(password, p.cost);
    const salt = crypto.randomBytes(16).toString('hex');
    return `${this.setting}$${salt}$${(await derive(p, password, salt)).toString('hex')}`;
  }

  async verify(password: string, stored: string): Promise<boolean> {
    if (!stored) return false;
    if (stored.startsWith('$2')) return bcrypt.compare(password, stored);
    const parts = stored.split('$');
    const salt = parts[parts.length - 2];
    const hex = parts[parts.length - 1];
    let p: Params;
    try {
      p = parseSetting(parts.slice(0, -2).join('$'));
    } catch {
      return false;
    }
    if (p.kind === 'bcrypt' || !salt || !/^[0-9a-f]+$/.test(hex ?? '')) return false;
    const expected = Buffer.from(hex, 'hex');
    const actual = await derive({ ...p, keyLength: expected.length } as Params, password, salt);
    return actual.length === expected.length && crypto.timingSafeEqual(actual, expected);
  }

  /** Whether a stored hash was made with the current setting (else it is rehashed at login). */
  isCurrent(stored: string): boolean {
    if (stored.startsWith('$2')) return this.params.kind === 'bcrypt' && bcrypt.getRounds(stored) === this.params.cost;
    return stored.startsWith(`${this.setting}$`) && stored.split('$').length === this.setting.split('$').length + 2;
  }
}

async function derive(p: Params, password: string, salt: string): Promise<Buffer> {
  if (p.kind === 'pbkdf2') return pbkdf2(password, salt, p.iterations, p.keyLength, 'sha256');
  if (p.kind === 'scrypt') return scrypt(password, salt, p.keyLength, { N: p.n, r: p.r, p: p.p, maxmem: 256 * p.n * p.r + 1024 * 1024 });
  throw new Error('bcrypt hashes carry their own salt');
}
