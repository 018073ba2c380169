import type { Insertable, Kysely } from 'kysely';
import { deleteWebhooksOf } from './hooks.js';
import {
  type Database,
  type NewUser,
  type TeamRow,
  type TeamTable,
  type UserRow,
  UserType,
} from './schema.js';

type Db = Kysely<Database>;

export interface NewTeam {
  team: Omit<Insertable<TeamTable>, 'org_id'>;
  /** Unit type → access mode. */
  units: Array<{ type: number; access_mode: number }>;
}

/** Creates an organization, its Owners team and the creator's membership in one transaction. */
export async function insertOrganization(
  db: Db,
  org: NewUser,
  ownerId: number,
  owners: NewTeam,
): Promise<UserRow> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('user')
      .values({ ...org, type: UserType.Organization })
      .returningAll()
      .executeTakeFirstOrThrow();
    const team = await insertTeamRows(tx, row.id, owners);
    await tx.insertInto('org_user').values({ org_id: row.id, uid: ownerId, is_public: 0 }).execute();
    await tx.insertInto('team_user').values({ org_id: row.id, team_id: team.id, uid: ownerId }).execute();
    return row;
  });
}

async function insertTeamRows(db: Db, orgId: number, spec: NewTeam): Promise<TeamRow> {
  const team = await db
    .insertInto('team')
    .values({ ...spec.team, org_id: orgId })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (spec.units.length > 0) {
    await db
      .insertInto('team_unit')
      .values(
        spec.units.map((u) => ({
          org_id: orgId,
          team_id: team.id,
          type: u.type,
          access_mode: u.access_mode,
        })),
      )
      .execute();
  }
  return team;
}

/** Creates a team with its units; undefined when the organization already has a team of that name. */
export async function insertTeam(db: Db, orgId: number, spec: NewTeam): Promise<TeamRow | undefined> {
  return db.transaction().execute(async (tx) => {
    const clash = await tx
      .selectFrom('team')
      .select('id')
      .where('org_id', '=', orgId)
      .where('lower_name', '=', spec.team.lower_name)
      .executeTakeFirst();
    if (clash) return undefined;
    return insertTeamRows(tx, orgId, spec);
  });
}

/** A team by id. */
export function findTeamById(db: Db, id: number): Promise<TeamRow | undefined> {
  return db.selectFrom('team').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A team of an organization by (case-insensitive) name. */
export function findTeamByName(db: Db, orgId: number, name: string): Promise<TeamRow | undefined> {
  return db
    .selectFrom('team')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('lower_name', '=', name.toLowerCase())
    .executeTakeFirst();
}

/** Unit rows of the given teams. */
export async function findTeamUnits(
  db: Db,
  teamIds: number[],
): Promise<Array<{ team_id: number; type: number; access_mode: number }>> {
  if (teamIds.length === 0) return [];
  return db
    .selectFrom('team_unit')
    .select(['team_id', 'type', 'access_mode'])
    .where('team_id', 'in', teamIds)
    .orderBy('type')
    .execute();
}

/** One page of an organization's teams (by name) and their total. */
export async function listTeams(
  db: Db,
  orgId: number,
  page: { offset: number; limit: number },
): Promise<{ rows: TeamRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('team')
      .selectAll()
      .where('org_id', '=', orgId)
      .orderBy('lower_name')
      .offset(page.offset)
      .limit(page.limit)
      .execute(),
    db
      .selectFrom('team')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Whether `uid` is in team `teamId`. */
export async function isTeamMember(db: Db, teamId: number, uid: number): Promise<boolean> {
  const row = await db
    .selectFrom('team_user')
    .select('id')
    .where('team_id', '=', teamId)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return row !== undefined;
}

/** Adds a member to a team (and to the organization); no-op when already there. */
export async function addTeamMember(db: Db, team: TeamRow, uid: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto('team_user')
      .values({ org_id: team.org_id, team_id: team.id, uid })
      .onConflict((oc) => oc.columns(['team_id', 'uid']).doNothing())
      .execute();
    await tx
      .insertInto('org_user')
      .values({ org_id: team.org_id, uid, is_public: 0 })
      .onConflict((oc) => oc.columns(['org_id', 'uid']).doNothing())
      .execute();
  });
}

/** Removes a member from a team, and from the organization when it was their last team there. */
export async function removeTeamMember(db: Db, team: TeamRow, uid: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('team_user').where('team_id', '=', team.id).where('uid', '=', uid).execute();
    const other = await tx
      .selectFrom('team_user')
      .select('id')
      .where('org_id', '=', team.org_id)
      .where('uid', '=', uid)
      .executeTakeFirst();
    if (!other)
      await tx.deleteFrom('org_user').where('org_id', '=', team.org_id).where('uid', '=', uid).execute();
  });
}

/** Number of members of a team. */
export async function countTeamMembers(db: Db, teamId: number): Promise<number> {
  const row = await db
    .selectFrom('team_user')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('team_id', '=', teamId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * One page of the organizations `uid` belongs to (by name) and their total. Hidden memberships count
 * only with `includeHiddenMemberships`; organizations the viewer may not see are left out.
 */
export async function listMemberOrganizations(
  db: Db,
  uid: number,
  options: {
    includeHiddenMemberships: boolean;
    viewer: { id: number; isAdmin: boolean; isRestricted: boolean } | null;
  },
  page: { offset: number; limit: number },
): Promise<{ rows: UserRow[]; total: number }> {
  let query = db
    .selectFrom('user')
    .innerJoin('org_user', 'org_user.org_id', 'user.id')
    .where('org_user.uid', '=', uid)
    .where('user.type', '=', UserType.Organization);
  if (!options.includeHiddenMemberships) query = query.where('org_user.is_public', '=', 1);
  const viewer = options.viewer;
  if (!viewer) {
    query = query.where('user.visibility', '=', 0);
  } else if (!viewer.isAdmin) {
    query = query.where((eb) =>
      eb.or([
        ...(viewer.isRestricted ? [] : [eb('user.visibility', 'in', [0, 1])]),
        eb(
          'user.id',
          'in',
          eb.selectFrom('org_user as mine').select('mine.org_id').where('mine.uid', '=', viewer.id),
        ),
      ]),
    );
  }
  const [rows, count] = await Promise.all([
    query.selectAll('user').orderBy('user.lower_name').offset(page.offset).limit(page.limit).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/**
 * Deletes an organization (which owns no repository) with its teams, memberships and hooks, pending
 * deliveries included, in one transaction.
 */
export async function deleteOrganizationCascade(db: Db, orgId: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    for (const table of ['team_unit', 'team_user', 'team_repo', 'team', 'org_user'] as const) {
      await tx.deleteFrom(table).where('org_id', '=', orgId).execute();
    }
    await deleteWebhooksOf(tx, { ownerId: orgId });
    await tx.deleteFrom('user').where('id', '=', orgId).where('type', '=', UserType.Organization).execute();
  });
}
