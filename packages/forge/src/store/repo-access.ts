import type { Kysely, Transaction } from 'kysely';
import { findTeamUnits } from './orgs.js';
import { AccessMode, type Database, type TeamRow, type UserRow } from './schema.js';
import { findUsersByIds } from './users.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What the database says about one user's standing in one repository and its owning organisation. */
export interface AccessRows {
  collaborationMode: number | null;
  isOrgMember: boolean;
  teams: Array<{ id: number; accessMode: number; units: Map<number, number> }>;
}

/**
 * Loads the collaboration row, organisation membership and the user's teams covering the repository
 * (linked through team_repo or including all repositories), with their unit modes.
 */
export async function loadAccessRows(
  db: Db,
  repo: { id: number; ownerId: number },
  ownerIsOrganization: boolean,
  userId: number,
): Promise<AccessRows> {
  const collaboration = await db
    .selectFrom('collaboration')
    .select('mode')
    .where('repo_id', '=', repo.id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!ownerIsOrganization) {
    return { collaborationMode: collaboration?.mode ?? null, isOrgMember: false, teams: [] };
  }
  const member = await db
    .selectFrom('org_user')
    .select('id')
    .where('org_id', '=', repo.ownerId)
    .where('uid', '=', userId)
    .executeTakeFirst();
  const teams = await db
    .selectFrom('team')
    .innerJoin('team_user', 'team_user.team_id', 'team.id')
    .select(['team.id', 'team.authorize'])
    .where('team.org_id', '=', repo.ownerId)
    .where('team_user.uid', '=', userId)
    .where((eb) =>
      eb.or([
        eb('team.includes_all_repositories', '=', 1),
        eb.exists(
          eb
            .selectFrom('team_repo')
            .select('team_repo.id')
            .whereRef('team_repo.team_id', '=', 'team.id')
            .where('team_repo.repo_id', '=', repo.id),
        ),
      ]),
    )
    .execute();
  const units = await findTeamUnits(
    db,
    teams.map((team) => team.id),
  );
  return {
    collaborationMode: collaboration?.mode ?? null,
    isOrgMember: member !== undefined,
    teams: teams.map((team) => ({
      id: team.id,
      accessMode: team.authorize,
      units: new Map(units.filter((u) => u.team_id === team.id).map((u) => [u.type, u.access_mode])),
    })),
  };
}

/** Ids of every team of `orgId` the user belongs to (protected-tag team allowlists). */
export async function userTeamIds(db: Db, orgId: number, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('team_user')
    .select('team_id')
    .where('org_id', '=', orgId)
    .where('uid', '=', userId)
    .execute();
  return rows.map((row) => row.team_id);
}

/**
 * Users who follow a repository's activity the way Gitea's automatic watches do: the individual owner,
 * collaborators, and members of teams covering the repository.
 */
export async function repositoryWatchers(
  db: Db,
  repo: { id: number; ownerId: number },
  ownerIsOrganization: boolean,
): Promise<UserRow[]> {
  const ids = new Set<number>();
  if (!ownerIsOrganization) ids.add(repo.ownerId);
  const collaborators = await db
    .selectFrom('collaboration')
    .select('user_id')
    .where('repo_id', '=', repo.id)
    .execute();
  for (const row of collaborators) ids.add(row.user_id);
  if (ownerIsOrganization) {
    const members = await db
      .selectFrom('team_user')
      .innerJoin('team', 'team.id', 'team_user.team_id')
      .select('team_user.uid')
      .where('team.org_id', '=', repo.ownerId)
      .where((eb) =>
        eb.or([
          eb('team.includes_all_repositories', '=', 1),
          eb.exists(
            eb
              .selectFrom('team_repo')
              .select('team_repo.id')
              .whereRef('team_repo.team_id', '=', 'team.id')
              .where('team_repo.repo_id', '=', repo.id),
          ),
        ]),
      )
      .execute();
    for (const row of members) ids.add(row.uid);
  }
  return findUsersByIds(db, [...ids]);
}

/** Teams by id (any order). */
export async function findTeamsByIds(db: Db, ids: readonly number[]): Promise<TeamRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('team')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
}

/** Whether the user is in a team of the organisation that may create repositories (owners can). */
export async function canCreateOrgRepo(db: Db, orgId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('team')
    .innerJoin('team_user', 'team_user.team_id', 'team.id')
    .select('team.id')
    .where('team.org_id', '=', orgId)
    .where('team_user.uid', '=', userId)
    .where((eb) =>
      eb.or([eb('team.can_create_org_repo', '=', 1), eb('team.authorize', '>=', AccessMode.Owner)]),
    )
    .executeTakeFirst();
  return row !== undefined;
}
