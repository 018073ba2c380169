import { type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import { compiledQuery, compiledShapedQuery } from './compiled-query.js';
import type { DialectName } from './dialect.js';
import { deleteWebhooksOf } from './hooks.js';
import { everyColumnOf } from './joined-rows.js';
import { USER_SEARCH_SUFFIX_CHARS } from './migrations/011_user_search_suffixes.js';
import {
  type Database,
  type NewUser,
  type UserRow,
  UserType,
  type UserUpdate,
  Visibility,
} from './schema.js';

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

/** Who is searching: null for anonymous callers. */
export interface SearchActor {
  id: number;
  isAdmin: boolean;
  isRestricted: boolean;
}

export interface UserSearchFilter {
  /** Lower-cased keyword; empty = no keyword filter. */
  keyword: string;
  type: number;
  uid?: number;
  /** Restrict to these visibilities (public-only tokens pass `[Visibility.Public]`). */
  visible?: number[];
  actor: SearchActor | null;
  searchByEmail: boolean;
  offset: number;
  limit: number;
}

/** Escapes LIKE wildcards so a keyword matches literally. */
function likePattern(keyword: string): string {
  return `%${keyword.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The suffix-index prefix of a keyword: its first USER_SEARCH_SUFFIX_CHARS characters (code points). */
function suffixPrefix(keyword: string): string {
  return [...keyword].slice(0, USER_SEARCH_SUFFIX_CHARS).join('');
}

/**
 * The SQLite range of stored suffixes that begin with `prefix`: [prefix, upper) in byte order (UTF-8
 * byte order is code point order). `upper` is the prefix with its last code point below U+10FFFF
 * incremented, the rest dropped; a prefix of nothing but U+10FFFF has no smaller upper bound than one
 * above every stored suffix.
 */
function suffixRange(prefix: string): [string, string] {
  const chars = [...prefix];
  while (chars.length > 0) {
    const last = chars.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      // Past the surrogate block: a lone surrogate would not survive the trip to UTF-8.
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return [prefix, chars.join('') + String.fromCodePoint(next)];
    }
  }
  return [prefix, '\u{10ffff}'.repeat(USER_SEARCH_SUFFIX_CHARS + 1)];
}

/** The PostgreSQL prefix tsquery of the lexemes (suffixes) that begin with `prefix`: `'prefix':*`. */
function suffixQuery(prefix: string): string {
  return `'${prefix.replace(/[\\']/g, (c) => `\\${c}`)}':*`;
}

/** What changes the SQL text of a user search (everything else is a value). */
interface SearchShape {
  dialect: DialectName;
  /** A keyword of three or more characters: the suffix index finds the candidate rows. */
  indexed: boolean;
  uid: boolean;
  visible: boolean;
  actor: 'anonymous' | 'admin' | 'user' | 'restricted';
  keyword: boolean;
  searchByEmail: boolean;
}

const searchShapeKey = (shape: SearchShape) =>
  [
    shape.dialect,
    shape.indexed,
    shape.uid,
    shape.visible,
    shape.actor,
    shape.keyword,
    shape.searchByEmail,
  ].join();

/** The values of a user search, in the order the compiled queries take them. */
type SearchValues = [
  type: number,
  uid: number,
  visible: readonly number[],
  actorId: number,
  pattern: string,
  /** SQLite: the suffix range; PostgreSQL: the prefix tsquery and an unused value. */
  suffixFrom: string,
  suffixTo: string,
];

