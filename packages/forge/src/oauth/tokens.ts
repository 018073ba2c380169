import { randomUUID } from 'node:crypto';
import { type JWTPayload, jwtVerify, SignJWT } from 'jose';
import type { SigningKey } from './signing-key.js';

/** Gitea's `TokenKind`: the `tt` claim. */
export const TokenKind = { Access: 0, Refresh: 1 } as const;
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

/** What a verified access or refresh token names: Gitea's `Token` claims. */
export interface GrantToken {
  grantId: number;
  counter: number;
  /** Expiry, unix seconds. */
  exp: number;
}

function sign(key: SigningKey, claims: JWTPayload, expiresAt: number): Promise<string> {
  return (
    new SignJWT(claims)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuedAt()
      // Two tokens issued in the same second for one grant must still differ.
      .setJti(randomUUID())
      .setExpirationTime(expiresAt)
      .sign(key.privateKey)
  );
}

/** An access or refresh token as Gitea issues them: `{gnt, tt, cnt?}` with an expiry, signed by the server key. */
export function signGrantToken(
  key: SigningKey,
  kind: TokenKind,
  grantId: number,
  expiresAt: number,
  counter?: number,
): Promise<string> {
  return sign(key, { gnt: grantId, tt: kind, ...(counter !== undefined ? { cnt: counter } : {}) }, expiresAt);
}

/** An OpenID Connect ID token for a client. */
export function signIdToken(key: SigningKey, claims: JWTPayload, expiresAt: number): Promise<string> {
  return sign(key, claims, expiresAt);
}

/**
 * Verifies a token's signature (only the server's algorithm is accepted), expiry and kind; null when any
 * check fails. Whether its grant still exists is the caller's question.
 */
export async function verifyGrantToken(
  key: SigningKey,
  token: string,
  kind: TokenKind,
): Promise<GrantToken | null> {
  try {
    const { payload } = await jwtVerify(token, key.publicKey, { algorithms: [key.alg] });
    if (payload.tt !== kind || !Number.isSafeInteger(payload.gnt) || typeof payload.exp !== 'number')
      return null;
    const counter = payload.cnt ?? 0;
    if (!Number.isSafeInteger(counter)) return null;
    return { grantId: payload.gnt as number, counter: counter as number, exp: payload.exp };
  } catch {
    return null;
  }
}
