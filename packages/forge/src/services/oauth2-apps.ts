import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import { generateClientSecret, tokenMatches } from '../auth/secrets.js';
import { Invalid, NotFound } from '../errors.js';
import {
  deleteApplication,
  findApplicationByClientId,
  findApplicationById,
  insertApplication,
  listApplications,
  updateApplication,
} from '../store/oauth2.js';
import type { OAuth2ApplicationRow, UserRow } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import type { CreateOAuth2ApplicationOptionsSchema } from '../structs/oauth2.js';
import { nowUnix, type ServiceContext } from './context.js';

/** What a user registers (Gitea's `CreateOAuth2ApplicationOptions`, used by create and edit). */
export type OAuth2ApplicationInput = Static<typeof CreateOAuth2ApplicationOptionsSchema>;

/**
 * A redirect URI must be absolute and carry no fragment (RFC 6749 §3.1.2); custom schemes are allowed
 * for native applications (RFC 8252 §7.1).
 */
function checkRedirectUris(uris: string[]): string[] {
  for (const uri of uris) {
    let parsed: URL;
    try {
      parsed = new URL(uri);
    } catch {
      throw new Invalid(`invalid redirect URI: ${JSON.stringify(uri.slice(0, 100))}`);
    }
    if (parsed.hash !== '' || uri.includes('#')) {
      throw new Invalid(`invalid redirect URI (fragment not allowed): ${JSON.stringify(uri.slice(0, 100))}`);
    }
    // The URL parser silently drops tabs and newlines; a registered URI must be exactly what is matched.
    if ([...uri].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
      throw new Invalid('invalid redirect URI (control character)');
    }
  }
  return uris;
}

function columnsOf(input: OAuth2ApplicationInput) {
  if ([...input.name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
    throw new Invalid('invalid application name (control character)');
  }
  return {
    name: input.name,
    redirect_uris: JSON.stringify(checkRedirectUris(input.redirect_uris)),
    // Absent means false, as Go's zero value in Gitea's API: a public client, which must use PKCE.
    confidential_client: input.confidential_client ? 1 : 0,
    skip_secondary_authorization: input.skip_secondary_authorization ? 1 : 0,
  } as const;
}

/** Registers an application for `owner`; the client secret is returned once and only its hash is kept. */
export async function createOAuth2Application(
  ctx: ServiceContext,
  owner: UserRow,
  input: OAuth2ApplicationInput,
): Promise<{ row: OAuth2ApplicationRow; secret: string }> {
  const columns = columnsOf(input);
  const secret = generateClientSecret();
  const now = nowUnix();
  const row = await insertApplication(ctx.db, {
    uid: owner.id,
    client_id: randomUUID(),
    client_secret_hash: secret.hash,
    client_secret_salt: secret.salt,
    created_unix: now,
    updated_unix: now,
    ...columns,
  });
  return { row, secret: secret.secret };
}

/** One page of the caller's applications. */
export function listOAuth2Applications(
  ctx: ServiceContext,
  owner: UserRow,
  page: { offset: number; limit: number },
) {
  return listApplications(ctx.db, owner.id, page);
}

/** Path ids that are not positive integers name no application (Gitea's ParamsInt64 gives 0). */
function parseId(id: string): number {
  return /^\d{1,15}$/.test(id) ? Number(id) : 0;
}

/** One of the caller's applications; another user's application is 404, as one that does not exist. */
export async function getOAuth2Application(
  ctx: ServiceContext,
  owner: UserRow,
  id: string,
): Promise<OAuth2ApplicationRow> {
  const row = await findApplicationById(ctx.db, parseId(id));
  if (!row || row.uid !== owner.id) throw new NotFound();
  return row;
}

/** Edits one of the caller's applications and, as Gitea does, generates a new client secret. */
export async function updateOAuth2Application(
  ctx: ServiceContext,
  owner: UserRow,
  id: string,
  input: OAuth2ApplicationInput,
): Promise<{ row: OAuth2ApplicationRow; secret: string }> {
  const columns = columnsOf(input);
  const secret = generateClientSecret();
  const row = await updateApplication(ctx.db, parseId(id), owner.id, {
    ...columns,
    client_secret_hash: secret.hash,
    client_secret_salt: secret.salt,
    updated_unix: nowUnix(),
  });
  if (!row) throw new NotFound();
  return { row, secret: secret.secret };
}

/** Deletes one of the caller's applications; its grants, codes and so every token issued to it go too. */
export async function deleteOAuth2Application(
  ctx: ServiceContext,
  owner: UserRow,
  id: string,
): Promise<void> {
  if (!(await deleteApplication(ctx.db, parseId(id), owner.id))) throw new NotFound();
}

/** The application registered under `clientId`, or undefined. */
export function findClient(ctx: ServiceContext, clientId: string): Promise<OAuth2ApplicationRow | undefined> {
  // Client ids are UUIDs; anything else cannot name one and need not reach the database.
  if (!/^[0-9a-f-]{36}$/.test(clientId)) return Promise.resolve(undefined);
  return findApplicationByClientId(ctx.db, clientId);
}

/** Checks a presented client secret against the stored hash in constant time. */
export function clientSecretMatches(app: OAuth2ApplicationRow, secret: string): boolean {
  if (app.client_secret_hash === '') return false;
  return tokenMatches(secret, { token_hash: app.client_secret_hash, token_salt: app.client_secret_salt });
}

/** The user who registered an application (shown on the consent page), or undefined once deleted. */
export function applicationOwner(
  ctx: ServiceContext,
  app: OAuth2ApplicationRow,
): Promise<UserRow | undefined> {
  return findUserById(ctx.db, app.uid);
}
