/**
 * The text of an API key: `mapi_<id>_<secret>`. The id (64 random bits, hex) finds the key's row without
 * comparing secrets; the secret (256 random bits, base64url) is what proves possession. Only the
 * SHA-256 of the secret is stored. A fast hash is right here: the secret is random and long, so there is
 * nothing to brute-force the way there is with a password, and a slow KDF would only cost every request.
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'mapi';
const FORMAT = /^mapi_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface NewKeySecret {
  /** The whole key, shown once to whoever created it. */
  text: string;
  id: string;
  /** SHA-256 of the secret part, hex. */
  hash: string;
}

export function generateKey(): NewKeySecret {
  const id = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { text: `${PREFIX}_${id}_${secret}`, id, hash: hashSecret(secret) };
}

/** Splits a presented key into id and secret; null when it is not shaped like one of ours. */
export function parseKey(text: string): { id: string; secret: string } | null {
  const match = FORMAT.exec(text);
  if (!match) return null;
  return { id: match[1] as string, secret: match[2] as string };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Hash of a secret nobody holds, compared against when the id is unknown so both paths do the same work. */
const DECOY_HASH = hashSecret(randomBytes(32).toString('base64url'));

/** Constant-time check of `secret` against the stored hash (or the decoy when there is no row). */
export function secretMatches(secret: string, storedHash: string | undefined): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash ?? DECOY_HASH, 'hex');
  const equal = presented.length === stored.length && timingSafeEqual(presented, stored);
  return equal && storedHash !== undefined;
}
