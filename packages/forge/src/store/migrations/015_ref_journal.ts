import type { Kysely, Migration } from 'kysely';

/**
 * The ref-write journal: a row written before a git push (or a contents-API commit) changes refs, and
 * deleted in the transaction that records the webhook deliveries of that change. A row left behind by a
 * crash is repaired (webhooks/ref-journal.ts): the events are derived again from the refs it saved.
 */
export function refJournalMigration(dialect: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const table = db.schema.createTable('ref_journal');
      await (dialect === 'postgres'
        ? table.addColumn('id', 'bigserial', (c) => c.primaryKey())
        : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      )
        .addColumn('repo_id', 'bigint', (c) => c.notNull())
        .addColumn('pusher_id', 'bigint', (c) => c.notNull())
        // JSON object ref → sha of the refs before the write (all of them when whole_snapshot = 1).
        .addColumn('refs_before', 'text', (c) => c.notNull())
        .addColumn('whole_snapshot', 'integer', (c) => c.notNull())
        // Who holds the row (a random token) and until when; a lapsed lease may be taken over.
        .addColumn('claim', 'text', (c) => c.notNull())
        .addColumn('lease_until_ms', 'bigint', (c) => c.notNull())
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('idx_ref_journal_lease')
        .on('ref_journal')
        .column('lease_until_ms')
        .execute();
    },
  };
}
