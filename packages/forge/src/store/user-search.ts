/**
 * Gitea's user search (`SearchUsers`): a keyword over login, full name and e-mail, restricted to what the
 * searcher may see, one page plus the total. Keywords of three characters or more use the suffix index
 * (migration 011); the SQL text of each shape of search is compiled once.
 */

import { type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import { compiledShapedQuery } from './compiled-query.js';
import type { DialectName } from './dialect.js';
import { USER_SEARCH_SUFFIX_CHARS } from './migrations/011_user_search_suffixes.js';
import { type Database, type UserRow, Visibility } from './schema.js';

type Db = Kysely<Database>;

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
