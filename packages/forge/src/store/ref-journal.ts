/**
 * The ref-write journal (migration 015): one row per git write whose webhook events are not yet in the
 * outbox. A row is held by one process at a time through `claim` and `lease_until_ms`; every change to a
 * row names the claim it expects, so a holder whose lease was taken over changes nothing.
 */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, RefJournalRow, RefJournalTable } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertRefJournal(db: Db, values: Insertable<RefJournalTable>): Promise<number> {
  const row = await db.insertInto('ref_journal').values(values).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Extends the holder's lease; false when the row is gone or another claim holds it. */
export async function renewRefJournal(db: Db, id: number, claim: string, leaseUntilMs: number) {
  const result = await db
    .updateTable('ref_journal')
    .set({ lease_until_ms: leaseUntilMs })
    .where('id', '=', id)
    .where('claim', '=', claim)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Rows whose holder's lease lapsed before `nowMs` (it crashed, or its write failed), oldest first. */
export function lapsedRefJournals(db: Db, nowMs: number, limit: number): Promise<RefJournalRow[]> {
  return db
    .selectFrom('ref_journal')
    .selectAll()
    .where('lease_until_ms', '<', nowMs)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Takes over a lapsed row under a new claim; false when someone else took or finished it first. */
export async function takeOverRefJournal(
  db: Db,
  row: Pick<RefJournalRow, 'id' | 'claim'>,
  claim: string,
  nowMs: number,
  leaseUntilMs: number,
): Promise<boolean> {
  const result = await db
    .updateTable('ref_journal')
    .set({ claim, lease_until_ms: leaseUntilMs })
    .where('id', '=', row.id)
    .where('claim', '=', row.claim)
    .where('lease_until_ms', '<', nowMs)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Removes a row this claim holds (with the events it raised, in one transaction); false if it does not. */
export async function deleteRefJournal(db: Db, id: number, claim: string): Promise<boolean> {
  const result = await db
    .deleteFrom('ref_journal')
    .where('id', '=', id)
    .where('claim', '=', claim)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
