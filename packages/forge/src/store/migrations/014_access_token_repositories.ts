import type { Kysely, Migration } from 'kysely';

/**
 * Repository-scoped tokens (Forgejo's shape): a token with rows here reaches only those repositories. A
 * deleted repository's rows go with it (the repository code deletes them), and a token's with the token.
 */
export function accessTokenRepositoriesMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // The flag, not the rows, says a token is limited: deleting its last repository must not free it.
      await db.schema
        .alterTable('access_token')
        .addColumn('repo_scoped', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('access_token_repository')
        .addColumn('token_id', 'bigint', (c) => c.notNull())
        .addColumn('repo_id', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('pk_access_token_repository', ['token_id', 'repo_id'])
        .execute();
      await db.schema
        .createIndex('idx_access_token_repository_repo')
        .on('access_token_repository')
        .column('repo_id')
        .execute();
    },
  };
}
