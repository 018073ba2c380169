import { type Kysely, sql } from 'kysely';
import type { Database, TeamRow } from './schema.js';

type Db = Kysely<Database>;

/**
 * Teams of an organization that have a repository: those linked through `team_repo` and those that
 * include all of the organization's repositories. Owners first, then by name (Gitea `GetRepoTeams`).
 */
export function listRepoTeams(db: Db, orgId: number, repoId: number): Promise<TeamRow[]> {
  return db
    .selectFrom('team')
    .selectAll()
    .where('org_id', '=', orgId)
    .where((eb) =>
      eb.or([
        eb('includes_all_repositories', '=', 1),
        eb.exists(
          eb
            .selectFrom('team_repo')
            .select('team_repo.id')
            .whereRef('team_repo.team_id', '=', 'team.id')
            .where('team_repo.repo_id', '=', repoId),
        ),
      ]),
    )
    .orderBy(sql`CASE WHEN lower_name = 'owners' THEN 0 ELSE 1 END`)
    .orderBy('lower_name')
    .orderBy('id')
    .execute();
}

/** Whether the team has the repository (a `team_repo` row, or the team includes all repositories). */
export async function teamHasRepo(db: Db, team: TeamRow, repoId: number): Promise<boolean> {
  if (team.includes_all_repositories === 1) return true;
  const row = await db
    .selectFrom('team_repo')
    .select('id')
    .where('team_id', '=', team.id)
    .where('repo_id', '=', repoId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Links the repository to the team; false when it already was (the unique key decides under races). */
export async function insertTeamRepo(db: Db, team: TeamRow, repoId: number): Promise<boolean> {
  const result = await db
    .insertInto('team_repo')
    .values({ org_id: team.org_id, team_id: team.id, repo_id: repoId })
    .onConflict((oc) => oc.columns(['team_id', 'repo_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Unlinks the repository from the team; false when it was not linked. */
export async function deleteTeamRepo(db: Db, team: TeamRow, repoId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('team_repo')
    .where('team_id', '=', team.id)
    .where('repo_id', '=', repoId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
