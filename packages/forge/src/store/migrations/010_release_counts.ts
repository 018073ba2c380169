import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Release totals kept beside the release table, so X-Total-Count and the Link header of a release list
 * stop counting the repository's releases on every request (10 000 releases: a count of ~9 000 index
 * entries, more than the page itself took).
 *
 * `release_count` holds the number of release records (tag-only records excluded) per repository, draft
 * flag and prerelease flag: every filter of the list (drafts hidden or not, `draft`, `pre-release`) is a
 * sum of at most four rows. Database triggers keep it in the transaction of every insert, delete and
 * update of a release row, whatever code (or operator) writes it, so a total is never older than the
 * rows; the migration back-fills it from the rows already there.
 */
export function releaseCountsMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const withoutRowid = dialect === 'sqlite' ? sql`WITHOUT ROWID` : sql``;
      await sql`CREATE TABLE release_count (
          repo_id bigint NOT NULL,
          is_draft integer NOT NULL,
          is_prerelease integer NOT NULL,
          total bigint NOT NULL,
          PRIMARY KEY (repo_id, is_draft, is_prerelease)
        ) ${withoutRowid}`.execute(db);
      await sql`INSERT INTO release_count (repo_id, is_draft, is_prerelease, total)
        SELECT repo_id, is_draft, is_prerelease, count(*) FROM release WHERE is_tag = 0
        GROUP BY repo_id, is_draft, is_prerelease`.execute(db);
      if (dialect === 'postgres') await postgresTriggers(db);
      else await sqliteTriggers(db);
    },
  };
}

// One record's share of the totals, added for NEW or removed for OLD; a total reaching zero goes.
const ADD = `INSERT INTO release_count (repo_id, is_draft, is_prerelease, total)
      SELECT NEW.repo_id, NEW.is_draft, NEW.is_prerelease, 1 WHERE NEW.is_tag = 0
      ON CONFLICT (repo_id, is_draft, is_prerelease) DO UPDATE SET total = release_count.total + 1`;
const OLD_KEY = `repo_id = OLD.repo_id AND is_draft = OLD.is_draft AND is_prerelease = OLD.is_prerelease
      AND OLD.is_tag = 0`;
const REMOVE = [
  `UPDATE release_count SET total = total - 1 WHERE ${OLD_KEY}`,
  `DELETE FROM release_count WHERE ${OLD_KEY} AND total <= 0`,
];
/** The columns the totals depend on: an update of any other column leaves them alone. */
const COUNTED_COLUMNS = 'repo_id, is_tag, is_draft, is_prerelease';

const body = (statements: string[]) => statements.map((s) => `${s};`).join('\n');

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(`CREATE TRIGGER release_count_insert AFTER INSERT ON release BEGIN ${body([ADD])} END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER release_count_delete AFTER DELETE ON release BEGIN ${body(REMOVE)} END`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER release_count_update AFTER UPDATE OF ${COUNTED_COLUMNS} ON release BEGIN
      ${body([...REMOVE, ADD])}
    END`)
    .execute(db);
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(`CREATE FUNCTION release_count_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP IN ('DELETE', 'UPDATE') THEN
        ${body(REMOVE)}
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        ${body([ADD])}
      END IF;
      RETURN NULL;
    END
    $fn$`)
    .execute(db);
  await sql
    .raw(`CREATE TRIGGER release_count AFTER INSERT OR DELETE OR UPDATE OF ${COUNTED_COLUMNS} ON release
      FOR EACH ROW EXECUTE FUNCTION release_count_apply()`)
    .execute(db);
}