function searchCondition(eb: ExpressionBuilder<Database, 'user'>, shape: SearchShape, values: SearchValues) {
  const [type, uid, visible, actorId, pattern, suffixFrom, suffixTo] = values;
  // With indexed candidates, `type + 0` keeps SQLite from walking the (type, name) index over every
  // individual; the candidate ids then drive the query (100 000 users: ~0.1 ms instead of ~10 ms).
  const sqliteIndexed = shape.indexed && shape.dialect === 'sqlite';
  const conditions = [
    sqliteIndexed ? sql<SqlBool>`${sql.ref('user.type')} + 0 = ${type}` : eb('user.type', '=', type),
  ];
  if (shape.uid) conditions.push(eb('user.id', '=', uid));
  if (shape.visible) conditions.push(eb('user.visibility', 'in', visible));
  if (shape.actor === 'anonymous') {
    conditions.push(eb('user.visibility', '=', Visibility.Public));
  } else if (shape.actor !== 'admin') {
    const seen = [
      eb(
        'user.id',
        'in',
        eb.selectFrom('org_user').select('org_user.org_id').where('org_user.uid', '=', actorId),
      ),
      eb('user.id', '=', actorId),
    ];
    if (shape.actor !== 'restricted')
      seen.push(eb('user.visibility', 'in', [Visibility.Public, Visibility.Limited]));
    conditions.push(eb.or(seen));
  }
  if (shape.keyword) {
    const like = (column: string) => sql<SqlBool>`lower(${sql.ref(column)}) LIKE ${pattern} ESCAPE '\\'`;
    const matches = [
      sql<SqlBool>`${sql.ref('user.lower_name')} LIKE ${pattern} ESCAPE '\\'`,
      like('user.full_name'),
    ];
    if (shape.searchByEmail) {
      let email = like('user.email');
      if (shape.actor === 'anonymous') {
        email = sql<SqlBool>`(${email} AND ${sql.ref('user.keep_email_private')} = 0)`;
      } else if (shape.actor !== 'admin') {
        email = sql<SqlBool>`(${email} AND (${sql.ref('user.keep_email_private')} = 0 OR ${sql.ref('user.id')} = ${actorId}))`;
      }
      matches.push(email);
    }
    conditions.push(eb.or(matches));
    // The suffix index (migration 011) narrows the rows the LIKE conditions look at to those whose
    // login, full name or e-mail contains the keyword's first USER_SEARCH_SUFFIX_CHARS characters.
    if (sqliteIndexed) {
      conditions.push(
        eb(
          'user.id',
          'in',
          sql<number>`(SELECT user_id FROM user_search_suffix WHERE suffix >= ${suffixFrom} AND suffix < ${suffixTo})`,
        ),
      );
    } else if (shape.indexed) {
      conditions.push(
        sql<SqlBool>`user_search_suffixes(${sql.ref('user.lower_name')}, ${sql.ref('user.full_name')}, ${sql.ref('user.email')}) @@ ${suffixFrom}::tsquery`,
      );
    }
  }
  return eb.and(conditions);
}

// The page size is part of the SQL text (SQLite plans `LIMIT 30` better than `LIMIT ?`); it is at most
// the configured maximum, so few variants exist.
const searchPage = compiledShapedQuery(
  (db, page: { shape: SearchShape; limit: number }, offset: number, ...values: SearchValues) =>
    db
      .selectFrom('user')
      .selectAll()
      .where((eb) => searchCondition(eb, page.shape, values))
      // PostgreSQL underestimates how few rows '%keyword%' matches and would walk the whole name index in
      // order; sorting an expression (the same order, lower_name is lower-case already) makes it sort the
      // few suffix-index matches instead.
      .orderBy(
        page.shape.keyword && page.shape.dialect === 'postgres'
          ? sql`lower(${sql.ref('user.lower_name')})`
          : 'user.lower_name',
      )
      .orderBy('user.id')
      .offset(offset)
      .limit(sql.lit(page.limit)),
  (page) => `${searchShapeKey(page.shape)},${page.limit}`,
);

const searchCount = compiledShapedQuery(
  (db, shape: SearchShape, ...values: SearchValues) =>
    db
      .selectFrom('user')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => searchCondition(eb, shape, values)),
  searchShapeKey,
);

/**
 * Gitea's `SearchUsers` for one page plus the total: keyword over login, full name and (where the actor
 * may see it) e-mail, restricted to what the actor may see (`BuildCanSeeUserCondition`), ordered by name.
 * A page shorter than the limit already tells the total, so the count runs only for full (or empty,
 * past-the-end) pages.
 */
export async function searchUsers(
  db: Db,
  dialect: DialectName,
  filter: UserSearchFilter,
): Promise<{ rows: UserRow[]; total: number }> {
  const actor = filter.actor;
  const shape: SearchShape = {
    dialect,
    indexed: [...filter.keyword].length >= 3,
    uid: filter.uid !== undefined,
    visible: filter.visible !== undefined,
    actor: !actor ? 'anonymous' : actor.isAdmin ? 'admin' : actor.isRestricted ? 'restricted' : 'user',
    keyword: filter.keyword !== '',
    searchByEmail: filter.searchByEmail,
  };
  const prefix = suffixPrefix(filter.keyword);
  const [suffixFrom, suffixTo] = dialect === 'sqlite' ? suffixRange(prefix) : [suffixQuery(prefix), ''];
  const values: SearchValues = [
    filter.type,
    filter.uid ?? 0,
    filter.visible ?? [],
    actor?.id ?? 0,
    likePattern(filter.keyword),
    suffixFrom,
    suffixTo,
  ];
  // A limit that is not a small positive integer never comes from a request (pageOf clamps it).
  if (!Number.isSafeInteger(filter.limit) || filter.limit < 1)
    throw new Error(`bad page size ${filter.limit}`);
  const rows = await searchPage(db, { shape, limit: filter.limit }, filter.offset, ...values);
  if (rows.length < filter.limit && (rows.length > 0 || filter.offset === 0)) {
    return { rows, total: filter.offset + rows.length };
  }
  const [count] = await searchCount(db, shape, ...values);
  return { rows, total: Number(count?.n ?? 0) };
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
