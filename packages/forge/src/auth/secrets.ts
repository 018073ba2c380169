import { createHash, hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: string, keylen: number) => Promise<Buffer>;
const PASSWORD_KEY_LENGTH = 32;
export const PASSWORD_ALGORITHM = 'scrypt';

/** Hashes a password with scrypt and a fresh per-user salt. */
export async function hashPassword(
  password: string,
): Promise<{ passwd: string; salt: string; algo: string }> {
  const salt = randomBytes(16).toString('hex');
  const key = await scryptAsync(password, salt, PASSWORD_KEY_LENGTH);
  return { passwd: key.toString('hex'), salt, algo: PASSWORD_ALGORITHM };
}

/** Checks a password against its stored scrypt hash in constant time. */
export async function verifyPassword(
  password: string,
  stored: { passwd: string; salt: string },
): Promise<boolean> {
  if (stored.passwd === '' || stored.salt === '') return false;
  const expected = Buffer.from(stored.passwd, 'hex');
  const actual = await scryptAsync(password, stored.salt, expected.length || PASSWORD_KEY_LENGTH);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A new access token: 40 hex characters like Gitea's, plus what is stored instead of it. */
export function generateToken(): { token: string; hash: string; salt: string; lastEight: string } {
  const token = randomBytes(20).toString('hex');
  const salt = randomBytes(10).toString('hex');
  return { token, salt, hash: hashToken(token, salt), lastEight: token.slice(-8) };
}

/**
 * sha256(salt + token) in hex. A fast hash suffices: tokens carry 160 random bits, unlike passwords.
 * The one-shot `hash` runs on every token request and costs less than a Hash object.
 */
export function hashToken(token: string, salt: string): string {
  return hash('sha256', salt + token, 'hex');
}

/** Constant-time comparison of a presented token with a stored hash. */
export function tokenMatches(token: string, stored: { token_hash: string; token_salt: string }): boolean {
  const expected = Buffer.from(stored.token_hash, 'hex');
  const actual = hash('sha256', stored.token_salt + token, 'buffer');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A random password for the first administrator, readable enough to copy. */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}

/** A new OAuth2 client secret (`gto_` and 256 random bits, Gitea's prefix) and what is stored instead. */
export function generateClientSecret(): { secret: string; hash: string; salt: string } {
  const secret = `gto_${randomBytes(32).toString('hex')}`;
  const salt = randomBytes(10).toString('hex');
  return { secret, salt, hash: hashToken(secret, salt) };
}

/** sha256 of a one-time value (authorization code, session id) in hex: the lookup key that is stored. */
export function hashOpaque(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
