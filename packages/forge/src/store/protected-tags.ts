import type { Kysely, Transaction } from 'kysely';
import type { Database, ProtectedTagRow } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A protected_tag row with its allowlists decoded. */
export interface ProtectedTag {
  id: number;
  repoId: number;
  namePattern: string;
  allowlistUserIds: number[];
  allowlistTeamIds: number[];
  createdUnix: number;
  updatedUnix: number;
}

function decodeIds(json: string): number[] {
  const value: unknown = JSON.parse(json || '[]');
  return Array.isArray(value) ? value.filter((v): v is number => typeof v === 'number') : [];
}

function decode(row: ProtectedTagRow): ProtectedTag {
  return {
    id: row.id,
    repoId: row.repo_id,
    namePattern: row.name_pattern,
    allowlistUserIds: decodeIds(row.allowlist_user_ids),
    allowlistTeamIds: decodeIds(row.allowlist_team_ids),
    createdUnix: row.created_unix,
    updatedUnix: row.updated_unix,
  };
}

/** All protections of a repository in creation order. */
export async function listProtectedTags(db: Db, repoId: number): Promise<ProtectedTag[]> {
  const rows = await db
    .selectFrom('protected_tag')
    .selectAll()
    .where('repo_id', '=', repoId)
    .orderBy('id')
    .execute();
  return rows.map(decode);
}

/** One protection by id within a repository. */
export async function findProtectedTag(
  db: Db,
  repoId: number,
  id: number,
): Promise<ProtectedTag | undefined> {
  const row = await db
    .selectFrom('protected_tag')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? decode(row) : undefined;
}

/** Inserts a protection. */
export async function insertProtectedTag(
  db: Db,
  values: { repoId: number; namePattern: string; userIds: number[]; teamIds: number[]; now: number },
): Promise<ProtectedTag> {
  const row = await db
    .insertInto('protected_tag')
    .values({
      repo_id: values.repoId,
      name_pattern: values.namePattern,
      allowlist_user_ids: JSON.stringify(values.userIds),
      allowlist_team_ids: JSON.stringify(values.teamIds),
      created_unix: values.now,
      updated_unix: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return decode(row);
}

/** Rewrites a protection. */
export async function updateProtectedTag(
  db: Db,
  id: number,
  values: { namePattern: string; userIds: number[]; teamIds: number[]; now: number },
): Promise<void> {
  await db
    .updateTable('protected_tag')
    .set({
      name_pattern: values.namePattern,
      allowlist_user_ids: JSON.stringify(values.userIds),
      allowlist_team_ids: JSON.stringify(values.teamIds),
      updated_unix: values.now,
    })
    .where('id', '=', id)
    .execute();
}

/** Deletes a protection. */
export async function deleteProtectedTag(db: Db, id: number): Promise<void> {
  await db.deleteFrom('protected_tag').where('id', '=', id).execute();
}
