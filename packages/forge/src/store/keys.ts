import type { Insertable, Kysely } from 'kysely';
import { type Database, KeyType, type PublicKeyRow, type PublicKeyTable } from './schema.js';

type Db = Kysely<Database>;

/** Inserts a key or principal row. */
export function insertPublicKey(db: Db, values: Insertable<PublicKeyTable>): Promise<PublicKeyRow> {
  return db.insertInto('public_key').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Keys of one type with this fingerprint (any owner). */
export function findKeysByFingerprint(db: Db, fingerprint: string, type: number): Promise<PublicKeyRow[]> {
  return db
    .selectFrom('public_key')
    .selectAll()
    .where('fingerprint', '=', fingerprint)
    .where('type', '=', type)
    .execute();
}

/** Principal rows whose content is exactly `principal`. */
export function findPrincipals(db: Db, principal: string, type: number): Promise<PublicKeyRow[]> {
  return db
    .selectFrom('public_key')
    .selectAll()
    .where('content', '=', principal)
    .where('type', '=', type)
    .execute();
}

/** A key by id. */
export function findPublicKeyById(db: Db, id: number): Promise<PublicKeyRow | undefined> {
  return db.selectFrom('public_key').selectAll().where('id', '=', id).executeTakeFirst();
}

/** An owner's key with this title. */
export function findKeyByOwnerAndName(
  db: Db,
  ownerId: number,
  name: string,
): Promise<PublicKeyRow | undefined> {
  return db
    .selectFrom('public_key')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** One page of an owner's keys (oldest first) and their total. */
export async function listPublicKeys(
  db: Db,
  ownerId: number,
  page: { offset: number; limit: number },
  fingerprint?: string,
): Promise<{ rows: PublicKeyRow[]; total: number }> {
  // SSH keys only: certificate principals share the table but are listed by /user/principals.
  let query = db.selectFrom('public_key').where('owner_id', '=', ownerId).where('type', '=', KeyType.User);
  if (fingerprint) query = query.where('fingerprint', '=', fingerprint);
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id').offset(page.offset).limit(page.limit).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Deletes a key by id. */
export async function deletePublicKey(db: Db, id: number): Promise<void> {
  await db.deleteFrom('public_key').where('id', '=', id).execute();
}
