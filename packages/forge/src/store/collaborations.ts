import type { Kysely } from 'kysely';
import type { Database, UserRow } from './schema.js';

type Db = Kysely<Database>;

/** Adds a collaborator or changes its mode. */
export async function upsertCollaboration(
  db: Db,
  values: { repoId: number; userId: number; mode: number; now: number },
): Promise<void> {
  await db
    .insertInto('collaboration')
    .values({
      repo_id: values.repoId,
      user_id: values.userId,
      mode: values.mode,
      created_unix: values.now,
      updated_unix: values.now,
    })
    .onConflict((oc) =>
      oc.columns(['repo_id', 'user_id']).doUpdateSet({ mode: values.mode, updated_unix: values.now }),
    )
    .execute();
}

/** The collaboration row of a user on a repository. */
export function findCollaboration(db: Db, repoId: number, userId: number) {
  return db
    .selectFrom('collaboration')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Removes a collaborator (nothing happens when it is not one). */
export async function deleteCollaboration(db: Db, repoId: number, userId: number): Promise<void> {
  await db.deleteFrom('collaboration').where('repo_id', '=', repoId).where('user_id', '=', userId).execute();
}

/** One page of a repository's collaborators (by user name) and their total. */
export async function listCollaborators(
  db: Db,
  repoId: number,
  page: { limit: number; offset: number },
): Promise<{ users: UserRow[]; total: number }> {
  const users = await db
    .selectFrom('user')
    .innerJoin('collaboration', 'collaboration.user_id', 'user.id')
    .selectAll('user')
    .where('collaboration.repo_id', '=', repoId)
    .orderBy('user.lower_name')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await db
    .selectFrom('collaboration')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('repo_id', '=', repoId)
    .executeTakeFirstOrThrow();
  return { users, total: Number(count.count) };
}
