import type { Insertable, Kysely } from 'kysely';
import { compiledQuery } from './compiled-query.js';
import { prefixedColumns, prefixedRowReader } from './joined-rows.js';
import type { AccessTokenRow, AccessTokenTable, Database, UserRow } from './schema.js';
import { USER_COLUMNS, userRowOf } from './users.js';

type Db = Kysely<Database>;

/** What authentication needs of a token: what decides the match, its scope, and when it was last used. */
export type TokenCredential = Pick<
  AccessTokenRow,
  'id' | 'token_hash' | 'token_salt' | 'scope' | 'updated_unix' | 'repo_scoped'
>;

// The token columns under names no user column has, so one row carries the token and its owner.
const TOKEN_COLUMNS = [
  'access_token.id as token_id',
  'access_token.token_hash as token_hash',
  'access_token.token_salt as token_salt',
  'access_token.scope as token_scope',
  'access_token.updated_unix as token_updated_unix',
  'access_token.repo_scoped as token_repo_scoped',
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
  token_repo_scoped: number;
};

function candidateOf(row: TokenOwnerRow): TokenCandidate {
  return {
    token: {
      id: row.token_id,
      token_hash: row.token_hash,
      token_salt: row.token_salt,
      scope: row.token_scope,
      updated_unix: row.token_updated_unix,
      repo_scoped: row.token_repo_scoped === 1 ? 1 : 0,
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

/** Deletes one token of a user, with its repository list. */
export async function deleteToken(db: Db, uid: number, id: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('access_token_repository').where('token_id', '=', id).execute();
    await trx.deleteFrom('access_token').where('uid', '=', uid).where('id', '=', id).execute();
  });
}

/** Ids of the repositories a repository-scoped token may reach (those that still exist). */
export async function tokenRepositoryIds(db: Db, tokenId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('access_token_repository')
    .select('repo_id')
    .where('token_id', '=', tokenId)
    .orderBy('repo_id')
    .execute();
  return rows.map((row) => Number(row.repo_id));
}

/** The repositories of several tokens (for listings), with owner names. */
export async function tokensRepositories(
  db: Db,
  tokenIds: number[],
): Promise<Array<{ token_id: number; id: number; name: string; owner_name: string }>> {
  if (tokenIds.length === 0) return [];
  const rows = await db
    .selectFrom('access_token_repository')
    .innerJoin('repository', 'repository.id', 'access_token_repository.repo_id')
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .select([
      'access_token_repository.token_id as token_id',
      'repository.id as id',
      'repository.name as name',
      'user.name as owner_name',
    ])
    .where('access_token_repository.token_id', 'in', tokenIds)
    .orderBy('repository.id')
    .execute();
  return rows.map((row) => ({ ...row, token_id: Number(row.token_id), id: Number(row.id) }));
}

/**
 * Inserts a token and, for a repository-scoped one, its repositories, in one transaction; undefined when
 * the user already has a token of that name.
 */
export async function insertTokenWithRepositories(
  db: Db,
  repoIds: readonly number[] | null,
  values: Insertable<AccessTokenTable>,
): Promise<AccessTokenRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await insertToken(trx, values);
    if (row && repoIds && repoIds.length > 0) {
      await trx
        .insertInto('access_token_repository')
        .values(repoIds.map((repo_id) => ({ token_id: row.id, repo_id })))
        .execute();
    }
    return row;
  });
}

/**
 * Records when tokens were last used (Gitea bumps `updated_unix`), given token id → unix second, in one
 * transaction: one statement per distinct second. A time never moves back, and a deleted token is skipped.
 */
export async function recordTokenUses(db: Db, uses: ReadonlyMap<number, number>): Promise<void> {
  const bySecond = new Map<number, number[]>();
  for (const [id, second] of uses) {
    const ids = bySecond.get(second);
    if (ids) ids.push(id);
    else bySecond.set(second, [id]);
  }
  await db.transaction().execute(async (trx) => {
    for (const [second, ids] of bySecond) {
      await trx
        .updateTable('access_token')
        .set({ updated_unix: second })
        .where('id', 'in', ids)
        .where('updated_unix', '<', second)
        .execute();
    }
  });
}
