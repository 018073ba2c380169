/**
 * The versioned migrations of the machine-api database, for SQLite and PostgreSQL alike: one Kysely
 * schema builder, with the few column types that differ chosen by dialect.
 */

import { type ColumnDefinitionBuilder, type Migration, sql } from 'kysely';
import { accessMigration } from '../access/tables.js';
import { eventsMigration } from '../events/tables.js';
import { farmMachinesMigration, farmMigration } from '../farm/tables.js';
import { notifyMigration } from '../notify/tables.js';
import { spoolmanMigration } from '../spoolman/tables.js';
import { keptDesignsMigration } from './kept-designs.js';

export type DialectName = 'sqlite' | 'postgres';

/** An auto-numbered integer primary key: SQLite's rowid alias, PostgreSQL's serial. */
function sequenceColumn(
  dialect: DialectName,
): [type: 'integer' | 'serial', build: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder] {
  return dialect === 'postgres'
    ? ['serial', (c) => c.primaryKey()]
    : ['integer', (c) => c.primaryKey().autoIncrement()];
}

/** A size in bytes: PostgreSQL's integer stops at 2 GiB, so sizes are bigint there (read back as numbers). */
function byteCount(dialect: DialectName): 'integer' | 'bigint' {
  return dialect === 'postgres' ? 'bigint' : 'integer';
}

/**
 * Long by design: every migration in order, each a short declarative change of the schema.
 */
export function jobMigrations(dialect: DialectName): Record<string, Migration> {
  return {
    '001_jobs': {
      async up(db) {
        await db.schema
          .createTable('jobs')
          .addColumn('seq', ...sequenceColumn(dialect))
          .addColumn('id', 'text', (c) => c.notNull().unique())
          .addColumn('machine_id', 'text', (c) => c.notNull())
          .addColumn('job_name', 'text', (c) => c.notNull())
          .addColumn('file_name', 'text', (c) => c.notNull())
          .addColumn('file_size', byteCount(dialect), (c) => c.notNull())
          .addColumn('parameters', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('message', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addColumn('finished_at', 'text')
          .execute();
        await db.schema.createIndex('jobs_machine').on('jobs').columns(['machine_id', 'seq']).execute();
        await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'seq']).execute();
      },
    },
    '002_job_estimate': {
      async up(db) {
        await db.schema.alterTable('jobs').addColumn('estimate', 'text').execute();
      },
    },
    // Queued jobs have no machine yet: the table is rebuilt (SQLite cannot drop NOT NULL in place), which
    // works the same on PostgreSQL. Beds awaiting a clear survive a restart.
    '002_queue': {
      async up(db) {
        await db.schema
          .createTable('jobs_next')
          .addColumn('seq', ...sequenceColumn(dialect))
          .addColumn('id', 'text', (c) => c.notNull().unique())
          .addColumn('machine_id', 'text')
          .addColumn('job_name', 'text', (c) => c.notNull())
          .addColumn('file_name', 'text', (c) => c.notNull())
          .addColumn('file_size', byteCount(dialect), (c) => c.notNull())
          .addColumn('parameters', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('message', 'text')
          .addColumn('estimate', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addColumn('finished_at', 'text')
          .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('constraints', 'text')
          .addColumn('queued_at', 'text')
          .addColumn('dispatched_at', 'text')
          .addColumn('design_path', 'text')
          .execute();
        const copied = [
          'seq',
          'id',
          'machine_id',
          'job_name',
          'file_name',
          'file_size',
          'parameters',
          'status',
          'message',
          'estimate',
          'created_at',
          'updated_at',
          'finished_at',
        ] as const;
        await sql`insert into jobs_next (${sql.join(copied.map((c) => sql.ref(c)))}) select ${sql.join(
          copied.map((c) => sql.ref(c)),
        )} from jobs`.execute(db);
        await db.schema.dropTable('jobs').execute();
        await db.schema.alterTable('jobs_next').renameTo('jobs').execute();
        // The copied seq values did not move PostgreSQL's sequence: start it after them.
        if (dialect === 'postgres')
          await sql`select setval(pg_get_serial_sequence('jobs', 'seq'), coalesce(max(seq), 0) + 1, false) from jobs`.execute(
            db,
          );
        await db.schema.createIndex('jobs_machine').on('jobs').columns(['machine_id', 'seq']).execute();
        await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'seq']).execute();
        await db.schema
          .createIndex('jobs_queue')
          .on('jobs')
          .columns(['status', 'priority', 'queued_at'])
          .execute();
        await db.schema
          .createTable('machine_beds')
          .addColumn('machine_id', 'text', (c) => c.primaryKey())
          .addColumn('awaiting_clear_since', 'text', (c) => c.notNull())
          .addColumn('job_id', 'text')
          .execute();
      },
    },
    '005_access_and_stored_files': {
      async up(db) {
        await db.schema.alterTable('jobs').addColumn('owner', 'text').execute();
        await db.schema
          .createTable('api_keys')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('key_id', 'text', (c) => c.notNull().unique())
          .addColumn('secret_hash', 'text', (c) => c.notNull())
          .addColumn('scopes', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('stored_files')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('target', 'text', (c) => c.notNull())
          .addColumn('disk_name', 'text', (c) => c.notNull())
          .addColumn('size', byteCount(dialect), (c) => c.notNull())
          .addColumn('owner', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
      },
    },
    '030_notifications': notifyMigration,
    '031_app_keys_and_camera_tokens': accessMigration,
    '033_filament': {
      async up(db) {
        await db.schema.alterTable('jobs').addColumn('filament', 'text').execute();
        await db.schema.alterTable('jobs').addColumn('printing_at', 'text').execute();
        await db.schema.createIndex('jobs_finished').on('jobs').columns(['finished_at']).execute();
      },
    },
    '040_farm': farmMigration(dialect),
    '041_farm_machines': farmMachinesMigration(dialect),
    '045_queue_design_chunks': keptDesignsMigration(dialect),
    '046_spoolman': spoolmanMigration(dialect === 'postgres' ? 'serial' : 'integer'),
    '047_farm_events': eventsMigration(dialect),
  };
}
