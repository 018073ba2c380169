import { type Kysely, sql } from 'kysely';
import { compiledQuery } from './compiled-query.js';
import { deleteWebhooksOf } from './hooks.js';
import { everyColumnOf } from './joined-rows.js';
import { type Database, type NewUser, type UserRow, UserType, type UserUpdate } from './schema.js';

type Db = Kysely<Database>;

// Compiled once: every authenticated request and most routes look a user up by id or name.
const usersByLowerName = compiledQuery((db, lowerName: string) =>
  db.selectFrom('user').selectAll().where('lower_name', '=', lowerName),
);
const usersById = compiledQuery((db, id: number) => db.selectFrom('user').selectAll().where('id', '=', id));

/**
 * The user columns of a row that also carries other columns (a join), as a row of their own. Spelled
 * out rather than copied with a rest spread: rows of 30-odd columns arrive as dictionary-mode objects,
 * which V8 copies slowly; a literal is fast to build and to read. Typed as UserRow, so a new user
 * column that is not listed here fails to compile.
 */
export function userRowOf(row: UserRow): UserRow {
  return {
    id: row.id,
    type: row.type,
    lower_name: row.lower_name,
    name: row.name,
    full_name: row.full_name,
    email: row.email,
    keep_email_private: row.keep_email_private,
    passwd: row.passwd,
    passwd_hash_algo: row.passwd_hash_algo,
    salt: row.salt,
    login_source: row.login_source,
    login_name: row.login_name,
    location: row.location,
    website: row.website,
    description: row.description,
    language: row.language,
    avatar: row.avatar,
    is_admin: row.is_admin,
    is_active: row.is_active,
    prohibit_login: row.prohibit_login,
    must_change_password: row.must_change_password,
    is_restricted: row.is_restricted,
    visibility: row.visibility,
    keep_activity_private: row.keep_activity_private,
    repo_admin_change_team_access: row.repo_admin_change_team_access,
    num_followers: row.num_followers,
    num_following: row.num_following,
    num_stars: row.num_stars,
    created_unix: row.created_unix,
    updated_unix: row.updated_unix,
    last_login_unix: row.last_login_unix,
  };
}

/** Every user column, in table order. */
export const USER_COLUMNS = everyColumnOf<UserRow>()([
  'id',
  'type',
  'lower_name',
  'name',
  'full_name',
  'email',
  'keep_email_private',
  'passwd',
  'passwd_hash_algo',
  'salt',
  'login_source',
  'login_name',
  'location',
  'website',
  'description',
  'language',
  'avatar',
  'is_admin',
  'is_active',
  'prohibit_login',
  'must_change_password',
  'is_restricted',
  'visibility',
  'keep_activity_private',
  'repo_admin_change_team_access',
  'num_followers',
  'num_following',
  'num_stars',
  'created_unix',
  'updated_unix',
  'last_login_unix',
]);

/** The user (or organization) with this lower-cased name. */
export async function findUserByLowerName(db: Db, lowerName: string): Promise<UserRow | undefined> {
  return (await usersByLowerName(db, lowerName))[0];
}

/** The user (or organization) with this id. */
export async function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return (await usersById(db, id))[0];
}

const usersByIds = compiledQuery((db, ids: readonly number[]) =>
  db.selectFrom('user').selectAll().where('id', 'in', ids),
);

/** Users by id (any order); compiled once per number of ids (publishers of a page, rule owners). */
export async function findUsersByIds(db: Db, ids: number[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  return usersByIds(db, ids);
}

/** Whether an account already uses this e-mail address (case-insensitive). */
export async function emailInUse(db: Db, email: string, exceptId = 0): Promise<boolean> {
  const row = await db
    .selectFrom('user')
    .select('id')
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('id', '!=', exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The individual user with this e-mail address (case-insensitive), as commits name their authors. */
export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  if (email === '') return undefined;
  return db
    .selectFrom('user')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('type', '=', UserType.Individual)
    .executeTakeFirst();
}

/** Inserts a user or organization row and returns it. */
export async function insertUser(db: Db, values: NewUser): Promise<UserRow> {
  return db.insertInto('user').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Applies `patch` to one user row. */
export async function updateUser(db: Db, id: number, patch: UserUpdate): Promise<void> {
  await db.updateTable('user').set(patch).where('id', '=', id).execute();
}

/** Number of rows of one user type. */
export async function countUsers(db: Db, type: number): Promise<number> {
  const row = await db
    .selectFrom('user')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', type)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes a user and everything that belongs only to them, in one transaction. */
export async function deleteUserCascade(db: Db, id: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('access_token_repository')
      .where('token_id', 'in', (eb) => eb.selectFrom('access_token').select('id').where('uid', '=', id))
      .execute();
    await tx.deleteFrom('access_token').where('uid', '=', id).execute();
    await tx.deleteFrom('public_key').where('owner_id', '=', id).execute();
    await tx.deleteFrom('org_user').where('uid', '=', id).execute();
    await tx.deleteFrom('team_user').where('uid', '=', id).execute();
    await tx.deleteFrom('collaboration').where('user_id', '=', id).execute();
    // The user's own hooks and their deliveries, pending ones included: nothing is sent for them later.
    await deleteWebhooksOf(tx, { ownerId: id });
    await tx.deleteFrom('user').where('id', '=', id).execute();
  });
}

/** Whether `uid` is a member of organization `orgId`. */
export async function isOrgMember(db: Db, orgId: number, uid: number): Promise<boolean> {
  const row = await db
    .selectFrom('org_user')
    .select('id')
    .where('org_id', '=', orgId)
    .where('uid', '=', uid)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether two users belong to a common organization. */
export async function shareAnOrg(db: Db, a: number, b: number): Promise<boolean> {
  const row = await db
    .selectFrom('org_user as x')
    .innerJoin('org_user as y', 'x.org_id', 'y.org_id')
    .select('x.id')
    .where('x.uid', '=', a)
    .where('y.uid', '=', b)
    .executeTakeFirst();
  return row !== undefined;
}

/** One page of users of a type ordered by id, with the total (admin listing, org listing). */
export async function listUsersByType(
  db: Db,
  type: number,
  page: { offset: number; limit: number },
  visible?: number[],
): Promise<{ rows: UserRow[]; total: number }> {
  let query = db.selectFrom('user').where('type', '=', type);
  if (visible) query = query.where('visibility', 'in', visible);
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id').offset(page.offset).limit(page.limit).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Number of repositories an owner has. */
export async function countOwnedRepositories(db: Db, ownerId: number): Promise<number> {
  const row = await db
    .selectFrom('repository')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Whether `uid` is in a team of `orgId` with owner access. */
export async function hasOrgOwnerTeam(db: Db, orgId: number, uid: number): Promise<boolean> {
  const row = await db
    .selectFrom('team_user')
    .innerJoin('team', 'team.id', 'team_user.team_id')
    .select('team.id')
    .where('team_user.org_id', '=', orgId)
    .where('team_user.uid', '=', uid)
    .where('team.authorize', '=', 4)
    .executeTakeFirst();
  return row !== undefined;
}
