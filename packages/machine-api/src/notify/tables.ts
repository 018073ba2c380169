/** The notification tables and their migration (Kysely, portable SQL: SQLite now, PostgreSQL later). */

import type { Kysely, Migration } from 'kysely';

export interface NotificationTargetsTable {
  id: string;
  name: string;
  /** `config` (from the configuration file, replaced at every start) or `api`. */
  source: string;
  /** JSON of the target's settings, secrets included (they are needed to send). */
  settings: string;
  created_at: string;
  updated_at: string;
}

/** The outbox and the delivery log in one: a row per notification per target. */
export interface NotificationDeliveriesTable {
  /** Also the Standard Webhooks `webhook-id`, the same on every attempt. */
  id: string;
  target_id: string;
  target_name: string;
  event: string;
  /** JSON of the `NotificationPayload`. */
  payload: string;
  status: string;
  attempts: number;
  /** When the next attempt may start; null once delivered, failed or folded. */
  next_attempt_at: string | null;
  /** An attempt under way since before this time; another worker waits for it to pass. */
  lease_until: string | null;
  /** Held back by the burst limit until this time, then folded into a digest. */
  hold_until: string | null;
  response_status: number | null;
  response: string | null;
  error: string | null;
  created_at: string;
  delivered_at: string | null;
  digest_id: string | null;
}

export interface NotifyTables {
  notification_targets: NotificationTargetsTable;
  notification_deliveries: NotificationDeliveriesTable;
}

export const notifyMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('notification_targets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('notification_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('target_id', 'text', (c) => c.notNull())
      .addColumn('target_name', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('hold_until', 'text')
      .addColumn('response_status', 'integer')
      .addColumn('response', 'text')
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('delivered_at', 'text')
      .addColumn('digest_id', 'text')
      .execute();
    await db.schema
      .createIndex('notification_deliveries_due')
      .on('notification_deliveries')
      .columns(['status', 'target_id', 'next_attempt_at'])
      .execute();
    await db.schema
      .createIndex('notification_deliveries_log')
      .on('notification_deliveries')
      .columns(['target_id', 'created_at'])
      .execute();
    await db.schema
      .createIndex('notification_deliveries_recent')
      .on('notification_deliveries')
      .columns(['created_at'])
      .execute();
  },
};
