import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * PostgreSQL only (SQLite got its FTS5 trigram index in 001): trigram GIN indexes so the user search's
 * `LIKE '%keyword%'` conditions on login, full name and e-mail use an index instead of scanning every
 * user, and the "C" collation on the name columns the API sorts by, so pages come in the same (byte)
 * order as on SQLite whatever the database's locale.
 */
export function postgresSearchMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      // pg_trgm is a trusted extension: the database owner may create it without superuser rights.
      await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
      for (const [table, column] of [
        ['user', 'lower_name'],
        ['user', 'name'],
        ['team', 'lower_name'],
        ['team', 'name'],
        ['repository', 'lower_name'],
        ['repository', 'name'],
        ['release', 'lower_tag_name'],
        ['release', 'tag_name'],
      ] as const) {
        await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN ${sql.ref(column)} TYPE text COLLATE "C"`.execute(
          db,
        );
      }
      await sql`CREATE INDEX idx_user_lower_name_trgm ON "user" USING gin (lower_name gin_trgm_ops)`.execute(
        db,
      );
      await sql`CREATE INDEX idx_user_full_name_trgm ON "user" USING gin (lower(full_name) gin_trgm_ops)`.execute(
        db,
      );
      await sql`CREATE INDEX idx_user_email_trgm ON "user" USING gin (lower(email) gin_trgm_ops)`.execute(db);
    },
  };
}
