import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * How many characters of each suffix the user search index keeps. A keyword is looked up by its first
 * this-many characters; the search's LIKE conditions decide on the rows found. Changing it needs a new
 * migration (the stored suffixes and the PostgreSQL index expression are cut to this length).
 */
export const USER_SEARCH_SUFFIX_CHARS = 12;

/**
 * The user search's substring index: every suffix (cut to USER_SEARCH_SUFFIX_CHARS characters, at least
 * three long) of the lower-cased login, full name and e-mail, so a keyword of three or more characters
 * is a range read of the suffixes it begins (`'user0500'` → the rows whose text contains it) instead of
 * a trigram walk. Trigram indexes (001's FTS5 table, 002's pg_trgm indexes) have to intersect the
 * document lists of every trigram of the keyword, and trigrams that most names share ("use", "ser",
 * "er0" in `user012345`) make that cost grow with the number of users (100 000 users: ~0.4 ms on
 * SQLite, 1–5 ms on PostgreSQL per search); a suffix range costs the same at any size. The price is
 * space: about 40 entries per user (~0.7 kB on SQLite against ~0.25 kB for the trigram index).
 *
 * SQLite: a WITHOUT ROWID table kept by triggers in the transaction of every write of a user (the
 * suffixes come from json_each over a generated array, as CTEs are not allowed in triggers).
 * PostgreSQL: a GIN index over an immutable function returning the suffixes as a tsvector, searched
 * with a prefix tsquery (`'user0500':*`, a range read of the index's sorted lexemes); no triggers.
 * Both replace the trigram indexes, which only the user search used.
 */
export function userSearchSuffixesMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === 'postgres') await postgresIndex(db);
      else await sqliteTable(db);
    },
  };
}

const CHARS = USER_SEARCH_SUFFIX_CHARS;

/**
 * The suffixes of `value` (an SQLite expression) as rows of `suffix`: json_each walks an array of
 * length(value) zeros, whose keys are the start positions 0 … length - 1.
 */
const sqliteSuffixes = (value: string, id: string) =>
  `SELECT DISTINCT substr(t.v, p.key + 1, ${CHARS}) AS suffix, ${id} AS user_id
   FROM (${value}) AS t,
     json_each('[' || substr(replace(hex(zeroblob(length(t.v))), '00', ',0'), 2) || ']') AS p
   WHERE p.key + 3 <= length(t.v)`;

/** The three searched texts of a user row `row` (NEW, OLD or the table), lower-cased as the search's LIKE. */
const sqliteTexts = (row: string) =>
  `SELECT lower(${row}.lower_name) AS v UNION ALL SELECT lower(${row}.full_name)
   UNION ALL SELECT lower(${row}.email)`;

const sqliteInsert = (row: string) =>
  `INSERT OR IGNORE INTO user_search_suffix (suffix, user_id) ${sqliteSuffixes(sqliteTexts(row), `${row}.id`)}`;

// Deletes by the old row's own suffixes: point reads of the primary key, no index on user_id needed.
const sqliteDelete = (row: string) =>
  `DELETE FROM user_search_suffix WHERE user_id = ${row}.id
     AND suffix IN (SELECT suffix FROM (${sqliteSuffixes(sqliteTexts(row), `${row}.id`)}))`;

async function sqliteTable(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE user_search_suffix (
      suffix text NOT NULL,
      user_id integer NOT NULL,
      PRIMARY KEY (suffix, user_id)
    ) WITHOUT ROWID`.execute(db);
  await sql
    .raw(`INSERT INTO user_search_suffix (suffix, user_id)
      SELECT DISTINCT substr(t.v, p.key + 1, ${CHARS}), t.id
      FROM (SELECT id, lower(lower_name) AS v FROM "user" UNION ALL SELECT id, lower(full_name) FROM "user"
            UNION ALL SELECT id, lower(email) FROM "user") AS t,
        json_each('[' || substr(replace(hex(zeroblob(length(t.v))), '00', ',0'), 2) || ']') AS p
      WHERE p.key + 3 <= length(t.v)`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER user_search_suffix_insert AFTER INSERT ON "user" BEGIN ${sqliteInsert('NEW')}; END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER user_search_suffix_update AFTER UPDATE OF lower_name, full_name, email ON "user" BEGIN
      ${sqliteDelete('OLD')};
      ${sqliteInsert('NEW')};
    END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER user_search_suffix_delete AFTER DELETE ON "user" BEGIN ${sqliteDelete('OLD')}; END`)
    .execute(db);
  for (const trigger of ['user_search_insert', 'user_search_update', 'user_search_delete']) {
    await sql`DROP TRIGGER ${sql.id(trigger)}`.execute(db);
  }
  await sql`DROP TABLE user_search`.execute(db);
}

async function postgresIndex(db: Kysely<unknown>): Promise<void> {
  // Immutable (it reads nothing but its arguments), as an index expression must be.
  await sql
    .raw(`CREATE FUNCTION user_search_suffixes(lower_name text, full_name text, email text) RETURNS tsvector
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT array_to_tsvector(coalesce(array_agg(DISTINCT substr(t, i, ${CHARS})), '{}'))
        FROM unnest(ARRAY[lower_name, lower(full_name), lower(email)]) AS t,
          generate_series(1, greatest(length(t) - 2, 0)) AS i
      $fn$`)
    .execute(db);
  await sql`CREATE INDEX idx_user_search_suffixes ON "user"
    USING gin (user_search_suffixes(lower_name, full_name, email))`.execute(db);
  for (const index of ['idx_user_lower_name_trgm', 'idx_user_full_name_trgm', 'idx_user_email_trgm']) {
    await sql`DROP INDEX ${sql.id(index)}`.execute(db);
  }
}
