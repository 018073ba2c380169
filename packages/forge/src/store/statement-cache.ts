import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

type Row = Record<string, unknown>;

/**
 * A reader statement that fetches rows as arrays and builds each object from a template with the
 * statement's columns. better-sqlite3 builds row objects column by column, which for rows of 30-odd
 * columns (users, repositories, releases) costs about as much as the lookup itself and leaves a
 * dictionary-mode object; copying a template keeps one fast shape per statement. A repeated column
 * name keeps its last value, as better-sqlite3's own objects do.
 */
function objectRows(statement: BetterSqlite3.Statement): SqliteStatement {
  const names = statement.columns().map((column) => column.name);
  const template: Row = Object.fromEntries(names.map((name) => [name, null]));
  const toObject = (values: unknown[]): Row => {
    const row: Row = { ...template };
    for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i];
    return row;
  };
  const raw = statement.raw(true);
  return {
    reader: true,
    all: (parameters) => (raw.all(parameters) as unknown[][]).map(toObject),
    run: (parameters) => raw.run(parameters),
    *iterate(parameters) {
      for (const values of raw.iterate(parameters) as IterableIterator<unknown[]>) yield toObject(values);
    },
  };
}

/**
 * better-sqlite3 as Kysely's SQLite database, reusing the prepared statement of each SQL text (least
 * recently used ones beyond `capacity` are dropped). Kysely prepares every query anew, which costs more
 * than running the small queries of an API request; statements are only ever run to completion
 * synchronously, so sharing them is safe.
 */
export function withStatementCache(sqlite: BetterSqlite3.Database, capacity = 500): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare: (sql: string) => {
      const cached = cache.get(sql);
      if (cached) {
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const prepared = sqlite.prepare(sql);
      const statement = prepared.reader ? objectRows(prepared) : prepared;
      cache.set(sql, statement);
      if (cache.size > capacity) cache.delete(cache.keys().next().value as string);
      return statement;
    },
  };
}
