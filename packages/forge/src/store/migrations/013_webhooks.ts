import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Webhooks (Gitea's `webhook` table, with the creator kept so access is re-checked at delivery time)
 * and their outbox (Gitea's `hook_task`): one row per delivery, written in the transaction of the write
 * that raised it, claimed by one process at a time (`state`, `due_ms`), kept afterwards as the history.
 */
export function webhooksMigration(dialect: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const withId = (name: string) => {
        const table = db.schema.createTable(name);
        return dialect === 'postgres'
          ? table.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
      };
      await withId('webhook')
        .addColumn('repo_id', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('owner_id', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('is_system_webhook', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('creator_id', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('http_method', 'text', (c) => c.notNull().defaultTo('POST'))
        .addColumn('content_type', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('secret', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('header_authorization', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('branch_filter', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('meta', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_status', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('disabled_reason', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .addColumn('updated_unix', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('idx_webhook_repo').on('webhook').column('repo_id').execute();
      await db.schema.createIndex('idx_webhook_owner').on('webhook').column('owner_id').execute();

      await withId('hook_task')
        .addColumn('hook_id', 'bigint', (c) => c.notNull())
        .addColumn('repo_id', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('uuid', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('payload_content', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('due_ms', 'bigint', (c) => c.notNull())
        .addColumn('is_redelivery', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('request_info', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('response_status', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('response_info', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('reason', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('duration_ms', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('delivered_ms', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('idx_hook_task_hook').on('hook_task').columns(['hook_id', 'id']).execute();
      await db.schema.createIndex('idx_hook_task_uuid').on('hook_task').column('uuid').execute();
      // The worker's claim reads only open deliveries, oldest due first.
      await sql`CREATE INDEX idx_hook_task_open ON hook_task (due_ms) WHERE state IN ('pending', 'delivering')`.execute(
        db,
      );
    },
  };
}
