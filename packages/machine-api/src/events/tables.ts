/**
 * The farm's event history on PostgreSQL (shared.ts), with its migration. One instance alone on SQLite
 * keeps its history in memory (history.ts), so the table exists on PostgreSQL only.
 */

import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../jobs/migrations.js';

/** One row per event of the farm, in the one id order every instance streams. */
export interface EventsTable {
  /** Consecutive; assigned under a lock held to commit, so ids become visible in order (shared.ts). */
  id: number;
  /** The instance that published the event. */
  instance: string;
  type: string;
  /** ISO 8601 (always `toISOString()`'s form, so text order is time order: pruning compares it). */
  time: string;
  machine_id: string | null;
  job_id: string | null;
  /** The event's `data` as JSON. */
  data: string;
}

export interface EventTables {
  events: EventsTable;
}

export function eventsMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      await db.schema
        .createTable('events')
        .addColumn('id', 'bigint', (c) => c.primaryKey())
        .addColumn('instance', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('time', 'text', (c) => c.notNull())
        .addColumn('machine_id', 'text')
        .addColumn('job_id', 'text')
        .addColumn('data', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
