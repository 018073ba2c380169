import type { Kysely, Migration } from 'kysely';

/**
 * Release attachments (Gitea's `attachment` table, release part): one row per stored file, found by id
 * (API), by uuid (download links) and by release (the `assets` of a page of releases in one query).
 */
// The dialect is passed as a plain name so this file does not import database.ts (which imports it).
export function attachmentsMigration(dialect: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const table = db.schema.createTable('attachment');
      const withId =
        dialect === 'postgres'
          ? table.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
      await withId
        .addColumn('uuid', 'text', (c) => c.notNull().unique())
        .addColumn('repo_id', 'bigint', (c) => c.notNull())
        .addColumn('release_id', 'bigint', (c) => c.notNull())
        .addColumn('uploader_id', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('download_count', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('created_unix', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('idx_attachment_release')
        .on('attachment')
        .columns(['release_id', 'id'])
        .execute();
      await db.schema.createIndex('idx_attachment_repo').on('attachment').column('repo_id').execute();
    },
  };
}
