/**
 * The Spoolman tables and their migration (Kysely, the same SQL on SQLite and PostgreSQL): which spool each
 * machine (or AMS slot) prints from, and the outbox of use reports (reports.ts says how a row moves).
 */

import type { Generated, Kysely, Migration } from 'kysely';

/** Slot of a machine's only spool (a machine without an AMS); AMS slots are 0, 1, 2… */
export const WHOLE_MACHINE = -1;

export interface MachineSpoolsTable {
  machine_id: string;
  /** `WHOLE_MACHINE`, or the AMS slot (index into the machine's reported filaments). */
  slot: number;
  spool_id: number;
  assigned_at: string;
  /** JSON of the last `Spool` read from Spoolman (the fallback while Spoolman cannot be reached). */
  spool: string;
}

/** One row per use report, in order (`seq`). */
export interface SpoolReportsTable {
  seq: Generated<number>;
  spool_id: number;
  machine_id: string;
  job_id: string;
  /** Millimetres to report (`use_length`), always > 0. */
  use_length: number;
  /** Grams per metre of the spool's filament when recorded: the pending grams the queue subtracts. */
  grams_per_metre: number;
  /** `pending` → `sending` → `sent`; `dropped` when Spoolman no longer has the spool or refused it. */
  state: string;
  /** The spool's `used_length` read just before the last send (see reports.ts), else null. */
  before_length: number | null;
  attempts: number;
  error: string | null;
  created_at: string;
  sent_at: string | null;
}

export interface SpoolmanTables {
  machine_spools: MachineSpoolsTable;
  spool_reports: SpoolReportsTable;
}

export function spoolmanMigration(sequence: 'integer' | 'serial'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('machine_spools')
        .addColumn('machine_id', 'text', (c) => c.notNull())
        .addColumn('slot', 'integer', (c) => c.notNull())
        .addColumn('spool_id', 'integer', (c) => c.notNull())
        .addColumn('assigned_at', 'text', (c) => c.notNull())
        .addColumn('spool', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('machine_spools_pk', ['machine_id', 'slot'])
        .execute();
      await db.schema
        .createTable('spool_reports')
        .addColumn('seq', sequence, (c) =>
          sequence === 'serial' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('spool_id', 'integer', (c) => c.notNull())
        .addColumn('machine_id', 'text', (c) => c.notNull())
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('use_length', 'double precision', (c) => c.notNull())
        .addColumn('grams_per_metre', 'double precision', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('before_length', 'double precision')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('sent_at', 'text')
        .execute();
      await db.schema
        .createIndex('spool_reports_state')
        .on('spool_reports')
        .columns(['state', 'seq'])
        .execute();
      await db.schema.createIndex('spool_reports_job').on('spool_reports').columns(['job_id']).execute();
    },
  };
}
