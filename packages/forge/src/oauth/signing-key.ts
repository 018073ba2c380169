import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { ServiceContext } from '../services/context.js';
import { nowUnix } from '../services/context.js';
import { findSigningKey, insertSigningKeyIfAbsent } from '../store/oauth2.js';

/** Gitea's default `JWT_SIGNING_ALGORITHM`. */
export const SIGNING_ALGORITHM = 'RS256';

type KeyLike = Awaited<ReturnType<typeof importJWK>>;

/** The installation's JWT key: signs access, refresh and ID tokens, published at /login/oauth/keys. */
export interface SigningKey {
  alg: typeof SIGNING_ALGORITHM;
  kid: string;
  privateKey: KeyLike;
  publicKey: KeyLike;
  /** The public half as published in the JWKS. */
  publicJwk: JWK;
}

/**
 * Loads the signing key from the database, generating it on the very first start. The key lives in the
 * database (not the data dir) so that every process on one PostgreSQL signs and verifies alike; when two
 * first starts race, the insert that loses is ignored and both read the winner's key. Done once per
 * process: verification then needs no database access for the key.
 */
export async function loadSigningKey(ctx: ServiceContext): Promise<SigningKey> {
  let row = await findSigningKey(ctx.db);
  if (!row) {
    const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, {
      extractable: true,
      modulusLength: 2048,
    });
    const privateJwk = await exportJWK(privateKey);
    const kid = await calculateJwkThumbprint({ kty: privateJwk.kty, n: privateJwk.n, e: privateJwk.e });
    await insertSigningKeyIfAbsent(ctx.db, {
      alg: SIGNING_ALGORITHM,
      kid,
      private_jwk: JSON.stringify(privateJwk),
      created_unix: nowUnix(),
    });
    row = await findSigningKey(ctx.db);
    if (!row) throw new Error('the OAuth2 signing key could not be stored');
  }
  const privateJwk = JSON.parse(row.private_jwk) as JWK;
  const publicJwk: JWK = { kty: privateJwk.kty, n: privateJwk.n, e: privateJwk.e };
  return {
    alg: SIGNING_ALGORITHM,
    kid: row.kid,
    privateKey: await importJWK(privateJwk, SIGNING_ALGORITHM),
    publicKey: await importJWK(publicJwk, SIGNING_ALGORITHM),
    publicJwk: { ...publicJwk, kid: row.kid, alg: SIGNING_ALGORITHM, use: 'sig' },
  };
}
