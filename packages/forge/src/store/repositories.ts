import type { Kysely, Transaction } from 'kysely';
import { compiledQuery } from './compiled-query.js';
import type { Database, RepositoryRow, UserRow } from './schema.js';
import { userRowOf } from './users.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A repository with its owner (user or organisation). */
export interface RepositoryWithOwner {
  repo: RepositoryRow;
  owner: UserRow;
}

// The repository columns under names no user column has, so one row carries the repository and its
// owner: one statement (one round trip on PostgreSQL) on every repository route instead of two.
const reposWithOwners = compiledQuery((db, ownerLowerName: string, repoLowerName: string) =>
  db
    .selectFrom('repository')
    .innerJoin('user', 'user.id', 'repository.owner_id')
    .selectAll('user')
    .select([
      'repository.id as repo_id',
      'repository.owner_id as repo_owner_id',
      'repository.owner_name as repo_owner_name',
      'repository.lower_name as repo_lower_name',
      'repository.name as repo_name',
      'repository.description as repo_description',
      'repository.website as repo_website',
      'repository.is_private as repo_is_private',
      'repository.is_empty as repo_is_empty',
      'repository.is_archived as repo_is_archived',
      'repository.default_branch as repo_default_branch',
      'repository.created_unix as repo_created_unix',
      'repository.updated_unix as repo_updated_unix',
    ])
    .where('user.lower_name', '=', ownerLowerName)
    .where('repository.lower_name', '=', repoLowerName),
);

/** Looks a repository up by owner and repository name, case-insensitively (every repository route). */
export async function findRepositoryByName(
  db: Db,
  ownerName: string,
  repoName: string,
): Promise<RepositoryWithOwner | undefined> {
  const [row] = await reposWithOwners(db, ownerName.toLowerCase(), repoName.toLowerCase());
  if (!row) return undefined;
  // Typed as RepositoryRow: a new repository column that is not listed here fails to compile.
  const repo: RepositoryRow = {
    id: row.repo_id,
    owner_id: row.repo_owner_id,
    owner_name: row.repo_owner_name,
    lower_name: row.repo_lower_name,
    name: row.repo_name,
    description: row.repo_description,
    website: row.repo_website,
    is_private: row.repo_is_private,
    is_empty: row.repo_is_empty,
    is_archived: row.repo_is_archived,
    default_branch: row.repo_default_branch,
    created_unix: row.repo_created_unix,
    updated_unix: row.repo_updated_unix,
  };
  return { repo, owner: userRowOf(row) };
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
export async function deleteRepositoryRows(
  db: Kysely<Database>,
  id: number,
  /** More work for the same transaction (the repository's hooks go, its `deleted` deliveries are raised). */
  also?: (trx: Transaction<Database>) => Promise<void>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await also?.(trx);
    await trx.deleteFrom('attachment').where('repo_id', '=', id).execute();
    await trx.deleteFrom('release').where('repo_id', '=', id).execute();
    await trx.deleteFrom('protected_tag').where('repo_id', '=', id).execute();
    await trx.deleteFrom('collaboration').where('repo_id', '=', id).execute();
    await trx.deleteFrom('team_repo').where('repo_id', '=', id).execute();
    await trx.deleteFrom('action').where('repo_id', '=', id).execute();
    // A repository-scoped token loses the repository (a later one reusing the id is not granted).
    await trx.deleteFrom('access_token_repository').where('repo_id', '=', id).execute();
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
