import type { Insertable, Kysely } from 'kysely';
import type { AccessTokenRow, AccessTokenTable, Database } from './schema.js';

type Db = Kysely<Database>;

/** Tokens whose plain text ends in `lastEight` (the lookup key; the hash decides). */
export function findTokensByLastEight(db: Db, lastEight: string): Promise<AccessTokenRow[]> {
  return db.selectFrom('access_token').selectAll().where('token_last_eight', '=', lastEight).execute();
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
