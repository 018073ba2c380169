import { randomBytes } from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashOpaque } from '../auth/secrets.js';
import type { ForgeConfig } from '../config.js';
import { nowUnix, type ServiceContext } from '../services/context.js';
import { deleteExpiredSessions, findSessionUser, insertSession } from '../store/oauth2.js';
import type { UserRow } from '../store/schema.js';
import { findUserById } from '../store/users.js';

/**
 * Sign-in sessions of the provider's pages (sign-in, consent). They never authenticate the API (seed
 * rule: no session cookies there). The cookie carries 256 random bits; the database keeps only their
 * hash, so every process on one database knows the session and a database leak reveals none.
 */
export const SESSION_COOKIE = 'forge_session';
const SESSION_LIFETIME = 24 * 60 * 60;

function cookieOptions(config: ForgeConfig) {
  return {
    path: '/',
    httpOnly: true,
    // Lax: the authorization request arrives as a top-level navigation from the client's site.
    sameSite: 'lax' as const,
    secure: config.appUrl.startsWith('https:'),
  };
}

/** Starts a session for `user` and sets its cookie. */
export async function startSession(ctx: ServiceContext, reply: FastifyReply, user: UserRow): Promise<void> {
  const id = randomBytes(32).toString('base64url');
  const now = nowUnix();
  await deleteExpiredSessions(ctx.db, now);
  await insertSession(ctx.db, {
    id_hash: hashOpaque(id),
    uid: user.id,
    created_unix: now,
    expires_unix: now + SESSION_LIFETIME,
  });
  reply.setCookie(SESSION_COOKIE, id, { ...cookieOptions(ctx.config), maxAge: SESSION_LIFETIME });
}

/** The signed-in user of this request's session, or null (no cookie, unknown, expired, or user gone). */
export async function sessionUser(ctx: ServiceContext, request: FastifyRequest): Promise<UserRow | null> {
  const id = request.cookies[SESSION_COOKIE];
  if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
  const uid = await findSessionUser(ctx.db, hashOpaque(id), nowUnix());
  if (uid === undefined) return null;
  return (await findUserById(ctx.db, uid)) ?? null;
}
