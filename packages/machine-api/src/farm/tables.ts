/**
 * The tables that make several instances one farm (docs/machine-api/several-hosts.md), with their
 * migration (portable Kysely; times are the database's clock in milliseconds, so hosts whose clocks
 * disagree still agree on who is alive).
 */

import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../jobs/migrations.js';

/** One row per instance that ever started on this database. */
export interface InstancesTable {
  name: string;
  /** Where the instance answers (its `[server] public_url`, else its listening URL). */
  url: string;
  /** The database's clock at its first start, and at its latest heartbeat; 0 once it stopped cleanly. */
  started_ms: number;
  heartbeat_ms: number;
}

/** Which instance drives each machine id: ids are unique across the farm. */
export interface MachineOwnersTable {
  machine_id: string;
  instance: string;
}

/** Change counters that other instances compare instead of re-reading what they guard (api_keys). */
export interface ChangeStampsTable {
  name: string;
  generation: number;
}

/**
 * What each machine of the farm looks like, written by the instance that drives it (farm/publisher.ts)
 * and mirrored in memory by the others (farm/farm-machines.ts).
 */
export interface FarmMachinesTable {
  machine_id: string;
  instance: string;
  /** JSON of the machine's wire shape as `GET /machines/{id}` answers it on its own instance. */
  info: string;
  /** JSON of its routing facts (queue/routing.ts `MachineFacts`), for queue admission anywhere. */
  facts: string;
  /** The database's clock at the write: a reader re-reads a row only when this moved. */
  updated_ms: number;
}

export interface FarmTables {
  instances: InstancesTable;
  machine_owners: MachineOwnersTable;
  change_stamps: ChangeStampsTable;
  farm_machines: FarmMachinesTable;
}

export function farmMigration(dialect: DialectName): Migration {
  // Milliseconds since 1970 pass 2^31 in int4, so they are bigint on PostgreSQL (read back as numbers).
  const ms = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('instances')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('started_ms', ms, (c) => c.notNull())
        .addColumn('heartbeat_ms', ms, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('machine_owners')
        .addColumn('machine_id', 'text', (c) => c.primaryKey())
        .addColumn('instance', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('change_stamps')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn(
          'generation',
          // bigint on PostgreSQL: a stamp may move billions of times over a farm's life.
          ms,
          (c) => c.notNull(),
        )
        .execute();
      await apiKeysStampTriggers(db, dialect);
    },
  };
}

export function farmMachinesMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('farm_machines')
        .addColumn('machine_id', 'text', (c) => c.primaryKey())
        .addColumn('instance', 'text', (c) => c.notNull())
        .addColumn('info', 'text', (c) => c.notNull())
        .addColumn('facts', 'text', (c) => c.notNull())
        .addColumn('updated_ms', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
        .execute();
    },
  };
}

/**
 * Database triggers move the `api_keys` stamp with every insert, update or delete of a key, in the
 * writing transaction, whichever process or code path writes (the service, `machine-api keys`, an app
 * key approval): a key cache cannot miss a change by construction (access/key-stamp.ts).
 */
async function apiKeysStampTriggers(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await sql`insert into change_stamps (name, generation) values ('api_keys', 0)`.execute(db);
  if (dialect === 'postgres') {
    await sql`create function machine_api_keys_stamp() returns trigger language plpgsql as $$
      begin
        update change_stamps set generation = generation + 1 where name = 'api_keys';
        return null;
      end $$`.execute(db);
    await sql`create trigger api_keys_stamp after insert or update or delete on api_keys
      for each statement execute function machine_api_keys_stamp()`.execute(db);
    return;
  }
  for (const event of ['insert', 'update', 'delete']) {
    await sql`create trigger ${sql.raw(`api_keys_stamp_${event}`)} after ${sql.raw(event)} on api_keys
      begin
        update change_stamps set generation = generation + 1 where name = 'api_keys';
      end`.execute(db);
  }
}
