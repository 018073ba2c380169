import type { Kysely, Transaction } from 'kysely';
import { compiledQuery } from './compiled-query.js';
import type { Database, RepositoryRow, UserRow } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A repository with its owner (user or organisation). */
export interface RepositoryWithOwner {
  repo: RepositoryRow;
  owner: UserRow;
}

const userByLowerName = compiledQuery((db, lowerName: string) =>
  db.selectFrom('user').selectAll().where('lower_name', '=', lowerName),
);

const repoByOwnerAndLowerName = compiledQuery((db, ownerId: number, lowerName: string) =>
  db.selectFrom('repository').selectAll().where('owner_id', '=', ownerId).where('lower_name', '=', lowerName),
);

/** Looks a repository up by owner and repository name, case-insensitively (every repository route). */
export async function findRepositoryByName(
  db: Db,
  ownerName: string,
  repoName: string,
): Promise<RepositoryWithOwner | undefined> {
  const [owner] = await userByLowerName(db, ownerName.toLowerCase());
  if (!owner) return undefined;
  const [repo] = await repoByOwnerAndLowerName(db, owner.id, repoName.toLowerCase());
  return repo ? { repo, owner } : undefined;
}

/** Looks a repository up by id. */
export function findRepositoryById(db: Db, id: number): Promise<RepositoryRow | undefined> {
  return db.selectFrom('repository').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Inserts a repository row; the unique (owner_id, lower_name) constraint rejects duplicates. */
export function insertRepository(
  db: Db,
  values: {
    owner: UserRow;
    name: string;
    description: string;
    website: string;
    isPrivate: boolean;
    defaultBranch: string;
    now: number;
  },
): Promise<RepositoryRow> {
  return db
    .insertInto('repository')
    .values({
      owner_id: values.owner.id,
      owner_name: values.owner.name,
      lower_name: values.name.toLowerCase(),
      name: values.name,
      description: values.description,
      website: values.website,
      is_private: values.isPrivate ? 1 : 0,
      is_empty: 1,
      default_branch: values.defaultBranch,
      created_unix: values.now,
      updated_unix: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Columns a repository edit may change. */
export interface RepositoryPatch {
  name?: string;
  description?: string;
  website?: string;
  isPrivate?: boolean;
  isEmpty?: boolean;
  isArchived?: boolean;
  defaultBranch?: string;
}

/** Updates a repository and bumps updated_unix. */
export async function updateRepository(
  db: Db,
  id: number,
  patch: RepositoryPatch,
  now: number,
): Promise<void> {
  await db
    .updateTable('repository')
    .set({
      updated_unix: now,
      ...(patch.name !== undefined ? { name: patch.name, lower_name: patch.name.toLowerCase() } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.website !== undefined ? { website: patch.website } : {}),
      ...(patch.isPrivate !== undefined ? { is_private: patch.isPrivate ? 1 : 0 } : {}),
      ...(patch.isEmpty !== undefined ? { is_empty: patch.isEmpty ? 1 : 0 } : {}),
      ...(patch.isArchived !== undefined ? { is_archived: patch.isArchived ? 1 : 0 } : {}),
      ...(patch.defaultBranch !== undefined ? { default_branch: patch.defaultBranch } : {}),
    })
    .where('id', '=', id)
    .execute();
}

/** Deletes a repository row and every row that belongs to it, in one transaction. */
export async function deleteRepositoryRows(db: Kysely<Database>, id: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('attachment').where('repo_id', '=', id).execute();
    await trx.deleteFrom('release').where('repo_id', '=', id).execute();
    await trx.deleteFrom('protected_tag').where('repo_id', '=', id).execute();
    await trx.deleteFrom('collaboration').where('repo_id', '=', id).execute();
    await trx.deleteFrom('team_repo').where('repo_id', '=', id).execute();
    await trx.deleteFrom('action').where('repo_id', '=', id).execute();
    await trx.deleteFrom('repository').where('id', '=', id).execute();
  });
}

/** Ids of organisation teams that include every repository (new repositories join them). */
export async function teamsIncludingAllRepositories(db: Db, orgId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('team')
    .select('id')
    .where('org_id', '=', orgId)
    .where('includes_all_repositories', '=', 1)
    .execute();
  return rows.map((row) => row.id);
}

/** Adds team → repository links, ignoring ones that exist. */
export async function addTeamRepos(
  db: Db,
  orgId: number,
  repoId: number,
  teamIds: readonly number[],
): Promise<void> {
  if (teamIds.length === 0) return;
  await db
    .insertInto('team_repo')
    .values(teamIds.map((teamId) => ({ org_id: orgId, team_id: teamId, repo_id: repoId })))
    .onConflict((oc) => oc.columns(['team_id', 'repo_id']).doNothing())
    .execute();
}

/** Repositories by id with their owners (any order; missing ids are skipped). */
export async function findRepositoriesWithOwners(
  db: Db,
  ids: readonly number[],
): Promise<RepositoryWithOwner[]> {
  if (ids.length === 0) return [];
  const repos = await db
    .selectFrom('repository')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
  const ownerIds = [...new Set(repos.map((repo) => repo.owner_id))];
  const owners = ownerIds.length
    ? await db.selectFrom('user').selectAll().where('id', 'in', ownerIds).execute()
    : [];
  const byId = new Map(owners.map((owner) => [owner.id, owner]));
  return repos.flatMap((repo) => {
    const owner = byId.get(repo.owner_id);
    return owner ? [{ repo, owner }] : [];
  });
}

/** Every repository with its owner, by id (the release sync walks them all). */
export async function listRepositoriesWithOwners(db: Db): Promise<RepositoryWithOwner[]> {
  const repos = await db.selectFrom('repository').selectAll().orderBy('id').execute();
  return findRepositoriesWithOwners(
    db,
    repos.map((repo) => repo.id),
  ).then((found) => found.sort((a, b) => a.repo.id - b.repo.id));
}
