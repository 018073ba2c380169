import { hashOpaque } from '../auth/secrets.js';
import {
  bumpGrantCounter,
  consumeAuthorizationCode,
  deleteGrant,
  findAuthorizationCode,
  findGrant,
  findGrantUser,
  findGrantWithClient,
  insertAuthorizationCode,
  listUserGroups,
  upsertGrant,
} from '../store/oauth2.js';
import type { OAuth2ApplicationRow, OAuth2GrantRow, UserRow } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import { nowUnix, type ServiceContext } from './context.js';

/**
 * Grants and authorization codes: what a user consented to, per application (Gitea's OAuth2Grant and
 * OAuth2AuthorizationCode). Codes are stored as hashes and are single use across processes.
 */

/** The user's existing grant for an application, or undefined. */
export function userGrant(ctx: ServiceContext, user: UserRow, app: OAuth2ApplicationRow) {
  return findGrant(ctx.db, user.id, app.id);
}

/** Records consent (creating or updating the grant) and stores a new authorization code for it. */
export async function grantAndIssueCode(
  ctx: ServiceContext,
  input: {
    user: UserRow;
    app: OAuth2ApplicationRow;
    scope: string;
    nonce: string;
    code: string;
    expiresAt: Date;
    redirectUri: string;
    codeChallenge: string;
    codeChallengeMethod: string;
  },
): Promise<OAuth2GrantRow> {
  const grant = await upsertGrant(ctx.db, {
    user_id: input.user.id,
    application_id: input.app.id,
    scope: input.scope,
    nonce: input.nonce,
    now: nowUnix(),
  });
  await insertAuthorizationCode(ctx.db, {
    grant_id: grant.id,
    code_hash: hashOpaque(input.code),
    code_challenge: input.codeChallenge,
    code_challenge_method: input.codeChallenge ? input.codeChallengeMethod : '',
    redirect_uri: input.redirectUri,
    valid_until: Math.floor(input.expiresAt.getTime() / 1000),
  });
  return grant;
}

/** An authorization code with its grant, or undefined (unknown, used, or its application deleted). */
export function findCode(ctx: ServiceContext, code: string) {
  return findAuthorizationCode(ctx.db, hashOpaque(code));
}

/** Consumes a code; true for exactly one caller. */
export function consumeCode(ctx: ServiceContext, code: string): Promise<boolean> {
  return consumeAuthorizationCode(ctx.db, hashOpaque(code));
}

/** A grant with its application's client id, or undefined once either is gone. */
export function findGrantForToken(ctx: ServiceContext, grantId: number) {
  return findGrantWithClient(ctx.db, grantId);
}

/**
 * Redeems the refresh token that carries `counter`: succeeds for the latest refresh token only, and only
 * once, even with several processes racing on one database.
 */
export async function redeemRefreshCounter(
  ctx: ServiceContext,
  grantId: number,
  counter: number,
): Promise<boolean> {
  return (await bumpGrantCounter(ctx.db, grantId, nowUnix(), counter)) !== undefined;
}

/** The counter value a newly issued refresh token carries (undefined when the grant is gone). */
export function nextRefreshCounter(ctx: ServiceContext, grantId: number): Promise<number | undefined> {
  return bumpGrantCounter(ctx.db, grantId, nowUnix());
}

/** Revokes a grant: every access and refresh token issued under it stops working. */
export function revokeGrant(ctx: ServiceContext, grantId: number): Promise<void> {
  return deleteGrant(ctx.db, grantId);
}

/** The user of a grant and the grant's scope; undefined when grant, application or user is gone. */
export async function grantUser(
  ctx: ServiceContext,
  grantId: number,
): Promise<{ user: UserRow; scope: string; clientId: string } | undefined> {
  const row = await findGrantUser(ctx.db, grantId);
  if (!row) return undefined;
  const { grant_scope, grant_client_id, ...user } = row;
  return { user: user as UserRow, scope: grant_scope, clientId: grant_client_id };
}

/** A user by id (the subject of a code or refresh token). */
export function grantSubject(ctx: ServiceContext, uid: number): Promise<UserRow | undefined> {
  return findUserById(ctx.db, uid);
}

/** Gitea's `GetOAuthGroupsForUser`. */
export function userGroups(ctx: ServiceContext, user: UserRow, publicOnly: boolean): Promise<string[]> {
  return listUserGroups(ctx.db, user.id, publicOnly);
}
