import type { Kysely, Migration } from 'kysely';

/**
 * The release list of a repository filters on is_tag and is_draft and orders by created_unix: with these
 * columns in one index, the anonymous page is an index range read in order and its X-Total-Count an
 * index-only count (the repository/created index alone made the count visit every row).
 */
export function releaseListIndexMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('idx_release_repo_listing')
        .on('release')
        .columns(['repo_id', 'is_tag', 'is_draft', 'created_unix'])
        .execute();
    },
  };
}
