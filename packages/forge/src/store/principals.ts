import type { Kysely } from 'kysely';
import { type Database, KeyType, type PublicKeyRow } from './schema.js';

/** One page of an owner's SSH certificate principals (oldest first) and their total. */
export async function listPrincipals(
  db: Kysely<Database>,
  ownerId: number,
  page: { offset: number; limit: number },
): Promise<{ rows: PublicKeyRow[]; total: number }> {
  const query = db
    .selectFrom('public_key')
    .where('owner_id', '=', ownerId)
    .where('type', '=', KeyType.Principal);
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id').offset(page.offset).limit(page.limit).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}
