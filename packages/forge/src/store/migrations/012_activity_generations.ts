import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Generation numbers that say when an answer built from the activity tables may have changed, so a
 * process can keep an answer (the heatmap, cache/heatmap-cache.ts) and check in one lookup that it
 * still holds. Database triggers bump them in the transaction of the write, whatever code, process or
 * operator writes:
 *
 * - `scope` = a user id: any insert, update or delete of an action row the user receives.
 * - `scope` = 0: anything the viewer conditions of store/actions.ts read besides the action rows, i.e.
 *   who may see whose activity: a user's type, visibility or `keep_activity_private` (and users coming
 *   and going), a repository's privacy or owner (and repositories coming and going), collaborations,
 *   team members, team repositories, and teams' `includes_all_repositories`.
 *
 * A scope without a row is at generation 0. Visibility changes are rare writes, so one row for all of
 * them costs little and cannot miss a combination.
 */
export function activityGenerationsMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE activity_generation (
          scope bigint PRIMARY KEY NOT NULL,
          generation bigint NOT NULL
        )`.execute(db);
      if (dialect === 'postgres') await postgresTriggers(db);
      else await sqliteTriggers(db);
    },
  };
}

/** Adds one to `scope`'s generation (when `condition` holds). */
const bump = (scope: string, condition = 'true') =>
  `INSERT INTO activity_generation (scope, generation) SELECT ${scope}, 1 WHERE ${condition}
    ON CONFLICT (scope) DO UPDATE SET generation = activity_generation.generation + 1`;

/** Tables (and the columns of them) whose changes can change who may see which activity. */
const VISIBILITY: Array<{ table: string; columns?: string }> = [
  { table: 'user', columns: 'type, visibility, keep_activity_private' },
  { table: 'repository', columns: 'is_private, owner_id' },
  { table: 'collaboration' },
  { table: 'team_user' },
  { table: 'team_repo' },
  { table: 'team', columns: 'includes_all_repositories, org_id' },
];

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  const trigger = async (name: string, event: string, table: string, body: string[]) => {
    await sql
      .raw(`CREATE TRIGGER ${name} AFTER ${event} ON "${table}" BEGIN
        ${body.map((statement) => `${statement};`).join('\n')}
      END`)
      .execute(db);
  };
  await trigger('action_generation_insert', 'INSERT', 'action', [bump('NEW.user_id')]);
  await trigger('action_generation_delete', 'DELETE', 'action', [bump('OLD.user_id')]);
  await trigger('action_generation_update', 'UPDATE', 'action', [
    bump('OLD.user_id'),
    bump('NEW.user_id', 'NEW.user_id <> OLD.user_id'),
  ]);
  for (const { table, columns } of VISIBILITY) {
    await trigger(`${table}_generation_insert`, 'INSERT', table, [bump('0')]);
    await trigger(`${table}_generation_delete`, 'DELETE', table, [bump('0')]);
    await trigger(`${table}_generation_update`, columns ? `UPDATE OF ${columns}` : 'UPDATE', table, [
      bump('0'),
    ]);
  }
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  // Once per statement, the receivers in id order: two transactions recording actions for overlapping
  // receivers (a push fans out to the actor, the organization and the watchers) lock their generation
  // rows in the same order, so they wait for each other instead of deadlocking.
  const bumpReceivers = (rows: string) =>
    `INSERT INTO activity_generation (scope, generation)
      SELECT user_id, 1 FROM (${rows}) AS receivers ORDER BY user_id
      ON CONFLICT (scope) DO UPDATE SET generation = activity_generation.generation + 1`;
  await sql
    .raw(`CREATE FUNCTION action_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        ${bumpReceivers('SELECT DISTINCT user_id FROM new_rows')};
      ELSIF TG_OP = 'DELETE' THEN
        ${bumpReceivers('SELECT DISTINCT user_id FROM old_rows')};
      ELSE
        ${bumpReceivers('SELECT user_id FROM old_rows UNION SELECT user_id FROM new_rows')};
      END IF;
      RETURN NULL;
    END
    $fn$`)
    .execute(db);
  for (const [event, tables] of [
    ['INSERT', 'NEW TABLE AS new_rows'],
    ['DELETE', 'OLD TABLE AS old_rows'],
    ['UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'],
  ] as const) {
    await sql
      .raw(`CREATE TRIGGER action_generation_${event.toLowerCase()} AFTER ${event} ON action
        REFERENCING ${tables} FOR EACH STATEMENT EXECUTE FUNCTION action_generation_bump()`)
      .execute(db);
  }
  // Once per statement: a statement changing many users or repositories bumps the generation once.
  await sql
    .raw(`CREATE FUNCTION visibility_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      ${bump('0')};
      RETURN NULL;
    END
    $fn$`)
    .execute(db);
  for (const { table, columns } of VISIBILITY) {
    const update = columns ? `UPDATE OF ${columns}` : 'UPDATE';
    await sql
      .raw(`CREATE TRIGGER ${table}_generation AFTER INSERT OR DELETE OR ${update} ON "${table}"
        FOR EACH STATEMENT EXECUTE FUNCTION visibility_generation_bump()`)
      .execute(db);
  }
}
