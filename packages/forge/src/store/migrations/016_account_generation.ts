import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * One generation number that moves whenever a kept credential lookup could change: any user row, an
 * access token's row (except `updated_unix`, its "last used" time, which no lookup serves) or a token's
 * repository list. The token and user lookups the caches keep (cache/read-view.ts) are tagged with it
 * instead of with the database-wide change stamp, so a write elsewhere (a release, a repository's
 * description) no longer retires them. Database triggers bump it inside the writing transaction, whatever
 * code, process or operator writes, so a reader that reads the generation before its rows can never tag
 * rows older than the generation it read.
 */
export function accountGenerationMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE account_generation (
          id integer PRIMARY KEY NOT NULL CHECK (id = 1),
          generation bigint NOT NULL
        )`.execute(db);
      await sql`INSERT INTO account_generation (id, generation) VALUES (1, 0)`.execute(db);
      if (dialect === 'postgres') await postgresTriggers(db);
      else await sqliteTriggers(db);
    },
  };
}

const BUMP = 'UPDATE account_generation SET generation = generation + 1 WHERE id = 1';

/** The tables a kept lookup reads, and the columns of each whose update matters (all when absent). */
const WATCHED: Array<{ table: string; columns?: string }> = [
  { table: 'user' },
  {
    table: 'access_token',
    columns: 'id, uid, name, token_hash, token_salt, token_last_eight, scope, created_unix, repo_scoped',
  },
  { table: 'access_token_repository' },
];

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const { table, columns } of WATCHED) {
    for (const event of ['INSERT', 'DELETE', columns ? `UPDATE OF ${columns}` : 'UPDATE']) {
      const name = `${table}_account_generation_${event.split(' ')[0]!.toLowerCase()}`;
      await sql.raw(`CREATE TRIGGER ${name} AFTER ${event} ON "${table}" BEGIN ${BUMP}; END`).execute(db);
    }
  }
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(`CREATE FUNCTION account_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      ${BUMP};
      RETURN NULL;
    END
    $fn$`)
    .execute(db);
  // Deferred to commit: the one generation row is then locked last, after every row the transaction
  // changes, so two transactions changing users in different orders cannot deadlock on it (each would
  // otherwise hold the generation row while waiting for a user row the other holds).
  for (const { table, columns } of WATCHED) {
    const update = columns ? `UPDATE OF ${columns}` : 'UPDATE';
    await sql
      .raw(`CREATE CONSTRAINT TRIGGER ${table}_account_generation AFTER INSERT OR DELETE OR ${update}
        ON "${table}" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION account_generation_bump()`)
      .execute(db);
  }
}
