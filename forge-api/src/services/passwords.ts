import bcrypt from 'bcryptjs';

/** bcrypt, cost 10: a strong KDF that needs no native module. */
const COST = 10;

export async function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, COST);
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  if (!hash) return false;
  return bcrypt.compare(password, hash);
}
