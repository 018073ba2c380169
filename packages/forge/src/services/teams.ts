import type { Static } from 'typebox';
import { Forbidden, Invalid, NotFound } from '../errors.js';
import {
  addTeamMember,
  findTeamById,
  findTeamUnits,
  insertTeam,
  isTeamMember,
  listTeams,
  removeTeamMember,
} from '../store/orgs.js';
import { AccessMode, type TeamRow, type UserRow } from '../store/schema.js';
import { parseAccessMode, UNITS, UnitType, unitTypeForKey } from '../store/units.js';
import { isOrgMember } from '../store/users.js';
import type { CreateTeamOptionSchema } from '../structs/org.js';
import type { ServiceContext } from './context.js';
import { isOrgOwner } from './orgs.js';
import { getUserByName } from './users.js';

export type CreateTeamInput = Static<typeof CreateTeamOptionSchema>;

/** `POST /orgs/{org}/teams` with Gitea's permission/units rules. */
export async function createTeam(
  ctx: ServiceContext,
  org: UserRow,
  input: CreateTeamInput,
): Promise<TeamRow> {
  const unitsMap = Object.entries(input.units_map ?? {}).flatMap(([key, mode]) => {
    const type = unitTypeForKey(key);
    return type === undefined ? [] : [{ type, access_mode: parseAccessMode(mode) }];
  });
  let mode = parseAccessMode(input.permission);
  if (mode < AccessMode.Admin && unitsMap.length > 0) mode = minUnitAccessMode(unitsMap);
  let units: Array<{ type: number; access_mode: number }>;
  if (mode >= AccessMode.Admin) {
    units = UNITS.map((u) => ({ type: u.type, access_mode: mode }));
  } else if (unitsMap.length > 0) {
    units = unitsMap;
  } else if ((input.units ?? []).length > 0) {
    units = (input.units ?? []).flatMap((key) => {
      const type = unitTypeForKey(key);
      return type === undefined ? [] : [{ type, access_mode: mode }];
    });
  } else {
    throw new Invalid('units permission should not be empty');
  }
  const team = await insertTeam(ctx.db, org.id, {
    team: {
      lower_name: input.name.toLowerCase(),
      name: input.name,
      description: input.description ?? '',
      authorize: mode,
      includes_all_repositories: input.includes_all_repositories ? 1 : 0,
      can_create_org_repo: input.can_create_org_repo ? 1 : 0,
    },
    units,
  });
  if (!team) throw new Invalid(`team already exists [org_id: ${org.id}, name: ${input.name}]`);
  return team;
}

/** Lowest access above none over the units (external units excluded), as Gitea's `MinUnitAccessMode`. */
function minUnitAccessMode(units: Array<{ type: number; access_mode: number }>): number {
  let result: number = AccessMode.Admin;
  for (const unit of units) {
    if (unit.type === UnitType.ExternalTracker || unit.type === UnitType.ExternalWiki) continue;
    if (unit.access_mode > AccessMode.None && unit.access_mode < result) result = unit.access_mode;
  }
  return result;
}

/** One page of an organization's teams. */
export function listOrgTeams(ctx: ServiceContext, org: UserRow, page: { offset: number; limit: number }) {
  return listTeams(ctx.db, org.id, page);
}

/** Units of the given teams, grouped by team id. */
export async function teamUnits(
  ctx: ServiceContext,
  teams: TeamRow[],
): Promise<Map<number, Array<{ type: number; access_mode: number }>>> {
  const rows = await findTeamUnits(
    ctx.db,
    teams.map((t) => t.id),
  );
  const byTeam = new Map<number, Array<{ type: number; access_mode: number }>>();
  for (const row of rows) byTeam.set(row.team_id, [...(byTeam.get(row.team_id) ?? []), row]);
  return byTeam;
}

/**
 * `/teams/{id}` assignment + `reqTeamMembership`: the team, 404 when it does not exist (or the doer is
 * not in its organization), 403 `Must be a team member` for organization members outside the team.
 */
export async function getTeamForMember(ctx: ServiceContext, id: number, doer: UserRow): Promise<TeamRow> {
  const team = Number.isSafeInteger(id) ? await findTeamById(ctx.db, id) : undefined;
  if (!team) throw new NotFound();
  if (doer.is_admin || (await isOrgOwner(ctx, team.org_id, doer))) return team;
  if (await isTeamMember(ctx.db, team.id, doer.id)) return team;
  if (await isOrgMember(ctx.db, team.org_id, doer.id)) throw new Forbidden('Must be a team member');
  throw new NotFound();
}

/** `reqOrgOwnership` with only a team in context: non-owners get 404. */
export async function assertTeamOrgOwner(ctx: ServiceContext, team: TeamRow, doer: UserRow): Promise<void> {
  if (doer.is_admin) return;
  if (!(await isOrgOwner(ctx, team.org_id, doer))) throw new NotFound();
}

/**
 * `PUT|DELETE /teams/{id}/members/{username}`: adds (idempotent) or removes `username`. The team is found as
 * for any member; only an owner of its organization may change it (others get 404), then the user must exist.
 */
export async function changeTeamMembership(
  ctx: ServiceContext,
  teamId: number,
  doer: UserRow,
  username: string,
  change: 'add' | 'remove',
): Promise<void> {
  const team = await getTeamForMember(ctx, teamId, doer);
  await assertTeamOrgOwner(ctx, team, doer);
  const user = await getUserByName(ctx, username);
  if (change === 'add') await addTeamMember(ctx.db, team, user.id);
  else await removeTeamMember(ctx.db, team, user.id);
}
