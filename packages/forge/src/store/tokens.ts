import type { Insertable, Kysely } from 'kysely';
import { compiledQuery } from './compiled-query.js';
import { prefixedColumns, prefixedRowReader } from './joined-rows.js';
import type { AccessTokenRow, AccessTokenTable, Database, UserRow } from './schema.js';
import { USER_COLUMNS, userRowOf } from './users.js';

type Db = Kysely<Database>;

/** What authentication needs of a token: what decides the match, its scope, and when it was last used. */
export type TokenCredential = Pick<
  AccessTokenRow,
  'id' | 'token_hash' | 'token_salt' | 'scope' | 'updated_unix'
>;

// The token columns under names no user column has, so one row carries the token and its owner.
const TOKEN_COLUMNS = [
  'access_token.id as token_id',
  'access_token.token_hash as token_hash',
  'access_token.token_salt as token_salt',
  'access_token.scope as token_scope',
  'access_token.updated_unix as token_updated_unix',
] as const;

const tokensWithOwners = compiledQuery((db, lastEight: string) =>
  db
    .selectFrom('access_token')
    .innerJoin('user', 'user.id', 'access_token.uid')
    .selectAll('user')
    .select(TOKEN_COLUMNS)
    .where('access_token.token_last_eight', '=', lastEight),
);

/** The named user's columns in `tokensWithOwnersAndUser`, under their own prefix. */
const NAMED = 'named_';
const namedUserOf = prefixedRowReader<UserRow>(USER_COLUMNS, NAMED);

// The same, plus the user of one name (left joined: null columns when there is none). A route that
// names a user in its path gets token, owner and that user in one statement, one round trip on
// PostgreSQL instead of two.
const tokensWithOwnersAndUser = compiledQuery((db, lastEight: string, lowerName: string) =>
  db
    .selectFrom('access_token')
    .innerJoin('user', 'user.id', 'access_token.uid')
    .leftJoin('user as named', (join) => join.on('named.lower_name', '=', lowerName))
    .selectAll('user')
    .select(TOKEN_COLUMNS)
    .select(prefixedColumns('named', USER_COLUMNS, NAMED))
    .where('access_token.token_last_eight', '=', lastEight),
);

export interface TokenCandidate {
  token: TokenCredential;
  /** The token's owner. */
  user: UserRow;
}

/** A joined row: the owner's columns as they are, the token's under `token_` names. */
type TokenOwnerRow = UserRow & {
  token_id: number;
  token_hash: string;
  token_salt: string;
  token_scope: string;
  token_updated_unix: number;
};

function candidateOf(row: TokenOwnerRow): TokenCandidate {
  return {
    token: {
      id: row.token_id,
      token_hash: row.token_hash,
      token_salt: row.token_salt,
      scope: row.token_scope,
      updated_unix: row.token_updated_unix,
    },
    user: userRowOf(row),
  };
}

/**
 * Tokens whose plain text ends in `lastEight` (the lookup key; the hash decides), each with its owner:
 * one statement per request instead of the token and then its user.
 */
export async function findTokenCredentialsByLastEight(db: Db, lastEight: string): Promise<TokenCandidate[]> {
  return (await tokensWithOwners(db, lastEight)).map(candidateOf);
}

/**
 * `findTokenCredentialsByLastEight` plus the user named `lowerName` in the same statement. `named` is
 * undefined when no token matched the key (nothing was read) and null when no user has that name.
 */
export async function findTokenCredentialsAndUser(
  db: Db,
  lastEight: string,
  lowerName: string,
): Promise<{ candidates: TokenCandidate[]; named: UserRow | null | undefined }> {
  const rows = await tokensWithOwnersAndUser(db, lastEight, lowerName);
  const first = rows[0];
  return {
    candidates: rows.map(candidateOf),
    named: first && (namedUserOf(first) ?? null),
  };
}

/** Inserts a token row; returns undefined when the user already has a token of that name. */
export async function insertToken(
  db: Db,
  values: Insertable<AccessTokenTable>,
): Promise<AccessTokenRow | undefined> {
  return db
    .insertInto('access_token')
    .values(values)
    .onConflict((oc) => oc.columns(['uid', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** One page of a user's tokens, newest first, and their total. */
export async function listTokens(
  db: Db,
  uid: number,
  page: { offset: number; limit: number },
): Promise<{ rows: AccessTokenRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('access_token')
      .selectAll()
      .where('uid', '=', uid)
      .orderBy('id', 'desc')
      .offset(page.offset)
      .limit(page.limit)
      .execute(),
    db
      .selectFrom('access_token')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('uid', '=', uid)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** A user's tokens with this id, or with this name. */
export function findUserTokens(
  db: Db,
  uid: number,
  by: { id: number } | { name: string },
): Promise<AccessTokenRow[]> {
  const query = db.selectFrom('access_token').selectAll().where('uid', '=', uid);
  return ('id' in by ? query.where('id', '=', by.id) : query.where('name', '=', by.name)).execute();
}

/** Deletes one token of a user. */
export async function deleteToken(db: Db, uid: number, id: number): Promise<void> {
  await db.deleteFrom('access_token').where('uid', '=', uid).where('id', '=', id).execute();
}

/** Records that a token was used (Gitea bumps `updated_unix`). */
export async function touchToken(db: Db, id: number, now: number): Promise<void> {
  await db.updateTable('access_token').set({ updated_unix: now }).where('id', '=', id).execute();
}
